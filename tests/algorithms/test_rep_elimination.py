"""rep-elimination and rep-etc: the schedule, the rounded decisions, the iid replicability bound
(tested against an instance built to make the two runs part, with a broken variant that the same
test catches), and what the learners do on easy and hard instances."""

import itertools
import math
import warnings

import numpy as np
import pytest

import replify
from replify.evaluation.stats import binomial_upper_tail
from replify_plugins.bandits.rep_elimination import RepElimination, parameters, phase_pulls, replicability_bound


def test_the_schedule_doubles_and_leaves_room_for_a_decision():
    assert phase_pulls(horizon=4000, first_pulls=16).tolist() == [16, 32, 64, 128, 256, 512, 1024]
    assert phase_pulls(horizon=31, first_pulls=16).tolist() == []  # no two arms reach N_1
    p = parameters(horizon=100_000, n=10, rho=0.1)
    assert p.certified and p.rho_bound == pytest.approx(0.1)
    # phase p's term is rho_p = rho sqrt(N_p)/sum_q sqrt(N_q): w_p = n sqrt(1/(2 N_p))/rho_p
    S = sum(math.sqrt(v) for v in p.pulls)
    for N, w in zip(p.pulls, p.widths):
        assert w == pytest.approx(10 * math.sqrt(0.5 / N) / (0.1 * math.sqrt(N) / S))
    assert p.widths[-1] == pytest.approx(1.31, abs=0.01)  # at T = 1e5: N_P = 32768
    scaled = parameters(horizon=100_000, n=10, rho=0.1, width_scale=0.01)
    assert not scaled.certified and scaled.rho_bound == pytest.approx(10.0) and scaled.overrides == ("width_scale",)
    assert replicability_bound(n=3, pulls=np.array([8, 32]), widths=np.array([0.5, 0.25])) == pytest.approx(
        3 * (0.25 / 0.5 + 0.125 / 0.25))


@pytest.mark.parametrize("bad, message", [
    ({"rule": "greedy"}, "rule must be one of"),
    ({"width_scale": 0}, "width_scale"),
    ({"first_pulls": 0}, "first_pulls"),
    ({"delta": 1.5}, "delta must be in"),
    ({"rho": 1.2}, "rho"),
])
def test_bad_parameters_are_refused_by_name(bad, message):
    kw = {"rho": 0.1, **bad}
    with pytest.raises(replify.errors.InvalidArgumentError, match=message):
        replify.make("rep-elimination", n=3, horizon=100, seed=0, **kw)


@pytest.mark.parametrize("horizon", [1, 2, 31, 33])
def test_short_horizons_play_round_robin_to_the_end(horizon):
    # fewer steps than a decision needs (T < 2 N_1) or one decision: every step is played, no error
    for name in ("rep-elimination", "rep-etc"):
        r = replify.evaluate(name, "bernoulli-arms", n=3, horizon=horizon, pairs=2, seed=0, rho=0.3)
        assert r.action_counts.sum(axis=2).tolist() == [[horizon, horizon]] * 2 and r.rho_hat == 0.0


def test_observe_names_what_it_needs():
    learner = replify.make("rep-elimination", n=3, horizon=100, seed=0, rho=0.1)
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"needs a next_batch\(\) first"):
        learner.observe([0.5])
    arms = learner.next_batch()
    with pytest.raises(replify.errors.InvalidArgumentError, match=rf"needs the {arms.size} costs .* got shape \(3,\)"):
        learner.observe([0.5] * 3)
    with pytest.raises(replify.errors.CostError, match=r"cost at step 2 must be a number in \[0, 1\]; got nan"):
        learner.observe([0.5, float("nan")] + [0.5] * (arms.size - 2))


def test_the_certified_learner_is_shown_as_certified_and_a_scaled_one_as_measured():
    kw = dict(n=3, horizon=2000, pairs=4, seed=0)
    assert replify.evaluate("rep-elimination", "iid-bernoulli", rho=0.1, **kw).claim == "certified"
    assert replify.evaluate("rep-etc", "iid-bernoulli", rho=0.1, width_scale=0.5, **kw).claim == "measured"


def _active_after(learner, costs):
    for c in costs:
        a = learner.act()
        learner.update(a, float(c[a]))
    return learner.active.tolist()


def test_elimination_drops_the_beaten_arms_and_commit_waits_for_all_of_them():
    # arms 0 and 1 are good (cost 0.1), 2 and 3 bad (0.9): elimination drops 2 and 3; commit must
    # wait until arm 0 or 1 beats every other, which a tie never does
    rng = np.random.default_rng(0)
    costs = (rng.random((3000, 4)) < np.array([0.1, 0.1, 0.9, 0.9])).astype(float)
    kw = dict(n=4, horizon=3000, rho=0.5, first_pulls=8, width_scale=0.01, confidence_scale=0.5)
    elim = RepElimination(rng=np.random.default_rng(1), **kw)
    assert _active_after(elim, costs) == [0, 1]
    etc = RepElimination(rng=np.random.default_rng(1), rule="commit", **kw)
    assert _active_after(etc, costs) == [0, 1, 2, 3]
    costs[:, 1] = 1.0  # now arm 0 beats every other: commit
    etc = RepElimination(rng=np.random.default_rng(1), rule="commit", **kw)
    assert _active_after(etc, costs) == [0]


class UnsharedOffsets(RepElimination):
    """A broken variant: each run rounds on its own grid (an offset not drawn from R)."""

    built = itertools.count()

    def __init__(self, **kw):
        super().__init__(**kw)
        self._own = np.random.default_rng(next(self.built))  # a seed per run: the two runs differ

    def _decide(self):
        self._rng = self._own
        super()._decide()


# Two arms with means 0.1 and 0.9 at T = 4000, rho = 0.5, a negligible confidence radius: the
# certified grid (w = 0.55 and 0.28 at the last two phases) is as fine as the bound allows, and the gap 0.8 lies
# between one and two grid cells, so whether arm 1 is beaten at those phases turns on the offset.
HARD = dict(n=2, horizon=4000, pairs=400, seed=3, adversary_params={"means": [0.1, 0.9]})


def _hard(cls, rho):
    return lambda n, horizon, rng: cls(n=n, horizon=horizon, rng=rng, rho=rho, confidence_scale=1e-9)


@pytest.mark.slow
def test_the_iid_bound_survives_an_instance_built_to_break_it_and_a_broken_variant_does_not():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", replify.errors.ReplifyWarning)
        good = replify.evaluate(_hard(RepElimination, 0.5), "iid-bernoulli", **HARD)
        broken = replify.evaluate(_hard(UnsharedOffsets, 0.5), "iid-bernoulli", **HARD)
    # the claim rho <= 0.5 (the bound at these parameters) is refuted only if 400 pairs show
    # failures whose exact binomial p-value under rho = 0.5 is below 1e-3 (measured: 19/400)
    assert binomial_upper_tail(good.failures, good.pairs, 0.5) > 1e-3
    # the instance is sensitive: without a shared grid the runs part far more often (measured
    # 205/400). The threshold 80 separates the two: a learner whose rate were even 0.1 would reach
    # it with probability < 1e-8 (P(Bin(400, 0.1) >= 80) = 1.7e-9), and the broken one (rate
    # ~0.4) misses it with probability < 1e-20; 40 bounds the correct one's 19/400 the same way
    assert good.failures < 40 and broken.failures >= 80
    assert binomial_upper_tail(80, 400, 0.1) < 1e-8


def test_the_certified_learner_learns_a_large_gap_and_commits():
    # gap 0.9 (means 0.05 and 0.95), two arms, T = 20000, rho = 0.5: the certified grid (w = 0.44
    # at N = 4096) resolves it at the later phases; the regret is then ~4096 * 0.9 against ~9000
    r = replify.evaluate("rep-etc", "bernoulli-arms", n=2, horizon=20_000, pairs=20, seed=1, rho=0.5,
                         adversary_params={"gap": 0.9, "base": 0.95})
    c = replify.evaluate("constant", "bernoulli-arms", n=2, horizon=20_000, pairs=20, seed=1,
                         adversary_params={"gap": 0.9, "base": 0.95})
    assert binomial_upper_tail(r.failures, r.pairs, 0.5) > 1e-3  # the certified 0.5 is not refuted
    assert float(r.pseudo_regret.mean()) < 0.6 * float(c.pseudo_regret.mean())


@pytest.mark.slow
def test_stress_does_not_refute_the_certified_grid_on_any_family():
    # the stress suite's worst adversary at T = 3000, n = 4; refutes() asks for an exact binomial
    # p-value below 1e-3 against rho = 0.2
    for name in ("rep-elimination", "rep-etc"):
        found = replify.stress(name, n=4, horizon=3000, rho=0.2, budget=400, seed=0)
        assert not found.refutes(0.2), found.worst


def test_a_phase_runs_as_several_batches_and_plays_as_stepping_does(monkeypatch):
    # batches are capped (a phase at T = 1e9 is never materialised): with a cap of 7 arms, the
    # learner plays by batches what it plays by steps, decisions and sums included
    import replify_plugins.bandits.rep_elimination as mod

    monkeypatch.setattr(mod, "MAX_BATCH", 7)
    rng = np.random.default_rng(5)
    costs = (rng.random((900, 3)) < np.array([0.1, 0.5, 0.9])).astype(float)
    kw = dict(n=3, horizon=900, rho=0.5, first_pulls=4, width_scale=0.01, confidence_scale=0.3)
    stepper, batcher = RepElimination(rng=np.random.default_rng(2), **kw), RepElimination(rng=np.random.default_rng(2), **kw)
    stepped = []
    for c in costs:
        a = stepper.act()
        stepped.append(a)
        stepper.update(a, float(c[a]))
    played = []
    while len(played) < 900:
        arms = batcher.next_batch()
        assert 1 <= arms.size <= 7
        batcher.observe(costs[len(played) : len(played) + arms.size][np.arange(arms.size), arms])
        played += arms.tolist()
    assert played == stepped and batcher.active.tolist() == stepper.active.tolist() == [0]
    assert np.array_equal(batcher.sums, stepper.sums) and batcher.phase == stepper.phase >= 2
