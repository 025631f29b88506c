import math

import numpy as np
import pytest

import replify
from replify_plugins.learners.ftpl import FTPL
from replify_plugins.learners.hedge import Hedge


@pytest.mark.parametrize("name", ["hedge", "ftpl"])
def test_run_equals_stepping_and_can_resume(name):
    costs = np.random.default_rng(0).random((2000, 5))
    stepped = replify.make(name, n=5, horizon=2000, seed=4)
    a = np.array([(stepped.act(), stepped.update(c))[0] for c in costs])
    resumed = replify.make(name, n=5, horizon=2000, seed=4)
    b = np.concatenate([resumed.run(costs[:777]), resumed.run(costs[777:])])
    assert np.array_equal(a, b)
    assert np.array_equal(a, replify.make(name, n=5, horizon=2000, seed=4).run(costs))


def test_hedge_samples_from_the_exponential_weights():
    # After a fixed cost sequence, the action of a fresh Hedge per seed should follow
    # p(a) ∝ exp(-eta L(a)). Hoeffding: P(|freq - p| >= d) <= 2 exp(-2 k d^2) per expert, so
    # d = sqrt(ln(2 n / 1e-6) / (2k)) bounds a false alarm over all experts by 1e-6.
    n, k, eta = 4, 20_000, 0.7
    costs = np.array([[0.0, 1.0, 0.5, 1.0], [0.0, 0.0, 0.5, 1.0]])
    counts = np.zeros(n)
    for seed in range(k):
        h = Hedge(n=n, horizon=3, rng=np.random.default_rng(seed), eta=eta)
        h.update(costs[0])
        h.update(costs[1])
        counts[h.act()] += 1
    w = np.exp(-eta * costs.sum(axis=0))
    d = math.sqrt(math.log(2 * n / 1e-6) / (2 * k))
    assert np.all(np.abs(counts / k - w / w.sum()) < d)


def test_ftpl_noise_is_geometric_on_the_positive_integers_and_it_follows_the_perturbed_leader():
    learner = FTPL(n=50_000, horizon=100, rng=np.random.default_rng(0), eps=0.2)
    x = learner.noise
    assert x.min() >= 1 and np.all(x == np.round(x))
    # E[X] = 1/eps = 5 and sd = sqrt(1-eps)/eps ≈ 4.47: the mean of 50_000 draws is within
    # 6 standard errors (0.12) of 5 except with probability < 1e-8.
    assert abs(x.mean() - 5.0) < 0.12
    small = FTPL(n=3, horizon=10, rng=np.random.default_rng(1), eps=0.5)
    cost = np.array([0.2, 0.9, 0.4])
    small.update(cost)
    assert small.act() == int(np.argmin(cost - small.noise))


def test_default_rates_and_bounds():
    assert Hedge(n=10, horizon=1000, rng=np.random.default_rng(0)).eta == pytest.approx(math.sqrt(8 * math.log(10) / 1000))
    f = FTPL(n=10, horizon=1000, rng=np.random.default_rng(0))
    assert f.eps == pytest.approx(math.sqrt(math.log(10) / 1000))
    bound = replify.learners()["ftpl"].regret_bound(horizon=1000, n=10)
    assert bound == pytest.approx(2 * math.sqrt(1000 * math.log(10)))
