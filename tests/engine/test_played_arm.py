"""The engine draws only the played arm's cost for bandit learners on adversaries whose arms are
independent given the step (replify.engine.played): the law of every run is that of the full
draw, lanes and stepping alone agree bit for bit, and a replay gives the pair as evaluated."""

import math

import numpy as np
import pytest

import replify
import replify.engine.paths as paths
import replify.engine.run as run


class FullDraw:
    """The same adversary without its arm_law: the engine then draws every arm at every step."""

    def __init__(self, seq):
        self.seq, self.n, self.horizon = seq, seq.n, seq.horizon
        for name in ("iid", "law_changes", "cost_bounds", "expected_sums", "integer_costs"):
            if hasattr(seq, name):
                setattr(self, name, getattr(seq, name))

    def sample_chunk(self, rng, start, stop):
        return self.seq.sample_chunk(rng, start, stop)

    def sample(self, rng):
        return self.seq.sample(rng)


def dkw_threshold(m, delta):
    """Two samples of m each: sup |F1 - F2| exceeds this with probability at most delta when both
    come from one law (the Dvoretzky-Kiefer-Wolfowitz inequality with Massart's constant, exact:
    P(sup |F_m - F| > e) <= 2 exp(-2 m e^2), for each sample at delta / 2)."""
    return 2.0 * math.sqrt(math.log(4.0 / delta) / (2.0 * m))


def sup_distance(x, y):
    grid = np.union1d(x, y)
    fx = np.searchsorted(np.sort(x), grid, side="right") / x.size
    fy = np.searchsorted(np.sort(y), grid, side="right") / y.size
    return float(np.abs(fx - fy).max())


CASES = [
    ("ucb1", "bernoulli-arms", {"gap": 0.1}, {}),
    ("exp3", "iid-bernoulli", {"means": [0.3, 0.5, 0.6]}, {}),
    ("ucb1", "gaussian-arms", {"gap": 0.1, "sigma": 0.5}, {"sigma": 0.5}),  # the normal law
    ("ucb1", "switching-bernoulli", {"means": [[0.3, 0.6, 0.5], [0.7, 0.4, 0.5]]}, {}),  # two pieces
]


@pytest.mark.slow  # 1600 runs per path and case: the full tier; the lanes/replay test below is the default's
@pytest.mark.parametrize("learner, adversary, params, kw", CASES, ids=[c[1] for c in CASES])
def test_drawing_only_the_played_arm_keeps_the_law_of_the_full_draw(learner, adversary, params, kw):
    # 800 pairs (1600 runs) per path at T = 200; a false alarm has probability at most 1e-6 per
    # statistic (DKW, exact), so the threshold is 0.109 on the regret's and pseudo-regret's CDFs and on
    # each arm's share of the pulls (Hoeffding, range 1: 2 sqrt(ln(4/delta) / (2 m)) the same number)
    n, T, pairs = 3, 200, 800
    seq = replify.make_adversary(adversary, n=n, horizon=T, seed=1, **params)
    played = replify.evaluate(learner, seq, n=n, horizon=T, pairs=pairs, seed=5, progress=False, **kw)
    full = replify.evaluate(learner, FullDraw(seq), n=n, horizon=T, pairs=pairs, seed=6, progress=False, **kw)
    m, threshold = 2 * pairs, dkw_threshold(2 * pairs, 1e-6)
    assert sup_distance(played.regret.ravel(), full.regret.ravel()) < threshold
    assert sup_distance(played.pseudo_regret.ravel(), full.pseudo_regret.ravel()) < threshold
    share = lambda r: np.asarray(r.action_counts).reshape(m, n) / T  # noqa: E731
    assert np.abs(share(played).mean(axis=0) - share(full).mean(axis=0)).max() < threshold
    # not the same draws: the played-arm path was taken
    assert not np.array_equal(played.regret, replify.evaluate(learner, FullDraw(seq), n=n, horizon=T, pairs=pairs,
                                                              seed=5, progress=False, **kw).regret)


def test_the_comparator_is_every_arms_whole_total():
    # constant plays one arm; its regret is that arm's total minus the best arm's: on arms of means
    # 0.2 and 0.8 the best arm's total over T steps is near 0.2 T whichever arm was played
    seq = replify.make_adversary("iid-bernoulli", n=2, horizon=4000, seed=0, means=[0.2, 0.8])
    r = replify.evaluate("ucb1", seq, n=2, horizon=4000, pairs=20, seed=0, progress=False)
    # regret - pseudo-regret = (paid - its expectation) - (best total - best mean total): the first a martingale of
    # costs in [0, 1] (Azuma: beyond 7 sqrt(T) with probability 2 exp(-24.5)), the second at most the larger arm
    # deviation (Hoeffding: beyond 3 sqrt(T) with probability 2 x 2 exp(-18)); over 40 runs, 3e-6 in all. A
    # comparator that missed the unplayed steps would be off by about 0.6 T = 2400, far beyond 10 sqrt(T) = 632.
    assert np.all(np.abs(r.pseudo_regret - r.regret) < 10 * math.sqrt(4000))
    assert np.asarray(r.regret_curve_values)[..., -1].tolist() == r.regret.tolist()  # the curve ends at the regret


def test_lanes_and_stepping_alone_agree_and_a_replay_is_the_pair_as_evaluated(monkeypatch):
    kw = dict(n=3, horizon=700, pairs=6, seed=2, progress=False, adversary_params={"gap": 0.1})
    lanes = replify.evaluate("ucb1", "bernoulli-arms", **kw)
    monkeypatch.setattr(paths, "lane_form", lambda learners: None)
    monkeypatch.setattr(run, "offers_lanes", lambda learner: False)
    alone = replify.evaluate("ucb1", "bernoulli-arms", **kw)
    for field in ("regret", "identical", "pseudo_regret", "action_counts", "constant_regret"):
        assert np.array_equal(getattr(lanes, field), getattr(alone, field)), field
    replay = lanes.replay(1)
    assert replay.as_evaluated and np.allclose(replay.regret, lanes.regret[1], atol=1e-9)
    costs = replay.costs[0]
    assert costs.shape == (700, 3) and set(np.unique(costs)) <= {0.0, 1.0}


class Lies:
    """iid arms that draw Bernoulli(``drawn``) costs and declare ``arm_law`` as ``law(start, stop)``."""

    iid, cost_bounds = True, (0.0, 1.0)

    def __init__(self, law, drawn=(0.8, 0.5, 0.5), horizon=2000, uniform=False):
        self.n, self.horizon, self.law, self.drawn, self.uniform = 3, horizon, law, np.asarray(drawn), uniform

    def sample_chunk(self, rng, start, stop):
        u = rng.random((stop - start, self.n))
        return u if self.uniform else (u < self.drawn).astype(np.float64)

    def sample(self, rng):
        return self.sample_chunk(rng, 0, self.horizon)

    def arm_law(self, start, stop):
        return self.law(start, stop)


def _declared(start, stop):
    return "bernoulli", np.array([[0.2, 0.5, 0.5]]), 1.0


def _varying(start, stop):  # a different law at every step of one iid piece
    return "bernoulli", np.tile([[0.8, 0.5, 0.5]], (stop - start, 1)) * (np.arange(start, stop) % 2)[:, None], 1.0


LIES = [
    # means (0.2, .5, .5) declared over draws of (0.8, .5, .5)
    (_declared, False, r"arm 0 over steps 1..2000, .* mean cost 0.8.* against the declared 0.2"),
    (_declared, True, r"so arm 0 costs 0 or 1, but its sample_chunk drew 0\."),  # uniform costs declared Bernoulli
    (_varying, False, r"the law must be one within each piece"),  # regret -134.75 once
]


@pytest.mark.parametrize("learner", ["ucb1", "exp3", "thompson", "rep-etc"])
@pytest.mark.parametrize("law, uniform, words", LIES, ids=["other means", "costs not 0 or 1", "varying in a piece"])
def test_an_arm_law_that_the_costs_contradict_is_refused(learner, law, uniform, words):
    # The audit's false alarm is at most 1e-9 per evaluation (Hoeffding and DKW, exact, union bound over
    # the arms); the lies here are far beyond its thresholds (0.8 against 0.2 where it allows 0.072).
    kw = {"rho": 0.1} if learner == "rep-etc" else {}
    with pytest.raises(replify.errors.DeclarationError, match=words):
        replify.evaluate(learner, Lies(law, uniform=uniform), n=3, horizon=2000, pairs=2, seed=0,
                         progress=False, **kw)


def test_a_normal_law_over_costs_of_another_shape_is_refused():
    # 0/1 costs declared normal (a learner for unbounded costs takes the normal law): the standardised
    # costs are +-1, 0.16 or more from the normal's distribution function at -1 (DKW allows 0.072)
    normal = lambda start, stop: ("normal", np.array([[0.8, 0.5, 0.5]]), 0.5)  # noqa: E731
    with pytest.raises(replify.errors.DeclarationError, match=r"standardised costs \(c - loc\)/scale are .* away"):
        replify.evaluate("ucb1", Lies(normal), n=3, horizon=2000, pairs=2, seed=0, progress=False, sigma=0.5)


def test_an_honest_arm_law_passes_the_audit_on_many_seeds():
    # the audit's thresholds hold the shipped laws: 10 seeds of each, no refusal (each at most 1e-9)
    laws = (("iid-bernoulli", {"means": [0.3, 0.5, 0.6]}, {}), ("gaussian-arms", {"gap": 0.1, "sigma": 0.5}, {"sigma": 0.5}),
            ("switching-bernoulli", {"means": [[0.3, 0.6, 0.5], [0.7, 0.4, 0.5]]}, {}))
    for s in range(10):
        for name, params, kw in laws:
            replify.evaluate("ucb1", name, n=3, horizon=3000, pairs=2, seed=s, progress=False, adversary_params=params, **kw)
