"""The exponentially weighted average forecaster (EWA) with a fixed learning rate and with the
doubling trick (Cesa-Bianchi & Lugosi, *Prediction, Learning, and Games*, 2006, §2.1–2.3,
Thm 2.2; Vovk 1990; Littlestone & Warmuth 1994), playing the mixture itself.

Fixed rate: p_t(j) ∝ exp(−η·L_{t−1}(j)), L the experts' cumulative costs; η = sqrt(8 ln n / T)
gives expected regret at most sqrt(T ln n / 2) on costs in [0, 1].

Doubling trick (no horizon needed to tune): epoch m = 0, 1, 2, … covers steps 2^m … 2^{m+1} − 1;
each epoch restarts from uniform weights with η_m = sqrt(8 ln n / 2^m), and the regret is at most
(√2 / (√2 − 1))·sqrt(T ln n / 2).

Not replicable: two runs on independent draws of the costs part as soon as the draws differ.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import replify
from replify.base.checks import check_positive, check_remaining
from replify.components.cumulative import running_sums
from replify.components.doubling import DOUBLING_FACTOR, epoch_of
from replify.components.mixtures import MixedLearner, softmax

def default_eta(horizon: int, n: int) -> float:
    """η = sqrt(8 ln n / T), the rate of Thm 2.2 for a known horizon."""
    return math.sqrt(8.0 * math.log(n) / horizon)


def regret_bound(*, horizon: int, n: int, eta: float | None = None) -> float:
    """ln n / η + ηT/8 at rate η (Cesa-Bianchi & Lugosi 2006, Thm 2.2, for every η > 0);
    sqrt(T ln n / 2) at the default rate."""
    if eta is None:
        return math.sqrt(horizon * math.log(n) / 2.0)
    return math.log(n) / eta + eta * horizon / 8.0


def doubling_regret_bound(*, horizon: int, n: int) -> float:
    """(√2/(√2 − 1))·sqrt(T ln n / 2) (Cesa-Bianchi & Lugosi 2006, §2.3)."""
    return DOUBLING_FACTOR * math.sqrt(horizon * math.log(n) / 2.0)


class EWA(MixedLearner):
    """p_t ∝ exp(−η L_{t−1}) with a fixed ``eta`` (default sqrt(8 ln n / T))."""

    _params = ("eta",)

    def __init__(self, *, n: int, horizon: int, rng: Any = None, eta: float | None = None) -> None:
        super().__init__(n=n, horizon=horizon)
        self.eta = default_eta(self.horizon, self.n) if eta is None else check_positive("eta", eta)
        self._loss = np.zeros(self.n)

    def _next(self, c: np.ndarray) -> np.ndarray:
        self._loss += c
        return softmax(-self.eta * self._loss)

    def run(self, costs: Any) -> np.ndarray:
        """The mixtures ``(L, n)`` played on ``costs`` ``(L, n)``; bit-identical to stepping."""
        c = self.domain.check_matrix(costs, n=self.n, first_step=self._t + 1)
        check_remaining(self._t, c.shape[0], self.horizon)
        cums = running_sums(self._loss, c)  # the same float additions as update()
        mixtures = softmax(-self.eta * cums)
        out = np.concatenate([self._p[None], mixtures[1:-1]]) if c.shape[0] else np.empty((0, self.n))
        if c.shape[0]:
            self._p, self._loss = mixtures[-1].copy(), cums[-1].copy()
        self._t += c.shape[0]
        return out


class DoublingEWA(MixedLearner):
    """EWA restarted from uniform weights at steps 1, 2, 4, 8, …, with η_m = sqrt(8 ln n / 2^m)
    in epoch m (no horizon needed to tune it; the horizon only ends the run)."""

    def __init__(self, *, n: int, horizon: int, rng: Any = None) -> None:
        super().__init__(n=n, horizon=horizon)
        self._loss = np.zeros(self.n)  # the costs since the current epoch began

    def eta_at(self, step: int) -> float:
        """The rate in force at 1-based step t."""
        return math.sqrt(8.0 * math.log(self.n) / 2 ** epoch_of(step))

    def _next(self, c: np.ndarray) -> np.ndarray:
        nxt = self._t + 1  # the step the new mixture is for
        if epoch_of(nxt) != epoch_of(self._t):  # a new epoch: restart
            self._loss = np.zeros(self.n)
            return np.full(self.n, 1.0 / self.n)
        self._loss += c
        return softmax(-self.eta_at(nxt) * self._loss)

    def run(self, costs: Any) -> np.ndarray:
        """The mixtures ``(L, n)`` on ``costs``, epoch by epoch (a loop over log T epochs, not
        steps); bit-identical to stepping."""
        c = self.domain.check_matrix(costs, n=self.n, first_step=self._t + 1)
        rows = c.shape[0]
        check_remaining(self._t, rows, self.horizon)
        out = np.empty((rows, self.n))
        done = 0
        while done < rows:
            step = self._t + 1  # 1-based step of out[done]
            out[done] = self._p
            # the rest of this step's epoch within the chunk: its costs update the mixture
            stop = min(rows, done + 2 ** (epoch_of(step) + 1) - step)
            cums = running_sums(self._loss, c[done:stop])
            mixtures = softmax(-self.eta_at(step) * cums[1:])
            out[done + 1 : stop] = mixtures[:-1]
            self._t += stop - done
            if epoch_of(self._t + 1) != epoch_of(self._t):
                self._loss, self._p = np.zeros(self.n), np.full(self.n, 1.0 / self.n)
            else:
                self._loss, self._p = cums[-1].copy(), mixtures[-1].copy()
            done = stop
        return out


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "ewa", EWA, "experts", norm="linf", cost_range=(0.0, 1.0), regret_bound=regret_bound,
            enforces={"horizon", "domain"}, description="exponentially weighted average forecaster (plays the mixture), eta = sqrt(8 ln n / T); not replicable",
        )
    )
    register(
        replify.LearnerSpec(
            "ewa-doubling", DoublingEWA, "experts", norm="linf", cost_range=(0.0, 1.0), regret_bound=doubling_regret_bound,
            enforces={"horizon", "domain"}, description="EWA with the doubling trick (restarts at 1, 2, 4, ...; plays the mixture); not replicable",
        )
    )
