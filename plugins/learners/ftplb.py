"""FTPLB: Follow the Perturbed Leader with Block Updates (paper §3.2, Alg. ``FTPLB``; regret
``theorem:regret-replicable-FTPLB``).

    Sample c_0 ~ U[0, 1/ε)^n once (a fake day 0).
    for t = 1..T:
        if t − 1 is a multiple of B:  a_t ← argmin_{a ∈ A} a·(c_0 + c_{1:t−1})
        else:                         a_t ← a_{t−1}

The paper analyses FLLB through FTPLB: at every step the two play the same action in
distribution (the remark after Alg. FTPLB), so they have the same expected cost,
≤ D(BεT + 1/ε). It uses FLLB's parameters (``thm:FLLB-regret-replicability``); the paper proves
no replicability for FTPLB itself, so its guarantee is left empty and ρ̂ is for measuring.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.components.actions import ActionSet, resolve_actions
from replify.components.blocks import OLOBlockLearner, OLOParams, batch_argmin
from replify_plugins.learners import fllb

ALGORITHM = "FTPLB"
THEOREM = "theorem:regret-replicable-FTPLB (B and eps of thm:FLLB-regret-replicability)"


class UniformLeader(OLOBlockLearner):
    """The perturbed leader with uniform day-0 noise c_0 ~ U[0,1/ε)^n drawn once, updated every
    ``params.block_size`` steps: FTPLB, and the OLO FTPL baseline for B = 1."""

    def __init__(self, *, action_set: ActionSet, horizon: int, rng: np.random.Generator, params: OLOParams) -> None:
        super().__init__(action_set=action_set, horizon=horizon, params=params)
        self.day0 = rng.random(self.n) / self.eps  # c_0
        self._action = self._first(self.day0)

    def _decide(self, cums: np.ndarray, steps: np.ndarray) -> Any:
        return self.action_set.argmin(self.day0 + cums)

    @classmethod
    def decide_batch(cls, learners: list, cums: np.ndarray, steps: np.ndarray) -> np.ndarray:
        day0 = np.stack([lr.day0 for lr in learners])[:, None, :]
        return batch_argmin(learners[0].action_set, day0 + cums)


def parameters(**kwargs: Any) -> OLOParams:
    """FLLB's parameters for (T, n, ρ[, D]), labelled as FTPLB's, with no replicability bound."""
    return fllb.parameters(**kwargs, algorithm=ALGORITHM, theorem=THEOREM, replicable=False)


def FTPLB(
    *, n: int, horizon: int, rng: np.random.Generator, rho: float, actions: ActionSet | None = None,
    block_size: int | None = None, eps: float | None = None,
) -> UniformLeader:
    action_set = resolve_actions(n, actions)
    params = parameters(horizon=horizon, n=n, rho=rho, diameter=action_set.diameter, block_size=block_size, eps=eps)
    return UniformLeader(action_set=action_set, horizon=horizon, rng=rng, params=params)


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "ftplb", FTPLB, "olo",
            norm="l1", cost_range=(-1.0, 1.0),
            parameters=parameters, regret_bound=fllb.regret_bound, test_params={"rho": 0.1, "block_size": 10},
            enforces={"horizon", "domain"}, description="FTPL with uniform day-0 noise and block updates (Alg. FTPLB); FLLB's analysis device",
        )
    )
