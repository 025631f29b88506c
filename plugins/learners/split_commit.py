"""``split-commit``: explore, then commit to the leader rounded on a random grid — the simplest
learner that is replicable against any oblivious adversary *and* learns on stochastic costs.

    m = ⌈f·T⌉; draw an expert e ~ U{1..n} and a grid offset p ~ U[0, 1/ε)^n from R.
    t = 1..m:        play e                       (the uniform mixture's cost, in expectation over R)
    t = m+1..T:      play argmin_a g(a), g the point of the grid inside c_{1:m} + [0, 1/ε)^n

Replicability (the grid argument of paper §3, FLLB): the two runs can part only at the commit,
and for a uniform offset independent of the costs the grid points differ with probability at most
ε·E‖c_{1:m} − c'_{1:m}‖₁ ≤ ε·n·√(m/2) for costs in [0, 1]^n (each coordinate of the drift sums 2m
independent terms of variance ≤ 1/4; :mod:`replify.guarantees.certificates`). The default ε = ρ/(n√(m/2))
makes the bound exactly ρ. Regret: no adversarial guarantee (a commit can be wrong for the rest of
the run); on iid costs with gap Δ it commits to the best expert once m·Δ is large against the grid's
1/ε = n√(m/2)/ρ and the sampling noise √m — i.e. for m ≳ n²/(ρΔ)².
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

import replify
from replify.base.checks import CostDomain, check_int, check_positive, check_real, check_rho
from replify.errors import InvalidArgumentError
from replify.guarantees.certificates import certify
from replify.components.blocks import BlockLearner
from replify.components.grid import grid_point

DOMAIN = CostDomain(low=0.0, high=1.0)


@attrs.frozen(kw_only=True)
class SplitCommitParams:
    """The parameters in force and the certificate they give (``replicability_bound``)."""

    algorithm: str = "split-commit"
    horizon: int
    n: int
    rho: float
    fraction: float
    block_size: int  # m, the exploration length
    eps: float
    n_blocks: int
    overrides: tuple[str, ...]
    replicability_bound: float
    certified: bool
    calibration: str | None = None
    regret_bound: float | None = None
    regret_bound_formula: str = "none adversarially (one commit); on iid costs it learns once m*gap >> n*sqrt(m/2)/rho"

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self) | {"overrides": list(self.overrides)}


def parameters(*, horizon: int, n: int, rho: float, fraction: float = 0.25, eps: float | None = None) -> SplitCommitParams:
    """m = ⌈f·T⌉ (clipped to [1, T−1]) and ε = ρ/(n√(m/2)), the largest ε the grid argument certifies."""
    horizon, n, rho = check_int("horizon", horizon, minimum=2), check_int("n", n, minimum=2), check_rho(rho)
    fraction = check_real("fraction", fraction)
    if not 0.0 < fraction < 1.0:
        raise InvalidArgumentError(f"fraction must lie strictly between 0 and 1, got {fraction}")
    m = min(max(1, math.ceil(fraction * horizon)), horizon - 1)
    drift = n * math.sqrt(m / 2.0)  # E||c_{1:m} - c'_{1:m}||_1 <= n sqrt(m/2) on [0,1]^n
    eps_used = rho / drift if eps is None else check_positive("eps", eps)
    bound = min(1.0, eps_used * drift)
    return SplitCommitParams(
        horizon=horizon, n=n, rho=rho, fraction=fraction, block_size=m, eps=eps_used, n_blocks=-(-horizon // m),
        overrides=("eps",) if eps is not None else (), replicability_bound=bound,
        certified=certify(bound, rho, algorithm="split-commit", detail=f"m={m}, eps={eps_used:.4g}"),
    )


class SplitCommit(BlockLearner):
    """Explore on one expert drawn from R for m steps, then commit to the grid-rounded leader of c_{1:m}."""

    def __init__(
        self, *, n: int, horizon: int, rng: np.random.Generator, rho: float, fraction: float = 0.25, eps: float | None = None
    ) -> None:
        self.params = parameters(horizon=horizon, n=n, rho=rho, fraction=fraction, eps=eps)
        super().__init__(n=n, horizon=horizon, block_size=self.params.block_size, domain=DOMAIN)
        self._action = int(rng.integers(self.n))
        self.offset = rng.random(self.n)  # p = offset/eps, from R: shared by the two runs
        self.committed: int | None = None

    @property
    def eps(self) -> float:
        return self.params.eps

    def _decide(self, cums: np.ndarray, steps: np.ndarray) -> np.ndarray:
        # The first boundary is step m (blocks have length m): commit there, keep it afterwards.
        if self.committed is None:
            self.committed = int(np.argmin(grid_point(cums[0], self.offset, self.eps)))
        return np.full(steps.size, self.committed, dtype=np.int64)


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "split-commit", SplitCommit, "experts",
            norm="linf", cost_range=(0.0, 1.0), guarantee="adversarial", parameters=parameters, test_params={"rho": 0.1},
            enforces={"horizon", "domain"}, description="explore on one expert drawn from R for a fraction of T, then commit to the grid-rounded "
            "leader: adversarially rho-replicable, learns on stochastic costs",
        )
    )
