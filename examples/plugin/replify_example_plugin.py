"""An example replify plugin: one learner and one adversary.

Install it (``pip install examples/plugin``) and replify finds it through the ``"replify"``
entry-point group declared in its pyproject.toml::

    import replify
    replify.make("example-ftl", n=2, horizon=100, seed=0)
    replify.make_adversary("example-alternating", n=2, horizon=100, seed=0)
"""

import numpy as np

import replify


class FollowTheLeader:
    """Play the expert with the least cumulative cost so far (ties to the lowest index).

    Deterministic, so it is trivially replicable on point masses, and it has linear regret
    against the alternating adversary below.
    """

    def __init__(self, *, n, horizon, rng):
        self.n, self.horizon = n, horizon
        self.total = np.zeros(n)

    def act(self):
        return int(np.argmin(self.total))

    def update(self, cost):
        self.total += cost

    def run(self, costs):
        """All actions at once: argmin of the cumulative costs before each step."""
        before = np.cumsum(costs, axis=0) - costs + self.total
        self.total = self.total + costs.sum(axis=0)
        return np.argmin(before, axis=1)


class Alternating:
    """The classic trap for FTL: expert 0 costs ½ on step 1, then the two experts take turns
    costing 1. A point mass at every step, so every draw is the same sequence."""

    def __init__(self, *, n, horizon, rng):
        self.n, self.horizon = n, horizon
        costs = np.zeros((horizon, n))
        costs[0, 0] = 0.5
        costs[1::2, 1] = 1.0
        costs[2::2, 0] = 1.0
        self.costs = costs

    def sample(self, rng):
        return self.costs.copy()


@replify.hookimpl
def register_learners(register):
    register(replify.LearnerSpec("example-ftl", FollowTheLeader, "experts", description="Follow the Leader"))


@replify.hookimpl
def register_adversaries(register):
    register(
        replify.AdversarySpec(
            "example-alternating", Alternating, description="alternating costs that fool Follow the Leader"
        )
    )
