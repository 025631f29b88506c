"""race-hedge: Hedge with block updates by a shared exponential race. Its replicability certificate is
perturbed-commit's per decision (attacked exactly in test_perturbed_commit.py); here the play is
checked to be Hedge's law, the adversarial regret bound against the worst sequences we built (exact
expectations, no sampling), the default schedule's rule, and the regret it buys.

Statistics: the law check's tolerance is 5 binomial standard deviations per cell (a false alarm below
1e-6 per cell); certificate checks fail when P(Bin(pairs, bound) >= failures) < 1e-6
(conftest.certificate_ratio). Seeds are fixed, so outcomes are deterministic.
"""

import math

import numpy as np
import pytest
from scipy.special import softmax

import replify
from conftest import certificate_ratio
from replify.errors import InvalidArgumentError
from replify_plugins.learners import race_hedge as rh


def _hedge_weights(params, block_costs):
    """The weights each block is drawn from: uniform, then Hedge's at ε_k on the costs before it."""
    cums = np.cumsum(block_costs, axis=0)[:-1]
    return np.vstack([np.full(params.n, 1.0 / params.n)] +
                     [softmax(-e * c) for e, c in zip(params.eps_schedule, cums)])


def _expected_regret(params, block_costs):
    p = _hedge_weights(params, block_costs)
    return float(np.sum(p * block_costs) - block_costs.sum(axis=0).min())


def test_each_block_plays_a_draw_from_hedges_weights():
    # 1 500 seeds, stepped by hand through a fixed sequence; each block's action frequencies against
    # the weights the regret bound assumes (5 sd per cell).
    T, seeds, n = 30, 1_500, 3
    costs = np.zeros((T, n))
    costs[:10, 0], costs[10:20, 1], costs[20:, 2] = 1.0, 0.6, 0.3
    counts = np.zeros((3, n))
    for seed in range(seeds):
        lr = replify.make("race-hedge", n=n, horizon=T, seed=seed, rho=0.9, decisions=[10, 20])
        for t in range(T):
            a = lr.act()
            if t % 10 == 0:
                counts[t // 10, a] += 1
            lr.update(costs[t])
    p = _hedge_weights(lr.params, costs.reshape(3, 10, n).sum(axis=1))
    assert np.all(np.abs(counts / seeds - p) <= 5 * np.sqrt(p * (1 - p) / seeds) + 1e-12), (counts / seeds, p)
    assert lr.params.eps_schedule[0] > 0.05  # the weights are far from uniform: the check has power


def _attacks(params, rng):
    """Block cost sequences, each block's costs in [0, L_k]: a leader that changes every block (the
    follow-the-leader trap), the best expert revealed only in the last block, ties broken late, and
    random search around the worst found."""
    L, n = np.asarray(params.block_lengths, float), params.n
    K = L.size
    trap = np.zeros((K, n))
    trap[np.arange(K), np.arange(K) % n] = L
    late = np.tile(L[:, None] * 0.5, (1, n))
    late[-1, 0], late[-1, 1:] = 0.0, L[-1]
    ties = np.tile(L[:, None] * 0.5, (1, n))
    ties[:, 0] += L * 0.01 * np.where(np.arange(K) < K // 2, 1.0, -1.0)
    found = [trap, late, ties]
    worst = max(found, key=lambda c: _expected_regret(params, c))
    for _ in range(300):
        x = np.clip(worst + rng.normal(0.0, 0.2, worst.shape) * L[:, None], 0.0, L[:, None])
        found.append(x)
        if _expected_regret(params, x) > _expected_regret(params, worst):
            worst = x
    return found


@pytest.mark.parametrize("n, T", [(2, 10**4), (10, 10**6), (50, 10**5)])
def test_the_regret_bound_holds_against_the_worst_sequences_we_built(n, T):
    # Exact expected regret (the weights of each block; the expectation is over the race's draws).
    # Measured bound / worst found: 1.16 (n = 2), 2.1 (n = 10), 1.7 (n = 50), the worst being the
    # follow-the-leader trap refined by the random search; asserted below 3. (An independent review's
    # optimiser on the same exact expectation reached 1.04-1.16: the bound is nearly tight.)
    params = replify.make("race-hedge", n=n, horizon=T, seed=0, rho=0.1).params
    worst = max(_expected_regret(params, c) for c in _attacks(params, np.random.default_rng(n)))
    assert 0.0 < worst <= params.regret_bound and params.regret_bound / worst < 3.0, (worst, params.regret_bound)


def test_defaults_are_certified_with_nonincreasing_rates_and_follow_the_stated_rule():
    p = replify.make("race-hedge", n=10, horizon=10**6, seed=0, rho=0.1).params
    assert p.certified and p.replicability_bound <= 0.1 * (1 + 1e-12)
    assert np.all(np.diff(p.eps_schedule) <= 0.0) and len(p.decisions) >= 4
    bound = float(rh.regret_bound(np.array([p.decisions]), np.array([p.eps_schedule]), horizon=10**6, n=10)[0])
    L, e = np.asarray(p.block_lengths, float), np.asarray(p.eps_schedule)
    assert p.regret_bound == pytest.approx(bound) == pytest.approx(math.log(10) / e[-1] + (e[0] * L[0]**2 + e @ L[1:]**2) / 8)
    assert p.regret_bound < 0.5 * 10**6  # a bound that says something at T = 1e6 (0.46 T)
    # the rule: of the candidates whose bound is within 2x of the least, none has a smaller model regret
    model = float(rh.pc.model_regret([p.decisions], [p.eps_schedule], horizon=10**6, n=10)[0])
    rows = []
    for sched in rh._candidates(10**6).values():
        for s in rh.SPLITS:
            eps = rh.rates(sched, s, n=10, rho=0.1)
            rows.append((rh.regret_bound(sched, eps, horizon=10**6, n=10), rh.pc.model_regret(sched, eps, horizon=10**6, n=10)))
    least = min(float(b.min()) for b, _ in rows)
    assert p.regret_bound <= rh.BOUND_SLACK * least * (1 + 1e-9)
    assert all(np.all(m[b <= rh.BOUND_SLACK * least] >= model * (1 - 1e-9)) for b, m in rows)
    assert least < p.regret_bound  # the rule bought something: the bound's own minimiser is another schedule


@pytest.mark.parametrize("kwargs, words", [
    ({"decisions": []}, "at least one step"),
    ({"decisions": [50, 5]}, "increase strictly"),
    ({"split": 11.0}, "split must lie in [0, 10]"),
])
def test_bad_schedules_are_refused_by_name(kwargs, words):
    with pytest.raises(InvalidArgumentError, match="decisions|split") as info:
        replify.make("race-hedge", n=3, horizon=100, seed=0, rho=0.1, **kwargs)
    assert words in str(info.value)


def test_a_given_schedule_keeps_both_certificates():
    # An increasing split would raise the rates; they are lowered to the running minimum, which keeps
    # the replicability bound under rho (b grows with eps) and the regret bound's premise.
    p = replify.make("race-hedge", n=4, horizon=10**5, seed=0, rho=0.1, decisions=[100, 10_000, 50_000], split=3.0).params
    assert p.decisions == (100, 10_000, 50_000) and p.overrides == ("decisions", "split")
    assert np.all(np.diff(p.eps_schedule) <= 0.0) and p.replicability_bound <= 0.1 * (1 + 1e-12)
    assert p.replicability_bound < 0.05  # the lowered rates spend less than rho: said, not hidden
    # costs lie in [0, 1]: the stated bound is at most T where the formula exceeds it (T = 2, n = 1000: 29 T)
    assert replify.make("race-hedge", n=1_000, horizon=2, seed=0, rho=0.1).params.regret_bound == 2.0


@pytest.mark.slow
def test_the_certificate_survives_the_coin_and_it_learns():
    # The balanced coin (n = 2), the race's maximal coupling: measured 0.075 of 600 pairs, bound / attack
    # 1.3. The README's spread at T = 1e6 (n = 10): pseudo-regret / constant's 0.35 [0.31, 0.40] over 200
    # pairs (benchmarks/certified_learners.py); here 100 pairs (0.38, upper end 0.47), asserted below 0.5.
    coin = replify.evaluate("race-hedge", "coin", n=2, horizon=10_000, pairs=600, seed=1, rho=0.1,
                            adversary_params={"tau": 1e-9})
    assert certificate_ratio(coin) < 2.5, coin.rho_hat
    kw = dict(n=10, horizon=10**6, pairs=100, seed=0, adversary_params={"means": np.linspace(0.3, 0.7, 10)})
    base = replify.evaluate("constant", "iid-bernoulli", **kw)
    report = replify.evaluate("race-hedge", "iid-bernoulli", rho=0.1, **kw)
    assert report.certified and report.regret_bound == report.params["regret_bound"]
    assert report.pseudo_regret_ci[1] / base.pseudo_regret_ci[0] < 0.5
