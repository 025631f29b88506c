"""The learner protocol, checked at the public boundary and on the step loop: a learner has
callable ``act`` and ``update`` taking what its declared ``feedback`` and ``problem`` say
(docs/bandits.md, docs/contextual.md), returns actions of its problem's kind, and is never updated
past its horizon. Every refusal names the learner, what was expected and what came.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import typing
from typing import Any

import numpy as np
from typeguard import typeguard_ignore

from replify.errors import ActionError, HorizonError, LearnerProtocolError



#: The values a learner's ``feedback`` attribute may take (docs/bandits.md); absent means "full".
FEEDBACK = ("full", "bandit")


@typeguard_ignore  # a validator run each step: it checks its own arguments
def check_feedback(learner: Any) -> str:
    """The learner's declared ``feedback``: "full" (the default, when the attribute is absent) or
    "bandit". Anything else is refused — a learner declaring ``feedback = "Bandit"`` must not run
    as a full-information learner and see whole cost vectors."""
    value = getattr(learner, "feedback", "full")
    if not (isinstance(value, str) and value in FEEDBACK):
        raise LearnerProtocolError(
            f"{type(learner).__name__}.feedback must be one of {', '.join(map(repr, FEEDBACK))} "
            f"(absent means 'full'), got {value!r}"
        )
    return value

@typeguard_ignore  # a validator run each step: it checks its own arguments
def check_next_step(t: int, horizon: int) -> None:
    """Refuse an update beyond the horizon (``t`` steps played so far)."""
    if t >= horizon:
        raise HorizonError(f"update() called for step {t + 1}, past the horizon T={horizon}")


def check_remaining(t: int, rows: int, horizon: int) -> None:
    """Refuse a cost sequence longer than the steps left before the horizon."""
    if t + rows > horizon:
        raise HorizonError(f"costs has {rows} rows but only {horizon - t} steps remain before the horizon T={horizon}")


#: integer types an action may have that are never booleans (bool is an int, and refused as an action)
PLAIN_INTS = frozenset({int, np.int64, np.int32, np.intp, np.int16, np.int8, np.uint64, np.uint32, np.uint16, np.uint8})


@typeguard_ignore  # a validator run each step: it checks its own arguments
def check_action(action: Any, *, n: int, problem: str, step: int, source: str) -> Any:
    """An experts (or contextual) action is an ``int`` in ``[0, n)``; an OLO action a finite vector
    of shape ``(n,)``."""
    if problem in ("experts", "contextual"):
        # a Python or numpy integer, checked without the ABC machinery of numbers.Integral (this runs
        # once per step for a learner stepped in Python: the ABC check was most of its time)
        if type(action) in PLAIN_INTS and 0 <= action < n:
            return int(action)
        if isinstance(action, bool) or not isinstance(action, numbers.Integral) or not 0 <= action < n:
            raise ActionError(
                f"{source} returned action {action!r} at step {step}; "
                f"expected an integer expert index in [0, {n})"
            )
        return int(action)
    vec = np.asarray(action)
    if vec.shape != (n,) or vec.dtype.kind not in "biuf" or not np.isfinite(vec).all():
        raise ActionError(
            f"{source} returned action {action!r} at step {step}; "
            f"expected a finite real vector of shape ({n},)"
        )
    return vec


class _NoCost:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<required>"


#: The default of a bandit learner's ``cost`` in ``update(action, cost)``: a call with one argument
#: (a cost vector, as a full-information learner takes) reaches the learner, which refuses it with
#: :func:`refuse_cost_vector_update` instead of Python's bare "missing 1 required positional argument".
NO_COST: Any = _NoCost()


def refuse_cost_vector_update(learner: Any, given: Any, *, step: int) -> typing.NoReturn:
    """Refuse ``update(given)`` on a bandit learner: it takes ``(action, cost)``."""
    shape = np.shape(given) if isinstance(given, (np.ndarray, list, tuple)) else ()
    what = (f"a sequence of shape {shape}, a whole cost vector" if len(shape) >= 1 else
            f"{given!r} ({type(given).__name__})")
    raise LearnerProtocolError(
        f"{type(learner).__name__}.update() at step {step}: a bandit learner (feedback='bandit') is updated as "
        f"update(action, cost) — the arm act() returned and that arm's cost, one number; got one argument, {what}"
        + ("; under bandit feedback only the played arm's cost is seen: update(action, costs[action])"
           if len(shape) >= 1 else "")
    )


def check_learner(obj: Any, *, source: str) -> Any:
    """An object that satisfies the learner protocol: callable ``act`` and ``update``, and a
    ``feedback`` attribute, if it has one, among :data:`FEEDBACK`."""
    missing = [m for m in ("act", "update") if not callable(getattr(obj, m, None))]
    if missing:
        raise LearnerProtocolError(
            f"{source} must return a learner with callable act() and update(cost); "
            f"got {type(obj).__name__} without {' and '.join(missing)}()"
        )
    feedback = check_feedback(obj)
    act = getattr(obj, "act")
    contextual = getattr(obj, "problem", None) == "contextual"
    if contextual and not _takes(type(obj), act, 1):
        raise LearnerProtocolError(
            f"{source} returned a {type(obj).__name__} that declares problem='contextual', so it acts as act(context) "
            f"on the step's (n, d) features; its act takes {_parameters(act)}"
        )
    if not contextual and not _takes(type(obj), act, 0) and _takes(type(obj), act, 1):
        raise LearnerProtocolError(
            f"{source} returned a {type(obj).__name__} whose act takes {_parameters(act)}, but it does not declare "
            f"problem = 'contextual', so it would be called as act(); if it acts on a context, declare "
            f"problem = 'contextual' and feedback = 'bandit' (docs/contextual.md)"
        )
    update = getattr(obj, "update")
    if feedback == "bandit" and not _takes(type(obj), update, 2):
        raise LearnerProtocolError(
            f"{source} returned a {type(obj).__name__} that declares feedback='bandit', so it is updated as "
            f"update(action, cost) — the arm it played and that arm's cost; its update takes "
            f"{_parameters(update)}"
        )
    if feedback == "full" and not _takes(type(obj), update, 1) and _takes(type(obj), update, 2):
        raise LearnerProtocolError(
            f"{source} returned a {type(obj).__name__} without feedback = 'bandit', so it is updated as update(cost) "
            f"with the whole cost vector; its update takes {_parameters(update)} — if it learns from the played "
            f"arm's cost only, declare feedback = 'bandit' (docs/bandits.md)"
        )
    return obj


@typeguard_ignore  # a validator run each step: it checks its own arguments
def _takes(cls: type, method: Any, count: int) -> bool:
    """Whether ``method`` (a learner's bound ``act`` or ``update``) can be called with ``count``
    positional arguments; read once per class (the engine builds a learner for every run of every pair)."""
    func = getattr(method, "__func__", None)
    if func is not None and getattr(cls, getattr(func, "__name__", ""), None) is func:
        return _binds(func, count + 1)  # the function itself, self included
    try:
        return _binds(method, count)
    except TypeError:  # an unhashable callable: read it uncached
        return _binds.__wrapped__(method, count)


@functools.lru_cache(maxsize=256)
def _binds(function: Any, count: int) -> bool:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # no signature to read: let the call decide
        return True
    try:
        signature.bind(*([None] * count))
    except TypeError:
        return False
    return True


def _parameters(method: Any) -> str:
    try:
        return f"({', '.join(p for p in inspect.signature(method).parameters)})"
    except (TypeError, ValueError):
        return "(unknown)"


def check_factory(factory: Any, *, name: str) -> Any:
    if not callable(factory):
        raise LearnerProtocolError(
            f"{name} must be callable (a class or function taking n, horizon, rng), "
            f"got {factory!r} ({type(factory).__name__})"
        )
    return factory
