"""Learners of your own, as a researcher writes them: the module the README, the guide's
"Your own learner" page, ``examples/sweep.toml`` and the command line use
(``replify run examples/my_learners.py:ProjectedGradient -n 10 -T 20000``).

The protocol is all replify asks for (docs/wrapper.md): a class called with keyword arguments
``n``, ``horizon`` and ``rng`` (a ``numpy.random.Generator``, its only source of randomness), with
``act()`` and ``update(cost)``. A bandit learner declares ``feedback = "bandit"`` and takes
``update(action, cost)``: the played arm and its cost (docs/bandits.md).
"""

import numpy as np

import replify

T, N, RHO = 20_000, 10, 0.1


def project_to_simplex(y):
    """The Euclidean projection of ``y`` onto the probability simplex (Duchi et al. 2008)."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.nonzero(u - css / np.arange(1, y.size + 1) > 0)[0][-1]
    return np.maximum(y - css[k] / (k + 1), 0.0)


class ProjectedGradient:
    """Online projected gradient descent on the simplex (Zinkevich 2003), playing an expert drawn
    from its iterate: regret O(sqrt(T)) in expectation with step sqrt(2 / T)."""

    def __init__(self, *, n, horizon, rng, step=None):
        self.n, self.rng = n, rng
        self.step = np.sqrt(2.0 / horizon) if step is None else step
        self.x = np.full(n, 1.0 / n)

    def act(self):
        return int(self.rng.choice(self.n, p=self.x / self.x.sum()))

    def update(self, cost):
        self.x = project_to_simplex(self.x - self.step * np.asarray(cost, dtype=float))


class EpsilonGreedy:
    """epsilon-greedy on bandit feedback: explore an arm drawn uniformly with probability
    ``explore``, else play the arm with the lowest mean cost so far (every arm once first)."""

    feedback = "bandit"

    def __init__(self, *, n, horizon, rng, explore=0.05):
        self.n, self.rng, self.explore = n, rng, explore
        self.sums, self.pulls = np.zeros(n), np.zeros(n)

    def act(self):
        if self.pulls.min() == 0:
            return int(np.argmin(self.pulls))
        if self.rng.random() < self.explore:
            return int(self.rng.integers(self.n))
        return int(np.argmin(self.sums / self.pulls))

    def update(self, action, cost):
        self.sums[action] += cost
        self.pulls[action] += 1


# The decorator form of replify.wrap (the paper's general framework, §5): the same learner made
# adversarially RHO-replicable. At T = 20 000 the theorem's own block size exceeds T, so take four
# blocks and the largest eps for which the proof's union bound still certifies RHO.
BLOCK = T // 4
EPS = replify.certified_eps(horizon=T, n=N, rho=RHO, block_size=BLOCK, norm="linf")


@replify.wrap(horizon=T, rho=RHO, norm="linf", block_size=BLOCK, eps=EPS)
class ReplicableGradient(ProjectedGradient):
    """ProjectedGradient inside the general framework: certified RHO-replicable at (N, T)."""
