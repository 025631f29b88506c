"""What every conformance check uses: the sizes, the costs, building a learner from its spec, one
step of the protocol it declares."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from replify.base.checks import check_int
from replify.base.checks import check_learner as check_protocol
from replify.errors import ArgumentTypeError, ReplifyWarning
from replify.components.bandits import is_bandit
from replify.components.contextual import is_contextual
from replify.plugins.registry import registry
from replify.plugins.specs import AdversarySpec, LearnerSpec


#: Sizes the conformance checks use unless a spec's ``test_params`` say otherwise.
CHECK_N, CHECK_HORIZON = 3, 120
#: The horizon of the lane-form check, at least.
LANE_CHECK_HORIZON = 2_500


def _params(spec: Any, n: int, horizon: int) -> dict[str, Any]:
    tp = spec.test_params
    return dict(tp(n, horizon) if callable(tp) else tp)


def _sizes(spec: Any) -> tuple[int, int, dict[str, Any]]:
    first = _params(spec, CHECK_N, CHECK_HORIZON)
    n = check_int(f"{spec.name}: test_params['n']", first.pop("n", CHECK_N), minimum=2)
    horizon = check_int(f"{spec.name}: test_params['horizon']", first.pop("horizon", CHECK_HORIZON), minimum=1)
    params = _params(spec, n, horizon)
    params.pop("n", None)
    params.pop("horizon", None)
    return n, horizon, params


def _costs(spec: Any, n: int, horizon: int, seed: int) -> np.ndarray:
    """Costs inside the spec's declared domain (ℓ1-bounded ones scaled by 1/n)."""
    rng = np.random.default_rng(seed)
    low, high = spec.cost_range
    costs = rng.uniform(low, high, size=(horizon, n))
    return costs / n if spec.norm == "l1" else costs


def _build(spec: Any, seed: int, horizon: int | None = None) -> tuple[Any, int, int]:
    n, sized, params = _sizes(spec)
    horizon = sized if horizon is None else horizon
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplifyWarning)
        learner = spec.factory(n=n, horizon=horizon, rng=np.random.default_rng(seed), **params)
    if isinstance(spec, LearnerSpec):  # a learner, not an adversary: the protocol, with errors that say what is missing
        check_protocol(learner, source=f"{spec.name}'s factory")
    return learner, n, horizon


#: The dimension of the contexts the checks show contextual learners.
CHECK_D = 3


def check_contexts(n: int, steps: int | None = None, seed: int = 99) -> np.ndarray:
    """Contexts for the checks: n feature vectors of dimension :data:`CHECK_D` in the unit ball —
    one (n, d) context (``steps=None``: fixed, a linear bandit) or (steps, n, d), one per step."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, size=(n, CHECK_D) if steps is None else (steps, n, CHECK_D))
    return x / np.sqrt(CHECK_D)


def _act(learner: Any, n: int) -> Any:
    """``act()``, or for a contextual learner ``act(context)`` with the checks' fixed context."""
    return learner.act(check_contexts(n)) if is_contextual(learner) else learner.act()


def _context_arg(learner: Any, n: int) -> tuple:
    """The arguments of a batched form's call: the fixed context for a contextual learner, none else."""
    return (check_contexts(n),) if is_contextual(learner) else ()


def _step(learner: Any, cost: np.ndarray) -> Any:
    """One step of the protocol the learner declares: act(), then update(c) — or, for a bandit
    learner, update(a, c[a]) with the arm it played (a contextual learner acts on the checks'
    fixed context). Returns the action."""
    action = np.array(_act(learner, cost.shape[0]), copy=True)
    if is_bandit(learner):
        learner.update(int(action), float(cost[int(action)]))
    else:
        learner.update(cost)
    return action


def _enforces(spec: Any, learner: Any) -> frozenset:
    declared = getattr(learner, "enforces", ())
    return frozenset(spec.enforces) | frozenset(declared if isinstance(declared, (set, frozenset, tuple, list)) else ())


def named_spec(spec: Any, kind: str) -> Any:
    """A :class:`LearnerSpec` (``kind="learner"``) or :class:`AdversarySpec`, given as one or as a
    registered name; anything else is refused, naming what came."""
    if isinstance(spec, str):
        return registry().learner(spec) if kind == "learner" else registry().adversary(spec)
    cls = LearnerSpec if kind == "learner" else AdversarySpec
    if not isinstance(spec, cls):
        raise ArgumentTypeError(
            f"spec must be {'a' if kind == 'learner' else 'an'} {cls.__name__} or the name of a registered {kind}; "
            f"got {spec!r} ({type(spec).__name__})"
        )
    return spec
