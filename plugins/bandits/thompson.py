"""Thompson sampling for Bernoulli bandits (Thompson 1933; Agrawal & Goyal, "Analysis of Thompson
sampling for the multi-armed bandit problem", COLT 2012, Alg. 2), for costs in [0, 1]: each
step's cost c is turned into a Bernoulli success with probability 1 − c (exact for 0/1 costs),
each arm keeps a Beta(successes + 1, failures + 1) posterior, and the arm with the largest
posterior draw is played.

Its expected regret is O(Σ_a ln T / Δ_a) (Agrawal & Goyal 2012, Thm 2), and O(sqrt(n T ln T))
problem-independently. It draws from its own generator every step: not replicable.

:class:`ThompsonLanes` plays every lane of an evaluation at once (the lane-batched form of
:mod:`replify.components.bandits`); a learner stepped alone runs the same code on one lane. The
posterior draws stay one ``beta`` call per lane and step, from that lane's own generator: numpy's
Beta sampler rejects a varying number of proposals, so the draws of a step cannot be made ahead
without changing every lane's stream.
"""

from __future__ import annotations

import numpy as np

import replify
from replify.components.bandits import BanditLanes, LaneBandit


class ThompsonLanes(BanditLanes):
    """Thompson sampling on many lanes at once: each lane's successes and failures per arm."""

    per_lane = ("successes", "failures")

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator) -> None:
        super().__init__(n=n, horizon=horizon, rngs=[rng])
        self.successes = np.zeros((1, n))
        self.failures = np.zeros((1, n))

    def _choose(self) -> np.ndarray:
        a, b = self.successes + 1.0, self.failures + 1.0
        return np.array([rng.beta(a[i], b[i]).argmax() for i, rng in enumerate(self.rngs)], dtype=np.int64)

    def _learn(self, flat: np.ndarray, costs: np.ndarray) -> None:
        # Agrawal & Goyal's reduction: a success with probability 1 - c (c itself when c is 0 or 1)
        success = costs == 0.0
        for i in np.flatnonzero((costs != 0.0) & (costs != 1.0)):  # one uniform of that lane's generator
            success[i] = self.rngs[i].random() < 1.0 - costs[i]
        self.successes.put(flat, self.successes.take(flat) + success)
        self.failures.put(flat, self.failures.take(flat) + ~success)


class BernoulliThompson(LaneBandit):
    """Thompson sampling with Beta(1, 1) priors; costs in [0, 1] become Bernoulli successes."""

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator) -> None:
        super().__init__(n=n, horizon=horizon)
        self._rng = rng
        self._start(ThompsonLanes(n=self.n, horizon=self.horizon, rng=rng))

    @property
    def successes(self) -> np.ndarray:
        """Each arm's successes so far."""
        return self._lane.successes[0]

    @property
    def failures(self) -> np.ndarray:
        """Each arm's failures so far."""
        return self._lane.failures[0]


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "thompson", BernoulliThompson, "experts", norm="linf", cost_range=(0.0, 1.0),
            enforces={"horizon", "domain"}, feedback="bandit", description="Thompson sampling, Beta-Bernoulli (Agrawal & Goyal 2012), bandit feedback; not replicable",
        )
    )
