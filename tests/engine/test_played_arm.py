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
