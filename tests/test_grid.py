import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from replify.grid import grid_point

coords = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
epss = st.floats(min_value=1e-7, max_value=10.0)


@settings(max_examples=300, deadline=None)
@given(x=st.lists(coords, min_size=1, max_size=8), eps=epss, seed=st.integers(0, 2**32 - 1))
def test_grid_point_lies_in_its_cube_and_on_its_grid(x, eps, seed):
    x = np.array(x)
    u = np.random.default_rng(seed).random(x.shape)
    g = grid_point(x, u, eps)
    spacing = 1.0 / eps
    assert np.all(g >= x) and np.all(g < x + spacing)
    # On the grid {u/eps + z/eps}: (g*eps - u) is an integer up to rounding.
    z = g * eps - u
    assert np.allclose(z, np.round(z), rtol=0, atol=1e-6 * np.maximum(1.0, np.abs(z)))


@settings(max_examples=25, deadline=None)
@given(x=coords, eps=epss, seed=st.integers(0, 2**32 - 1))
def test_grid_offset_is_uniform_in_the_cube(x, eps, seed):
    # For a uniform offset, g - x is uniform on [0, 1/eps). Kolmogorov–Smirnov distance against
    # U[0,1) of k draws of (g - x)*eps; by the DKW inequality P(D > d) <= 2 exp(-2 k d^2), so
    # d = sqrt(ln(2/1e-6) / (2k)) makes a false alarm a 1-in-a-million event per example.
    k = 20_000
    u = np.random.default_rng(seed).random(k)
    v = np.sort((grid_point(np.full(k, x), u, eps) - x) * eps)
    ecdf_hi = np.arange(1, k + 1) / k
    d = max(np.max(ecdf_hi - v), np.max(v - (ecdf_hi - 1.0 / k)))
    assert d <= math.sqrt(math.log(2 / 1e-6) / (2 * k))


def test_rounding_many_points_at_once_is_bit_identical_to_one_at_a_time():
    rng = np.random.default_rng(0)
    x = rng.normal(scale=1e4, size=(50, 7))
    u = rng.random((50, 7))
    batch = grid_point(x, u, 3.7e-4)
    single = np.stack([grid_point(x[i], u[i], 3.7e-4) for i in range(50)])
    assert np.array_equal(batch, single)


def test_nearby_points_share_their_grid_point_with_the_overlap_probability():
    # The proof's key step: for shift v the grid points agree unless some coordinate of the
    # offset falls in the sliver of width eps*|v_i|, so P(differ) <= eps*||v||_1. In one
    # dimension it is exactly eps*|v|. 200_000 offsets; the binomial standard deviation of the
    # frequency is <= 0.0011, so a 0.006 tolerance is over 5 standard deviations.
    eps, v = 0.01, 20.0
    u = np.random.default_rng(3).random(200_000)
    differ = grid_point(np.full(u.size, 5.0), u, eps) != grid_point(np.full(u.size, 5.0 + v), u, eps)
    assert abs(differ.mean() - eps * v) < 0.006
