"""The ``"iid-bernoulli"`` adversary: every step, expert a costs ``scale`` with probability
``means[a]`` and 0 otherwise, independently — the iid setting of paper §6."""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.checks import as_float_array, check_real
from replify.errors import InvalidArgumentError


class IidBernoulli:
    """D_t = ⊗_a Bernoulli(means[a]) for every t."""

    def __init__(
        self, *, n: int, horizon: int, rng: np.random.Generator, means: Any = 0.5, scale: float = 1.0
    ) -> None:
        self.n, self.horizon = n, horizon
        m = as_float_array("means", means)
        if m.ndim == 0:
            m = np.full(n, float(m))
        if m.shape != (n,) or not (np.isfinite(m).all() and m.min() >= 0.0 and m.max() <= 1.0):
            raise InvalidArgumentError(
                f"means must be a number or an array of shape ({n},) with entries in [0, 1]; got {np.asarray(means)!r}"
            )
        self.means = m.copy()  # ours: later changes to the caller's array don't leak in
        self.scale = check_real("scale", scale)
        if not 0.0 < self.scale <= 1.0:
            raise InvalidArgumentError(f"scale must be in (0, 1], got {self.scale}")

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        costs = (rng.random((self.horizon, self.n)) < self.means).astype(np.float64)
        return costs if self.scale == 1.0 else costs * self.scale


@replify.hookimpl
def register_adversaries(register):
    register(
        replify.AdversarySpec(
            "iid-bernoulli",
            IidBernoulli,
            description="iid Bernoulli costs: expert a costs 1 w.p. means[a] at every step",
            param_docs={
                "means": "probability that each expert costs 1 (number or shape (n,)); default 0.5",
                "scale": "costs are scale * Bernoulli; scale = 1/n gives l1-bounded costs for OLO learners; default 1",
            },
        )
    )
