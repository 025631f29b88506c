"""Follow the Perturbed Leader with geometric noise for the experts problem (paper §4: the
non-blocked case B = 1 of Alg. ``FTPLB-star``; Kalai & Vempala 2005).

Once, before the first step, draw X_a ~ Geo(ε) (support {1, 2, …}) for every expert; at every
step play argmin_a L_{t−1}(a) − X_a. The noise is drawn once, so the action is a deterministic
function of the cumulative costs: ``run`` is an argmin over cumulative sums, with no loop.
Regret ≤ εT + ln n/ε (``theorem:regret-replicable-FTPLB-star`` with B = 1), i.e.
2·sqrt(T ln n) at the default ε = sqrt(ln n / T). Not replicable (paper §3.1).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import replify
from replify.checks import CostDomain, check_int, check_next_step, check_positive, check_remaining
from replify.cumulative import running_sums
from replify.errors import InvalidArgumentError

DOMAIN = CostDomain(low=0.0, high=1.0)


def default_eps(horizon: int, n: int) -> float:
    """ε = sqrt(ln n / T), capped at 1 (a geometric parameter is a probability)."""
    return min(1.0, math.sqrt(math.log(n) / horizon))


def regret_bound(*, horizon: int, n: int, eps: float | None = None, **_: Any) -> float:
    eps = default_eps(horizon, n) if eps is None else eps
    return eps * horizon + math.log(n) / eps


class FTPL:
    """FTPL with Geo(``eps``) noise drawn once (default ε = sqrt(ln n / T)); costs in [0,1]^n."""

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, eps: float | None = None) -> None:
        self.n = check_int("n", n, minimum=2)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.eps = default_eps(self.horizon, self.n) if eps is None else check_positive("eps", eps)
        if self.eps > 1.0:
            raise InvalidArgumentError(f"eps must be in (0, 1] (a geometric parameter), got {self.eps}")
        self.noise = rng.geometric(self.eps, size=self.n).astype(np.float64)
        self._loss = np.zeros(self.n)
        self._t = 0

    def act(self) -> int:
        return int(np.argmin(self._loss - self.noise))

    def update(self, cost: Any) -> None:
        check_next_step(self._t, self.horizon)
        self._loss += DOMAIN.check(cost, n=self.n, step=self._t + 1)
        self._t += 1

    def run(self, costs: Any) -> np.ndarray:
        """Actions ``(L,)`` on ``costs`` ``(L, n)``; bit-identical to stepping."""
        c = DOMAIN.check_matrix(costs, n=self.n, first_step=self._t + 1)
        rows = c.shape[0]
        check_remaining(self._t, rows, self.horizon)
        cums = running_sums(self._loss, c)
        out = np.argmin(cums[:-1] - self.noise, axis=1).astype(np.int64)
        self._loss = cums[-1].copy()
        self._t += rows
        return out


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "ftpl",
            FTPL,
            "experts",
            norm="linf",
            cost_range=(0.0, 1.0),
            regret_bound=regret_bound,
            description="Follow the Perturbed Leader, Geo(eps) noise once, eps = sqrt(ln n / T); not replicable",
        )
    )
