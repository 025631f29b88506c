"""BOA, Bernstein online aggregation (Wintenberger, "Optimal learning with Bernstein online
aggregation", Machine Learning 106, 2017), with the adaptive per-expert learning rates of the R
package opera (Gaillard & Goude), playing the mixture itself.

With r_t = p_t·c_t − c_t (each expert's instantaneous regret), uniform prior weights:

    V_t(j) = Σ_{s≤t} r_s(j)²,   B_t(j) = max_{s≤t} |r_s(j)|
    η_t(j) = min(1/(2 B_t(j)), sqrt(ln n / V_t(j)))            (∞ while r(j) has been 0)
    R̃_t(j) = Σ_{s≤t} (r_s(j) − η_s(j)·r_s(j)²)                (r_s(j) alone while some η_s is ∞)
    p_{t+1}(j) ∝ exp(η_t(j)·R̃_t(j))

The second-order term −η r² is what gives BOA its fast rates on exp-concave and stochastic
problems (Wintenberger 2017, Thm 3.1–3.3); no regret bound is registered (it depends on the
data). p_{t+1} depends on p_t, so it is stepped (no batch ``run``).

Not replicable: two runs on independent draws of the costs part as soon as the draws differ.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import replify
from replify.components.mixtures import MixedLearner, instantaneous_regret, softmax


class BOA(MixedLearner):
    """BOA with opera's adaptive rates (no hyperparameters)."""

    def __init__(self, *, n: int, horizon: int, rng: Any = None) -> None:
        super().__init__(n=n, horizon=horizon)
        self._v = np.zeros(self.n)  # V_t
        self._b = np.zeros(self.n)  # B_t
        self._reg = np.zeros(self.n)  # R̃_t

    def _next(self, c: np.ndarray) -> np.ndarray:
        r = instantaneous_regret(self._p, c)
        self._b = np.maximum(self._b, np.abs(r))
        self._v += r * r
        seen = self._v > 0.0  # V(j) > 0 exactly when B(j) > 0
        eta = np.minimum(1.0 / (2.0 * self._b[seen]), np.sqrt(math.log(self.n) / self._v[seen]))
        if seen.all():
            self._reg += r - eta * r * r
        else:  # some η(j) is still ∞: no second-order term yet
            self._reg += r
        # an expert never yet apart from the mixture has R̃ = 0 and weight exp(0)
        exponent = np.zeros(self.n)
        exponent[seen] = eta * self._reg[seen]
        return softmax(exponent)


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "boa", BOA, "experts", norm="linf", cost_range=(0.0, 1.0),
            enforces={"horizon", "domain"}, description="BOA, Bernstein online aggregation (Wintenberger 2017), opera's adaptive rates; plays the mixture; not replicable",
        )
    )
