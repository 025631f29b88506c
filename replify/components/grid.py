"""The random grid of Follow the Lazy Leader (paper §3.1, Fig. ``fig:FLLB``; used by
Alg. ``general-framework`` and ``general-framework-ell-infty`` in §5).

A grid of spacing ``1/eps`` and offset ``p`` is ``G = {p + z/eps : z in Z^n}``. Every cube
``x + [0, 1/eps)^n`` contains exactly one point of ``G``. Offsets are handed in as
``u ~ U[0,1)^n`` with ``p = u/eps``, which keeps the arithmetic in grid units.
"""

from __future__ import annotations

import numpy as np


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
