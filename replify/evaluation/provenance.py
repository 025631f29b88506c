"""Where a number came from: the versions, the BLAS and the seed behind every report and results
row (docs/claims.md: a number a paper prints must say how it can be reproduced)."""

from __future__ import annotations

import functools
import platform
import sys
from typing import Any, Mapping

import numpy as np

from replify._version import __version__
from replify.base.randomness import seed_sequence


@functools.lru_cache(maxsize=1)
def environment() -> dict[str, Any]:
    """replify's, numpy's and Python's versions, the platform, and the BLAS numpy was built
    against (its name and version, from ``numpy.show_config``)."""

    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas_record = {"name": blas.get("name"), "version": blas.get("version")}
    except Exception:  # an exotic build without the record: say so rather than fail a report
        blas_record = {"name": "unknown", "version": None}
    return {
        "replify": __version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "platform": platform.platform(),
        "blas": blas_record,
    }


def provenance(seed: Any, configuration: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`environment`, the seed's entropy (and spawn key: together they rebuild every
    stream of the run) and the configuration, as plain JSON values."""
    root = seed_sequence(seed)
    entropy = root.entropy
    return {
        **environment(),
        "seed_entropy": int(entropy) if isinstance(entropy, (int, np.integer)) else jsonable(entropy),
        "seed_spawn_key": list(root.spawn_key),
        "configuration": jsonable(dict(configuration)),
    }


def jsonable(value: Any) -> Any:
    """``value`` with numpy arrays and scalars (at any depth) made plain JSON values."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
