"""A user's own cost matrix, given as an array or a CSV / NPY file (for the ``point-mass`` and
``local-bootstrap`` adversaries)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from replify.base.checks import as_float_array
from replify.errors import InvalidArgumentError


def load_cost_matrix(costs: Any = None, path: Any = None, *, n: int, horizon: int) -> np.ndarray:
    """Exactly one of ``costs`` (an array) or ``path`` (``.npy``, or ``.csv`` of comma-separated
    numbers, one row per step). Returns a read-only float64 copy of shape ``(horizon, n)``."""
    if (costs is None) == (path is None):
        raise InvalidArgumentError("give exactly one of costs= (an array) or path= (a .csv or .npy file)")
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise InvalidArgumentError(f"path must be an existing .csv or .npy file, got {str(p)!r} (not found)")
        if p.suffix.lower() == ".npy":
            costs = np.load(p, allow_pickle=False)
        elif p.suffix.lower() == ".csv":
            try:
                costs = np.loadtxt(p, delimiter=",", ndmin=2)
            except ValueError as exc:
                raise InvalidArgumentError(f"path {str(p)!r} is not a CSV of numbers: {exc}") from None
        else:
            raise InvalidArgumentError(f"path must end in .csv or .npy, got {str(p)!r}")
    c = as_float_array("costs", costs)
    if c.shape != (horizon, n):
        raise InvalidArgumentError(f"costs must be an array of shape ({horizon}, {n}); got shape {c.shape}")
    if not np.isfinite(c).all():
        row, col = (int(i) for i in np.argwhere(~np.isfinite(c))[0])
        raise InvalidArgumentError(
            f"costs must be finite; got {c[row, col]} at step {row + 1}, coordinate {col} "
            f"({int((~np.isfinite(c)).sum())} non-finite entries in all)"
        )
    c = c.copy()
    c.flags.writeable = False
    return c
