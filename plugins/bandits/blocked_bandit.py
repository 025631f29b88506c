"""``blocked-bandit``: the paper's recipe (blocks, a fresh random grid at every block end, a leader
on the rounded estimates — Alg. ``general-framework``, §5) carried over to bandit feedback. It is
replify's own design; **no theorem is claimed**: its replicability and regret are measured
(``replify.stress``, ``replify.calibrate``), and reported as measured.

Block k of B steps plays a leader a_k at every step except exploration steps. Which steps of the
block explore, and which arm each explores, is drawn from the learner's randomness R (each step
explores with probability γ, a uniform arm) — so both runs of a pair explore at the same steps
the same arms, and a block's whole action sequence is fixed by R and a_k. The costs seen at
exploration steps give importance-weighted estimates of every arm's block cost,
ĉ(a) = Σ_{explore steps s with arm a} c_s(a) · n/γ (unbiased against an oblivious adversary, the
schedule being independent of the costs). At the end of block k the cumulative estimate Ĉ_k is
rounded to the point of a fresh random grid (spacing 1/ε, offset from R) inside Ĉ_k + [0, 1/ε)^n,
and a_{k+1} is its argmin (lowest index on ties).

The two runs part at a block end only if their grid points differ, which happens with probability
at most ε·E‖Ĉ_k − Ĉ'_k‖₁ — as in the full-information proof. What a proof would still need: the
importance-weighted estimates are not bounded by 1 per step (each explored cost is scaled by n/γ),
so the concentration of ‖Ĉ_k − Ĉ'_k‖₁ is of order n·sqrt(2 k B n/γ) rather than sqrt(kB), with
heavier tails; a union bound over the T/B block ends then gives ρ ≤ Σ_k ε n sqrt(2kBn/γ), which is
what the default ε solves for (a heuristic, not a certificate). Regret: exploration costs γT, the
leader's delay B per switch, and the estimates' noise.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

import replify
from replify.base.checks import check_int, check_positive, check_rho
from replify.errors import InvalidArgumentError
from replify.components.bandits import BanditLearner
from replify.components.grid import grid_point


def defaults(*, horizon: int, n: int, rho: float) -> tuple[int, float, float]:
    """(B, γ, ε): B = (T/ρ)^{2/3} n^{1/3} clipped to [n, T], γ = min(1/2, sqrt(n ln n / B)), and the ε
    that makes the heuristic union bound Σ_k ε n sqrt(2kBn/γ) ≈ (2/3) ε n sqrt(2n/γ) K^{3/2} sqrt(B)
    equal ρ (K = T/B blocks). Heuristics for a starting point: calibrate them."""
    block = int(min(horizon, max(n, round((horizon / rho) ** (2.0 / 3.0) * n ** (1.0 / 3.0)))))
    gamma = min(0.5, math.sqrt(n * math.log(n) / block))
    blocks = math.ceil(horizon / block)
    eps = rho / ((2.0 / 3.0) * n * math.sqrt(2.0 * n / gamma) * blocks**1.5 * math.sqrt(block))
    return block, gamma, eps


@attrs.frozen(kw_only=True)
class BlockedBanditParams:
    """The parameters in force (``block_size``, ``gamma``, ``eps``) beside the heuristic defaults'
    block size; ``certified`` is False: no theorem backs them (the report's claim is "measured")."""

    horizon: int
    n: int
    rho: float
    block_size: int
    gamma: float
    eps: float
    block_size_theorem: int  # the heuristic default, named as sweeps' block multipliers expect
    overrides: tuple[str, ...] = ()
    certified: bool = False
    regret_bound: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def parameters(
    *, horizon: int, n: int, rho: float, block_size: int | None = None, gamma: float | None = None,
    eps: float | None = None,
) -> BlockedBanditParams:
    """The parameters in force: the heuristic defaults of :func:`defaults`, or the overrides."""
    rho = check_rho(rho)
    b, g, e = defaults(horizon=horizon, n=n, rho=rho)
    overrides = tuple(k for k, v in (("block_size", block_size), ("gamma", gamma), ("eps", eps)) if v is not None)
    block = b if block_size is None else min(check_int("block_size", block_size, minimum=1), horizon)
    used_gamma = g if gamma is None else check_positive("gamma", gamma)
    if not 0.0 < used_gamma <= 1.0:
        raise InvalidArgumentError(f"gamma must be in (0, 1] (an exploration probability); got {used_gamma}")
    return BlockedBanditParams(horizon=horizon, n=n, rho=rho, block_size=block, gamma=used_gamma,
                               eps=e if eps is None else check_positive("eps", eps), block_size_theorem=b, overrides=overrides)


class BlockedBandit(BanditLearner):
    """Blocks, R-drawn exploration, importance-weighted estimates rounded on a fresh random grid
    at every block end, and a leader on the rounded estimates (module docstring)."""

    _params = ("gamma",)

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, rho: float,
                 block_size: int | None = None, gamma: float | None = None, eps: float | None = None) -> None:
        super().__init__(n=n, horizon=horizon)
        self.params = parameters(horizon=self.horizon, n=self.n, rho=rho, block_size=block_size, gamma=gamma, eps=eps)
        self.rho, self.block_size = self.params.rho, self.params.block_size
        self.gamma, self.eps = self.params.gamma, self.params.eps
        self._rng = rng
        self._scale = self.n / self.gamma  # the importance weight of an explored cost
        self._estimate = np.zeros(self.n)  # Ĉ at the last block end
        self._leader = int(rng.integers(self.n))  # block 1: an arm drawn from R
        self._j = 0  # steps played in the current block
        self._start_block()

    def _start_block(self) -> None:
        length = min(self.block_size, self.horizon - self._t)
        explore = self._rng.random(length) < self.gamma
        arms = self._rng.integers(self.n, size=length)
        self._explore = explore
        self._arms = np.where(explore, arms, self._leader).astype(np.int64)
        self._acc = np.zeros(self.n)  # the block's importance-weighted sums, added from zero in order
        self._j = 0
        self._action = int(self._arms[0]) if length else self._leader

    def _end_block(self) -> None:
        self._estimate = self._estimate + self._acc
        g = grid_point(self._estimate, self._rng.random(self.n), self.eps)  # a fresh grid per block end
        self._leader = int(np.argmin(g))
        if self._t < self.horizon:
            self._start_block()

    # -- stepping (act/update): the base class calls _learn then _choose
    def _learn(self, action: int, cost: float) -> None:
        if self._explore[self._j]:
            self._acc[action] += cost * self._scale
        self._j += 1

    def _choose(self) -> int:
        if self._j == self._explore.size:
            self._end_block()
        return int(self._arms[self._j])

    # -- batches: the rest of the block at once
    def next_batch(self) -> np.ndarray:
        """The arms of the rest of the current block: fixed by R and the block's leader."""
        return self._arms[self._j :].copy()

    def observe(self, costs: Any) -> None:
        """The costs of the arms :meth:`next_batch` gave, in order."""
        c = np.asarray(costs, dtype=np.float64)
        rows = self._arms.size - self._j
        if c.shape != (rows,):
            raise InvalidArgumentError(f"observe() needs the {rows} costs of the batch; got shape {c.shape}")
        low, high = self.cost_range
        if not (np.all(c >= low) and np.all(c <= high)):
            bad = int(np.argmax(~((c >= low) & (c <= high))))
            raise replify.errors.CostError(f"cost at step {self._t + bad + 1} must be a number in [{low:g}, {high:g}]; got {float(c[bad])!r}")
        mask = self._explore[self._j :]
        arms = self._arms[self._j :]
        # the same additions, in the same order, from zero, as stepping: bincount adds in order
        self._acc += np.bincount(arms[mask], weights=c[mask] * self._scale, minlength=self.n) if mask.any() else 0.0
        np.add.at(self.pulls, arms, 1)
        np.add.at(self.sums, arms, c)
        self._t += rows
        self._j = self._arms.size
        if self._t < self.horizon:  # at the horizon nothing is left to decide
            self._end_block()


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "blocked-bandit", BlockedBandit, "experts", norm="linf", cost_range=(0.0, 1.0), parameters=parameters,
            enforces={"horizon", "domain"}, feedback="bandit", description="the paper's recipe on bandit feedback: blocks, R-drawn exploration, estimates rounded on a "
            "fresh random grid per block; replicability measured, no theorem",
            test_params={"rho": 0.2, "block_size": 7, "gamma": 0.4},
        )
    )
