"""The random grid of Follow the Lazy Leader (paper §3.1, Fig. ``fig:FLLB``; used by
Alg. ``general-framework`` and ``general-framework-ell-infty`` in §5).

A grid of spacing ``1/eps`` and offset ``p`` is ``G = {p + z/eps : z in Z^n}``. Every cube
``x + [0, 1/eps)^n`` contains exactly one point of ``G``. Offsets are handed in as
``u ~ U[0,1)^n`` with ``p = u/eps``, which keeps the arithmetic in grid units.
"""

from __future__ import annotations

import numpy as np


def grid_point(x: np.ndarray, u: np.ndarray, eps: float) -> np.ndarray:
    """The unique point of the grid with offset ``u/eps`` and spacing ``1/eps`` inside the cube
    ``x + [0, 1/eps)^n``.

    Works elementwise on arrays of any (matching) shape, so one call can round the cumulative
    costs of many transitions at once; the result is bit-identical to rounding them one by one.
    """
    spacing = 1.0 / eps
    k = np.ceil(x * eps - u)
    g = (u + k) * spacing
    # In exact arithmetic g is in the cube; in floating point the products above can land one
    # ulp across a face. Step to the neighbouring grid point when they do, so the invariant
    # x <= g < x + spacing holds for the floats we return, not only on paper.
    k = np.where(g < x, k + 1.0, np.where(g >= x + spacing, k - 1.0, k))
    return (u + k) * spacing
