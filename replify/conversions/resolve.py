"""What :func:`replify.wrap` is given, resolved once (:func:`resolve`): a registered learner's
name or spec, a class or factory (its ``problem`` and ``feedback`` declarations read), or a
reference to one (``"file.py:Name"``, ``"module:Name"``) — into a :class:`Resolved`, which the
conversion that serves it builds from without looking the learner up again."""

from __future__ import annotations

import functools
from typing import Any, Callable

import attrs

from replify.base.checks import check_factory
from replify.base.references import is_reference, load_reference
from replify.conversions.internal import declared_feedback
from replify.errors import InvalidArgumentError
from replify.plugins.registry import registry
from replify.plugins.specs import LearnerSpec


@attrs.frozen(kw_only=True)
class Resolved:
    """A learner as :func:`replify.wrap` resolved it, once: its ``factory`` (called as
    ``factory(n=, horizon=, rng=, **learner_params)``), ``name``, ``spec`` (the registered one, or
    one made for a plain factory), the ``problem`` it declares (``"experts"``, ``"olo"`` or
    ``"contextual"``), the ``feedback`` it declares it needs (``"full"`` or ``"bandit"``), and
    ``by_name``: whether it was given as a registered learner's name (its theorem's certified ε is
    then its own)."""

    factory: Callable[..., Any]
    name: str
    spec: LearnerSpec
    problem: str
    feedback: Any
    by_name: bool = False


def _contextual(learner: Any) -> tuple[Callable[..., Any], str] | None:
    """The factory and name of ``learner`` where it declares ``problem = "contextual"``."""
    inner = learner
    while isinstance(inner, functools.partial):
        inner = inner.func
    if getattr(inner, "problem", None) == "contextual" and callable(learner):
        return learner, getattr(inner, "__qualname__", None) or type(inner).__name__
    return None


def resolve(learner: Any, *, norm: str | None = None, problem: str | None = None) -> Resolved:
    """``learner`` resolved (module docstring). A plain factory gets a spec for the experts forms
    (``problem``, by default ``"experts"``; ``norm``, by default ``"linf"``; entries in [-1, 1]), or,
    where it declares ``problem = "contextual"`` or ``problem="contextual"`` is asked, the contextual
    one. A registered learner's problem must match ``problem`` where given."""
    if isinstance(learner, str) and learner not in registry().learners() and is_reference(learner):
        learner = load_reference(learner, argument="learner")  # "file.py:Name" / "module:Name": the object it names
    if isinstance(learner, (LearnerSpec, str)):
        by_name = isinstance(learner, str)
        spec = learner if isinstance(learner, LearnerSpec) else registry().learner(learner)
        if problem is not None and problem != spec.problem:
            raise InvalidArgumentError(
                f"problem must match learner {spec.name!r}, which is registered for {spec.problem!r}; got {problem!r}"
            )
        return Resolved(factory=spec.factory, name=spec.name, spec=spec, problem=spec.problem,
                        feedback=declared_feedback(spec.factory, spec.feedback), by_name=by_name)
    found = _contextual(learner)
    if found is None and problem == "contextual":
        found = learner, getattr(learner, "__qualname__", None) or type(learner).__name__
    if found is not None:
        if problem not in (None, "contextual"):
            raise InvalidArgumentError(f"problem must be 'contextual' (or left out) for a contextual learner; got "
                                       f"{problem!r}")
        factory, name = found
        spec = LearnerSpec(name, factory, "contextual", feedback="bandit", cost_range=(-1.0, 1.0))
        return Resolved(factory=factory, name=name, spec=spec, problem="contextual", feedback="bandit")
    check_factory(learner, name="learner")
    name = getattr(learner, "__qualname__", None) or type(learner).__name__
    spec = LearnerSpec(name, learner, problem or "experts", norm=norm or "linf", cost_range=(-1.0, 1.0))
    return Resolved(factory=learner, name=name, spec=spec, problem=spec.problem,
                    feedback=declared_feedback(learner, "full"))
