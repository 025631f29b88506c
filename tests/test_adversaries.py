import math

import numpy as np

import replify


def test_iid_bernoulli_draws_the_means_and_fresh_samples_each_call():
    means = np.array([0.1, 0.4, 0.4, 0.9])
    seq = replify.make_adversary("iid-bernoulli", n=4, horizon=50_000, seed=1, means=means)
    rng = np.random.default_rng(5)
    a, b = seq.sample(rng), seq.sample(rng)
    assert a.shape == (50_000, 4) and set(np.unique(a)) <= {0.0, 1.0}
    assert not np.array_equal(a, b)
    assert np.array_equal(a, seq.sample(np.random.default_rng(5)))
    # Hoeffding over 4 experts: P(|mean - p| >= d) <= 8 exp(-2 T d^2) = 1e-6 for this d.
    d = math.sqrt(math.log(8 / 1e-6) / (2 * 50_000))
    assert np.all(np.abs(a.mean(axis=0) - means) < d)


def test_iid_bernoulli_keeps_its_own_copy_and_defaults_to_one_half():
    means = np.full(3, 0.2)
    seq = replify.make_adversary("iid-bernoulli", n=3, horizon=10, seed=0, means=means)
    means[:] = 0.9
    assert np.all(seq.means == 0.2)
    assert np.all(replify.make_adversary("iid-bernoulli", n=3, horizon=10, seed=0).means == 0.5)


def test_point_mass_returns_the_same_costs_every_time_and_never_shares_them():
    costs = np.random.default_rng(0).random((20, 3))
    seq = replify.make_adversary("point-mass", n=3, horizon=20, seed=0, costs=costs)
    first = seq.sample(np.random.default_rng(1))
    first[:] = -1.0
    assert np.array_equal(seq.sample(np.random.default_rng(2)), costs)
    costs[:] = 5.0
    assert not np.any(seq.sample(np.random.default_rng(3)) == 5.0)
