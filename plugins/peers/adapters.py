"""Adapters that run river's and mabwiser's contextual bandit policies as replify contextual
learners (``problem = "contextual"``, ``act(context)`` / ``update(action, cost)``).

**Contexts.** replify shows one feature vector per arm, an (n, d) array. river's and mabwiser's
contextual policies read one context per step, shared by the arms, and keep a model per arm (the
*disjoint* model, Li et al. 2010). The adapter hands them :func:`shared_context`: the arms' common
row where every row is the same (``classification-bandit`` with ``features_as="same"``), else every
arm's features, concatenated.

**Costs and rewards.** replify's costs are losses (lower is better); both libraries maximise
rewards. The adapter reports reward = −cost, which leaves a linear model's greedy and optimistic
choices unchanged up to the sign of θ.

**Randomness.** Each policy's own generator is seeded from the run's generator ``rng`` — R, which the
two runs of a pair share — so ``replify.evaluate`` measures the policy's replicability over the data,
as for replify's own learners. Neither library names its rule in force as a replify ``policy()``:
where contexts change, two runs are compared by their arms.

River: Bifet et al., river (JMLR 2021), ``river.bandit``. mabwiser: Strong, Kleynhans & Kadıoğlu,
"MABWiser: contextual multi-armed bandits for production recommender systems" (IJAIT 2021).
"""

from __future__ import annotations

import importlib
import numbers
from typing import Any

import numpy as np

from replify.errors import InvalidArgumentError

#: what each library's contextual policies are called there
RIVER_POLICIES = ("LinUCBDisjoint",)
MABWISER_POLICIES = ("LinUCB", "LinTS", "LinGreedy")


def shared_context(context: Any) -> np.ndarray:
    """The one context a disjoint-model policy reads: the arms' common row when every row of the
    (n, d) ``context`` is the same, else every arm's features concatenated (n·d)."""
    x = np.asarray(context, dtype=np.float64)
    return x[0].copy() if (x == x[0]).all() else x.reshape(-1)


def _package(name: str, extra: str = "peers") -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise InvalidArgumentError(f"{name.split('.')[0]} is not installed: pip install \"replify[{extra}]\" (or pip "
                                   f"install {name.split('.')[0]})") from None


def _seed(rng: Any) -> int:
    if not isinstance(rng, np.random.Generator):
        raise InvalidArgumentError(f"rng must be a numpy Generator (R, shared by the two runs of a pair); got "
                                   f"{type(rng).__name__}")
    return int(rng.integers(2**31 - 1))


def _cost(cost: Any) -> float:
    if isinstance(cost, (bool, np.bool_)) or not isinstance(cost, numbers.Real) or not np.isfinite(cost):
        raise InvalidArgumentError(f"cost must be a finite real number (the played arm's cost); got {cost!r}")
    return float(cost)


class RiverPolicy:
    """One of river's contextual bandit policies (``policy``, default ``"LinUCBDisjoint"``; its
    keyword arguments in ``params``, e.g. ``alpha=``) as a replify contextual learner."""

    problem, feedback = "contextual", "bandit"
    #: one model per arm: what replify.wrap's contextual conversion fits in its place
    model = "disjoint"

    def __init__(self, *, n: int, horizon: int, rng: Any, policy: str = "LinUCBDisjoint", **params: Any) -> None:
        if policy not in RIVER_POLICIES:
            raise InvalidArgumentError(f"policy must be one of river's contextual policies {RIVER_POLICIES}; got "
                                       f"{policy!r}")
        bandit = _package("river.bandit")
        self.n, self.horizon = n, horizon
        self.policy = getattr(bandit, policy)(seed=_seed(rng), **params)
        self._context: dict[str, float] | None = None

    def act(self, context: Any) -> int:
        x = shared_context(context)
        self._context = {f"x{i}": float(v) for i, v in enumerate(x)}
        return int(self.policy.pull(list(range(self.n)), context=self._context))

    def update(self, action: int, cost: float) -> None:
        self.policy.update(int(action), self._context, -_cost(cost))


class MabwiserPolicy:
    """One of mabwiser's contextual learning policies (``policy``: ``"LinUCB"`` by default,
    ``"LinTS"`` or ``"LinGreedy"``; its arguments in ``params``, e.g. ``alpha=``, ``l2_lambda=``) as a
    replify contextual learner. mabwiser predicts only once fitted: the first step plays arm 0."""

    problem, feedback = "contextual", "bandit"
    model = "disjoint"

    def __init__(self, *, n: int, horizon: int, rng: Any, policy: str = "LinUCB", **params: Any) -> None:
        if policy not in MABWISER_POLICIES:
            raise InvalidArgumentError(f"policy must be one of mabwiser's contextual policies {MABWISER_POLICIES}; got "
                                       f"{policy!r}")
        mab = _package("mabwiser.mab")
        self.n, self.horizon = n, horizon
        self.mab = mab.MAB(arms=list(range(n)), learning_policy=getattr(mab.LearningPolicy, policy)(**params),
                           seed=_seed(rng))
        self._fitted = False
        self._x: np.ndarray | None = None

    def act(self, context: Any) -> int:
        self._x = shared_context(context)
        if not self._fitted:
            return 0
        return int(self.mab.predict([self._x]))

    def update(self, action: int, cost: float) -> None:
        args = ([int(action)], [-_cost(cost)], [self._x])
        if self._fitted:
            self.mab.partial_fit(*args)
        else:
            self.mab.fit(*args)
            self._fitted = True
