"""FLLB: Follow the Lazy Leader with Block Updates (paper §3.1, Alg. ``FLLB``; guarantees
``thm:FLLB-regret-replicability``), and FLL, its non-replicable B = 1 baseline
(Kalai & Vempala 2005; the paper's ``example:FLL-not-replicable``).

    Sample p ~ U[0, 1/ε)^n once; G = {p + z/ε : z ∈ Z^n}.
    for t = 1..T:
        if t − 1 is a multiple of B:  g_{t−1} = the point of G in c_{1:t−1} + [0, 1/ε)^n
                                      a_t ← argmin_{a ∈ A} a·g_{t−1}
        else:                         a_t ← a_{t−1}

Theorem parameters: p = sqrt(2 ln(2T/ρ)) + 2, B = (2 p sqrt(n) T / ρ)^{2/3}, ε = 1/sqrt(BT).
Regret ≤ D(BεT + 1/ε) (``theorem:regret-replicable-FTPLB``; FLLB and FTPLB have the same
expected cost). Replicability: at a transition t the grid points of the two runs differ with
probability at most ε·sqrt(2nt) (the proof's ρ/(2T) + ε p sqrt(nT), tightened; see
:func:`union_bound`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import replify
from replify.base.checks import check_int, check_positive, check_rho
from replify.guarantees.certificates import UnionBound, certify, drift_l1
from replify.guarantees.theory import resolve_block_and_eps
from replify.components.actions import ActionSet, resolve_actions
from replify.components.blocks import OLOBlockLearner, OLOParams, batch_argmin, n_blocks
from replify.components.grid import grid_point

ALGORITHM, THEOREM = "FLLB", "thm:FLLB-regret-replicability"


def concentration_p(horizon: int, rho: float) -> float:
    """p = sqrt(2 ln(2T/ρ)) + 2: ‖c_{1:t} − c'_{1:t}‖₁ < p·sqrt(nT) except with probability
    ρ/(2T) (``lemma:concentration_in_ell_1_norm``, proof of the theorem)."""
    return math.sqrt(2.0 * math.log(2.0 * horizon / rho)) + 2.0


def theorem_block_size(horizon: int, n: int, rho: float) -> float:
    return (2.0 * concentration_p(horizon, rho) * math.sqrt(n) * horizon / rho) ** (2.0 / 3.0)


def eps_for_block_size(block_size: int, horizon: int) -> float:
    """ε = 1/sqrt(BT), which balances BεT against 1/ε."""
    return 1.0 / math.sqrt(block_size * horizon)


def regret_bound(*, horizon: int, n: int, block_size: int, eps: float, diameter: float = 2.0, **_: Any) -> float:
    """D(BεT + 1/ε) (``theorem:regret-replicable-FTPLB``)."""
    return diameter * (block_size * eps * horizon + 1.0 / eps)


def union_bound(*, horizon: int, n: int, rho: float) -> UnionBound:
    """The proof's bound, tightened (:mod:`replify.guarantees.certificates`): the one grid's offset is
    independent of the costs, so at transition t the two runs' grid points differ with
    probability at most ε·E‖c_{1:t} − c'_{1:t}‖₁ ≤ ε·√(2nt) for ℓ1-bounded costs. The paper
    charges ρ/(2T) + εp√(nT) instead; with ``lemma:concentration_in_ell_1_norm`` corrected its
    tail is (ρ/(2T))^{n/2}, still ≤ ρ/(2T) for n ≥ 2, so the theorem's B stands."""
    drift = drift_l1(n, "l1")
    return UnionBound(
        now=drift, norm="l1", mean=drift, radius=concentration_p(horizon, rho) * math.sqrt(n),
        tail=(rho / (2.0 * horizon)) ** (n / 2.0),
        source="grid rounding: P(g != g') <= eps * E||c_{1:t} - c'_{1:t}||_1 <= eps * sqrt(2nt)",
    )


def parameters(
    *, horizon: int, n: int, rho: float, diameter: float = 2.0,
    block_size: int | None = None, eps: float | None = None,
    algorithm: str = ALGORITHM, theorem: str = THEOREM, replicable: bool = True,
) -> OLOParams:
    """The parameters of ``thm:FLLB-regret-replicability`` (overridable) for an action set of
    dimension n and ℓ1 diameter D, with the bounds they give. FTPLB uses the same ones."""
    horizon, n, rho = check_int("horizon", horizon, minimum=1), check_int("n", n, minimum=2), check_rho(rho)
    diameter = check_positive("diameter", diameter)
    b_theorem = theorem_block_size(horizon, n, rho)
    block, eps_used, overrides = resolve_block_and_eps(
        b_theorem, horizon=horizon, block_size=block_size, eps=eps,
        eps_of_block=lambda b: eps_for_block_size(b, horizon), context=f"{algorithm}, n={n}, rho={rho}",
    )
    blocks = n_blocks(horizon, block)
    union = union_bound(horizon=horizon, n=n, rho=rho)
    bound = union.value(eps_used, horizon=horizon, block_size=block)
    certified = certify(bound, rho, algorithm=algorithm, detail=f"B={block}, eps={eps_used:.4g}") if replicable else None
    return OLOParams(
        algorithm=algorithm, theorem=theorem, horizon=horizon, n=n, rho=rho, block_size=block, eps=eps_used,
        block_size_theorem=b_theorem, overrides=overrides, n_blocks=blocks, diameter=diameter,
        replicability_bound=bound if replicable else None,
        union_bound=union if replicable else None, certified=certified,
        regret_bound=regret_bound(horizon=horizon, n=n, block_size=block, eps=eps_used, diameter=diameter),
        regret_bound_formula="D*(B*eps*T + 1/eps)",
    )


class LazyLeader(OLOBlockLearner):
    """Follow the Lazy Leader over ``action_set`` with one random grid, updated every
    ``params.block_size`` steps: FLLB, and FLL for B = 1."""

    def __init__(self, *, action_set: ActionSet, horizon: int, rng: np.random.Generator, params: OLOParams) -> None:
        super().__init__(action_set=action_set, horizon=horizon, params=params)
        self.offset = rng.random(self.n)  # p = offset/ε: one grid for the whole run
        self._action = self._first(grid_point(np.zeros(self.n), self.offset, self.eps))

    def _decide(self, cums: np.ndarray, steps: np.ndarray) -> Any:
        return self.action_set.argmin(grid_point(cums, self.offset, self.eps))

    @classmethod
    def decide_batch(cls, learners: list, cums: np.ndarray, steps: np.ndarray) -> np.ndarray:
        offsets = np.stack([lr.offset for lr in learners])[:, None, :]
        eps = np.array([lr.eps for lr in learners])[:, None, None]
        g = grid_point(cums, offsets, eps)
        return batch_argmin(learners[0].action_set, g)


def FLLB(
    *, n: int, horizon: int, rng: np.random.Generator, rho: float, actions: ActionSet | None = None,
    block_size: int | None = None, eps: float | None = None,
) -> LazyLeader:
    """FLLB over ``actions`` (default: the experts' simplex) with the theorem's parameters."""
    action_set = resolve_actions(n, actions)
    params = parameters(horizon=horizon, n=n, rho=rho, diameter=action_set.diameter, block_size=block_size, eps=eps)
    return LazyLeader(action_set=action_set, horizon=horizon, rng=rng, params=params)


def baseline_params(*, horizon: int, n: int, diameter: float, eps: float | None, algorithm: str) -> OLOParams:
    """B = 1 and ε = 1/sqrt(T) (or the given ε): regret ≤ D(εT + 1/ε) = 2D·sqrt(T), the
    FTPLB bound with B = 1. No replicability guarantee (paper §3.1)."""
    horizon = check_int("horizon", horizon, minimum=1)
    eps_used = eps_for_block_size(1, horizon) if eps is None else check_positive("eps", eps)
    return OLOParams(
        algorithm=algorithm, theorem="theorem:regret-replicable-FTPLB (B = 1)", horizon=horizon, n=n, rho=None,
        block_size=1, eps=eps_used, block_size_theorem=None, overrides=("eps",) if eps is not None else (),
        n_blocks=horizon, diameter=diameter, replicability_bound=None,
        regret_bound=regret_bound(horizon=horizon, n=n, block_size=1, eps=eps_used, diameter=diameter),
        regret_bound_formula="D*(eps*T + 1/eps)",
    )


def FLL(
    *, n: int, horizon: int, rng: np.random.Generator, actions: ActionSet | None = None, eps: float | None = None
) -> LazyLeader:
    """Follow the Lazy Leader without blocks: the grid point is recomputed at every step."""
    action_set = resolve_actions(n, actions)
    params = baseline_params(horizon=horizon, n=n, diameter=action_set.diameter, eps=eps, algorithm="FLL")
    return LazyLeader(action_set=action_set, horizon=horizon, rng=rng, params=params)


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "fllb", FLLB, "olo",
            norm="l1", cost_range=(-1.0, 1.0), guarantee="adversarial",
            parameters=parameters, regret_bound=regret_bound, union_bound=union_bound,
            test_params={"rho": 0.1, "block_size": 10},
            enforces={"horizon", "domain"}, description="Follow the Lazy Leader with block updates (Alg. FLLB), adversarially rho-replicable",
        )
    )
    register(
        replify.LearnerSpec(
            "fll", FLL, "olo",
            norm="l1", cost_range=(-1.0, 1.0),
            regret_bound=lambda *, horizon, n, diameter=2.0, **_: 2.0 * diameter * math.sqrt(horizon),
            enforces={"horizon", "domain"}, description="Follow the Lazy Leader (FLLB with B = 1), eps = 1/sqrt(T); not replicable",
        )
    )
