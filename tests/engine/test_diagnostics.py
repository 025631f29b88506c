"""The report's reference row and diagnostics: learning gain over `constant`, per-step
disagreement (approximate replicability), where pairs part against the proof's per-transition
bound, and the drift between draws against the radius the proof assumes."""

import math

import numpy as np
import pytest

import replify
from replify.experiments.audit import HistoryHash
from replify.base.randomness import DATA, INTERNAL, child, seed_sequence
from replify.evaluation.stats import binomial_upper_tail

SPREAD = {"means": np.linspace(0.3, 0.7, 10)}


def pair_actions(build, seq, *, pairs, seed):
    """Both runs of every pair, stepped by hand (the slow reference)."""
    root = seed_sequence(seed)
    out = []
    for k in range(pairs):
        runs = []
        for side in (0, 1):
            learner = build(child(root, INTERNAL, k))
            costs = np.asarray(seq.sample(np.random.default_rng(child(root, DATA, k, side))))
            runs.append(learner.run(costs))
        out.append(runs)
    return np.array(out)  # (pairs, 2, T)


def wrapped_hash(T, n, B, eps):
    return lambda s: replify.wrap(HistoryHash, n=n, horizon=T, rho=0.1, seed=s, norm="linf", block_size=B, eps=eps)


def test_step_disagreement_matches_a_hand_count_per_step_and_per_block():
    T, n, pairs = 600, 4, 12
    seq = replify.make_adversary("iid-bernoulli", n=n, horizon=T, seed=0)
    # a block learner (segments are blocks) with a large eps, so pairs part; and Hedge (steps)
    for build, segment in ((wrapped_hash(T, n, 50, 0.05), 50), (lambda s: replify.make("hedge", n=n, horizon=T, seed=s), 1)):
        report = replify.evaluate(build, seq, n=n, horizon=T, pairs=pairs, seed=4, fast_path=False)
        acts = pair_actions(build, seq, pairs=pairs, seed=4)
        per_step = (acts[:, 0] != acts[:, 1]).sum(axis=0)
        assert report.segment_length == segment
        assert np.array_equal(report.disagreement_counts, per_step[::segment])
        assert report.max_step_disagreement == per_step.max() / pairs > 0
        assert np.allclose(report.step_disagreement, per_step[::segment] / pairs)
        lo, hi = report.max_step_disagreement_ci
        assert lo <= report.max_step_disagreement <= hi


@pytest.mark.slow
def test_the_max_step_interval_covers_at_its_level():
    # The simultaneous interval must cover max_t P(a_t != a'_t). On a learner whose per-block
    # disagreement rates we know exactly, we check coverage over 60 seeded repetitions: with
    # coverage >= 0.95 the number of misses is Binomial(60, <= 0.05), and P(>= 9 misses) < 2e-3.
    T, B, pairs = 400, 100, 40

    class Coin(replify.components.blocks.BlockLearner):  # a block learner that parts in block 2 w.p. exactly 1/4
        def __init__(self, *, n, horizon, rng):
            super().__init__(n=n, horizon=horizon, block_size=B, domain=replify.base.checks.CostDomain(low=-1.0, high=1.0))
            self._action = 0

        def _decide(self, cums, steps):
            # block 2 plays 1 iff the first block's cost of expert 0 is positive (a fair coin per run)
            return np.array([int(c[0] > 0) if s == B else 0 for c, s in zip(cums, steps)])

    # Per run: P(first block's sum of 100 signs > 0) = q; pair parts in block 2 w.p. 2q(1-q).
    from scipy.stats import binom

    q = binom.sf(50, 100, 0.5)  # sum > 0 <=> heads > 50
    truth = 2 * q * (1 - q)
    misses = 0
    for seed in range(60):
        rep = replify.evaluate(lambda s: Coin(n=2, horizon=T, rng=None), "random-signs", n=2, horizon=T, pairs=pairs,
                               seed=seed, fast_path=False)
        lo, hi = rep.max_step_disagreement_ci
        misses += not (lo <= truth <= hi)
    assert misses < 9


def test_transition_divergence_sums_to_rho_hat_and_sits_beside_the_proofs_bound():
    T, n, B = 4_000, 8, 200
    eps = replify.certified_eps(horizon=T, n=n, rho=0.1, block_size=B, norm="linf")
    report = replify.evaluate(wrapped_hash(T, n, B, 4 * eps), "random-signs", n=n, horizon=T, pairs=300, seed=5)
    div, bound = report.transition_divergence, report.transition_bound
    assert div.size == bound.size == T // B - 1
    assert div.sum() == pytest.approx(report.rho_hat) and report.rho_hat > 0
    assert bound.sum() == pytest.approx(report.params["replicability_bound"], rel=1e-12)
    # Each transition's first-divergence rate is bounded by the per-transition bound (4x the
    # certified eps makes the total 0.4); over all transitions the count of pairs first parting
    # at k is Binomial(300, <= bound_k): not refuted at 1e-6 anywhere.
    counts = np.round(div * report.pairs).astype(int)
    assert all(binomial_upper_tail(int(c), report.pairs, float(b)) >= 1e-6 for c, b in zip(counts, bound))
    assert report.to_dict()["transition_divergence"] == div.tolist()


def test_concentration_reports_the_drift_against_the_proofs_assumption():
    T, n, B = 4_000, 16, 200
    report = replify.evaluate(wrapped_hash(T, n, B, 1e-9), "random-signs", n=n, horizon=T, pairs=200, seed=6,
                              fast_path=False)
    rows = report.concentration
    assert [r["step"] for r in rows] == [k * B for k in range(1, T // B)]  # fewer than 32 transitions: all
    for r in rows:
        t = r["step"]
        assert r["norm"] == "l1" and r["mean_bound"] == pytest.approx(n * math.sqrt(2 * t))
        # E||Delta_t||_1 = n E|2 Bin(2t, 1/2) - 2t| ~ n sqrt(4t/pi) = 0.80 of the bound; the mean of
        # 200 pairs has a relative standard error of ~1.5%, so 0.72..0.88 is a > 5-sigma window.
        assert 0.72 <= r["mean"] / r["mean_bound"] <= 0.88
        assert r["q50"] <= r["q90"] <= r["q99"] <= r["max"] < r["radius"] and r["above_radius"] == 0.0
    # The drift the engine records is the hand-computed one.
    seq = replify.make_adversary("random-signs", n=n, horizon=T, seed=0)  # it makes no choices of its own
    root = seed_sequence(6)
    a = seq.sample(np.random.default_rng(child(root, DATA, 3, 0)))[: rows[2]["step"]].sum(axis=0)
    b = seq.sample(np.random.default_rng(child(root, DATA, 3, 1)))[: rows[2]["step"]].sum(axis=0)
    assert report.drift[3, 2, 0] == np.abs(a - b).sum()
    assert report.drift[3, 2, 1] == (a - b).max() - (a - b).min()


def test_constant_is_replicable_and_learns_nothing():
    report = replify.evaluate("constant", "iid-bernoulli", n=10, horizon=20_000, pairs=200, seed=7, adversary_params=SPREAD)
    assert report.failures == 0 and report.params["replicability_bound"] == 0.0
    # Its regret estimates constant_regret without bias: the t interval on the gain covers 0.
    lo, hi = report.learning_gain_ci
    assert lo <= 0.0 <= hi
    # every expert is drawn (uniform from R): 200 draws over 10 experts miss one with prob < 2e-8
    assert set(report.action_counts[:, 0].argmax(axis=1).tolist()) == set(range(10))
    assert replify.make("constant", n=3, horizon=5, seed=0, rho=0.2).params.replicability_bound == 0.0


def test_split_commit_is_certified_and_learns_where_constant_does_not():
    T, pairs = 50_000, 200
    learner = replify.make("split-commit", n=10, horizon=T, seed=0, rho=0.1)
    p = learner.params
    assert p.block_size == T // 4 and p.eps == pytest.approx(0.1 / (10 * math.sqrt(p.block_size / 2)))
    assert p.replicability_bound == pytest.approx(0.1)
    report = replify.evaluate("split-commit", "iid-bernoulli", n=10, horizon=T, pairs=pairs, seed=8, rho=0.1,
                              adversary_params=SPREAD)
    assert report.learning_gain_ci[0] > 0.2 * report.constant_regret.mean()  # it learns
    # its certificate on ties (every mean 1/2: the argmin is decided by the grid alone), not refuted at 1e-6
    ties = replify.evaluate("split-commit", "iid-bernoulli", n=10, horizon=T, pairs=pairs, seed=9, rho=0.1)
    assert binomial_upper_tail(ties.failures, pairs, 0.1) >= 1e-6


def test_learning_gain_is_none_for_olo():
    from replify.components.actions import Box

    report = replify.evaluate("fllb", "iid-bernoulli", n=3, horizon=300, pairs=3, seed=0, rho=0.1, actions=Box(3),
                              block_size=100, adversary_params={"scale": 1 / 3})
    assert report.learning_gain is None and report.learning_gain_ci is None
    assert report.to_dict()["learning_gain"] is None


def test_step_counts_beyond_the_memory_cap_are_reported_as_absent(monkeypatch):
    from replify.engine import limits as engine  # the engine's sizes, which tests shrink

    monkeypatch.setattr(engine, "MAX_SEGMENTS", 50)
    report = replify.evaluate("hedge", "iid-bernoulli", n=3, horizon=100, pairs=4, seed=0)
    assert report.max_step_disagreement is None and report.max_step_disagreement_ci is None
    assert report.to_dict()["max_step_disagreement"] is None
    blocks = replify.evaluate("constant", "iid-bernoulli", n=3, horizon=100, pairs=4, seed=0)  # one segment: kept
    assert blocks.max_step_disagreement == 0.0


@pytest.mark.parametrize("learner, kw", [
    ("hedge", {}),
    ("ftplb-star", {"rho": 0.1, "block_size": 300, "eps": 0.05}),
    ("iid-experts", {"rho": 0.1, "noise_scale": 30.0}),
    ("constant", {}),
])
@pytest.mark.parametrize("fast_path", [None, False])
def test_pseudo_regret_is_the_expected_cost_of_the_actions_played_minus_the_best_mean(learner, kw, fast_path):
    # iid means: Σ_t μ(a_t) − T min μ = Σ_a counts[a] μ[a] − T min μ, on every engine path
    means = np.array([0.3, 0.4, 0.5, 0.6])
    r = replify.evaluate(learner, "iid-bernoulli", n=4, horizon=3000, pairs=6, seed=0, fast_path=fast_path,
                         adversary_params={"means": means}, **kw)
    expected = r.action_counts @ means - 3000 * means.min()
    assert np.allclose(r.pseudo_regret, expected, rtol=0, atol=1e-9)
    assert r.to_dict()["pseudo_regret_mean"] == pytest.approx(expected.mean())


def test_pseudo_regret_follows_switching_means_and_is_absent_without_means():
    means = [[0.2, 0.5, 0.8], [0.8, 0.5, 0.2]]
    r = replify.evaluate("constant", "switching-bernoulli", n=3, horizon=1000, pairs=8, seed=1,
                         adversary_params={"means": means})
    played = r.action_counts.argmax(axis=2)  # constant plays one expert throughout
    per_expert = 500 * np.array(means).sum(axis=0)  # Σ_t μ_t(a): 500 steps in each piece
    assert np.allclose(r.pseudo_regret, per_expert[played] - per_expert.min())
    plain = replify.evaluate("constant", "lazy-leader-trap", n=2, horizon=100, pairs=2, seed=0)
    assert plain.pseudo_regret is None and plain.to_dict()["pseudo_regret_mean"] is None


@pytest.mark.parametrize("learner, kw", [("hedge", {}), ("ftplb-star", {"rho": 0.1, "block_size": 100, "eps": 0.3})])
def test_replay_redraws_a_pair_as_it_was_evaluated(learner, kw):
    r = replify.evaluate(learner, "iid-bernoulli", n=3, horizon=1000, pairs=6, seed=4, fast_path=False,
                         adversary_params={"means": [0.45, 0.5, 0.55]}, **kw)
    assert not r.identical.all()  # pairs that part, and (below) pairs that may not
    for k in range(6):
        rep = r.replay(k)
        assert rep.as_evaluated and rep.costs[0].shape == (1000, 3)
        assert rep.identical == bool(r.identical[k]) and rep.first_divergence == r.first_divergence[k]
        assert np.allclose(rep.regret, r.regret[k], rtol=0, atol=1e-9)  # 0/1 costs: exact sums
        assert np.array_equal(np.bincount(rep.actions[0], minlength=3), r.action_counts[k, 0])


def test_replay_on_the_fast_path_says_it_redraws_and_refuses_other_pairs():
    r = replify.evaluate("ftplb-star", "iid-bernoulli", n=3, horizon=1000, pairs=4, seed=0, rho=0.1, block_size=100)
    assert r.fast_path and not r.replay(1).as_evaluated
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"k must be a pair of this report, in \[0, 4\); got 4"):
        r.replay(4)
    assert "replay_source" not in r.to_dict(per_pair=True)
