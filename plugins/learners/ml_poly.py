"""ML-Poly: the polynomially weighted average with one learning rate per expert (Gaillard,
Stoltz & van Erven, "A second-order bound with excess losses", COLT 2014, §3), with the
scale-free rates of the R package opera (Gaillard & Goude), playing the mixture itself.

With r_t = p_t·c_t − c_t (each expert's instantaneous regret) and R_t = r_1 + … + r_t:

    p_{t+1}(j) ∝ η_t(j)·(R_t(j))₊        (uniform while no R_t(j) is positive)
    1/η_t(j)  = Σ_{s≤t} r_s(j)² + B_t,    B_t = max_{s≤t, k} r_s(k)²

GSvE 2014 (Thm 3, Cor. 4) bound each expert's regret by a second-order quantity,
O(sqrt(n·(1 + Σ_t r_t(j)²))) up to its constants; no regret bound is registered (it depends on
the data). Its recursion makes p_{t+1} depend on p_t, so it is stepped (no batch ``run``).

Not replicable: two runs on independent draws of the costs part as soon as the draws differ.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.components.mixtures import MixedLearner, instantaneous_regret


class MLPoly(MixedLearner):
    """ML-Poly with opera's tuning (no hyperparameters)."""

    def __init__(self, *, n: int, horizon: int, rng: Any = None) -> None:
        super().__init__(n=n, horizon=horizon)
        self._regret = np.zeros(self.n)  # R_t
        self._inv_eta = np.zeros(self.n)  # 1/η_t = Σ r² + B_t
        self._b = 0.0  # B_t

    def _next(self, c: np.ndarray) -> np.ndarray:
        r = instantaneous_regret(self._p, c)
        self._regret += r
        b = max(self._b, float((r * r).max()))
        self._inv_eta += r * r + (b - self._b)
        self._b = b
        positive = np.maximum(self._regret, 0.0)
        if positive.max() <= 0.0:
            return np.full(self.n, 1.0 / self.n)
        # some R(j) > 0 means some r ≠ 0, so B > 0 and every 1/η(j) ≥ B > 0
        w = positive / self._inv_eta
        return w / w.sum()


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "ml-poly", MLPoly, "experts", norm="linf", cost_range=(0.0, 1.0),
            enforces={"horizon", "domain"}, description="ML-Poly (Gaillard, Stoltz & van Erven 2014), opera's tuning; plays the mixture; not replicable",
        )
    )
