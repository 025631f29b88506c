"""What :func:`replify.wrap` does with a contextual learner: recognise one (a registered contextual
learner, a class or factory that declares ``problem = "contextual"``, or a reference to one) and
build the general contextual conversion around it
(:class:`replify.components.contextual_conversion.ReplicableContextual`; docs/contextual.md)."""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping

from replify.base.references import is_reference, load_reference
from replify.components.contextual_conversion import ReplicableContextual
from replify.errors import InvalidArgumentError
from replify.plugins.factory import check_accepts
from replify.plugins.registry import registry
from replify.plugins.specs import LearnerSpec

#: wrap()'s options the contextual conversion takes (n, horizon, rho and seed besides)
CONTEXTUAL_OPTIONS = ("learner_params", "model", "cost_scale", "feature_bound", "feed_rows")


def contextual_target(learner: Any) -> tuple[Callable[..., Any], str] | None:
    """The factory and name of ``learner`` when it is a contextual learner, else None."""
    if isinstance(learner, str):
        if learner in registry().learners():
            learner = registry().learner(learner)
        elif is_reference(learner):
            learner = load_reference(learner, argument="learner")
        else:
            return None
    if isinstance(learner, LearnerSpec):
        return (learner.factory, learner.name) if learner.problem == "contextual" else None
    inner = learner
    while isinstance(inner, functools.partial):
        inner = inner.func
    if getattr(inner, "problem", None) == "contextual" and callable(learner):
        return learner, getattr(inner, "__qualname__", None) or type(inner).__name__
    return None


def check_contextual_options(options: Mapping[str, Any], *, problem: Any) -> None:
    """Refuse the options that belong to the experts and bandit forms, each as it was given."""
    if problem not in (None, "contextual"):
        raise InvalidArgumentError(f"problem must be 'contextual' (or left out) for a contextual learner; got {problem!r}")
    other = [f"{k}={v!r}" for k, v in options.items()
             if k not in CONTEXTUAL_OPTIONS + ("n", "horizon", "rho", "seed", "problem", "feedback")]
    if other:
        raise InvalidArgumentError(
            f"a contextual learner is wrapped by the contextual conversion, which takes n, horizon, rho, seed, "
            f"{', '.join(CONTEXTUAL_OPTIONS)}; got {', '.join(other)}, which "
            f"{'belongs' if len(other) == 1 else 'belong'} to the experts and bandit forms (docs/contextual.md)"
        )


def build_contextual(target: tuple[Callable[..., Any], str], options: Mapping[str, Any]) -> ReplicableContextual:
    """The conversion around ``target`` (from :func:`contextual_target`) with ``options``."""
    factory, name = target
    params = dict(options.get("learner_params") or {})
    if not set(params) & {"n", "horizon", "rng", "rho"}:  # those the conversion refuses, in its own words
        # an unknown parameter named with the learner and what it takes, not the factory's bare TypeError
        check_accepts(factory, {"n": None, "horizon": None, "rng": None, **params}, what=f"learner {name!r}",
                      missing_ok=True)
    return ReplicableContextual(
        factory, n=options["n"], horizon=options["horizon"], rho=options["rho"], seed=options["seed"],
        model=options.get("model"), cost_scale=options.get("cost_scale"), feature_bound=options.get("feature_bound"),
        learner_params=options.get("learner_params"), name=name, feed_rows=options.get("feed_rows"),
    )
