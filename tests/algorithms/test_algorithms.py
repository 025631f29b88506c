"""The paper's algorithms as registered learners: protocol, block structure and parameters."""

import itertools
import math
import warnings

import numpy as np
import pytest

import replify
from replify.components import blocks
from replify.components.actions import Box, Finite, L1Ball, Simplex
from replify.errors import BlockSizeWarning, InvalidArgumentError
from replify_plugins.learners.iid_experts import decision_bound

T, N = 6000, 4


def costs_for(name, seed=0, horizon=T, n=N):
    rng = np.random.default_rng(seed)
    c = (rng.random((horizon, n)) < np.linspace(0.3, 0.7, n)).astype(float)
    c[: horizon // 3, 0] = 1.0  # expert 0 is bad early and good later: the leader changes
    c[horizon // 3 :, 0] = 0.0
    return c / n if replify.learners()[name].norm == "l1" else c  # l1-bounded costs for OLO learners


CASES = {
    "fllb": dict(rho=0.1, block_size=250, eps=0.02),
    "ftplb": dict(rho=0.1, block_size=250, eps=0.02),
    "ftplb-star": dict(rho=0.1, block_size=250, eps=0.01),
    "ftpl": dict(eps=0.05),
    "fll": dict(eps=0.05),
    "iid-experts": dict(rho=0.1),
}


def step_all(learner, costs):
    return np.array([(learner.act(), learner.update(c))[0] for c in costs])


@pytest.mark.parametrize("name", sorted(CASES))
def test_run_is_bit_identical_to_stepping(name, monkeypatch):
    monkeypatch.setattr(blocks, "CHUNK_ROWS", 1000)  # cross chunk boundaries
    from replify_plugins.learners import iid_experts

    monkeypatch.setattr(iid_experts, "CHUNK_ROWS", 1000)
    c = costs_for(name)
    build = lambda: replify.make(name, n=N, horizon=T, seed=3, **CASES[name])  # noqa: E731
    stepped = step_all(build(), c)
    mixed = build()
    parts = np.concatenate([mixed.run(c[:1234]), step_all(mixed, c[1234:2000]), mixed.run(c[2000:])])
    assert np.array_equal(stepped, build().run(c))
    assert np.array_equal(stepped, parts)
    assert len(np.unique(stepped)) > 1  # the leader does change, so the comparison has teeth


@pytest.mark.parametrize("name", ["fllb", "ftplb", "ftplb-star"])
def test_actions_change_only_at_transitions(name):
    learner = replify.make(name, n=N, horizon=T, seed=5, **CASES[name])
    actions = learner.run(costs_for(name, seed=5))
    changes = np.flatnonzero(np.diff(actions)) + 2  # 1-based steps at which the action changed
    assert changes.size > 0 and np.all((changes - 1) % 250 == 0)


@pytest.mark.parametrize("name", ["ftpl", "fll"])
def test_baselines_decide_every_step_in_one_vectorised_pass(name, monkeypatch):
    calls = []
    cls = type(replify.make(name, n=N, horizon=T, seed=0, **CASES[name]))
    original = cls._decide
    monkeypatch.setattr(cls, "_decide", lambda self, cums, steps: calls.append(len(steps)) or original(self, cums, steps))
    replify.make(name, n=N, horizon=T, seed=0, **CASES[name]).run(costs_for(name))
    assert calls == [T - 1]  # every step after the first, in one call (T fits in one chunk)


@pytest.mark.parametrize("actions", [Box(3), L1Ball(3), Finite(np.array([[0.0, 0, 1], [1, 0, 0], [0.5, 0.5, 0]]))])
@pytest.mark.parametrize("name", ["fllb", "ftplb", "fll", "ftpl"])
def test_olo_action_sets_play_vectors_and_run_equals_stepping(name, actions):
    kw = {k: v for k, v in CASES[name].items()}
    c = np.random.default_rng(1).uniform(-1, 1, (900, 3)) / 3
    build = lambda: replify.make(name, actions=actions, horizon=900, seed=2, **kw)  # noqa: E731
    learner = build()
    assert learner.problem == "olo" and learner.action_set is actions
    a = build().run(c)
    assert a.shape == (900, 3) and np.array_equal(a, step_all(learner, c))


# -- theorem parameters ---------------------------------------------------------------------
GRID = [(10**6, 10, 0.1), (10**8, 2, 0.05), (10**9, 64, 0.2)]


@pytest.mark.parametrize("T_,n,rho", GRID)
def test_fllb_parameters_match_the_theorem(T_, n, rho):
    p = math.sqrt(2 * math.log(2 * T_ / rho)) + 2  # thm:FLLB-regret-replicability
    B = (2 * p * math.sqrt(n) * T_ / rho) ** (2 / 3)
    params = replify.learners()["fllb"].parameters(horizon=T_, n=n, rho=rho, diameter=2.0)
    assert params.block_size_theorem == pytest.approx(B, rel=1e-12) and params.block_size == round(B)
    assert params.eps == pytest.approx(1 / math.sqrt(round(B) * T_), rel=1e-12)
    assert params.regret_bound == pytest.approx(2.0 * (round(B) * params.eps * T_ + 1 / params.eps), rel=1e-12)
    k = -(-T_ // round(B)) - 1
    # the proof's bound, tightened (replify.guarantees.certificates): eps * E||Delta_t||_1 <= eps sqrt(2 n t) per transition
    tight = params.eps * sum(math.sqrt(2 * n * j * round(B)) for j in range(1, k + 1))
    assert params.replicability_bound == pytest.approx(tight, rel=1e-9)
    assert params.replicability_bound <= (rho / (2 * T_) + params.eps * p * math.sqrt(n * T_)) * k
    # FTPLB uses the same parameters (the paper analyses FLLB through it), but proves no replicability.
    ftplb = replify.learners()["ftplb"].parameters(horizon=T_, n=n, rho=rho, diameter=2.0)
    assert (ftplb.block_size, ftplb.eps, ftplb.replicability_bound) == (params.block_size, params.eps, None)


@pytest.mark.parametrize("T_,n,rho", GRID)
def test_ftplb_star_parameters_match_the_theorem(T_, n, rho):
    p = math.sqrt(2 * (math.log(8 * T_ / rho) / math.log(n) + 1))  # thm:FTPLS-regret-replicability
    B = (8 * p * math.log(n) * T_ / rho) ** (2 / 3)
    default = replify.learners()["ftplb-star"].parameters(horizon=T_, n=n, rho=rho)
    # the default: the B and eps that minimise the certified regret bound, spending rho exactly, and no worse a
    # regret bound than the theorem's own B with its certified eps
    assert default.block_size_theorem == pytest.approx(B, rel=1e-12) and default.overrides == ()
    assert default.certified and default.replicability_bound == pytest.approx(rho, rel=1e-9)
    assert default.eps == pytest.approx(replify.certified_eps("ftplb-star", horizon=T_, n=n, rho=rho,
                                                              block_size=default.block_size), rel=1e-12)
    at_theorem = min(round(B), T_ - 1)
    theorem_eps = replify.certified_eps("ftplb-star", horizon=T_, n=n, rho=rho, block_size=at_theorem)
    assert default.regret_bound <= theorem_eps * at_theorem * T_ + math.log(n) / theorem_eps
    # the theorem's parameters, when its block size is asked for
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BlockSizeWarning)
        params = replify.learners()["ftplb-star"].parameters(horizon=T_, n=n, rho=rho, block_size=round(B))
    assert params.block_size_theorem == pytest.approx(B, rel=1e-12) and params.block_size == min(round(B), T_)
    assert params.eps == pytest.approx(math.sqrt(math.log(n) / (round(B) * T_)), rel=1e-12)
    assert params.regret_bound == pytest.approx(params.eps * round(B) * T_ + math.log(n) / params.eps, rel=1e-12)
    k = -(-T_ // round(B)) - 1
    paper = (rho / (2 * T_) + 4 * params.eps * p * math.sqrt(T_ * math.log(n))) * k
    # tightened: eps (E[max Delta - min Delta] + 1) <= eps (2 sqrt(t ln n) + 1) per transition
    tight = params.eps * sum(2 * math.sqrt(j * round(B) * math.log(n)) + 1 for j in range(1, k + 1))
    # each run charged its own side (docs/certificates.md): eps (sqrt(ln n t) + 1) + eps^2 (kappa_n t + sqrt(ln n t))
    # (at n = 2, R = |Delta_1 - Delta_2| has E R^2 <= 2t: sqrt(ln n) becomes sqrt(2)/2 and kappa_n 1)
    kappa = min(2 / c * (math.log(n) - 0.5 * math.log(1 - c)) for c in np.linspace(0.01, 0.99, 99)) if n > 2 else 1.0
    root = math.sqrt(math.log(n)) if n > 2 else math.sqrt(2) / 2
    sharp = sum(params.eps * (root * math.sqrt(j * round(B)) + 1)
                + params.eps**2 * (kappa * j * round(B) + root * math.sqrt(j * round(B))) for j in range(1, k + 1))
    assert params.replicability_bound == pytest.approx(min(tight, sharp), rel=1e-9)
    assert params.replicability_bound <= paper


@pytest.mark.parametrize("T_,n,rho", GRID + [(10**4, 10, 0.1)])
def test_iid_experts_parameters_match_the_algorithm(T_, n, rho):
    ll = math.log(math.log(T_))
    params = replify.learners()["iid-experts"].parameters(horizon=T_, n=n, rho=rho)
    assert params.alpha == pytest.approx(math.sqrt(math.log(8 * n * ll / rho)))
    assert params.gamma == pytest.approx(rho / (8 * ll))
    assert params.K == pytest.approx(1000 / rho * ll**2 * math.log(n * ll / rho) * math.sqrt(T_))
    assert params.fallback_threshold == pytest.approx(params.K - 2 * math.sqrt(T_ * math.log(n)))
    lengths = params.block_lengths
    assert sum(lengths) == T_ and list(np.cumsum(lengths)) == list(params.block_ends)
    for i, length in enumerate(lengths[:-1], start=1):
        assert length == round(T_ ** (1 - 2.0**-i))
    assert lengths[-1] <= round(T_ ** (1 - 2.0 ** -len(lengths)))  # the last block is clipped
    # the default is our certified schedule (plugins/learners/iid_experts.py): rho split across the decisions
    # as the lengths of the blocks they govern, each decision's bound spending exactly its share
    assert params.noise_scale is None and params.certificate == "ours" and params.certified
    assert params.replicability_bound == pytest.approx(rho, rel=1e-9)
    shares = [rho * length / sum(lengths[1:]) for length in lengths[1:]]
    spent = [decision_bound([e], [t], n) for e, t in zip(params.eps_schedule, params.block_ends[:-1])]
    assert spent == pytest.approx(shares, rel=1e-9)
    # noise_scale=1: the proof's noise, gamma / (2 alpha sqrt(t)) with t the steps before the block
    own = replify.learners()["iid-experts"].parameters(horizon=T_, n=n, rho=rho, noise_scale=1.0)
    proof = [own.gamma / (2 * own.alpha * math.sqrt(t)) for t in own.block_ends[:-1]]
    assert own.eps_schedule == pytest.approx(proof) and own.certified
    longest = int(np.argmax(lengths[1:]))  # the decision that governs the longest block: far less noise than the proof's
    assert params.eps_schedule[longest] > 5 * proof[longest]


def test_make_exposes_the_parameters_and_honours_overrides():
    learner = replify.make("ftplb-star", n=10, horizon=10**6, rho=0.1, seed=3)
    assert (learner.block_size, learner.eps) == (learner.params.block_size, learner.params.eps)
    assert learner.params.theorem == "thm:FTPLS-regret-replicability" and learner.params.overrides == ()
    over = replify.make("ftplb-star", n=10, horizon=10**6, rho=0.1, seed=3, block_size=5_000)
    assert over.block_size == 5_000 and over.params.overrides == ("block_size",)
    assert over.eps == pytest.approx(math.sqrt(math.log(10) / (5_000 * 10**6)))  # the theorem's relation kept
    assert replify.make("fllb", actions=Simplex(5), horizon=10**6, rho=0.1, seed=3).problem == "experts"


@pytest.mark.parametrize("name", ["fllb", "ftplb-star"])
def test_theorem_block_size_reaching_the_horizon_warns_and_plays_one_block(name):
    # FTPLB*'s default is no longer the theorem's B (it plays the certified-regret-optimal one): ask for it
    asked = {"block_size": 5_000} if name == "ftplb-star" else {}
    with pytest.warns(BlockSizeWarning, match=r"reaches the horizon T=1000"):
        learner = replify.make(name, n=3, horizon=1000, rho=0.1, seed=0, **asked)
    assert learner.block_size == 1000 and learner.params.n_blocks == 1
    a = learner.run(costs_for(name, horizon=1000, n=3))
    assert np.all(a == a[0])


def test_ftplb_star_defaults_play_several_blocks_where_the_theorem_plays_one():
    with warnings.catch_warnings():
        warnings.simplefilter("error", BlockSizeWarning)  # no block reaches T
        learner = replify.make("ftplb-star", n=3, horizon=1000, rho=0.1, seed=0)
    assert learner.params.n_blocks >= 2 and learner.params.certified
    assert learner.params.block_size_theorem >= 1000


# -- action sets --------------------------------------------------------------------------
def brute_vertices(aset):
    if isinstance(aset, Box):
        return np.array(list(itertools.product([0.0, 1.0], repeat=aset.dim)))
    if isinstance(aset, L1Ball):
        return np.vstack([np.eye(aset.dim), -np.eye(aset.dim)])
    if isinstance(aset, Simplex):
        return np.eye(aset.dim)
    return aset.points


@pytest.mark.parametrize(
    "aset,diameter",
    [(Simplex(4), 2.0), (Box(4), 4.0), (L1Ball(4), 2.0), (Finite(np.array([[0.0, 0, 0, 1], [3, 0, 0, 0], [1, 1, 0, 0]])), 4.0)],
)
def test_oracle_and_diameter_against_brute_force(aset, diameter):
    V = brute_vertices(aset)
    assert aset.diameter == diameter == np.abs(V[:, None] - V[None]).sum(axis=2).max()
    g = np.random.default_rng(0).normal(size=(200, aset.dim))
    chosen = aset.vectors(aset.argmin(g))
    assert np.allclose((chosen * g).sum(axis=1), (g @ V.T).min(axis=1))
    assert aset.min_cost(g[0]) == pytest.approx((V @ g[0]).min())


def test_bad_action_sets_and_rho_rules():
    with pytest.raises(InvalidArgumentError, match=r"n=5 does not match the dimension 3"):
        replify.make("fllb", n=5, actions=Simplex(3), horizon=100, rho=0.1, seed=0)
    with pytest.raises(InvalidArgumentError, match=r"the l1 diameter D is 0"):
        Finite(np.array([[1.0, 2.0], [1.0, 2.0]]))

    class Point(Box):  # a user's action set that collapses to a point
        @property
        def diameter(self):
            return 0.0

    with pytest.raises(InvalidArgumentError, match=r"positive l1 diameter D, got D=0.0"):
        replify.make("fllb", actions=Point(2), horizon=100, rho=0.1, seed=0, block_size=10)
    with pytest.raises(InvalidArgumentError, match=r"'ftplb-star' is adversarial-replicable and needs rho"):
        replify.make("ftplb-star", n=3, horizon=100, seed=0)
    with pytest.raises(InvalidArgumentError, match=r"'iid-experts' is iid-replicable and needs rho"):
        replify.make("iid-experts", n=3, horizon=100, seed=0)
    for baseline in ("ftpl", "fll"):
        with pytest.raises(InvalidArgumentError, match=rf"{baseline!r} has no replicability guarantee; got rho=0.1"):
            replify.make(baseline, n=3, horizon=100, seed=0, rho=0.1)
    with pytest.raises(InvalidArgumentError, match=r"needs n \(the number of experts or the dimension\) or actions="):
        replify.make("fllb", horizon=100, seed=0, rho=0.1)
    with pytest.raises(InvalidArgumentError, match=r"horizon must be >= 16 for iid-experts"):
        replify.make("iid-experts", n=3, horizon=10, seed=0, rho=0.1)
    with pytest.raises(InvalidArgumentError, match=r"ftplb-star: eps must be in \(0, 1\] \(a geometric parameter\), got 2 \(given\)"):
        replify.make("ftplb-star", n=3, horizon=100, seed=0, rho=0.1, block_size=10, eps=2.0)


def test_olo_learners_take_l1_bounded_costs():
    learner = replify.make("fllb", n=3, horizon=100, seed=0, rho=0.1, block_size=10)
    with pytest.raises(replify.errors.CostError, match=r"l1 norm <= 1, got l1 norm 1.5"):
        learner.update([0.5, 0.5, 0.5])


def test_evaluate_measures_olo_regret_over_the_action_set():
    class L1Costs:
        n, horizon = 3, 500

        def sample(self, rng):
            return rng.uniform(-1, 1, (self.horizon, self.n)) / 3 + np.array([0.1, -0.1, 0.0]) / 3

    report = replify.evaluate("ftpl", L1Costs(), n=3, horizon=500, pairs=3, seed=4, actions=Box(3))
    learner = replify.make("ftpl", actions=Box(3), horizon=500, seed=replify.base.randomness.child(replify.base.randomness.seed_sequence(4), 0, 0))
    costs = L1Costs().sample(np.random.default_rng(replify.base.randomness.child(replify.base.randomness.seed_sequence(4), 2, 0, 0)))
    a = learner.run(costs)
    expected = (a * costs).sum() - np.minimum(costs.sum(axis=0), 0).sum()  # best vertex of the box
    assert report.regret[0, 0] == pytest.approx(expected)
