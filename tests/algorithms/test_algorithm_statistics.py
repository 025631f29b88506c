"""Statistical checks of the paper's algorithms. Fixed seeds throughout; every threshold is
derived from an exact or Hoeffding bound, stated where it is used."""

import math

import numpy as np
import pytest

import replify
from replify.evaluation.stats import binomial_upper_tail
from replify.components.actions import Simplex

FACTORY = lambda name: replify.learners()[name].factory  # noqa: E731


def hoeffding(k, outcomes, false_alarm=1e-6, samples=1):
    """d such that every one of ``outcomes`` empirical frequencies (over ``samples``
    independent samples of size k) is within d of its probability except with probability
    ``false_alarm``: 2·outcomes·samples·exp(−2kd²) = false_alarm."""
    return math.sqrt(math.log(2 * outcomes * samples / false_alarm) / (2 * k))


@pytest.mark.slow
def test_fllb_and_ftplb_choose_with_the_same_law_at_a_transition():
    # The paper's remark: FLLB's grid point and FTPLB's c_0 + c_{1:t-1} are both uniform on the
    # cube c_{1:t-1} + [0, 1/eps)^n, so the action at a transition has the same law.
    # k = 3500 learners of each (was 8000): d = 2 sqrt(ln(2*3*2/1e-6) / (2k)) = 0.097 (0.064 at 8000),
    # the same 1e-6 total false alarm; the laws here are about (0.63, 0.30, 0.07)
    k, n, B, eps = 3_500, 3, 20, 0.1
    costs = np.zeros((2 * B, n))
    costs[:B] = np.array([0.2, 0.3, 0.45])  # l1 norm 0.95; cumulative (4, 6, 9) at the transition
    counts = {}
    for name in ("fllb", "ftplb"):
        chosen = np.empty(k, dtype=np.int64)
        for seed in range(k):
            learner = FACTORY(name)(n=n, horizon=2 * B, rng=np.random.default_rng(seed), rho=0.1, block_size=B, eps=eps)
            chosen[seed] = learner.run(costs)[B]  # the action of the second block
        counts[name] = np.bincount(chosen, minlength=n) / k
    # Two samples, each within d/2 of the common law: d/2 from Hoeffding over 3 outcomes x 2 samples.
    d = 2 * hoeffding(k, outcomes=n, samples=2)
    assert np.all(np.abs(counts["fllb"] - counts["ftplb"]) <= d)
    assert (counts["fllb"] > 0.05).sum() >= 2  # a non-degenerate law, so the comparison has teeth


def test_ftplb_star_noise_has_the_geometric_law_on_the_positive_integers():
    eps, n = 0.2, 50_000
    learner = FACTORY("ftplb-star")(n=n, horizon=100, rng=np.random.default_rng(0), rho=0.1, block_size=10, eps=eps)
    x = learner.noise
    assert x.min() >= 1 and np.all(x == np.round(x))
    ks = np.arange(1, 11)
    pmf = eps * (1 - eps) ** (ks - 1)
    freq = np.array([(x == v).mean() for v in ks])
    assert np.all(np.abs(freq - pmf) <= hoeffding(n, outcomes=len(ks)))


def exact_argmin_law(L, eps, cutoff=400):
    """P(argmin_a L_a − X_a = a) for X_a iid Geo(eps) on {1, 2, …}, ties to the lowest index
    (numpy's argmin), computed by summing over the winner's noise value."""
    L = np.asarray(L)
    x = np.arange(1, cutoff + 1)
    pmf = eps * (1 - eps) ** (x - 1)

    def cdf(m):  # P(X <= m)
        return np.where(m >= 1, 1 - (1 - eps) ** np.maximum(m, 0), 0.0)

    law = np.zeros(len(L))
    for a in range(len(L)):
        v = L[a] - x  # the winner's perturbed cost
        p = pmf.copy()
        for b in range(len(L)):
            if b < a:  # b must be strictly worse: L_b − X_b > v  <=>  X_b <= L_b − v − 1
                p *= cdf(L[b] - v - 1)
            elif b > a:  # b must not be better: L_b − X_b >= v  <=>  X_b <= L_b − v
                p *= cdf(L[b] - v)
        law[a] = p.sum()
    return law


@pytest.mark.slow
def test_ftplb_star_chooses_the_expert_with_the_independently_computed_law():
    # k = 6000 draws: every frequency within sqrt(ln(2*3/1e-6) / (2k)) = 0.036 of the exact law (0.73, 0.19,
    # 0.08), except with probability 1e-6 (a law off by half its smallest cell is caught)
    k, B, eps = 6_000, 4, 0.3
    costs = np.array([[0, 1, 1], [0, 0, 1], [0, 1, 1], [0, 0, 1]] + [[0, 0, 0]] * 4, dtype=float)  # L = (0, 2, 4)
    chosen = np.array([
        FACTORY("ftplb-star")(n=3, horizon=8, rng=np.random.default_rng(s), rho=0.1, block_size=B, eps=eps).run(costs)[B]
        for s in range(k)
    ])
    law = exact_argmin_law([0, 2, 4], eps)
    assert law.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.abs(np.bincount(chosen, minlength=3) / k - law) <= hoeffding(k, outcomes=3))
    assert law.min() > 0.05


def test_iid_experts_blocks_and_fresh_noise_per_block():
    T, n, rho = 10_000, 2000, 0.1
    learner = replify.make("iid-experts", n=n, horizon=T, rho=rho, seed=0)
    p = learner.params
    costs = (np.random.default_rng(1).random((T, n)) < 0.5).astype(float)
    seen_eps, seen_noise, actions = [], [], []
    for t, c in enumerate(costs, start=1):
        actions.append(learner.act())
        learner.update(c)
        if t in p.block_ends[:-1]:
            seen_eps.append(learner.eps)
            seen_noise.append(learner.noise.copy())
    actions = np.array(actions)
    assert seen_eps == list(p.eps_schedule)
    assert np.all(actions[: p.block_lengths[0]] == 0)  # block 1 plays expert 1
    starts = np.concatenate([[0], np.array(p.block_ends[:-1])])
    for s, e in zip(starts, p.block_ends):
        assert np.all(actions[s:e] == actions[s])  # one expert per block
    for a, b in zip(seen_noise, seen_noise[1:]):
        assert not np.array_equal(a, b)  # fresh noise for every block
    # Block 2's noise is Geo(eps_2): its mean times eps_2 is 1; the sd of X*eps is below 1, so
    # 6 standard errors of a 2000-draw mean are < 6/sqrt(2000) = 0.134 (a 1e-9 false alarm).
    assert abs(seen_noise[0].mean() * p.eps_schedule[0] - 1) < 6 / math.sqrt(n)


def test_iid_experts_falls_back_to_ftpl_when_the_running_regret_reaches_the_threshold():
    T, n, rho = 10_000, 3, 0.1
    ll = math.log(math.log(T))
    # Choose the constant C so that the fallback threshold K − 2 sqrt(T ln n) is 40.5.
    unit_K = (1 / rho) * ll**2 * math.log(n * ll / rho) * math.sqrt(T)
    C = (40.5 + 2 * math.sqrt(T * math.log(n))) / unit_K
    costs = (np.random.default_rng(2).random((T, n)) < 0.5).astype(float)
    costs[:, 0] = 1.0  # expert 1, played in block 1, is the worst: the regret grows ~t/2
    learner = replify.make("iid-experts", n=n, horizon=T, rho=rho, seed=4, K_constant=C)
    assert learner.params.fallback_threshold == pytest.approx(40.5)
    actions = np.array([(learner.act(), learner.update(c))[0] for c in costs])

    cum = np.cumsum(costs, axis=0)
    regret = cum[:, 0] - cum.min(axis=1)  # block 1 plays expert 1 at every step
    switch = int(np.argmax(regret >= 40.5)) + 1  # the first step whose regret reaches it
    assert switch < learner.params.block_lengths[0]  # inside block 1: checked every step, not per block
    assert learner.switched_at == switch and learner.block_size == 1
    assert learner.eps == pytest.approx(math.sqrt(math.log(n) / T))
    assert np.all(actions[:switch] == 0)
    # After the switch: FTPL restarted on the remaining steps, with the learner's own noise.
    since = cum[switch - 1 : -1] - cum[switch - 1]
    assert np.array_equal(actions[switch:], np.argmin(since - learner.ftpl_noise, axis=1))
    assert len(np.unique(actions[switch:])) > 1  # FTPL does move, unlike a frozen block
    # And the batch run reproduces all of it, switch included, across chunk boundaries.
    from replify_plugins.learners import iid_experts

    old, iid_experts.CHUNK_ROWS = iid_experts.CHUNK_ROWS, 17
    try:
        batch = replify.make("iid-experts", n=n, horizon=T, rho=rho, seed=4, K_constant=C).run(costs)
    finally:
        iid_experts.CHUNK_ROWS = old
    assert np.array_equal(batch, actions)


class LazyLeaderTrap:
    """Paper §3.1, example:FLL-not-replicable: day 1 gives the worse action (index 1) a bonus,
    c_1 = (0, −1) in both runs; after it iid costs favour action 0. l1 norms <= 1."""

    n = 2

    def __init__(self, horizon):
        self.horizon = horizon

    def sample(self, rng):
        c = (rng.random((self.horizon, 2)) < np.array([0.3, 0.5])) / 2.0
        c[0] = (0.0, -1.0)
        return c


@pytest.mark.slow
def test_fll_and_ftpl_are_not_replicable_but_fllb_is():
    T, rho, pairs = 10_000, 0.1, 200
    trap = LazyLeaderTrap(T)
    # FTPL and FLL with noise (or grid spacing) of width 1: the bonus makes action 1 the first
    # leader; S and S' then hand the lead to action 0 at different steps.
    for name in ("ftpl", "fll"):
        report = replify.evaluate(name, trap, n=2, horizon=T, pairs=pairs, seed=0, actions=Simplex(2), eps=1.0)
        assert report.rho_hat >= 0.5, name
    # FLLB with 4 blocks and the largest eps for which its proof's union bound gives rho.
    B = T // 4
    eps = replify.certified_eps("fllb", horizon=T, n=2, rho=rho, block_size=B)
    report = replify.evaluate("fllb", trap, n=2, horizon=T, pairs=pairs, seed=0, rho=rho, block_size=B, eps=eps)
    assert report.params["replicability_bound"] == pytest.approx(rho)
    # Not refuted: P(Bin(200, rho) >= failures) >= 1e-6, which a true certificate fails with
    # probability at most 1e-6.
    assert binomial_upper_tail(report.failures, pairs, rho) >= 1e-6


class SwitchingBernoulli:
    """Time-varying Bernoulli costs: the means are reversed half way (an oblivious adversary)."""

    def __init__(self, horizon, n, scale):
        self.horizon, self.n, self.scale = horizon, n, scale
        self.means = np.linspace(0.3, 0.7, n)

    def sample(self, rng):
        means = np.where(np.arange(self.horizon)[:, None] < self.horizon // 2, self.means, self.means[::-1])
        return (rng.random((self.horizon, self.n)) < means) * self.scale


@pytest.mark.parametrize("name", ["fllb", "ftplb-star"])
@pytest.mark.parametrize("adversary", ["iid", "switching"])
def test_adversarially_replicable_algorithms_meet_rho_and_their_regret_bound(name, adversary):
    # 4 blocks and the largest eps for which the algorithm's union bound certifies rho. The
    # failures are Binomial(200, p) with p <= rho; the claim must not be refuted:
    # P(Bin(200, rho) >= failures) >= 1e-6, which a true certificate fails with probability <= 1e-6.
    T, n, rho, pairs = 10_000, 10, 0.1, 200
    B = T // 4
    eps = replify.certified_eps(name, horizon=T, n=n, rho=rho, block_size=B)
    scale = 1.0 / n if name == "fllb" else 1.0  # FLLB takes l1-bounded costs
    if adversary == "iid":
        adv, params = "iid-bernoulli", {"means": np.linspace(0.3, 0.7, n), "scale": scale}
    else:
        adv, params = SwitchingBernoulli(T, n, scale), None
    report = replify.evaluate(
        name, adv, n=n, horizon=T, pairs=pairs, seed=1, rho=rho, block_size=B, eps=eps, adversary_params=params
    )
    assert report.params["n_blocks"] >= 4 and report.params["replicability_bound"] <= rho + 1e-12
    assert binomial_upper_tail(report.failures, pairs, rho) >= 1e-6
    assert report.regret_mean <= report.regret_bound


def test_iid_experts_is_replicable_on_iid_costs_within_its_regret_bound():
    T, n, rho = 10_000, 10, 0.1
    report = replify.evaluate(
        "iid-experts", "iid-bernoulli", n=n, horizon=T, rho=rho, pairs=200, seed=2,
        adversary_params={"means": np.linspace(0.3, 0.7, n)},
    )
    # The theorem's iid guarantee is rho itself; not refuted at level 1e-6 as above.
    assert binomial_upper_tail(report.failures, report.pairs, rho) >= 1e-6
    assert report.regret_mean <= report.regret_bound == report.params["K"]
