"""FTPLB*: Follow the Perturbed Leader with Geometric Noise and Block Updates
(paper §4, Alg. ``FTPLB-star``; guarantees ``thm:FTPLS-regret-replicability``).

    Sample X_a ~ Geo(ε) for every expert a (support {1, 2, …}).
    for t = 1..T:
        if t − 1 is a multiple of B:  a_t ← argmin_a c_{1:t−1}(a) − X_a
        else:                         a_t ← a_{t−1}

Theorem parameters (natural logarithms):
    p = sqrt(2 (ln(8T/ρ)/ln n + 1)),  B = (8 p ln(n) T / ρ)^{2/3},  ε = sqrt(ln n / (B T)).
The default (ours) is not the theorem's B, which exceeds T until T ≈ 7·10⁷ at n = 10, ρ = 0.1 (one
block: nothing learned): it is the B, with ε = ``certified_eps`` at that B, that minimises the
certified regret bound εBT + ln n/ε (:func:`certified_block`); ``block_size=`` or ``eps=`` given keep
the theorem's relation ε = sqrt(ln n/(BT)) between them.
Regret ≤ εBT + ln n/ε (``theorem:regret-replicable-FTPLB-star``; the paper's Fact gives
E[max X] ≤ 1 + H_n/ε, and the noise term E[max X] − 1/ε ≤ ln n/ε, so the bound stands).
Replicability: at a transition t the two runs differ with probability at most
ε·(2·sqrt(t ln n) + 1) (the proof's ρ/(2T) + 4εp·sqrt(T ln n), tightened), and at most
ε·(sqrt(ln n)·sqrt(t) + 1) + ε²·(κ_n t + sqrt(ln n)·sqrt(t)) when each run is charged only the side
of the threshold its own choice sits on (ours; :func:`replify.guarantees.certificates.geometric_sharp`);
the certificate takes the smaller total (see :func:`union_bound`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

import replify
from replify.base.checks import CostDomain, check_int, check_rho
from replify.errors import InvalidArgumentError
from replify.guarantees.certificates import UnionBound, certify, geometric_sharp
from replify.guarantees.theory import resolve_block_and_eps
from replify.components.blocks import BlockLearner, BlockParams, n_blocks

ALGORITHM, THEOREM = "FTPLB-star", "thm:FTPLS-regret-replicability"
DOMAIN = CostDomain(low=0.0, high=1.0)


def concentration_p(horizon: int, n: int, rho: float) -> float:
    """p = sqrt(2(ln(8T/ρ)/ln n + 1)): every expert's cumulative costs in the two runs stay
    within 2p·sqrt(T ln n) of each other except with probability ρ/(2T) (proof of the theorem)."""
    return math.sqrt(2.0 * (math.log(8.0 * horizon / rho) / math.log(n) + 1.0))


def theorem_block_size(horizon: int, n: int, rho: float) -> float:
    return (8.0 * concentration_p(horizon, n, rho) * math.log(n) * horizon / rho) ** (2.0 / 3.0)


def eps_for_block_size(block_size: int, horizon: int, n: int) -> float:
    """ε = sqrt(ln n / (B T)), which balances εBT against ln n/ε."""
    return math.sqrt(math.log(n) / (block_size * horizon))


def regret_bound(*, horizon: int, n: int, block_size: int, eps: float, **_: Any) -> float:
    """εBT + ln n/ε (``theorem:regret-replicable-FTPLB-star``)."""
    return eps * block_size * horizon + math.log(n) / eps


def union_bound(*, horizon: int, n: int, rho: float) -> UnionBound:
    """The proof's bound, tightened (:mod:`replify.guarantees.certificates`). Given the costs of both runs
    and the other experts' noise, run 1 picks a* iff X_{a*} clears an integer threshold, and run
    2's threshold is at most ⌈max_a Δ_a − min_a Δ_a⌉ higher (Δ = c_{1:t} − c'_{1:t}; ⌈·⌉ because
    Geo(ε) lives on the integers — docs/certificates.md); memorylessness makes the runs part with
    probability at most ε·(max Δ − min Δ + 1). Each Δ_a sums 2t independent terms of range 1
    (sub-Gaussian, variance proxy t/2), so E[max Δ − min Δ] ≤ 2√(t ln n): per transition
    ε·(2√(t ln n) + 1). The paper charges ρ/(2T) + 4εp·√(T ln n)."""
    p = concentration_p(horizon, n, rho)
    drift = 2.0 * math.sqrt(math.log(n))
    return UnionBound(
        now=drift, const=1.0, norm="range", mean=drift, radius=4.0 * p * math.sqrt(math.log(n)),
        tail=rho / (2.0 * horizon),
        source="geometric noise: P(part) <= eps * (E[max Delta - min Delta] + 1) <= eps * (2 sqrt(t ln n) + 1); "
               "each run charged its own side: (eps/2)(E R + 2) + (eps^2/2) E[R(R + 1)]",
        **geometric_sharp(n),
    )


@functools.lru_cache(maxsize=256)
def certified_block(horizon: int, n: int, rho: float) -> tuple[int, float] | None:
    """The block size B (and its ε = ``certified_eps``) that minimise the certified regret bound
    εBT + ln n/ε among those whose certificate is exactly ρ: the default when neither is given
    (ours; the theorem's B exceeds T until T ≈ 7·10⁷ at n = 10, ρ = 0.1, and its ε = √(ln n/(BT))
    does not spend ρ). None when no B < T certifies ρ with ε ≤ 1."""
    if horizon < 3:
        return None
    union = union_bound(horizon=horizon, n=n, rho=rho)
    best: tuple[float, int, float] | None = None
    candidates = np.unique(np.geomspace(1, horizon - 1, 160).round().astype(np.int64))
    for rounds in range(2):  # a log grid, then a finer one around its best
        for b in candidates:
            b = int(b)
            if not 1 <= b < horizon:
                continue
            e = union.certified_eps(rho, horizon=horizon, block_size=b)
            if not 0.0 < e <= 1.0:
                continue
            bound = e * b * horizon + math.log(n) / e
            if best is None or bound < best[0]:
                best = (bound, b, e)
        if best is None:
            return None
        candidates = np.unique(np.linspace(best[1] * 0.8, best[1] * 1.25, 80).round().astype(np.int64))
    return best[1], best[2]


def parameters(
    *, horizon: int, n: int, rho: float, block_size: int | None = None, eps: float | None = None
) -> BlockParams:
    """The parameters in force, with the regret and replicability bounds they give. Neither
    ``block_size`` nor ``eps`` given: the B and ε that minimise the certified regret bound at
    (T, n, ρ) (:func:`certified_block`; the theorem's B is reported as ``block_size_theorem``).
    One given: the theorem's relation between them, ε = √(ln n/(BT)) (as in
    ``thm:FTPLS-regret-replicability``)."""
    horizon, n, rho = check_int("horizon", horizon, minimum=1), check_int("n", n, minimum=2), check_rho(rho)
    b_theorem = theorem_block_size(horizon, n, rho)
    best = certified_block(horizon, n, rho) if block_size is None and eps is None else None
    if best is not None:
        block, eps_used, overrides = best[0], best[1], ()
    else:
        block, eps_used, overrides = resolve_block_and_eps(
            b_theorem, horizon=horizon, block_size=block_size, eps=eps,
            eps_of_block=lambda b: eps_for_block_size(b, horizon, n), context=f"{ALGORITHM}, n={n}, rho={rho}",
        )
    blocks = n_blocks(horizon, block)
    union = union_bound(horizon=horizon, n=n, rho=rho)
    bound = union.value(eps_used, horizon=horizon, block_size=block)
    certified = certify(bound, rho, algorithm=ALGORITHM, detail=f"B={block}, eps={eps_used:.4g}")
    return BlockParams(
        algorithm=ALGORITHM, theorem=THEOREM, horizon=horizon, n=n, rho=rho, block_size=block, eps=eps_used,
        block_size_theorem=b_theorem, overrides=overrides, n_blocks=blocks,
        replicability_bound=bound, union_bound=union, certified=certified,
        regret_bound=regret_bound(horizon=horizon, n=n, block_size=block, eps=eps_used),
        regret_bound_formula="eps*B*T + ln(n)/eps",
    )


class GeometricLeader(BlockLearner):
    """The perturbed leader with Geo(ε) noise drawn once, updated every ``block_size`` steps:
    FTPLB* for B ≥ 1, and the experts FTPL baseline for B = 1."""

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, params: BlockParams) -> None:
        if not 0.0 < params.eps <= 1.0:
            given = "eps" in params.overrides
            why = "" if given else (
                f": the theorem's eps = sqrt(ln n/(B T)) exceeds 1 when B*T < ln n "
                f"(here B={params.block_size}, T={horizon}, n={n}); pass a larger horizon or eps= in (0, 1]"
            )
            raise InvalidArgumentError(
                f"eps must be in (0, 1] (a geometric parameter), got {params.eps:.6g}"
                + (" (given)" if given else why)
            )
        super().__init__(n=n, horizon=horizon, block_size=params.block_size, domain=DOMAIN)
        self.params = params
        self.noise = rng.geometric(params.eps, size=self.n).astype(np.float64)  # X_a, support {1, 2, ...}
        self._action = int(np.argmin(-self.noise))  # t = 1 is a transition: c_{1:0} = 0

    @property
    def eps(self) -> float:
        return self.params.eps

    def _decide(self, cums: np.ndarray, steps: np.ndarray) -> np.ndarray:
        return np.argmin(cums - self.noise, axis=1)

    @classmethod
    def decide_batch(cls, learners: list, cums: np.ndarray, steps: np.ndarray) -> np.ndarray:
        noise = np.stack([lr.noise for lr in learners])[:, None, :]
        return np.argmin(cums - noise, axis=2)


def FTPLBStar(
    *, n: int, horizon: int, rng: np.random.Generator, rho: float,
    block_size: int | None = None, eps: float | None = None,
) -> GeometricLeader:
    """FTPLB* with the theorem's parameters for (T, n, ρ), or the given overrides."""
    return GeometricLeader(
        n=n, horizon=horizon, rng=rng, params=parameters(horizon=horizon, n=n, rho=rho, block_size=block_size, eps=eps)
    )


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "ftplb-star", FTPLBStar, "experts",
            norm="linf", cost_range=(0.0, 1.0), guarantee="adversarial",
            parameters=parameters, regret_bound=regret_bound, union_bound=union_bound,
            test_params={"rho": 0.1, "block_size": 10},
            enforces={"horizon", "domain"}, description="FTPL with Geo(eps) noise and block updates (Alg. FTPLB*), adversarially rho-replicable",
        )
    )
