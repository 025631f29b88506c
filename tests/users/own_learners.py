"""Learners a user writes, at test sizes: what tests/users runs through every entry point.

The full-information ones come from ``examples/my_learners.py`` (the README's); here they are
made small (n = 3, T = 400) so that each kind of learner can go through every entry point."""

import functools

import numpy as np

import replify
from my_learners import EpsilonGreedy, ProjectedGradient

N, T, RHO = 3, 200, 0.2
BLOCK = 50
EPS = replify.certified_eps(horizon=T, n=N, rho=RHO, block_size=BLOCK, norm="linf")


@replify.wrap(horizon=T, rho=RHO, norm="linf", block_size=BLOCK, eps=EPS)
class WrappedGradient(ProjectedGradient):
    """ProjectedGradient, certified RHO-replicable at (N, T) by the general framework."""


@replify.wrap(norm="linf")
class WrappedLater(ProjectedGradient):
    """Wrapped without horizon or rho: the run gives them."""


def gradient_from_seed(seed):
    """A callable seed -> learner, at (N, T)."""
    return ProjectedGradient(n=N, horizon=T, rng=np.random.default_rng(seed))


def greedy_from_seed(seed):
    return EpsilonGreedy(n=N, horizon=T, rng=np.random.default_rng(seed))


class Labelled:
    """A learner with a hyperparameter that happens to be called ``label``."""

    def __init__(self, *, n, horizon, rng, label="first"):
        self.n, self.label, self.total = n, label, np.zeros(n)

    def act(self):
        return int(np.argmin(self.total)) if self.label == "leader" else 0

    def update(self, cost):
        self.total += cost


class Minimal:
    """Exactly the documented contract and nothing more: no horizon or domain checks."""

    def __init__(self, *, n, horizon, rng):
        self.n, self.rng = n, rng

    def act(self):
        return int(self.rng.integers(self.n))

    def update(self, cost):
        pass


class ClaimsHorizon(Minimal):
    """Declares that it refuses updates past the horizon, and does not: the check must catch it."""

    enforces = frozenset({"horizon"})


class NoRng:
    """A factory that forgot ``rng``."""

    def __init__(self, *, n, horizon):
        self.n = n

    def act(self):
        return 0

    def update(self, cost):
        pass


class BanditMismatch:
    """Takes bandit feedback but is registered as full information."""

    feedback = "bandit"

    def __init__(self, *, n, horizon, rng):
        self.n = n

    def act(self):
        return 0

    def update(self, action, cost):
        pass


class Coins:
    """An adversary of the user's: iid fair coins on every expert but the first, which costs 0.2."""

    def __init__(self, *, n, horizon, rng, first=0.2):
        self.n, self.horizon, self.first = n, horizon, first

    def sample(self, rng):
        costs = (rng.random((self.horizon, self.n)) < 0.5).astype(float)
        costs[:, 0] = rng.random(self.horizon) < self.first
        return costs


def full_information_kinds():
    """Every kind of full-information learner a user can hold, by name."""
    instance = replify.wrap(ProjectedGradient, n=N, horizon=T, rho=RHO, seed=3, norm="linf", block_size=BLOCK, eps=EPS)
    here = __file__
    return {
        "registered": "hedge",
        "class": ProjectedGradient,
        "partial": functools.partial(ProjectedGradient, step=0.05),
        "seed-callable": gradient_from_seed,
        "lambda": lambda seed: ProjectedGradient(n=N, horizon=T, rng=np.random.default_rng(seed)),
        "decorated": WrappedGradient,
        "decorated-later": WrappedLater,
        "wrapped-instance": instance,
        "wrapped-factory": instance.factory,
        "module-reference": "own_learners:ProjectedGradient",
        "file-reference": f"{here}:WrappedGradient",
    }


def bandit_kinds():
    here = __file__
    return {
        "registered": "ucb1",
        "class": EpsilonGreedy,
        "partial": functools.partial(EpsilonGreedy, explore=0.2),
        "seed-callable": greedy_from_seed,
        "file-reference": f"{here}:EpsilonGreedy",
    }


class OutOfRange(Minimal):
    """Plays an expert index past n."""

    def act(self):
        return self.n + 3


class GlobalRandom(Minimal):
    """Draws from numpy's global state instead of its rng."""

    def act(self):
        return int(np.random.randint(self.n))


class NoUpdate:
    def __init__(self, *, n, horizon, rng):
        self.n = n

    def act(self):
        return 0


class BanditOneArgument(Minimal):
    """Declares bandit feedback but takes update(cost)."""

    feedback = "bandit"
