"""Contextual and linear bandits: the protocol through the engine (regret against the best policy,
policies compared where contexts change, the block-sum path on fixed features), the adversaries,
the baselines, and the two replicable learners' certificates — their formulas re-derived, and
attacks placed where they are weakest, refuted only by an exact binomial tail at level 1e-6."""

import math

import numpy as np
import pytest

import replify
from replify.components.sequences import ChunkedSequence
from replify.errors import InvalidArgumentError, ReplifyError, ReplifyWarning
from replify.evaluation.stats import binomial_upper_tail
from replify_plugins.contextual.linucb import LinUCB
from replify_plugins.contextual.rep_linear_elimination import g_optimal_design, linear_parameters
from replify_plugins.contextual.rep_ridge import ridge_parameters


def binomial_upper(m, p, level=1e-6):
    """The smallest k with P(Binomial(m, p) >= k) <= level: k or more parted pairs refute a rate of p
    or less at that level (the exact binomial tail)."""
    return next(k for k in range(m + 2) if binomial_upper_tail(k, m, p) <= level)


class Oracle:
    """A user's own contextual learner (a plain class): told θ, it plays the best policy's arm —
    or, with ``worst``, the worst arm. Names its policy (θ), so runs are compared by it."""

    problem, feedback = "contextual", "bandit"

    def __init__(self, *, n, horizon, rng, theta, worst=False):
        self.n, self.horizon, self.theta, self.worst = n, horizon, np.asarray(theta, float), worst

    def act(self, context):
        means = context @ self.theta
        return int(np.argmax(means) if self.worst else np.argmin(means))

    def update(self, action, cost):
        pass

    def policy(self):
        return self.theta


THETA = np.array([0.6, -0.8, 0.0])


def oracle(**kw):
    return lambda *, n, horizon, rng: Oracle(n=n, horizon=horizon, rng=rng, theta=THETA, **kw)


def test_a_users_contextual_learner_is_scored_against_the_best_policy():
    # Contexts that change every step: the oracle plays the best policy, so its regret and
    # pseudo-regret are 0 exactly; the worst-arm player pays the whole spread of every step.
    common = dict(n=4, horizon=1000, pairs=2, seed=0, adversary_params={"d": 3, "theta": THETA, "contexts": "sphere"},
                  progress=False)
    best = replify.evaluate(oracle(), "linear-gaussian", **common)
    assert np.all(best.pseudo_regret == 0.0) and np.all(best.regret == 0.0)
    assert best.identical.all()  # one policy (θ) in both runs, though their contexts differ
    worst = replify.evaluate(oracle(worst=True), "linear-gaussian", **common)
    assert np.all(worst.pseudo_regret > 0.5 * 1000)  # four arms on the sphere: the spread averages above 1
    assert best.constant_regret.mean() < worst.pseudo_regret.mean()


def test_contexts_that_change_compare_arms_of_learners_without_a_policy():
    class NoPolicy(Oracle):
        policy = None

    report = replify.evaluate(lambda *, n, horizon, rng: NoPolicy(n=n, horizon=horizon, rng=rng, theta=THETA),
                              "linear-gaussian", n=4, horizon=200, pairs=4, seed=1, progress=False,
                              adversary_params={"d": 3, "theta": THETA, "contexts": "sphere"})
    assert not report.identical.any()  # different contexts, different arms


def test_a_contextual_learner_needs_an_adversary_with_contexts():
    with pytest.raises(InvalidArgumentError, match="needs an adversary that shows contexts"):
        replify.evaluate("linucb", "iid-bernoulli", n=3, horizon=50, pairs=2, seed=0, progress=False,
                         adversary_params={"means": [0.2, 0.5, 0.7]})


def test_lanes_and_stepping_are_one_learner_and_the_ridge_statistics_are_exact():
    rng = np.random.default_rng(5)
    for model in ("shared", "disjoint"):
        learner = LinUCB(n=3, horizon=400, rng=None, model=model, lam=2.0)
        x_seen, c_seen, arms = [], [], []
        for _ in range(400):
            x = rng.normal(size=(3, 4))
            a = learner.act(x)
            c = float(rng.random())
            learner.update(a, c)
            x_seen.append(x[a]), c_seen.append(c), arms.append(a)
        lane = learner._lane
        x_seen, c_seen, arms = np.array(x_seen), np.array(c_seen), np.array(arms)
        for k in range(lane.inv.shape[1]):  # Sherman–Morrison kept V⁻¹ and θ̂ = V⁻¹b
            pick = arms == k if model == "disjoint" else np.ones(arms.size, bool)
            v = 2.0 * np.eye(4) + x_seen[pick].T @ x_seen[pick]
            assert np.allclose(lane.inv[0, k], np.linalg.inv(v), atol=1e-9)
            assert np.allclose(lane.theta[0, k], np.linalg.solve(v, x_seen[pick].T @ c_seen[pick]), atol=1e-9)


def test_linucb_learns_and_the_baselines_run_on_real_data():
    # one seed, a margin of 10x: LinUCB's regret grows as d·sqrt(T)·log T, uniform's linearly
    lin = replify.evaluate("linucb", "linear-gaussian", n=10, horizon=3000, pairs=4, seed=2, progress=False,
                           adversary_params={"d": 3}, beta=0.5)
    assert lin.pseudo_regret.mean() < 0.1 * lin.constant_regret.mean()
    for name, kw, features in [("lin-ts", {}, "blocks"), ("lin-eps-greedy", {}, "blocks"),
                               ("linucb", {"model": "disjoint"}, "same")]:
        r = replify.evaluate(name, "classification-bandit", n=3, horizon=600, pairs=2, seed=3, progress=False,
                             adversary_params={"features_as": features}, **kw)
        assert r.pseudo_regret.mean() < 0.5 * r.constant_regret.mean(), name  # they learn the wine classes


def test_classification_costs_and_the_shipped_data():
    data = replify.datasets.wine()
    assert data.features.shape == (178, 13) and np.bincount(data.labels).tolist() == [59, 71, 48]
    assert np.allclose(data.features.mean(axis=0), 0) and np.allclose(data.features.std(axis=0), 1)
    seq = replify.make_adversary("classification-bandit", n=3, horizon=50, seed=0)
    x, c, m = seq.sample_contexts(np.random.default_rng(1), 0, 50)
    assert x.shape == (50, 3, 42) and (np.linalg.norm(x, axis=-1) <= 1 + 1e-12).all()
    assert ((c == 0).sum(axis=1) == 1).all() and np.array_equal(c, m)
    with pytest.raises(InvalidArgumentError, match=r"labels must be classes in \[0, n\)"):
        replify.make_adversary("classification-bandit", n=2, horizon=5, seed=0)


@pytest.mark.parametrize("params, match", [
    ({"theta": [2.0, 1.0, 0.0]}, r"means <x, theta> in \[0, 1\]"),
    ({"contexts": "gaussian"}, "contexts must be one of"),
    ({"arms": np.zeros((3, 3)), "contexts": "sphere"}, "arms are fixed features"),
    ({"theta": [1.0, 0.0]}, r"theta must be of shape \(3,\) or \(1, 3\)"),
])
def test_the_linear_adversaries_refuse_what_their_law_cannot_be(params, match):
    with pytest.raises(ReplifyError, match=match):
        replify.make_adversary("linear-bernoulli", n=3, horizon=10, seed=0, d=3, **params)


def test_block_sums_of_fixed_features_are_exact_and_the_switching_theta_changes():
    seq = replify.make_adversary("linear-switching", n=3, horizon=400, seed=0, d=2, pieces=4)
    assert seq.law_changes == (100, 200, 300) and seq.fixed_contexts.shape == (3, 2)
    starts, stops = np.array([0, 50, 250]), np.array([50, 250, 400])
    expected = np.array([(np.clip(np.minimum(e, seq.bounds[1:]) - np.maximum(s, seq.bounds[:-1]), 0, None)
                          @ seq.piece_means) for s, e in zip(starts, stops)])
    assert np.allclose(seq.expected_sums(starts, stops), expected)
    draws = np.array([seq.sample_sums(np.random.default_rng(k), starts, stops) for k in range(3000)])
    # sums of L Gaussian costs: mean sum of means, sd sigma·sqrt(L); the mean of 3000 within 6 sd
    assert np.all(np.abs(draws.mean(axis=0) - expected) <= 6 * 0.1 * np.sqrt(stops - starts)[:, None] / math.sqrt(3000))


# -- rep-linear-elimination ------------------------------------------------------------------------

@pytest.mark.parametrize("n, dim, horizon, sigma", [(20, 5, 10**8, 0.1), (3, 3, 10**6, 0.5), (50, 2, 10**9, 0.1)])
def test_the_linear_schedule_is_the_derived_one(n, dim, horizon, sigma):
    p = linear_parameters(horizon=horizon, n=n, rho=0.1, dim=dim, sigma=sigma)
    assert p.certified and p.rho_bound <= 0.1 and len(p.pulls) >= 1
    fresh = np.diff(np.concatenate([[0], p.pulls]))
    radii = sigma * np.sqrt(2.2 * dim * np.log(2 * n / np.array(p.deltas)) / fresh)
    assert np.allclose(p.radii, radii)
    a = p.gap_scale * p.ratio ** -np.arange(1, fresh.size + 1)
    lows, highs = np.array(p.lows), np.array(p.highs)
    assert np.allclose(lows, a + 2 * radii)
    assert np.allclose(highs, np.minimum(p.gap_scale, p.ratio * a) - 2 * np.concatenate([[0], radii[:-1]]))
    assert (lows > 2 * radii).all() and (highs + 2 * radii <= np.concatenate([[np.inf], a[:-1]])).all()
    # q_p = sqrt(2)·s_p·(1 + sqrt(2 ln 2n))/w_p with s_p² = 1.1·dim·σ²/m_p
    charges = np.sqrt(2 * 1.1 * dim * sigma**2 / fresh) * (1 + np.sqrt(2 * np.log(2 * n))) / (highs - lows)
    assert np.allclose(p.charges, charges)
    assert p.rho_bound == pytest.approx(2 * sum(p.deltas) + (n - 1) * charges.max())


def test_the_design_is_g_optimal_within_its_slack_on_any_features():
    rng = np.random.default_rng(0)
    for y in (rng.normal(size=(30, 4)), np.repeat(rng.normal(size=(3, 3)), 5, axis=0), np.eye(6)):
        pi = g_optimal_design(y)
        g = np.einsum("ij,ij->i", y, np.linalg.solve((y * pi[:, None]).T @ y, y.T).T)
        assert pi.min() >= 0 and pi.sum() == pytest.approx(1) and g.max() <= 1.1 * y.shape[1] + 1e-9
        assert np.array_equal(pi, g_optimal_design(y.copy()))  # deterministic: two runs that agree compute one design


def elimination(arms, theta, *, horizon, pairs, rho, sigma=0.1, seed=0, **kw):
    n, d = arms.shape
    return replify.evaluate("rep-linear-elimination", "linear-gaussian", n=n, horizon=horizon, pairs=pairs, seed=seed,
                            rho=rho, sigma=sigma, progress=False, fast_path=kw.pop("fast_path", True),
                            adversary_params={"d": d, "arms": arms, "theta": theta, "sigma": sigma}, **kw)


@pytest.mark.slow
def test_attack_two_antipodal_arms_whose_gap_sits_high_in_the_first_range():
    # The worst attack found (an independent review tried gaps spread over a range, duplicates,
    # rank-deficient and d > n features): two arms x = -1 and +1 on one axis, their gap 0.9 of the
    # way up phase 1's threshold range, short phases (pull_scale 0.5, the bound recomputed for
    # them) at a loose target so that runs part measurably. Measured 0.095 against the bound 0.171
    # over 1500 pairs (1.87 over 2000 in the review); here 500 pairs, for the suite's time: 0.074,
    # bound / measured 2.3.
    horizon, pairs = 3000, 500
    p = linear_parameters(horizon=horizon, n=2, rho=0.9, dim=1, pull_scale=0.5)
    gap = p.lows[0] + 0.9 * (p.highs[0] - p.lows[0])
    report = replify.evaluate("rep-linear-elimination", "linear-gaussian", n=2, horizon=horizon, pairs=pairs, seed=1,
                              rho=0.9, pull_scale=0.5, progress=False, fast_path=True,
                              adversary_params={"d": 1, "theta": [gap / 2], "arms": [[-1.0], [1.0]], "sigma": 0.5})
    bound = report.params["rho_bound"]
    assert report.fast_path and bound == pytest.approx(p.rho_bound) and bound < 0.9
    parted = int((~report.identical).sum())
    assert parted < binomial_upper(pairs, bound)
    assert bound / (parted / pairs) < 3


@pytest.mark.parametrize("arms", [
    np.array([[0.0, 1.0], [0.3, 1.0], [0.3, 1.0], [0.3, 1.0], [0.0, 1.0]]),  # repeated arms and a tie for best
    np.array([[0.0, 0.0, 1.0], [0.2, 0.0, 2.0], [0.4, 0.0, 3.0]]),          # collinear means, d > rank
    np.array([[0.1, 0.0, 0.0, 0.0, 0.0], [0.0, 0.3, 0.0, 0.0, 0.0]]),       # d > n
])
@pytest.mark.slow
def test_attack_ties_collinear_arms_and_more_dimensions_than_arms(arms):
    # Default target rho = 0.1: a pair parts far less often than the bound allows (refuted only
    # by an exact tail at level 1e-6), and the learner ends on a best arm.
    theta = np.r_[1.0, np.zeros(arms.shape[1] - 1)]
    report = elimination(arms, theta, horizon=10**6, pairs=40, rho=0.1)
    assert report.params["certified"]
    assert (~report.identical).sum() < binomial_upper(40, report.params["rho_bound"])
    assert report.pseudo_regret.mean() < 0.5 * report.constant_regret.mean()


def test_the_block_sum_path_plays_as_stepping_does():
    # Noise far below every threshold's range: each run's decisions are fixed by R, so the
    # block-sum path and the per-step path (batches, on each step's context) give one result.
    arms = np.array([[0.0, 1.0], [0.5, 1.0], [1.0, 1.0]])
    kw = dict(horizon=20_000, pairs=3, rho=0.9, sigma=1e-6, seed=4)
    fast, slow = elimination(arms, [1.0, 0.0], **kw), elimination(arms, [1.0, 0.0], fast_path=False, **kw)
    assert fast.fast_path and not slow.fast_path
    assert np.allclose(fast.pseudo_regret, slow.pseudo_regret)


def test_features_that_change_are_refused():
    with pytest.raises(InvalidArgumentError, match="fixed features"):
        replify.evaluate("rep-linear-elimination", "linear-gaussian", n=3, horizon=50, pairs=2, seed=0, rho=0.1,
                         progress=False, adversary_params={"d": 2, "contexts": "sphere"})


# -- rep-ridge --------------------------------------------------------------------------------------

def test_the_ridge_schedule_is_the_derived_one():
    p = ridge_parameters(horizon=10**6, n=5, rho=0.1, phases=4, lam=3.0, explore=0.2)
    assert p.starts == (0, 125_000, 250_000, 500_000) and p.explores == (125_000, 25_000, 50_000, 100_000)
    assert p.samples == (125_000, 150_000, 200_000)
    assert p.beta == pytest.approx(math.sqrt(2 * (1 + (1 + 1 / math.sqrt(3)) ** 2)) / 3)
    w = p.widths(7)
    # each decision's charge sqrt(d)·beta/(w·sqrt(N)) is rho/3, so the bound is rho
    assert np.allclose(math.sqrt(7) * p.beta / (w * np.sqrt(p.samples)), 0.1 / 3) and p.rho_bound == 0.1


class SignContexts(ChunkedSequence):
    """One feature, ±1 at random, and every cost 1: the ridge estimate is all noise, as large as the
    feature bound lets it be (an independent review's worst attack on rep-ridge)."""

    fixed_contexts, cost_bounds, d, iid = None, (0.0, 1.0), 1, True

    def __init__(self, *, n, horizon):
        self.n, self.horizon = n, horizon

    def sample_contexts(self, rng, start, stop):
        x = rng.choice([-1.0, 1.0], (stop - start, self.n, 1))
        c = np.ones((stop - start, self.n))
        return x, c, c.copy()

    def sample_chunk(self, rng, start, stop):
        return self.sample_contexts(rng, start, stop)[1]


@pytest.mark.slow
def test_attack_rep_ridge_where_its_estimate_varies_most():
    # lam = 1e4: the Efron–Stein step is nearly tight when the regulariser dominates. Measured
    # 0.065 against the bound 0.1 at rho = 0.1 over 1500 pairs: bound / measured 1.55 (1.70 over
    # 4000 pairs in the review; the analysis's own slack is a factor of about 1.8). 600 pairs here:
    # 0.070, bound / measured 1.43.
    pairs = 600
    report = replify.evaluate("rep-ridge", SignContexts(n=2, horizon=1000), n=2, horizon=1000, pairs=pairs, seed=1,
                              rho=0.1, lam=1e4, progress=False)
    bound = report.params["rho_bound"]
    parted = int((~report.identical).sum())
    assert bound == pytest.approx(0.1) and parted < binomial_upper(pairs, bound)
    assert bound / (parted / pairs) < 2.5


def test_degenerate_inputs_are_refused_or_handled():
    # review findings: equal radii read as overlapping ranges (bound inf), tiny features underflowing
    # the design, a regulariser so small the stability constant overflows
    assert linear_parameters(horizon=500, n=3, rho=0.5, dim=2, sigma=1e-6).certified
    tiny = np.array([[1e-200, 0.0], [0.0, 1e-200], [1e-200, 1e-200]])
    assert np.allclose(g_optimal_design(tiny), g_optimal_design(tiny * 1e200))
    with pytest.raises(InvalidArgumentError, match="make the stability constant beta=inf; expected a finite number"):
        ridge_parameters(horizon=100, n=2, rho=0.1, lam=1e-300)


def test_rep_ridge_refuses_features_beyond_its_bound():
    with pytest.raises(InvalidArgumentError, match="above feature_bound"):
        replify.evaluate("rep-ridge", "linear-bernoulli", n=3, horizon=30, pairs=2, seed=0, rho=0.1, progress=False,
                         feature_bound=0.5, adversary_params={"d": 3, "contexts": "sphere"})


def test_a_noise_level_below_the_adversarys_voids_the_certificate():
    # The certificate assumes sigma-sub-Gaussian noise: told sigma = 0.01 on noise of 0.1, it would
    # print a bound that nothing backs (before this check it said "certified").
    with pytest.warns(ReplifyWarning, match="measured, not certified"):
        report = replify.evaluate("rep-linear-elimination", "linear-gaussian", n=4, horizon=10**4, pairs=2, seed=0,
                                  rho=0.1, sigma=0.01, progress=False, adversary_params={"d": 2, "sigma": 0.1})
    assert report.certified is False and report.claim == "measured"
    assert "void" in report.params["certificate_note"]


def test_stress_searches_the_contextual_families():
    result = replify.stress("linucb", n=3, horizon=300, budget=40, seed=0)
    assert {c.family for c in result.candidates} <= {"linear-ties", "linear-gaps", "contexts"}
    assert result.worst.rho_hat == 1.0  # LinUCB adapts every step: its runs part
    fixed = replify.stress("rep-linear-elimination", n=3, horizon=2000, rho=0.5, budget=24, seed=0)
    assert "contexts" not in {c.family for c in fixed.candidates}  # it needs fixed features
    with pytest.raises(InvalidArgumentError, match="a contextual learner's families"):
        replify.stress("linucb", n=3, horizon=300, budget=40, seed=0, families=["ties"])


@pytest.mark.parametrize("learner, params, kw", [
    ("rep-ridge", {"d": 3, "contexts": "sphere"}, {"rho": 0.3}),  # policies compared where contexts change
    ("linucb", {"d": 3}, {}),                                       # arms compared on fixed features
    ("ucb1", {"d": 3, "contexts": "sphere"}, {}),                   # a plain bandit learner, against the best policy
])
def test_a_replay_gives_the_pair_as_evaluated(learner, params, kw):
    report = replify.evaluate(learner, "linear-bernoulli", n=4, horizon=800, pairs=2, seed=0, progress=False,
                              adversary_params=params, **kw)
    replay = report.replay(1)
    assert replay.identical == report.identical[1] and np.allclose(replay.regret, report.regret[1])


def test_calibrate_tests_a_contextual_learner_on_adversaries_with_contexts():
    cal = replify.calibrate("rep-ridge", n=3, horizon=200, rho=0.3, seed=0, budget=1500, test_pairs=400, regret_pairs=4,
                            refine_pairs=6, grid=[{"grid_scale": 1.0}])
    assert cal.reference == "linear-bernoulli" and len(cal.checks) == 2  # the reference, then stress's worst
    assert all(c.adversary == "linear-bernoulli" and c.decision == "below" for c in cal.checks)


def test_mistakes_a_user_makes_get_clear_errors(tmp_path):
    # act() again with another context before update(): it silently returned the first arm
    learner = LinUCB(n=2, horizon=10, rng=None)
    first = learner.act(np.eye(2))
    assert learner.act(np.eye(2)) == first
    with pytest.raises(replify.errors.LearnerProtocolError, match="called again with another context"):
        learner.act(np.eye(2)[::-1])

    class ForgotTheProblem:  # acts on a context, declares nothing: it was called as act() deep in the engine
        feedback = "bandit"

        def __init__(self, *, n, horizon, rng):
            pass

        def act(self, context):
            return 0

        def update(self, action, cost):
            pass

    with pytest.raises(replify.errors.LearnerProtocolError, match="declare problem = 'contextual'"):
        replify.evaluate(ForgotTheProblem, "linear-gaussian", n=3, horizon=20, pairs=2, seed=0, progress=False)
    with pytest.raises(InvalidArgumentError, match="n must be the number of classes"):
        replify.make_adversary("classification-bandit", n=5, horizon=5, seed=0)
    with pytest.raises(replify.errors.CostError, match="the domain RepRidge declares"):
        replify.evaluate("rep-ridge", "linear-gaussian", n=3, horizon=20, pairs=2, seed=0, rho=0.1, progress=False,
                         adversary_params={"d": 2, "contexts": "sphere"})


def test_an_iid_certificate_is_void_where_theta_changes():
    with pytest.warns(ReplifyWarning, match="not known to be iid"):
        report = replify.evaluate("rep-linear-elimination", "linear-switching", n=4, horizon=10**6, pairs=2, seed=0,
                                  rho=0.1, progress=False, adversary_params={"d": 3})
    assert report.certified is False and "iid" in report.params["certificate_note"]
