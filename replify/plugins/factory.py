"""Building registered learners and adversaries by name: :func:`make`, :func:`make_adversary`,
and the signature helpers the layers above use to tell what a factory takes (what a user's
learner argument is as a whole is decided in :mod:`replify.sources`)."""

from __future__ import annotations

import contextlib
import functools
import inspect
from typing import Any, Callable, Iterator

import numpy as np
from typeguard import typeguard_ignore

from replify.base.checks import check_feedback, check_int, check_learner, check_rho, public
from replify.errors import InvalidArgumentError, LearnerProtocolError, ReplifyError
from replify.components.actions import ActionSet
from replify.plugins.registry import registry
from replify.base.randomness import Streams


@functools.lru_cache(maxsize=256)
def _cached_signature(factory: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(factory)
    except (TypeError, ValueError):  # builtins without a signature
        return None


@typeguard_ignore  # hot (each step or chunk): its callers check what it is given
def signature(factory: Callable[..., Any]) -> inspect.Signature | None:
    """``factory``'s signature, or None when it has none. Cached: the engine builds a learner for
    every run of every pair, and ``inspect.signature`` costs more than some learners' construction."""
    try:
        return _cached_signature(factory)
    except TypeError:  # unhashable callable: not cached
        try:
            return inspect.signature(factory)
        except (TypeError, ValueError):
            return None


@typeguard_ignore  # hot (each step or chunk): its callers check what it is given
def check_accepts(factory: Callable[..., Any], kwargs: dict[str, Any], *, what: str, missing_ok: bool = False) -> None:
    """Refuse keyword arguments the factory would reject, and report the required ones that are
    missing (unless ``missing_ok``: the caller passes more later), naming them and the accepted
    ones, instead of letting a bare ``TypeError`` escape from inside the plugin."""
    sig = signature(factory)
    if sig is None:  # builtins without a signature: let the call decide
        return
    params = sig.parameters.values()
    accepted = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    required = sorted(
        p.name for p in params
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is inspect.Parameter.empty
    )
    missing = [name for name in required if name not in kwargs]
    if missing and not missing_ok:
        raise InvalidArgumentError(
            f"{what} needs {', '.join(map(repr, missing))}; got {', '.join(sorted(kwargs)) or 'nothing'}"
        )
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    unknown = sorted(set(kwargs) - accepted)
    if unknown:
        raise InvalidArgumentError(
            f"{what} does not accept {', '.join(map(repr, unknown))}; it accepts {', '.join(sorted(accepted))}"
        )


@contextlib.contextmanager
def owned_by(name: str) -> Iterator[None]:
    """A replify error raised while a plugin builds its learner or adversary names the plugin
    (``ftplb-star: eps must be in (0, 1], got 2.0``): stress searches and calibration build them
    by the hundred, and an unowned message would not say which one."""
    try:
        yield
    except ReplifyError as exc:
        message = str(exc.args[0]) if exc.args else str(exc)
        if message.startswith(f"{name}: "):
            raise
        try:
            owned = type(exc)(f"{name}: {message}")
        except TypeError:  # an error class with another signature: keep it as it is
            raise exc from None
        raise owned.with_traceback(exc.__traceback__) from None


def rho_optional(factory: Callable[..., Any]) -> bool:
    """A replicable learner whose factory gives ``rho`` a default (``constant``: replicable for
    every ρ) may be built without it."""
    sig = signature(factory)
    param = None if sig is None else sig.parameters.get("rho")
    return param is not None and param.default is not inspect.Parameter.empty


@public
def make(
    name: str,
    *,
    n: int | None = None,
    horizon: int,
    seed: int | np.random.SeedSequence,
    rho: float | None = None,
    actions: ActionSet | None = None,
    **overrides: Any,
) -> Any:
    """Build the registered learner ``name`` as it is (not wrapped).

    Its factory is called with ``n`` (or the dimension of ``actions``), ``horizon``, ``rng``
    (the ``internal`` stream of ``seed``), ``rho`` and ``actions`` when given, and the
    ``overrides`` (``block_size=``, ``eps=``, …). A learner with a replicability guarantee or
    whose parameters come from a theorem in ρ needs ``rho`` (unless its factory gives ``rho`` a
    default, as ``constant`` does: it is replicable for every ρ); a learner with neither — a
    non-replicable baseline — refuses it (:func:`replify.wrap` makes any learner replicable).
    """
    spec = registry().learner(name)
    takes_rho = spec.parameters is not None or spec.guarantee is not None
    # A refused rho is reported once the learner is built without it: what it builds says whether
    # it is a bandit learner, and so what to use instead (a factory function declares nothing).
    refused_rho = not takes_rho and rho is not None
    if takes_rho and rho is None and not rho_optional(spec.factory):
        label = f"{spec.guarantee}-replicable" if spec.guarantee else "parametrised by rho"
        raise InvalidArgumentError(f"learner {name!r} is {label} and needs rho in (0, 1); got none")
    if actions is not None:
        if n is not None and n != actions.dim:
            raise InvalidArgumentError(f"n={n} does not match the dimension {actions.dim} of actions={actions!r}")
        n = actions.dim
    if n is None:
        raise InvalidArgumentError(f"make({name!r}) needs n (the number of experts or the dimension) or actions=")
    kwargs: dict[str, Any] = dict(
        n=check_int("n", n, minimum=2),
        horizon=check_int("horizon", horizon, minimum=1),
        rng=Streams.from_seed(seed).internal,
    )
    if rho is not None and not refused_rho:
        kwargs["rho"] = check_rho(rho)
    if actions is not None:
        kwargs["actions"] = actions
    clash = sorted(set(overrides) & {"n", "horizon", "rng"})
    if clash:
        raise InvalidArgumentError(f"overrides must not set {', '.join(clash)}: make() derives them")
    kwargs.update(overrides)
    check_accepts(spec.factory, kwargs, what=f"learner {name!r}")
    with owned_by(name):
        built = spec.factory(**kwargs)
    check_learner(built, source=f"learner factory {name!r}")
    feedback = check_feedback(built)
    if feedback != spec.feedback:
        raise LearnerProtocolError(
            f"learner {name!r} is registered with feedback={spec.feedback!r} but the learner its factory builds "
            f"declares feedback={feedback!r}; expected the two to agree (LearnerSpec(feedback=...), docs/plugins.md)"
        )
    if refused_rho:
        raise InvalidArgumentError(
            f"rho applies only to learners whose parameters come from a replicability theorem, and {name!r} "
            f"has no replicability guarantee; got rho={rho}. {_replicable_instead(name, built, rho)}"
        )
    return built


#: The replicable bandit plugins (docs/bandits.md): what works where replify.wrap cannot.
REPLICABLE_BANDITS = ("rep-elimination", "rep-etc", "blocked-bandit")


def _replicable_instead(name: str, learner: Any, rho: Any) -> str:
    """What to use for a replicable version of a learner that takes no ``rho``: replify.wrap for
    a full-information learner; a replicable bandit plugin for a bandit one, which wrap refuses
    (it feeds whole cost vectors)."""
    if check_feedback(learner) != "bandit":
        return f"To make it replicable use replify.wrap({name!r}, rho={rho}, ...)"
    known = registry().learners()
    names = [other for other in REPLICABLE_BANDITS if other in known] or list(REPLICABLE_BANDITS)
    return (f"{name!r} is a bandit learner (feedback='bandit'), which replify.wrap does not take (it feeds "
            f"whole cost vectors); for replicable bandit learning use {', '.join(map(repr, names))} "
            "(docs/bandits.md)")


@public
def make_adversary(
    name: str,
    /,
    *,
    n: int,
    horizon: int,
    seed: int | np.random.SeedSequence,
    **params: Any,
) -> Any:
    """Build the registered adversary ``name``: a distribution sequence D_1..D_T whose
    ``sample(rng)`` draws a fresh ``(horizon, n)`` cost matrix. The adversary's own choices
    use the ``adversary`` stream of ``seed``; they are fixed before any cost is drawn."""
    spec = registry().adversary(name)
    kwargs: dict[str, Any] = dict(
        n=check_int("n", n, minimum=2),
        horizon=check_int("horizon", horizon, minimum=1),
        rng=Streams.from_seed(seed).adversary,
    )
    check_accepts(spec.factory, {**kwargs, **params}, what=f"adversary {name!r}")
    with owned_by(name):
        seq = spec.factory(**kwargs, **params)
    if not callable(getattr(seq, "sample", None)):
        raise LearnerProtocolError(
            f"adversary factory {name!r} must return an object with sample(rng); got {type(seq).__name__}"
        )
    return seq


def accepts(factory: Callable[..., Any], name: str) -> bool:
    """Whether ``factory``'s signature has a parameter ``name`` (False when it has no signature)."""
    sig = signature(factory)
    return sig is not None and name in sig.parameters


def takes_rng(factory: Callable[..., Any]) -> bool:
    """A learner factory in the protocol's form — a class or function called with keyword
    arguments ``n``, ``horizon`` and ``rng`` (``functools.partial`` of one included, and one that
    takes only ``**kwargs``) — rather than a callable ``seed -> learner``."""
    sig = signature(factory)
    if sig is None:
        return False
    rng = sig.parameters.get("rng")
    if rng is not None:
        return rng.kind in (rng.KEYWORD_ONLY, rng.POSITIONAL_OR_KEYWORD)
    # ``**kwargs`` and no positional parameter to take a seed: the protocol's keywords are what it can take
    params = list(sig.parameters.values())
    return any(p.kind is p.VAR_KEYWORD for p in params) and not any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) and p.default is p.empty
        for p in params)
