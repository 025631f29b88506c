"""Thompson sampling for Bernoulli bandits (Thompson 1933; Agrawal & Goyal, "Analysis of Thompson
sampling for the multi-armed bandit problem", COLT 2012, Alg. 2), for costs in [0, 1]: each
step's cost c is turned into a Bernoulli success with probability 1 − c (exact for 0/1 costs),
each arm keeps a Beta(successes + 1, failures + 1) posterior, and the arm with the largest
posterior draw is played.

Its expected regret is O(Σ_a ln T / Δ_a) (Agrawal & Goyal 2012, Thm 2), and O(sqrt(n T ln T))
problem-independently. It draws from its own generator every step: not replicable.
"""

from __future__ import annotations

import numpy as np

import replify
from replify.components.bandits import BanditLearner


class BernoulliThompson(BanditLearner):
    """Thompson sampling with Beta(1, 1) priors; costs in [0, 1] become Bernoulli successes."""

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator) -> None:
        super().__init__(n=n, horizon=horizon)
        self._rng = rng
        self.successes = np.zeros(self.n)
        self.failures = np.zeros(self.n)
        self._action = self._choose()

    def _learn(self, action: int, cost: float) -> None:
        # Agrawal & Goyal's reduction: a success with probability 1 - c (c itself when c is 0 or 1)
        success = cost == 0.0 if cost in (0.0, 1.0) else self._rng.random() < 1.0 - cost
        if success:
            self.successes[action] += 1
        else:
            self.failures[action] += 1

    def _choose(self) -> int:
        return int(np.argmax(self._rng.beta(self.successes + 1.0, self.failures + 1.0)))


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "thompson", BernoulliThompson, "experts", norm="linf", cost_range=(0.0, 1.0),
            enforces={"horizon", "domain"}, feedback="bandit", description="Thompson sampling, Beta-Bernoulli (Agrawal & Goyal 2012), bandit feedback; not replicable",
        )
    )
