"""Exp3 (Auer, Cesa-Bianchi, Freund & Schapire, "The nonstochastic multiarmed bandit problem",
SIAM J. Comput. 32, 2002), in the loss form of Bubeck & Cesa-Bianchi (2012, Thm 3.1): play arm a
with probability p_t(a) ∝ exp(−η L̂_{t−1}(a)), where L̂ sums the importance-weighted estimates
ĉ_t(a) = c_t(a) 1{a_t = a} / p_t(a); with η = sqrt(2 ln n / (n T)) the regret is at most
sqrt(2 T n ln n) against any oblivious adversary.

``exp3-doubling`` needs no horizon to tune: epoch m = 0, 1, … covers steps 2^m … 2^{m+1} − 1 and
restarts with η_m = sqrt(2 ln n / (n 2^m)); its regret is at most (√2/(√2 − 1))·sqrt(2 T n ln n).
Both draw from their own generator every step: not replicable.

**As computed.** The log-weights −η L̂(a) are kept — only the played arm's changes, by −η ĉ_t(a_t) —
and so are the weights w = exp(−η L̂ − s), one exponential a step for the arm that changed;
p_t = w / Σ w. The shift s is the largest log-weight when the weights were last rescaled: they
only fall, and once they sum below 2^−500 they are rescaled to a largest weight of 1 (nothing
overflows or underflows to an all-zero row, whatever η). Each step's arm is drawn by
inversion of the cumulative weights with one uniform of the learner's generator, the uniforms
drawn ahead in blocks (the same stream as one draw a step). :class:`Exp3Lanes` does this for
every lane of an evaluation at once (the lane-batched form of :mod:`replify.components.bandits`);
a learner stepped alone runs the same code on one lane.
"""

from __future__ import annotations

import math

import numpy as np

import replify
from replify.base.checks import check_positive
from replify.components.bandit_lanes import BanditLanes, LaneBandit
from replify.components.doubling import DOUBLING_FACTOR, epoch_of


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


#: Uniforms drawn ahead per lane at a time (8 KiB a lane).
UNIFORM_BLOCK = 1024
#: The smallest uniform used: u = 0 would pick an arm of weight 0 by inversion (a change of law
#: below 2^-60).
SMALLEST_UNIFORM = 2.0**-60

#: A lane whose weights sum below this is rescaled (its largest weight made 1): far from underflow.
RESCALE_BELOW = 2.0**-500


class Exp3Lanes(BanditLanes):
    """Exp3 on many lanes at once: each lane's log-weights −η L̂, its weights exp(−η L̂ − shift)
    kept as they change (only the played arm's, one exponential a lane and step), and its uniforms
    drawn ahead."""

    per_lane = ("log_weights", "_uniforms", "_weights", "_shift", "_total")
    shared = ("eta", "doubling", "_next")

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, eta: float | None, doubling: bool) -> None:
        super().__init__(n=n, horizon=horizon, rngs=[rng])
        self.eta, self.doubling = eta, doubling
        self.log_weights = np.zeros((1, n))  # −η L̂, since the (epoch's) start
        self._uniforms = np.empty((1, 0))  # this block's uniforms, one a step; _next: the next one's column
        self._next = 0
        # w = exp(log_weights − shift): the shift is a lane's largest log-weight when its weights were
        # last rescaled (log-weights only fall, so w ≤ 1, and a lane whose weights sum below
        # RESCALE_BELOW is rescaled to a largest weight of 1 again: nothing underflows to all zeros)
        self._weights = np.ones((1, n))
        self._shift = np.zeros(1)
        self._total = np.full(1, float(n))

    def rate(self, step: int) -> float:
        """η in force at 1-based step t."""
        if not self.doubling:
            return self.eta
        return math.sqrt(2.0 * math.log(self.n) / (self.n * 2 ** epoch_of(step)))

    def _choose(self) -> np.ndarray:
        step = self.t + 1
        if self.doubling and step > 1 and epoch_of(step) != epoch_of(step - 1):  # a new epoch: restart
            self.log_weights[:] = 0.0
            self._weights[:] = 1.0
            self._shift[:] = 0.0
        if self._next == self._uniforms.shape[1]:
            size = min(UNIFORM_BLOCK, self.horizon - self.t)
            self._uniforms = np.maximum(np.stack([rng.random(size) for rng in self.rngs]), SMALLEST_UNIFORM)
            self._next = 0
        u = self._uniforms[:, self._next]
        self._next += 1
        cdf = np.add.accumulate(self._weights, axis=1)  # (np.cumsum, without its wrapper)
        total = cdf[:, -1]
        if total.min() < RESCALE_BELOW:  # a lane's weights fell far: its largest weight made 1 again
            low = total < RESCALE_BELOW
            lw = self.log_weights[low]
            self._shift[low] = lw.max(axis=1)
            self._weights[low] = np.exp(lw - self._shift[low][:, None])
            cdf = np.add.accumulate(self._weights, axis=1)  # (np.cumsum, without its wrapper)
            total = cdf[:, -1]
        self._total = total
        # inversion: the first arm whose cumulative weight reaches u·Σw (u < 1, so the last one does)
        return (cdf >= (u * total)[:, None]).argmax(axis=1)

    def _learn(self, flat: np.ndarray, costs: np.ndarray) -> None:
        w = self._weights.take(flat)
        p = w / self._total  # p_t(a_t) > 0: an arm of weight 0 is never drawn
        lw = self.log_weights.take(flat) - self.rate(self.t + 1) * (costs / p)
        self.log_weights.put(flat, lw)
        self._weights.put(flat, np.exp(lw - self._shift))


class Exp3(LaneBandit):
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
        self._start(Exp3Lanes(n=self.n, horizon=self.horizon, rng=rng, eta=self.eta, doubling=self.doubling))

    def rate(self, step: int) -> float:
        """η in force at 1-based step t."""
        return self._lane.rate(step)

    @property
    def probabilities(self) -> np.ndarray:
        """p_t, the distribution the current step's arm is drawn from."""
        lw = self._lane.log_weights[0]
        w = np.exp(lw - lw.max())
        return w / w.sum()


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
