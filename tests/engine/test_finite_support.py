"""The finite-support path: a bootstrapped data set's rows drawn as multinomial counts, stretch by
stretch, exact in law; the contextual conversion learns wine at horizons the per-step path cannot reach."""

from __future__ import annotations

import math
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import replify
from replify.components import rounded_ridge
from replify.components.sequences import ChunkedSequence
from replify.errors import ActionError, InvalidArgumentError
from replify.offpolicy import Log

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "algorithms"))
from test_contextual_wrap import TextbookLinUCB  # noqa: E402  (a user's LinUCB, shared by the two files)

WINE = replify.make_adversary("classification-bandit", n=3, horizon=10, seed=0)
_, COSTS, _ = WINE.context_support()


class Rule:
    """A learner with one fixed rule: arm ``rule[r]`` on row r of the support (found by its
    context), or a round robin over the arms (``rule=None``); on both paths."""

    problem, feedback = "contextual", "bandit"

    def __init__(self, *, n, horizon, rng, rule=None):
        self.n, self.horizon, self.rule, self.t = n, horizon, rule, 0
        x, _, _ = WINE.context_support()
        self.rows = {x[r].tobytes(): r for r in range(x.shape[0])}

    def act(self, context):
        if self.rule is None:
            return self.t % self.n
        return int(self.rule[self.rows[np.asarray(context).tobytes()]])

    def update(self, action, cost):
        self.t += 1

    def policy(self):  # the rule, the same in both runs
        return np.zeros(1) if self.rule is None else np.asarray(self.rule, dtype=float)

    def next_stretch(self, contexts):
        if self.rule is None:
            return "cycle", np.roll(np.arange(self.n), -(self.t % self.n)), self.horizon - self.t
        return "policy", np.asarray(self.rule), self.horizon - self.t

    def observe_stretch(self, counts, costs):
        assert counts.shape == (self.n, COSTS.shape[0]) and np.isnan(costs[counts == 0]).all()
        assert np.array_equal(costs[counts > 0], COSTS.T[counts > 0])  # what it paid, nothing else
        self.t += int(counts.sum())


@pytest.mark.parametrize("rule", [None, (np.arange(COSTS.shape[0]) % 3), np.zeros(COSTS.shape[0], dtype=int)],
                         ids=["round-robin", "a rule per row", "always arm 0"])
def test_both_paths_have_the_exact_mistake_rate(rule):
    # Mistakes of a fixed rule are sums of T independent Bernoulli(p) steps, p known exactly from the
    # support; over 10 pairs (20 runs of T = 4096 steps, 81 920 steps) Hoeffding puts the mean rate within
    # sqrt(ln(2/1e-6) / (2 * 81 920)) = 0.0094 of p but for 1e-6 — on the per-step path and the
    # finite-support one alike (same law, other draws).
    T, pairs = 4096, 10
    if rule is None:
        p = float(COSTS.mean())  # each arm a third of the steps, rows uniform
    else:
        p = float(COSTS[np.arange(COSTS.shape[0]), rule].mean())
    tol = math.sqrt(math.log(2 / 1e-6) / (2 * 2 * pairs * T))
    for fast in (False, True):
        r = replify.evaluate(lambda *, n, horizon, rng: Rule(n=n, horizon=horizon, rng=rng, rule=rule),
                             "classification-bandit", n=3, horizon=T, pairs=pairs, seed=2, progress=False,
                             fast_path=fast)
        assert r.fast_path is fast
        # the best policy names the label: regret counts mistakes, pseudo-regret their expectation
        assert abs(r.regret.mean() / T - p) < tol and abs(r.pseudo_regret.mean() / T - p) < tol
        curve = r.regret_curve_values
        assert np.all(np.diff(curve, axis=-1) >= -1e-9) and curve[..., -1].mean() == pytest.approx(r.regret.mean())
        assert r.identical.all()  # one rule, named the same in both runs


def test_the_conversion_learns_wine_at_a_billion_steps_in_seconds():
    # The wine target: a certified learner at <= 0.5x constant's mistakes. Measured 0.483x at T = 1e8 and
    # 0.375x at T = 1e10 (20 pairs, seed 1, 2 s each); 6 pairs here.
    report = replify.evaluate(replify.wrap(rho=0.1)(TextbookLinUCB), "classification-bandit", n=3, horizon=10**9,
                              pairs=6, seed=1, progress=False)
    assert report.claim == "certified" and report.fast_path
    assert report.regret.mean() < 0.5 * report.constant_regret.mean()


def test_bad_stretches_are_refused_with_the_step_and_what_came():
    class Bad(Rule):
        def next_stretch(self, contexts):
            return "policy", np.array([0, 5]), 10

    with pytest.raises(ActionError, match=r"must give an arm for each of the 178 rows, integers in \[0, 3\)"):
        replify.evaluate(lambda *, n, horizon, rng: Bad(n=n, horizon=horizon, rng=rng, rule=[0] * 178),
                         "classification-bandit", n=3, horizon=2**20, pairs=2, seed=0, progress=False)

    class Long(Rule):
        def next_stretch(self, contexts):
            return "cycle", np.arange(3), self.horizon + 1

    with pytest.raises(InvalidArgumentError, match=r"must give an integer length in 1..1048576"):
        replify.evaluate(lambda *, n, horizon, rng: Long(n=n, horizon=horizon, rng=rng), "classification-bandit",
                         n=3, horizon=2**20, pairs=2, seed=0, progress=False)
    with pytest.raises(InvalidArgumentError, match="next_stretch, observe_stretch.*context_support.*no next_stretch"):
        replify.evaluate("linucb", "classification-bandit", n=3, horizon=100, pairs=2, seed=0, progress=False,
                         fast_path=True)


def test_the_conversion_plays_alike_stepped_and_by_stretches_on_the_same_rows():
    # One sequence of rows, played step by step and stretch by stretch (counts built from the same
    # rows): the same arms at every step and the same rounded estimates.
    x, c, _ = WINE.context_support()
    T = 600
    rows = np.random.default_rng(4).integers(x.shape[0], size=T)
    stepped = replify.wrap(TextbookLinUCB, n=3, horizon=T, rho=0.1, seed=5)
    arms = []
    for t in range(T):
        a = stepped.act(x[rows[t]])
        stepped.update(a, float(c[rows[t], a]))
        arms.append(a)
    by_stretch = replify.wrap(TextbookLinUCB, n=3, horizon=T, rho=0.1, seed=5)
    played, t = [], 0
    while t < T:
        kind, plan, length = by_stretch.next_stretch(x)
        r = rows[t : t + length]
        steps = plan[np.arange(length) % plan.size] if kind == "cycle" else plan[r]
        counts = np.zeros((3, x.shape[0]), dtype=np.int64)
        np.add.at(counts, (steps, r), 1)
        by_stretch.observe_stretch(counts, np.where(counts > 0, c.T, np.nan))
        played.extend(steps.tolist())
        t += length
    assert played == arms
    assert np.allclose(by_stretch.policy(), stepped.policy()) and np.abs(stepped.policy()).sum() > 0


def test_rep_ridge_explores_by_pulls_from_r_and_learns_wine_by_stretches():
    # Exploring only (one phase): each step a uniform arm from R, so mistakes at rate p = the support's
    # mean cost on both paths (Hoeffding as above: 20 runs of 4096 steps, within 0.0094 but for 1e-6).
    T, pairs = 4096, 10
    tol = math.sqrt(math.log(2 / 1e-6) / (2 * 2 * pairs * T))
    for fast in (False, True):
        r = replify.evaluate("rep-ridge", "classification-bandit", n=3, horizon=T, pairs=pairs, seed=3, rho=0.1,
                             phases=1, progress=False, fast_path=fast)
        assert r.fast_path is fast and abs(r.regret.mean() / T - float(COSTS.mean())) < tol
    # measured 0.479x constant's mistakes at T = 1e8, 0.385x at 1e9, 0.376x at 1e10 (20 pairs, seed 1, ~2 s each)
    r = replify.evaluate("rep-ridge", "classification-bandit", n=3, horizon=10**9, pairs=6, seed=1, rho=0.1,
                         progress=False)
    assert r.claim == "certified" and r.fast_path and r.regret.mean() < 0.5 * r.constant_regret.mean()


def test_tied_arms_go_to_the_lowest_index_on_both_paths():

    # an independent review: scoring the support's rows with a matmul broke exact ties by rounding
    # (wine with every arm shown the same row: arm 2 played where stepping plays arm 0)
    same = replify.make_adversary("classification-bandit", n=3, horizon=10, seed=0, features_as="same")
    x, _, _ = same.context_support()
    for model in ("shared", "disjoint"):
        learner = replify.wrap(TextbookLinUCB, n=3, horizon=1000, rho=0.1, seed=0, model=model)
        learner.next_stretch(x)  # sets the lane up
        lane = learner._lane
        lane.rounded = np.random.default_rng(1).normal(size=lane.rounded.shape)
        if model == "disjoint":
            lane.rounded[:] = lane.rounded[:, :1]  # one θ for every arm: every row ties
        lane._explore_until = lane.t  # committed from here
        # the rounded estimate's own scoring (rep-ridge's, and the conversion's below the learner it runs)
        kind, arms, _ = rounded_ridge.RoundedRidgeLearner.next_stretch(learner, x)
        assert kind == "policy" and (arms == 0).all()


class Declares(ChunkedSequence):
    """Rows 0..3 with one feature each; the support it declares is set by a test."""

    fixed_contexts, d, iid, cost_bounds = None, 1, True, (0.0, 1.0)

    def __init__(self, *, n=2, horizon=2**20, weights=(0.7, 0.1, 0.1, 0.1), support_costs=None, means_shift=0.0):
        self.n, self.horizon, self.w = n, horizon, np.asarray(weights)
        self.x = np.arange(4.0).reshape(4, 1, 1).repeat(n, axis=1) / 4
        self.c = np.tile([[0.0, 1.0]], (4, 1))
        self.support_costs, self.means_shift = support_costs, means_shift

    def sample_contexts(self, rng, start, stop):
        r = rng.choice(4, size=stop - start, p=self.w)
        return self.x[r], self.c[r], self.c[r]

    def sample_chunk(self, rng, start, stop):
        return self.sample_contexts(rng, start, stop)[1]

    def context_support(self):
        c = self.c if self.support_costs is None else self.support_costs
        return self.x, c, c + self.means_shift


@pytest.mark.parametrize("change, declared, words", [
    ({}, None, "support_weights do not fit its draws"),  # skewed draws, no weights declared: uniform assumed
    ({"weights": (0.25,) * 4}, (0.7, 0.1, 0.1, 0.1), "support_weights do not fit its draws"),  # the reverse
    ({"weights": (1 / 3, 1 / 3, 1 / 3, 0.0)}, (0.25,) * 4, "support_weights do not fit its draws"),  # a row never drawn
    ({"support_costs": np.tile([[1.0, 0.0]], (4, 1))}, None, "drew a row that is not in it"),  # costs 1 - c
    ({"means_shift": 0.3}, None, "so its means must be its costs"),
], ids=["skewed draws", "skewed weights", "a row never drawn", "other costs", "means not costs"])
def test_a_support_that_its_draws_contradict_is_refused(change, declared, words):
    # by the engine's finite-support path and by a compact simulated log alike (one audit)
    adv = Declares(**change)
    if declared is not None:
        adv.support_weights = np.asarray(declared)
    with pytest.raises(replify.errors.DeclarationError, match=words):
        replify.evaluate(replify.wrap(rho=0.1)(TextbookLinUCB), adv, n=2, horizon=2**20, pairs=2, seed=0,
                         progress=False)
    with pytest.raises(replify.errors.DeclarationError, match=words):
        Log.simulate(adv, n=2, rows=10_000, seed=0, compact=True)


def test_declared_weights_are_used_and_the_adversarys_arrays_are_left_writable():
    adv = Declares()
    adv.support_weights = adv.w
    r = replify.evaluate(replify.wrap(rho=0.1)(TextbookLinUCB), adv, n=2, horizon=2**20, pairs=2, seed=0,
                         progress=False)
    assert r.fast_path and r.claim == "certified"
    adv.x[0, 0, 0] = 0.0  # the engine copied what it made read-only


class CachedGreedy:
    """A user's greedy ridge learner that keeps its inverse Gram by Sherman–Morrison and its estimate
    until the next update: O(d^2) per step, so that a wrapped run on digits (d = 650) is fed and
    tabulated in seconds."""

    problem, feedback = "contextual", "bandit"

    def __init__(self, *, n, horizon, rng, lam=1.0):
        self.lam, self.inv, self.theta = lam, None, None

    def act(self, context):
        x = np.asarray(context)
        if self.inv is None:
            self.inv, self.b = np.eye(x.shape[1]) / self.lam, np.zeros(x.shape[1])
        if self.theta is None:
            self.theta = self.inv @ self.b
        self.x = x
        return int(np.argmin(x @ self.theta))

    def update(self, action, cost):
        z = self.x[action]
        iz = self.inv @ z
        self.inv -= np.outer(iz, iz) / (1.0 + z @ iz)
        self.b += cost * z
        self.theta = None

    def policy(self):
        return np.zeros(1) if self.inv is None else self.inv @ self.b


@pytest.mark.parametrize("learner", ["rep-ridge", replify.wrap(rho=0.1, feed_rows=1_300)(CachedGreedy)],
                         ids=["rep-ridge", "wrapped"])
def test_digits_on_the_finite_support_path_fits_in_memory(learner):
    # digits as blocks: R = 1 797 rows, n = 10 arms, d = 10 x 65 = 650 features. A stretch's statistics
    # once took one d x d outer product per (row, arm): an array of 17 970 x 650 x 650 floats, 56.6 GiB.
    # Now the support's contexts (R n d floats, 89 MiB) are the unit: the adversary holds them (built
    # through one temporary copy), the engine a read-only copy, a stretch the played entries' features
    # and their weighted copy; measured peak 0.66 GiB. The ceiling, 12 such arrays (1.05 GiB), is
    # 1/54 of the old request.
    data = replify.datasets.digits()
    unit = data.features.shape[0] * 10 * 10 * (data.features.shape[1] + 1) * 8
    tracemalloc.start()
    try:
        r = replify.evaluate(learner, "classification-bandit", n=10, horizon=20_000, rho=0.1, pairs=2, seed=0,
                             progress=False, fast_path=True,
                             adversary_params={"features": data.features, "labels": data.labels})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.fast_path and r.claim == "certified"
    assert peak < 12 * unit, f"peak {peak / 2**30:.3g} GiB"


def test_a_ridge_too_large_for_memory_is_refused_before_allocating(monkeypatch):
    # d = 20 000 features: a 3.2 GB Gram per lane, and the solve's two copies, 12 GiB for one learner
    # (35.8 GiB for evaluate's group of 4 lanes): refused with d, n, the estimate and the way out, before
    # numpy is asked for anything
    learner = replify.wrap(TextbookLinUCB, n=3, horizon=1000, rho=0.1, seed=0)
    with pytest.raises(InvalidArgumentError, match=r"d=20000 features with n=3 arms .* need about 12 GiB .*"
                                                   r"RIDGE_BYTES = 4 GiB; give fewer features"):
        learner.act(np.zeros((3, 20_000)))
    monkeypatch.setattr(rounded_ridge, "RIDGE_BYTES", 2**20)  # the limit is read when d is known
    with pytest.raises(InvalidArgumentError, match=r"d=200 features .* more than .*RIDGE_BYTES = 1 MiB"):
        replify.wrap(TextbookLinUCB, n=3, horizon=1000, rho=0.1, seed=0).act(np.zeros((3, 200)))
