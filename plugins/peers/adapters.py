"""Adapters that run river's and mabwiser's contextual bandit policies as replify contextual
learners (``problem = "contextual"``, ``act(context)`` / ``update(action, cost)``).

**Contexts.** replify shows one feature vector per arm, an (n, d) array. river's and mabwiser's
contextual policies read one context per step, shared by the arms, and keep a model per arm (the
*disjoint* model, Li et al. 2010). The adapter hands them :func:`shared_context`: the arms' common
row where every row is the same (``classification-bandit`` with ``features_as="same"``), else every
arm's features, concatenated. Which of the two is a property of the run, not of a step (a policy's
models have one dimension): ``context="common"`` or ``"concatenated"`` declares it, and the default
``"auto"`` takes it from the first step and holds it — a later step whose rows differ where the
common row was taken is refused, never handed n·d features.

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

from replify.errors import ActionError, InvalidArgumentError

#: what each library's contextual policies are called there
RIVER_POLICIES = ("LinUCBDisjoint",)
MABWISER_POLICIES = ("LinUCB", "LinTS", "LinGreedy")


#: how the arms' (n, d) features become the one context a policy reads (module docstring)
LAYOUTS = ("auto", "common", "concatenated")


def shared_context(context: Any, layout: str = "auto") -> np.ndarray:
    """The one context a disjoint-model policy reads from the (n, d) ``context``: the arms' common
    row (``layout="common"``: refused unless every row is the same), every arm's features
    concatenated (n·d, ``"concatenated"``), or (``"auto"``) the common row when every row is the
    same, else the concatenation — for one step; :class:`RiverPolicy` and :class:`MabwiserPolicy`
    hold the first step's choice for the run."""
    x = np.asarray(context, dtype=np.float64)
    same = bool((x == x[0]).all())
    if layout == "common" and not same:
        raise InvalidArgumentError("context: the arms' rows differ, but the policy reads their common row (context="
                                   "'common', or 'auto' on a run whose first step showed one row for every arm); give "
                                   "context='concatenated' for an adversary whose arms' features differ")
    return x[0].copy() if layout == "common" or (layout == "auto" and same) else x.reshape(-1)


class _Adapter:
    """What both adapters check: n ≥ 2 arms, the layout, finite (n, d) contexts, arms in range."""

    problem, feedback = "contextual", "bandit"
    #: one model per arm: what replify.wrap's contextual conversion fits in its place
    model = "disjoint"

    def _start(self, n: Any, horizon: Any, context: str) -> None:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
            raise InvalidArgumentError(f"{type(self).__name__}: n must be an integer >= 2 (a bandit chooses among at "
                                       f"least two arms); got {n!r}")
        if context not in LAYOUTS:
            raise InvalidArgumentError(f"{type(self).__name__}: context must be one of {LAYOUTS} (how the arms' "
                                       f"features become the policy's one context); got {context!r}")
        self.n, self.horizon, self.layout = int(n), horizon, context

    def _context_of(self, context: Any) -> np.ndarray:
        x = np.asarray(context)
        if x.ndim != 2 or x.shape[0] != self.n or x.dtype.kind not in "iuf" or not np.isfinite(x).all():
            raise InvalidArgumentError(f"{type(self).__name__}.act(context): context must be a finite (n, d) = "
                                       f"({self.n}, d) array of numbers; got "
                                       + (f"shape {x.shape}, dtype {x.dtype}" if x.ndim != 2 or x.shape[0] != self.n
                                          or x.dtype.kind not in "iuf" else "non-finite entries"))
        if self.layout == "auto":  # the first step's choice, held: the policy's models keep one dimension
            self.layout = "common" if bool((x == x[0]).all()) else "concatenated"
        return shared_context(x, self.layout)

    def _arm(self, action: Any) -> int:
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, numbers.Integral) or not 0 <= action < self.n:
            raise ActionError(f"{type(self).__name__}.update(action, cost): action must be an arm in [0, {self.n}); "
                              f"got {action!r}")
        return int(action)


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


class RiverPolicy(_Adapter):
    """One of river's contextual bandit policies (``policy``, default ``"LinUCBDisjoint"``; its
    keyword arguments in ``params``, e.g. ``alpha=``) as a replify contextual learner; ``context``
    as the module docstring says."""

    def __init__(self, *, n: int, horizon: int, rng: Any, policy: str = "LinUCBDisjoint", context: str = "auto",
                 **params: Any) -> None:
        self._start(n, horizon, context)
        if policy not in RIVER_POLICIES:
            raise InvalidArgumentError(f"policy must be one of river's contextual policies {RIVER_POLICIES}; got "
                                       f"{policy!r}")
        bandit = _package("river.bandit")
        self.policy = getattr(bandit, policy)(seed=_seed(rng), **params)
        self._context: dict[str, float] | None = None

    def act(self, context: Any) -> int:
        x = self._context_of(context)
        self._context = {f"x{i}": float(v) for i, v in enumerate(x)}
        return int(self.policy.pull(list(range(self.n)), context=self._context))

    def update(self, action: int, cost: float) -> None:
        self.policy.update(self._arm(action), self._context, -_cost(cost))


class MabwiserPolicy(_Adapter):
    """One of mabwiser's contextual learning policies (``policy``: ``"LinUCB"`` by default,
    ``"LinTS"`` or ``"LinGreedy"``; its arguments in ``params``, e.g. ``alpha=``, ``l2_lambda=``) as a
    replify contextual learner; ``context`` as the module docstring says. mabwiser predicts only
    once fitted: the first step plays arm 0."""

    def __init__(self, *, n: int, horizon: int, rng: Any, policy: str = "LinUCB", context: str = "auto",
                 **params: Any) -> None:
        self._start(n, horizon, context)
        if policy not in MABWISER_POLICIES:
            raise InvalidArgumentError(f"policy must be one of mabwiser's contextual policies {MABWISER_POLICIES}; got "
                                       f"{policy!r}")
        mab = _package("mabwiser.mab")
        self.mab = mab.MAB(arms=list(range(n)), learning_policy=getattr(mab.LearningPolicy, policy)(**params),
                           seed=_seed(rng))
        self._fitted = False
        self._x: np.ndarray | None = None

    def act(self, context: Any) -> int:
        self._x = self._context_of(context)
        if not self._fitted:
            return 0
        return int(self.mab.predict([self._x]))

    def update(self, action: int, cost: float) -> None:
        args = ([self._arm(action)], [-_cost(cost)], [self._x])
        if self._fitted:
            self.mab.partial_fit(*args)
        else:
            self.mab.fit(*args)
            self._fitted = True
