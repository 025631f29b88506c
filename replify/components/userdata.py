"""A user's own cost matrix, given as an array or a CSV / NPY file (for the ``point-mass`` and
``local-bootstrap`` adversaries)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from replify.base.checks import as_float_array, check_path
from replify.errors import InvalidArgumentError


def load_cost_matrix(costs: Any = None, path: Any = None, *, n: int, horizon: int) -> np.ndarray:
    """Exactly one of ``costs`` (an array) or ``path`` (``.npy``, or ``.csv`` of comma-separated
    numbers, one row per step). Returns a read-only float64 copy of shape ``(horizon, n)``."""
    if (costs is None) == (path is None):
        raise InvalidArgumentError("give exactly one of costs= (an array) or path= (a .csv or .npy file)")
    if path is not None:
        p = check_path("path", path)
        if not p.is_file():
            raise InvalidArgumentError(f"path must be an existing .csv or .npy file, got {str(p)!r} "
                                       f"({'a folder' if p.is_dir() else 'not found'})")
        if p.suffix.lower() == ".npy":
            costs = _npy(p)
        elif p.suffix.lower() == ".csv":
            try:  # utf-8-sig: a byte-order mark (Excel writes one) is read past, not taken for part of a number
                costs = np.loadtxt(p, delimiter=",", ndmin=2, encoding="utf-8-sig")
            except UnicodeDecodeError as exc:
                raise InvalidArgumentError(
                    f"path {str(p)!r} is not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r} at offset "
                    f"{exc.start}); expected a CSV of numbers, one row per step"
                ) from None
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
    c = np.array(c, dtype=np.float64)  # a copy in memory, never the caller's array or a mapped file
    c.flags.writeable = False
    return c


#: How every file ``np.save`` writes begins.
_NPY_MAGIC = b"\x93NUMPY"


def _npy(p: Path) -> np.ndarray:
    """The array in the ``.npy`` file ``p``, never unpickled: a file of Python objects (saved with
    ``allow_pickle``) is refused, since unpickling a file runs whatever code it holds, as is a file that
    is not one numpy wrote, or one cut short."""
    with open(p, "rb") as fh:
        head = fh.read(len(_NPY_MAGIC))
    if head != _NPY_MAGIC:
        raise InvalidArgumentError(
            f"path {str(p)!r} is not a .npy file: it does not begin as every file np.save writes does "
            f"({_NPY_MAGIC!r}); got {head!r}"
        )
    fmt = np.lib.format
    try:
        with open(p, "rb") as fh:  # the header alone first: what the file declares, before anything is read
            version = fmt.read_magic(fh)
            shape, _, dtype = (fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0)(fh)
            data_bytes = os.fstat(fh.fileno()).st_size - fh.tell()
    except OSError:
        raise  # the system's own error (no permission): it says what happened
    except Exception as exc:  # noqa: BLE001 - numpy's reader fails in many ways on a damaged header
        raise InvalidArgumentError(f"path {str(p)!r} is a damaged .npy file: its header cannot be read "
                                   f"({type(exc).__name__}: {exc})") from None
    if dtype.hasobject:
        raise InvalidArgumentError(
            f"path {str(p)!r} holds an array of Python objects (saved with allow_pickle), which replify does not load: "
            "unpickling a file runs the code it holds; expected an array of numbers: "
            "np.save(path, np.asarray(costs, dtype=float))"
        )
    needed = math.prod(shape) * dtype.itemsize
    if needed > data_bytes:  # a file cut short, or a damaged header declaring a shape it does not hold
        raise InvalidArgumentError(
            f"path {str(p)!r} is a damaged .npy file: its header declares an array of shape {shape} ({needed} bytes of "
            f"{dtype}) but the file holds {data_bytes} bytes after it (cut short?)"
        )
    try:
        return np.load(p, allow_pickle=False)
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - as above, for the data
        raise InvalidArgumentError(f"path {str(p)!r} is a damaged .npy file ({type(exc).__name__}: {exc})") from None
