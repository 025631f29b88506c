"""Learners that play a probability vector over the experts (``mixed = True``): the aggregation
rules of prediction with expert advice — exponentially weighted averages, ML-Poly, BOA — as
practitioners run them (the R package opera's ``mixture()`` is the reference).

The evaluation engine samples each step's expert from the vector with a uniform of the pair's
own stream (part of the shared randomness R) and charges the expected cost p_t·c_t; see
:func:`replify.evaluate`. None of these rules is replicable: they are the baselines a
replicable learner is compared with.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from replify.base.checks import CostDomain, check_int, check_next_step
from replify.components.describe import Described

#: Costs in [0, 1]^n, as the rules' tunings assume.
UNIT_COSTS = CostDomain(low=0.0, high=1.0)


def softmax(z: np.ndarray) -> np.ndarray:
    """``exp(z) / Σ exp(z)`` along the last axis, shifted by the maximum so that no weight
    overflows; rows of a 2-d array get the same floats as each row alone."""
    w = np.exp(z - z.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)


class MixedLearner(Described):
    """Base of the aggregation rules: ``act()`` returns the mixture p_t (a copy), ``update(c)``
    checks the step and the cost vector and asks :meth:`_next` for pₜ₊₁. Subclasses keep
    their own state and list their hyperparameters in ``_params`` (for ``repr`` and
    ``get_params()``)."""

    mixed = True
    problem = "experts"

    def __init__(self, *, n: int, horizon: int) -> None:
        self.n = check_int("n", n, minimum=2)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.domain = UNIT_COSTS
        self._t = 0
        self._p = np.full(self.n, 1.0 / self.n)

    @property
    def t(self) -> int:
        """Steps played so far."""
        return self._t

    def act(self) -> np.ndarray:
        """p_t, the probability vector over the experts for the current step."""
        return self._p.copy()

    def update(self, cost: Any) -> None:
        """Reveal step t's costs cₜ ∈ [0, 1]ⁿ; pₜ₊₁ is computed now."""
        check_next_step(self._t, self.horizon)
        c = self.domain.check(cost, n=self.n, step=self._t + 1)
        self._t += 1
        self._p = self._next(c)

    def _next(self, c: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def sample_by_inversion(probs: np.ndarray, u: float | np.ndarray) -> np.ndarray | np.integer:
    """The index each probability vector (last axis, weights need not sum exactly to 1) gives the
    uniform ``u`` by inversion of its cumulative sum: one draw per vector, for the engine's mixed
    strategies and learners that sample their own arm."""
    cdf = np.cumsum(probs, axis=-1)
    u = np.asarray(u)
    return np.minimum((cdf < u[..., None] * cdf[..., -1:]).sum(axis=-1), probs.shape[-1] - 1).astype(np.int64)


def instantaneous_regret(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    """r_t = p_t·c_t − c_t: how much better each expert did than the mixture at step t (linear
    losses, so the gradient trick of the rules' papers is exact)."""
    return float(p @ c) - c
