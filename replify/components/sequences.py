"""Shared pieces of the built-in adversaries (distribution sequences D_1..D_T, paper §2)."""

from __future__ import annotations

from typing import Any

import numpy as np

from replify.base.checks import as_float_array, check_int, check_real
from replify.errors import InvalidArgumentError


class ChunkedSequence:
    """An adversary that draws its costs chunk by chunk: ``sample`` is ``sample_chunk`` over the
    whole horizon, so consecutive chunks from one generator are, bit for bit, the rows of one
    ``sample`` call — which is what lets the evaluation engine stream."""

    n: int
    horizon: int
    #: True when every cost it draws is an integer (0/1 Bernoulli at scale 1): sums are then
    #: exact in any order, and the evaluation engine may add with BLAS instead of step by step.
    integer_costs: bool = False

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        return self.sample_chunk(rng, 0, self.horizon)

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int) -> np.ndarray:
        raise NotImplementedError


def check_sizes(n: Any, horizon: Any) -> tuple[int, int]:
    """An adversary's ``n`` (≥ 2 experts) and ``horizon`` (≥ 1 step), for one built directly
    rather than through :func:`replify.make_adversary` (which checks them too)."""
    return check_int("n", n, minimum=2), check_int("horizon", horizon, minimum=1)


def check_flag(name: str, value: Any) -> bool:
    """A True/False switch: 'no' or 0.5 are not read as True."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidArgumentError(f"{name} must be True or False, got {value!r} ({type(value).__name__})")
    return bool(value)


def check_means(name: str, value: Any, n: int) -> np.ndarray:
    """Bernoulli means: a number (every coordinate) or shape ``(n,)``, entries in [0, 1]; a copy.
    Booleans are refused (True is not the mean 1 by intent)."""
    if isinstance(value, (bool, np.bool_)) or np.asarray(value).dtype.kind == "b":
        raise InvalidArgumentError(f"{name} must be numbers in [0, 1], not booleans; got {value!r}")
    m = as_float_array(name, value)
    m = np.full(n, float(m)) if m.ndim == 0 else m
    expected = f"{name} must be a number or an array of shape ({n},) with entries in [0, 1]"
    if m.shape != (n,):
        raise InvalidArgumentError(f"{expected} (one mean per expert); got shape {m.shape}")
    if not (np.isfinite(m).all() and m.min() >= 0.0 and m.max() <= 1.0):
        raise InvalidArgumentError(f"{expected}; got {m.tolist()}")
    return m.copy()


def check_scale(value: Any) -> float:
    """The cost of a Bernoulli 1: in (0, 1]."""
    scale = check_real("scale", value)
    if not 0.0 < scale <= 1.0:
        raise InvalidArgumentError(f"scale must be in (0, 1], got {scale}")
    return scale
