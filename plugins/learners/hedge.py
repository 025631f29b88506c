"""Hedge: exponential weights over n experts (Freund & Schapire 1997; Cesa-Bianchi & Lugosi
2006, Thm 2.2), sampling a fresh action every step with its own rng.

At step t the action is drawn from p_t(a) ∝ exp(−η·L_{t−1}(a)), L the cumulative costs. The
draw uses the Gumbel-max trick — argmin_a η·L_{t−1}(a) − G_t(a) with G_t iid Gumbel(0,1) has
exactly the law p_t — because it is elementwise arithmetic plus an argmin, so ``run`` draws all
steps at once and stays bit-identical to stepping.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import replify
from replify.base.checks import CostDomain, check_int, check_next_step, check_positive, check_remaining
from replify.components.cumulative import running_sums
from replify.components.describe import Described

DOMAIN = CostDomain(low=0.0, high=1.0)


def default_eta(horizon: int, n: int) -> float:
    """The standard rate for a known horizon and costs in [0,1]: η = sqrt(8 ln n / T)."""
    return math.sqrt(8.0 * math.log(n) / horizon)


def regret_bound(*, horizon: int, n: int, eta: float | None = None) -> float:
    """ln n / η + ηT/8: Hedge's expected regret at rate η on costs in [0,1] (Cesa-Bianchi &
    Lugosi 2006, Thm 2.2, whose proof holds for every η > 0); sqrt(T ln n / 2) at the default
    η = sqrt(8 ln n / T)."""
    if eta is None:
        return math.sqrt(horizon * math.log(n) / 2.0)
    return math.log(n) / eta + eta * horizon / 8.0


class Hedge(Described):
    """Exponential weights with learning rate ``eta`` (default sqrt(8 ln n / T)); costs in [0,1]^n."""

    _params = ("eta",)

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, eta: float | None = None) -> None:
        self.n = check_int("n", n, minimum=2)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.eta = default_eta(self.horizon, self.n) if eta is None else check_positive("eta", eta)
        self._rng = rng
        self._loss = np.zeros(self.n)
        self._t = 0
        self._action = self._draw()

    def _draw(self) -> int:
        return int(np.argmin(self.eta * self._loss - self._rng.gumbel(size=self.n)))

    def act(self) -> int:
        return self._action

    def update(self, cost: Any) -> None:
        check_next_step(self._t, self.horizon)
        self._loss += DOMAIN.check(cost, n=self.n, step=self._t + 1)
        self._t += 1
        if self._t < self.horizon:  # the next step's action, drawn now so act() is idempotent
            self._action = self._draw()

    def run(self, costs: Any) -> np.ndarray:
        """Actions ``(L,)`` on ``costs`` ``(L, n)``; bit-identical to stepping."""
        c = DOMAIN.check_matrix(costs, n=self.n, first_step=self._t + 1)
        rows = c.shape[0]
        check_remaining(self._t, rows, self.horizon)
        out = np.empty(rows, dtype=np.int64)
        if rows == 0:
            return out
        cums = running_sums(self._loss, c)  # the same float additions as update()
        draws = min(self._t + rows, self.horizon - 1) - self._t
        nxt = np.argmin(self.eta * cums[1 : 1 + draws] - self._rng.gumbel(size=(draws, self.n)), axis=1)
        out[0] = self._action
        out[1:] = nxt[: rows - 1]
        if draws == rows:
            self._action = int(nxt[-1])
        self._loss = cums[-1].copy()
        self._t += rows
        return out


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "hedge",
            Hedge,
            "experts",
            norm="linf",
            cost_range=(0.0, 1.0),
            regret_bound=regret_bound,
            enforces={"horizon", "domain"}, description="Hedge / exponential weights, eta = sqrt(8 ln n / T); not replicable",
        )
    )
