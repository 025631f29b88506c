"""UCB1 (Auer, Cesa-Bianchi & Fischer, "Finite-time analysis of the multiarmed bandit problem",
Machine Learning 47, 2002, Fig. 1), for costs in [0, 1]: play every arm once, then the arm whose
mean cost minus its confidence width sqrt(2 ln t / pulls) is smallest (ties: the lowest index).
With ``sigma=`` it takes any real costs, σ-sub-Gaussian around their means (Gaussian arms), and the
width is σ·sqrt(8 ln t / pulls) — the same rule: costs in [0, 1] are 1/2-sub-Gaussian, and
(1/2)·sqrt(8 ln t / pulls) = sqrt(2 ln t / pulls) (Lattimore & Szepesvári 2020, §7–8).

It plays every lane of an evaluation at once (:class:`UCB1Lanes`, the lane-batched form of
:mod:`replify.components.bandits`): the width is computed as sqrt(scale·ln t)·(1/sqrt(pulls)),
with each arm's mean and 1/sqrt(pulls) kept as it is pulled, so a step costs three operations
on the (lanes, n) arrays; a learner stepped alone runs the same code on one lane.

Its pseudo-regret on stochastic arms is at most Σ_{a: Δ_a > 0} 8 ln T / Δ_a + (1 + π²/3) Σ Δ_a
(Thm 1). Deterministic given the costs it sees — and not replicable: two runs on independent draws
of the costs part as soon as their confidence bounds order two arms differently.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import replify
from replify.base.checks import check_positive
from replify.components.bandit_lanes import BanditLanes, LaneBandit


def regret_bound(*, horizon: int, n: int, sigma: float | None = None) -> float | None:
    """The problem-independent form for costs in [0, 1]: sqrt(8 n T ln T) + (1 + π²/3) n (Auer et
    al. 2002, from Thm 1 with the worst gaps). With ``sigma`` (any real σ-sub-Gaussian costs) the
    gaps are unbounded and so is Thm 1's (1 + π²/3) Σ Δ_a term: no bound is stated (``None``)."""
    if sigma is not None:
        return None
    return math.sqrt(8.0 * n * horizon * math.log(max(horizon, 2))) + (1.0 + math.pi**2 / 3.0) * n


class UCB1Lanes(BanditLanes):
    """UCB1 on many lanes at once: each lane's pulls, mean costs and 1/sqrt(pulls) per arm."""

    per_lane = ("pulls", "means", "rinv", "sums")
    shared = ("scale",)

    def __init__(self, *, n: int, horizon: int, scale: float) -> None:
        super().__init__(n=n, horizon=horizon, rngs=[None])  # deterministic: no generator
        self.scale = scale
        self.pulls, self.sums = np.zeros((1, n)), np.zeros((1, n))
        self.means, self.rinv = np.zeros((1, n)), np.zeros((1, n))

    def _choose(self) -> np.ndarray:
        if self.t < self.n:  # every arm once, in order: the same arm in every lane
            return np.full(self.lanes, self.t, dtype=np.int64)
        index = self.rinv * -math.sqrt(self.scale * math.log(self.t))
        index += self.means
        return index.argmin(axis=1)

    def _learn(self, flat: np.ndarray, costs: np.ndarray) -> None:
        pulls = self.pulls.take(flat) + 1.0
        sums = self.sums.take(flat) + costs
        self.pulls.put(flat, pulls)
        self.sums.put(flat, sums)
        self.means.put(flat, sums / pulls)
        self.rinv.put(flat, 1.0 / np.sqrt(pulls))


class UCB1(LaneBandit):
    """UCB1 on costs in [0, 1] (lower confidence bounds on the mean costs); with ``sigma``, on any
    real σ-sub-Gaussian costs."""

    _params = ("sigma",)

    def __init__(self, *, n: int, horizon: int, rng: Any = None, sigma: float | None = None) -> None:
        super().__init__(n=n, horizon=horizon)
        self.sigma = None if sigma is None else check_positive("sigma", sigma)
        if self.sigma is not None:
            self.cost_range = (-math.inf, math.inf)
        scale = 2.0 if self.sigma is None else 8.0 * self.sigma**2
        self._start(UCB1Lanes(n=self.n, horizon=self.horizon, scale=scale))


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "ucb1", UCB1, "experts", norm="linf", cost_range=(0.0, 1.0), regret_bound=regret_bound,
            enforces={"horizon", "domain"}, feedback="bandit", description="UCB1 (Auer et al. 2002), bandit feedback; not replicable",
        )
    )
