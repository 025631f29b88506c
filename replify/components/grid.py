"""The random grid of Follow the Lazy Leader (paper §3.1, Fig. ``fig:FLLB``; used by
Alg. ``general-framework`` and ``general-framework-ell-infty`` in §5).

A grid of spacing ``1/eps`` and offset ``p`` is ``G = {p + z/eps : z in Z^n}``. Every cube
``x + [0, 1/eps)^n`` contains exactly one point of ``G``. Offsets are handed in as
``u ~ U[0,1)^n`` with ``p = u/eps``, which keeps the arithmetic in grid units.
"""

from __future__ import annotations

import math

import numpy as np

#: The step h of a width's ladder, in log₂ units: a ladder of ratio √2. A width measured on the data
#: (the off-policy overlap form, the contextual conversion's measured variance) is rounded up to the
#: ladder 2^{h(k + v)} with v uniform from R, so two runs share the width unless a ladder point falls
#: between their two raw widths: probability at most min(1, |log₂(w/w′)|/h) over v.
LADDER_STEP = 0.5


def ladder_point(raw: float, v: float) -> tuple[float, int]:
    """``raw`` (> 0) rounded up to the ladder 2^{h(k + v)} of offset ``v`` (uniform on [0, 1) from R):
    the width and its index k."""
    k = math.ceil(math.log2(raw) / LADDER_STEP - v)
    if 2.0 ** (LADDER_STEP * (k + v)) < raw:  # the logarithm's last bit: never a width below the raw one
        k += 1
    return 2.0 ** (LADDER_STEP * (k + v)), k


def bernstein_lower(rows: int, q: float, delta: float) -> float:
    """The t of a lower confidence bound on a mean by Bernstein's inequality: for the mean Ȳ of N =
    ``rows`` independent variables in [0, B] (so Var Y ≤ B·E Y) whose mean μ is at least B/q,
    P(Ȳ ≤ (1 − t)μ) ≤ exp(−N t² μ/(2B(1 + t/3))) ≤ exp(−N t²/(2q(1 + t/3))), and t solves the last
    = δ (t ≥ 1 where the rows are too few). Shifted variables in [K, KQ] with mean ≥ K are the same
    with q = Q."""
    big_l = math.log(1.0 / delta)
    a = 2.0 * q * big_l / 3.0
    return (a + math.sqrt(a * a + 8.0 * rows * q * big_l)) / (2.0 * rows)


def grid_point(x: np.ndarray, u: np.ndarray, eps: float | np.ndarray) -> np.ndarray:
    """The unique point of the grid with offset ``u/eps`` and spacing ``1/eps`` inside the cube
    ``x + [0, 1/eps)^n``: the smallest grid point >= x, coordinate by coordinate.

    Works elementwise on arrays of any (matching) shape, so one call can round the cumulative
    costs of many transitions at once; the result is bit-identical to rounding them one by one.
    """
    spacing = 1.0 / eps
    k = np.ceil(x * eps - u)
    # In exact arithmetic (u + k)/eps is the point; in floating point the products above can
    # land one ulp across a face of the cube. Correct with the very expression returned, so
    # that g >= x holds exactly for the floats returned, and step down only when the grid
    # point below is itself still >= x. The upper face then holds up to rounding: where x and
    # x + 1/eps are within an ulp of a grid point, no float answer is better than the other.
    k = np.where((u + k) * spacing < x, k + 1.0, k)
    k = np.where((u + (k - 1.0)) * spacing >= x, k - 1.0, k)
    return (u + k) * spacing
