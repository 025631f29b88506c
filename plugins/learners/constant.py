"""``constant``: one expert drawn uniformly from R at the start and never changed — the reference
row every replicable learner is shown beside (docs/claims.md).

It is perfectly replicable (ρ = 0 against any adversary: its only choice uses R alone, which the
two runs share) and learns nothing: its expected regret is the average expert's cumulative cost
minus the best one's, Θ(T) whenever the experts' means differ. A replicable learner whose regret is
not clearly below ``constant``'s has not learned anything yet; :attr:`replify.Report.learning_gain`
measures exactly that difference, on the same cost draws.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

import replify
from replify.base.checks import CostDomain, check_int
from replify.components.blocks import BlockLearner


@attrs.frozen(kw_only=True)
class ConstantParams:
    """What ``constant`` guarantees: replicability bound 0, and no regret bound below T."""

    algorithm: str = "constant"
    horizon: int
    n: int
    block_size: int
    n_blocks: int = 1
    replicability_bound: float = 0.0
    certified: bool = True
    regret_bound: float | None = None
    regret_bound_formula: str = "none: it never learns (expected regret = mean expert cost - best expert cost)"

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


class Constant(BlockLearner):
    """Plays the expert ``rng.integers(n)`` for all T steps (one block of length T)."""

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, rho: float | None = None) -> None:
        horizon = check_int("horizon", horizon, minimum=1)
        # it never looks at a cost, so every finite cost is one it can play against: the reference row
        # runs on every adversary, Gaussian costs and drawn contexts included (a NaN is still refused)
        super().__init__(n=n, horizon=horizon, block_size=horizon, domain=CostDomain(low=-math.inf, high=math.inf))
        self.params = ConstantParams(horizon=horizon, n=self.n, block_size=horizon)
        self._action = int(rng.integers(self.n))

    def _decide(self, cums: np.ndarray, steps: np.ndarray) -> np.ndarray:  # pragma: no cover - one block, never called
        return np.full(steps.size, self._action)


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "constant", Constant, "experts",
            norm="linf", cost_range=(-1.0, 1.0), guarantee="adversarial",
            enforces={"horizon", "domain"}, description="one expert drawn from R, never changed: replicable for every rho (rho = 0), learns nothing",
        )
    )
