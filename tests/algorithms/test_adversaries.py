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


import pytest

from replify.errors import InvalidArgumentError

T_, N_ = 3000, 4
FIXED = np.random.default_rng(9).random((T_, N_))
ADVERSARIES = {
    "iid-bernoulli": dict(means=[0.1, 0.3, 0.6, 0.9]),
    "switching-bernoulli": dict(means=[[0.1, 0.9, 0.5, 0.5], [0.9, 0.1, 0.5, 0.2]], switch_at=[1000]),
    "drifting-bernoulli": dict(start=0.1, end=[0.9, 0.5, 0.1, 0.3]),
    "mixture": dict(stochastic=[0, 2], means=0.3, costs=FIXED),
    "point-mass": dict(costs=FIXED),
    "local-bootstrap": dict(costs=FIXED, window=7),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIES))
def test_streamed_chunks_are_the_whole_draw_bit_for_bit(name):
    seq = replify.make_adversary(name, n=N_, horizon=T_, seed=0, **ADVERSARIES[name])
    whole = seq.sample(np.random.default_rng(4))
    rng = np.random.default_rng(4)
    chunks = np.concatenate([seq.sample_chunk(rng, a, min(a + 777, T_)) for a in range(0, T_, 777)])
    assert whole.shape == (T_, N_) and np.array_equal(whole, chunks)


@pytest.mark.parametrize("name", ["iid-bernoulli", "switching-bernoulli", "mixture", "point-mass"])
def test_block_sums_have_the_mean_of_summed_steps(name):
    # E[block sum] = sum of the per-step means; the per-step means are estimated from 400 whole
    # draws and the block sums from 400 draws. Each block sum lies in [0, length] and each
    # averaged summed-steps value too, so by Hoeffding each of the 2x3x4 means is within
    # length*sqrt(ln(2*24/1e-6)/(2*400)) of its expectation except with probability 1e-6 overall.
    seq = replify.make_adversary(name, n=N_, horizon=T_, seed=0, **ADVERSARIES[name])
    starts, stops = np.array([0, 500, 1700]), np.array([500, 1700, 3000])
    rng = np.random.default_rng(1)
    sums = np.mean([seq.sample_sums(rng, starts, stops) for _ in range(400)], axis=0)
    steps = np.mean([np.add.reduceat(seq.sample(rng), starts, axis=0) for _ in range(400)], axis=0)
    tol = (stops - starts)[:, None] * math.sqrt(math.log(48 / 1e-6) / 800) * 2
    assert np.all(np.abs(sums - steps) <= tol)


def test_switching_and_drifting_means_are_where_they_should_be():
    seq = replify.make_adversary("switching-bernoulli", n=2, horizon=20_000, seed=0, means=[[0.2, 0.8], [0.7, 0.3]], switch_at=[5000])
    c = seq.sample(np.random.default_rng(0))
    d = math.sqrt(math.log(8 / 1e-6) / (2 * 5000))  # Hoeffding, 4 means, 1e-6 overall
    assert np.all(np.abs(c[:5000].mean(axis=0) - [0.2, 0.8]) < d)
    assert np.all(np.abs(c[5000:10000].mean(axis=0) - [0.7, 0.3]) < d)
    drift = replify.make_adversary("drifting-bernoulli", n=2, horizon=1001, seed=0, start=[0.0, 1.0], end=[1.0, 0.0])
    assert np.allclose(drift.means_at(0, 1001)[[0, 500, 1000]], [[0, 1], [0.5, 0.5], [1, 0]])
    with pytest.raises(InvalidArgumentError, match=r"switch_at must be 1 increasing steps in \[1, 99\]"):
        replify.make_adversary("switching-bernoulli", n=2, horizon=100, seed=0, means=[[0.1, 0.2], [0.3, 0.4]], switch_at=[100])


def test_mixture_keeps_the_fixed_coordinates_and_randomises_the_others():
    seq = replify.make_adversary("mixture", n=N_, horizon=T_, seed=0, **ADVERSARIES["mixture"])
    c = seq.sample(np.random.default_rng(2))
    assert np.array_equal(c[:, [1, 3]], FIXED[:, [1, 3]])
    assert set(np.unique(c[:, [0, 2]])) == {0.0, 1.0}
    assert abs(c[:, [0, 2]].mean() - 0.3) < math.sqrt(math.log(2 / 1e-6) / (2 * 2 * T_))


def test_local_bootstrap_draws_rows_from_the_window():
    data = np.arange(T_ * N_, dtype=float).reshape(T_, N_)  # every row distinct: its first entry is 4*row
    seq = replify.make_adversary("local-bootstrap", n=N_, horizon=T_, seed=0, costs=data, window=7)
    rows = (seq.sample(np.random.default_rng(3))[:, 0] / N_).astype(int)
    t = np.arange(T_)
    assert np.all(np.abs(rows - t) <= 7) and rows.min() >= 0 and rows.max() <= T_ - 1
    assert len(np.unique(rows - t)) == 15  # the whole window is used
    same = replify.make_adversary("local-bootstrap", n=N_, horizon=T_, seed=0, costs=data, window=0)
    assert np.array_equal(same.sample(np.random.default_rng(0)), data)


def test_users_costs_from_csv_and_npy_files(tmp_path):
    np.save(tmp_path / "c.npy", FIXED)
    np.savetxt(tmp_path / "c.csv", FIXED, delimiter=",")
    a = replify.make_adversary("point-mass", n=N_, horizon=T_, seed=0, path=tmp_path / "c.npy")
    b = replify.make_adversary("point-mass", n=N_, horizon=T_, seed=0, path=str(tmp_path / "c.csv"))
    rng = np.random.default_rng(0)
    assert np.array_equal(a.sample(rng), FIXED) and np.allclose(b.sample(rng), FIXED, rtol=1e-15)
    with pytest.raises(InvalidArgumentError, match=r"path must be an existing .csv or .npy file, got '.*nope.npy' \(not found\)"):
        replify.make_adversary("point-mass", n=N_, horizon=T_, seed=0, path=tmp_path / "nope.npy")
    (tmp_path / "bad.csv").write_text("1,2,x,4\n")
    with pytest.raises(InvalidArgumentError, match=r"is not a CSV of numbers"):
        replify.make_adversary("point-mass", n=N_, horizon=1, seed=0, path=tmp_path / "bad.csv")
    with pytest.raises(InvalidArgumentError, match=r"give exactly one of costs="):
        replify.make_adversary("local-bootstrap", n=N_, horizon=T_, seed=0)
    (tmp_path / "c.txt").write_text("1")
    with pytest.raises(InvalidArgumentError, match=r"path must end in .csv or .npy"):
        replify.make_adversary("point-mass", n=N_, horizon=T_, seed=0, path=tmp_path / "c.txt")


def test_an_adversary_that_cannot_draw_block_sums_runs_step_by_step():
    report = replify.evaluate("ftplb-star", "drifting-bernoulli", n=3, horizon=2000, pairs=4, seed=0, rho=0.1,
                              block_size=200, adversary_params={"start": 0.2, "end": 0.8})
    assert not report.fast_path
    report = replify.evaluate("ftplb-star", "switching-bernoulli", n=3, horizon=2000, pairs=4, seed=0, rho=0.1,
                              block_size=200, adversary_params={"means": [[0.2, 0.5, 0.8], [0.8, 0.5, 0.2]]})
    assert report.fast_path
