"""Exp3 (Auer, Cesa-Bianchi, Freund & Schapire, "The nonstochastic multiarmed bandit problem",
SIAM J. Comput. 32, 2002), in the loss form of Bubeck & Cesa-Bianchi (2012, Thm 3.1): play arm a
with probability p_t(a) ∝ exp(−η L̂_{t−1}(a)), where L̂ sums the importance-weighted estimates
ĉ_t(a) = c_t(a) 1{a_t = a} / p_t(a); with η = sqrt(2 ln n / (n T)) the regret is at most
sqrt(2 T n ln n) against any oblivious adversary.

``exp3-doubling`` needs no horizon to tune: epoch m = 0, 1, … covers steps 2^m … 2^{m+1} − 1 and
restarts with η_m = sqrt(2 ln n / (n 2^m)); its regret is at most (√2/(√2 − 1))·sqrt(2 T n ln n).
Both draw from their own generator every step: not replicable.
"""

from __future__ import annotations

import math

import numpy as np

import replify
from replify.checks import check_positive
from replify.components.bandits import BanditLearner
from replify.components.doubling import DOUBLING_FACTOR, epoch_of
from replify.components.mixtures import sample_by_inversion, softmax


def default_eta(horizon: int, n: int) -> float:
    """η = sqrt(2 ln n / (n T)) (Bubeck & Cesa-Bianchi 2012, Thm 3.1)."""
    return math.sqrt(2.0 * math.log(n) / (n * horizon))


def regret_bound(*, horizon: int, n: int, eta: float | None = None, doubling: bool = False) -> float:
    """ln n / η + ηnT/2 at rate η (Bubeck & Cesa-Bianchi 2012, proof of Thm 3.1, for every
    η > 0); sqrt(2 T n ln n) at the default rate; with ``doubling``, the doubling trick's bound."""
    if doubling:
        return doubling_regret_bound(horizon=horizon, n=n)
    if eta is None:
        return math.sqrt(2.0 * horizon * n * math.log(n))
    return math.log(n) / eta + eta * n * horizon / 2.0


def doubling_regret_bound(*, horizon: int, n: int) -> float:
    """(√2/(√2 − 1))·sqrt(2 T n ln n): the doubling trick on Thm 3.1."""
    return DOUBLING_FACTOR * math.sqrt(2.0 * horizon * n * math.log(n))


class Exp3(BanditLearner):
    """Exp3 with a fixed ``eta`` (default sqrt(2 ln n / (n T))); ``doubling=True`` restarts it at
    steps 1, 2, 4, … with η_m = sqrt(2 ln n / (n 2^m)) instead."""

    _params = ("eta", "doubling")

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, eta: float | None = None,
                 doubling: bool = False) -> None:
        super().__init__(n=n, horizon=horizon)
        if doubling and eta is not None:
            raise replify.errors.InvalidArgumentError(
                f"eta applies only without doubling (each epoch sets its own rate); got eta={eta} with doubling=True"
            )
        self.doubling = bool(doubling)
        self.eta = None if doubling else (default_eta(self.horizon, self.n) if eta is None else check_positive("eta", eta))
        self._rng = rng
        self._estimates = np.zeros(self.n)  # L̂ since the (epoch's) start
        self._p = np.full(self.n, 1.0 / self.n)
        self._action = self._draw()

    def rate(self, step: int) -> float:
        """η in force at 1-based step t."""
        if not self.doubling:
            return self.eta
        return math.sqrt(2.0 * math.log(self.n) / (self.n * 2 ** epoch_of(step)))

    def _draw(self) -> int:
        return int(sample_by_inversion(self._p, self._rng.random()))

    def _learn(self, action: int, cost: float) -> None:
        self._estimates[action] += cost / self._p[action]

    def _choose(self) -> int:
        nxt = self._t + 1
        if self.doubling and epoch_of(nxt) != epoch_of(self._t):  # a new epoch: restart
            self._estimates[:] = 0.0
        self._p = softmax(-self.rate(nxt) * self._estimates)
        return self._draw()


def Exp3Doubling(*, n: int, horizon: int, rng: np.random.Generator) -> Exp3:
    """Exp3 with the doubling trick."""
    return Exp3(n=n, horizon=horizon, rng=rng, doubling=True)


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "exp3", Exp3, "experts", norm="linf", cost_range=(0.0, 1.0), regret_bound=regret_bound,
            enforces={"horizon", "domain"}, feedback="bandit", description="Exp3 (Auer et al. 2002), eta = sqrt(2 ln n / (n T)), bandit feedback; not replicable",
        )
    )
    register(
        replify.LearnerSpec(
            "exp3-doubling", Exp3Doubling, "experts", norm="linf", cost_range=(0.0, 1.0), regret_bound=doubling_regret_bound,
            enforces={"horizon", "domain"}, feedback="bandit", description="Exp3 with the doubling trick, bandit feedback; not replicable",
        )
    )
