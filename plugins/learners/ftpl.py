"""Follow the Perturbed Leader (Kalai & Vempala 2005), the non-replicable baseline of paper
§3–4: the perturbed leader at every step (block size 1), with its noise drawn once.

* Experts (``n`` only): Geo(ε) noise, ε = sqrt(ln n / T) — FTPLB* with B = 1; regret
  ≤ εT + ln n/ε = 2 sqrt(T ln n) (``theorem:regret-replicable-FTPLB-star``).
* OLO (``actions=`` given): uniform day-0 noise U[0,1/ε)^n, ε = 1/sqrt(T) — FTPLB with B = 1
  (Alg. ``FTPL``); regret ≤ D(εT + 1/ε) = 2D sqrt(T).

Its action is an argmin over cumulative sums plus fixed noise, so ``run`` decides every step
with one numpy call. Not replicable: ``example:FLL-not-replicable``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import replify
from replify.base.checks import check_int, check_positive
from replify.components.actions import ActionSet, resolve_actions
from replify.components.blocks import BlockParams, BlockLearner
from replify_plugins.learners import fllb
from replify_plugins.learners.ftplb import UniformLeader
from replify_plugins.learners.ftplb_star import GeometricLeader, regret_bound as geometric_regret_bound


def default_eps(horizon: int, n: int) -> float:
    """ε = sqrt(ln n / T), capped at 1 (a geometric parameter is a probability)."""
    return min(1.0, math.sqrt(math.log(n) / horizon))


def regret_bound(*, horizon: int, n: int, eps: float | None = None, diameter: float | None = None, **_: Any) -> float:
    """Experts: εT + ln n/ε; OLO (``diameter`` given): D(εT + 1/ε)."""
    if diameter is not None:
        return fllb.regret_bound(horizon=horizon, n=n, block_size=1, eps=eps or 1.0 / math.sqrt(horizon), diameter=diameter)
    eps = default_eps(horizon, n) if eps is None else eps
    return geometric_regret_bound(horizon=horizon, n=n, block_size=1, eps=eps)


def FTPL(
    *, n: int, horizon: int, rng: np.random.Generator, actions: ActionSet | None = None, eps: float | None = None
) -> BlockLearner:
    if actions is not None:
        action_set = resolve_actions(n, actions)
        params = fllb.baseline_params(horizon=horizon, n=n, diameter=action_set.diameter, eps=eps, algorithm="FTPL")
        return UniformLeader(action_set=action_set, horizon=horizon, rng=rng, params=params)
    horizon, n = check_int("horizon", horizon, minimum=1), check_int("n", n, minimum=2)
    eps_used = default_eps(horizon, n) if eps is None else check_positive("eps", eps)
    params = BlockParams(
        algorithm="FTPL", theorem="theorem:regret-replicable-FTPLB-star (B = 1)", horizon=horizon, n=n, rho=None,
        block_size=1, eps=eps_used, block_size_theorem=None, overrides=("eps",) if eps is not None else (),
        n_blocks=horizon, replicability_bound=None,
        regret_bound=regret_bound(horizon=horizon, n=n, eps=eps_used), regret_bound_formula="eps*T + ln(n)/eps",
    )
    return GeometricLeader(n=n, horizon=horizon, rng=rng, params=params)


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "ftpl", FTPL, "experts",
            norm="linf", cost_range=(0.0, 1.0),
            regret_bound=regret_bound,
            enforces={"horizon", "domain"}, description="Follow the Perturbed Leader: Geo noise (experts) or uniform noise (OLO, actions=); not replicable",
        )
    )
