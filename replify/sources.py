"""What a user hands replify as a learner or an adversary, decided in one place.

Every entry point that takes a learner — :func:`replify.evaluate`, :func:`replify.sweep`,
:func:`replify.stress`, :func:`replify.calibrate`, :func:`replify.testing.assert_replicable`, the
conformance checks of :mod:`replify.testing` and the command line — asks :func:`learner_arg` what
it was given. A learner is one of:

* ``"registered"`` — a registered name (``"hedge"``), built by :func:`replify.make`;
* ``"factory"`` — a class or function called with keyword arguments ``n``, ``horizon`` and ``rng``
  (the protocol of the paper's §2, docs/wrapper.md), or a ``functools.partial`` of one;
* ``"replicable"`` — a class decorated with :func:`replify.wrap` (a
  :class:`~replify.wrapper.ReplicableFactory`), or a wrapped learner itself (a
  :class:`~replify.wrapper.ReplicableLearner`, rebuilt from its :attr:`factory` for every run);
* ``"seeded"`` — any other callable, ``seed -> learner``;
* a reference ``"package.module:Name"`` or ``"path/to/file.py:Name"`` to any of these (what the
  command line takes for a learner of your own).

Adversaries (:func:`adversary_arg`) are a registered name, a distribution sequence (an object with
``sample(rng)``), a class or factory called with ``n``, ``horizon``, ``rng`` and the adversary's
parameters, or a reference to one of these.

The functions ``seed -> learner`` built here are module-level classes, so that a report keeps
them through pickling (and joblib and Dask ship them to their workers) whenever the user's own
objects pickle.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Literal, Mapping

import attrs
import numpy as np

from replify.components.actions import ActionSet
from replify.conversions.contextual import ReplicableContextual
from replify.errors import ArgumentTypeError, InvalidArgumentError, LearnerProtocolError, UnknownNameError
from replify.plugins.factory import check_accepts, make, rho_optional, signature, takes_rng
from replify.plugins.registry import registry
from replify.plugins.specs import LearnerSpec
from replify.base.references import is_reference, load_reference
from replify.wrapper import ReplicableFactory, ReplicableLearner

LearnerKind = Literal["registered", "factory", "replicable", "seeded"]

#: What every learner argument may be, in the words of the errors.
LEARNER_FORMS = (
    "a registered name (replify list), a learner class or factory taking n, horizon, rng (or a functools.partial "
    "of one), a class decorated with @replify.wrap, a wrapped learner, a callable seed -> learner, or a reference "
    "'package.module:Name' / 'path/to/file.py:Name' to one of these"
)
ADVERSARY_FORMS = (
    "a registered name (replify list), an object with sample(rng), a class or factory taking n, horizon, rng, or a "
    "reference 'package.module:Name' / 'path/to/file.py:Name' to one of these"
)

#: Options of the decorator form that a pair may not fix: each run gets its own seed.
_PAIR_OWNED = ("seed",)


def label_of(learner: Any) -> str:
    """A readable name for a learner callable: its qualified name, or a partial's function's
    with its keywords."""
    if isinstance(learner, functools.partial):
        extra = ", ".join(f"{k}={v!r}" for k, v in learner.keywords.items())
        return f"{label_of(learner.func)}({extra})" if extra else label_of(learner.func)
    return getattr(learner, "__qualname__", None) or type(learner).__name__


# -- learners ------------------------------------------------------------------------------------------


@attrs.frozen
class LearnerArg:
    """What a learner argument is (:func:`learner_arg`): its ``kind``, the object to build from
    (a name, a factory, a :class:`~replify.wrapper.ReplicableFactory` or a ``seed -> learner``
    callable), its ``label`` (what reports, results files, legends and the CLI call it) and, for a
    registered name, its ``spec``."""

    kind: LearnerKind
    obj: Any
    label: str
    spec: LearnerSpec | None = None
    #: whether the user gave the label (a label made from a callable's name may be shared by two)
    labelled: bool = False

    @property
    def replicable(self) -> bool:
        """Whether the learner claims a replicability guarantee (a wrapped learner, or a registered one with a guarantee)."""
        return self.kind == "replicable" or (self.spec is not None and self.spec.guarantee is not None)

    def takes_rho(self) -> bool:
        """Whether ``rho`` is passed on to the learner (it is part of what builds it)."""
        if self.kind == "registered":
            return self.spec.parameters is not None or self.spec.guarantee is not None
        if self.kind == "replicable":
            return "rho" not in self.obj.options
        if self.kind == "factory":
            return _accepts(self.obj, "rho")
        return False

    def needs_rho(self) -> bool:
        """Whether the learner cannot be built without ``rho``."""
        if self.kind == "registered":
            return self.takes_rho() and not rho_optional(self.spec.factory)
        return self.kind == "replicable" and "rho" not in self.obj.options

    def builder(
        self, *, n: int, horizon: int, rho: float | None = None, actions: ActionSet | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> Callable[[Any], Any]:
        """``seed -> learner`` for runs at (``n``, ``horizon``): ``rho``, ``actions`` and ``params``
        (hyperparameters, or for a wrapped learner the options of :func:`replify.wrap`) are passed
        on where the learner takes them; where it cannot, the error names the argument."""
        params = dict(params or {})
        if self.kind == "registered":
            return NamedBuild(self.obj, n=n, horizon=horizon, rho=rho, actions=actions, overrides=params)
        if self.kind == "factory":
            kwargs = dict(params, **({} if rho is None else {"rho": rho}))
            if actions is not None:
                kwargs["actions"] = actions
            check_accepts(self.obj, dict(kwargs, n=n, horizon=horizon, rng=None), what=f"learner factory {self.label!r}")
            return FactoryBuild(self.obj, n=n, horizon=horizon, kwargs=kwargs)
        if self.kind == "replicable":
            return WrappedBuild.for_factory(self.obj, label=self.label, n=n, horizon=horizon, rho=rho,
                                            actions=actions, params=params)
        given = [k for k, v in (("rho", rho), ("actions", actions), *params.items()) if v is not None]
        if given:
            raise InvalidArgumentError(
                f"{', '.join(given)} applies only when learner is a registered name, a factory taking n, horizon, rng, "
                f"or a wrapped class; {self.label!r} is a callable seed -> learner, which takes nothing else: pass "
                f"{'it' if len(given) == 1 else 'them'} inside your callable"
            )
        return self.obj


def learner_arg(learner: Any, *, label: str | None = None, argument: str = "learner") -> LearnerArg:
    """Decide what ``learner`` is (module docstring), or refuse it with one error that names
    ``argument``, lists what a learner may be and says what came. ``label`` names it in reports,
    results files, legends and the CLI (default: the registered name, or the callable's name)."""
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise InvalidArgumentError(f"label must be a non-empty string naming the learner; got {label!r}")
    given = label is not None
    if isinstance(learner, str):
        if learner in registry().learners() or not is_reference(learner):
            spec = _registered(learner, registry().learner, "a learner", argument)
            return LearnerArg("registered", learner, label or learner, spec, labelled=given)
        obj = load_reference(learner, argument=argument)
        if isinstance(obj, str):
            raise InvalidArgumentError(f"{argument} {learner!r} names a string, {obj!r}; expected {LEARNER_FORMS}")
        return learner_arg(obj, label=label or learner.rpartition(":")[2], argument=argument)
    if isinstance(learner, LearnerSpec):
        raise InvalidArgumentError(
            f"{argument}: got the LearnerSpec {learner.name!r}; register it (docs/plugins.md) and pass its name, or "
            f"pass its factory {label_of(learner.factory)!r}"
        )
    if isinstance(learner, (ReplicableLearner, ReplicableContextual)):
        learner = learner.factory
    if isinstance(learner, ReplicableFactory):
        seed = [k for k in _PAIR_OWNED if k in learner.options]
        if seed:
            raise InvalidArgumentError(
                f"{argument} {label_of(learner)!r} was wrapped with seed={learner.options['seed']!r}; expected a wrapped "
                "class without a seed: every run of every pair is built from its own seed"
            )
        return LearnerArg("replicable", learner, label or label_of(learner), labelled=given)
    if not callable(learner):
        built = callable(getattr(learner, "act", None)) and callable(getattr(learner, "update", None))
        what = (f"an instance of {type(learner).__name__} (a learner already built): pass its class or a factory, so "
                "that every run of every pair builds its own" if built else f"{learner!r} ({type(learner).__name__})")
        raise ArgumentTypeError(f"{argument} must be {LEARNER_FORMS}; got {what}")
    if takes_rng(learner):
        return LearnerArg("factory", learner, label or label_of(learner), labelled=given)
    _check_seeded(learner, argument=argument)
    return LearnerArg("seeded", learner, label or label_of(learner), labelled=given)


def _registered(name: str, lookup: Callable[[str], Any], kind: str, argument: str) -> Any:
    """The registered spec named ``name``, or the registry's error (which lists the known names)
    with the argument named and the other way to give one: a reference, hinted when ``name``
    looks like a file without its ``:Name``."""
    try:
        return lookup(name)
    except UnknownNameError as exc:
        hint = (f" (did you mean '{name}:Name', naming the class in that file?)"
                if name.endswith(".py") or "/" in name else "")
        raise UnknownNameError(
            f"{argument}: {exc}; or give {kind} of your own as 'package.module:Name' or 'path/to/file.py:Name'{hint}"
        ) from None


def _check_seeded(learner: Any, *, argument: str) -> None:
    """A ``seed -> learner`` callable takes one positional argument; a factory that forgot ``rng``
    (``__init__(self, *, n, horizon)``) is refused here, not with a bare TypeError at its first call."""
    sig = signature(learner)
    if sig is None:
        return
    params = list(sig.parameters.values())
    required_kw = [p.name for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind is p.VAR_POSITIONAL for p in params)
    takes_one = variadic or (positional and sum(p.default is p.empty for p in positional) <= 1)
    named = {p.name for p in params}
    if required_kw or not takes_one or ({"n", "horizon"} <= named):
        raise InvalidArgumentError(
            f"{argument} {label_of(learner)!r} takes ({', '.join(p.name for p in params)}): expected a factory "
            "taking keyword arguments n, horizon and rng (its only source of randomness, a numpy Generator), or a "
            "callable seed -> learner taking one argument"
        )


def _accepts(factory: Any, name: str) -> bool:
    sig = signature(factory)
    return sig is not None and (name in sig.parameters or any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()))


class NamedBuild:
    """``seed -> make(name, n=, horizon=, seed=seed, rho=, actions=, **overrides)`` (picklable)."""

    def __init__(self, name: str, *, n: int, horizon: int, rho: float | None, actions: Any,
                 overrides: Mapping[str, Any]) -> None:
        self.name, self.n, self.horizon, self.rho, self.actions = name, n, horizon, rho, actions
        self.overrides = dict(overrides)

    def __call__(self, seed: Any) -> Any:
        # Built once per run of every pair, from a seed the engine derives; the arguments were checked
        # at the public boundary that called us. typeguard's check would cost more than FTPLB*.
        return make.__wrapped__(self.name, n=self.n, horizon=self.horizon, seed=seed, rho=self.rho,
                                actions=self.actions, **self.overrides)

    def __repr__(self) -> str:
        return f"NamedBuild({self.name!r})"


class FactoryBuild:
    """``seed -> factory(n=, horizon=, rng=default_rng(seed), **kwargs)``: a user's learner class
    built for a pair as :func:`replify.make` builds a registered one (picklable)."""

    def __init__(self, factory: Callable[..., Any], *, n: int, horizon: int, kwargs: Mapping[str, Any]) -> None:
        self.factory, self.n, self.horizon, self.kwargs = factory, n, horizon, dict(kwargs)

    def __call__(self, seed: Any) -> Any:
        rng = np.random.default_rng(seed)
        return self.factory(n=self.n, horizon=self.horizon, rng=rng, **self.kwargs)

    def __repr__(self) -> str:
        return f"{label_of(self.factory)}({', '.join(f'{k}={v!r}' for k, v in self.kwargs.items())})"


#: The options of :func:`replify.wrap` that a run may add to a wrapped class's (n and horizon come from the run).
WRAP_OPTIONS = ("rho", "norm", "block_size", "blocks", "eps", "learner_params", "model", "cost_scale", "feature_bound",
                "cost_center", "variance", "phases", "explore_share")


class WrappedBuild:
    """``seed -> factory(n=, horizon=, rho=, seed=seed, ...)`` for a class decorated with
    :func:`replify.wrap` (picklable when the decorated class is)."""

    def __init__(self, factory: ReplicableFactory, kwargs: Mapping[str, Any]) -> None:
        self.factory, self.kwargs = factory, dict(kwargs)

    @classmethod
    def for_factory(
        cls, factory: ReplicableFactory, *, label: str, n: int, horizon: int, rho: float | None, actions: Any,
        params: Mapping[str, Any],
    ) -> WrappedBuild:
        options = factory.options
        if actions is not None:
            raise InvalidArgumentError(
                f"actions applies only to registered learners and factories that take it; {label!r} is a wrapped "
                "class (the general framework plays expert indices or its internal learner's actions)"
            )
        kwargs: dict[str, Any] = {}
        for key, value in (("n", n), ("horizon", horizon)):
            if key in options and options[key] != value:
                raise InvalidArgumentError(
                    f"{key} must match the {key}={options[key]} that {label!r} was wrapped with; got {key}={value}"
                )
            kwargs[key] = value
        if rho is not None:
            if "rho" in options and options["rho"] != rho:
                raise InvalidArgumentError(
                    f"rho must match the rho={options['rho']} that {label!r} was wrapped with; got rho={rho} "
                    "(leave rho out, or wrap the class without it)"
                )
            kwargs["rho"] = rho
        elif "rho" not in options:
            raise InvalidArgumentError(
                f"{label!r} was wrapped without rho, and none was given; expected rho in (0, 1): pass rho=, or "
                "give it to the decorator, @replify.wrap(rho=..., ...)"
            )
        unknown = sorted(set(params) - set(WRAP_OPTIONS))
        if unknown:
            raise InvalidArgumentError(
                f"{', '.join(map(repr, unknown))} cannot be passed to {label!r}, a wrapped class; expected options of "
                f"replify.wrap ({', '.join(WRAP_OPTIONS)}), and the internal learner's own hyperparameters inside "
                "learner_params={...}"
            )
        kwargs.update(params)
        return cls(factory, kwargs)

    def __call__(self, seed: Any) -> Any:
        return self.factory(seed=seed, **self.kwargs)

    def __repr__(self) -> str:
        return f"WrappedBuild({self.factory!r})"


def merged_params(overrides: Mapping[str, Any], learner_params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The learner's hyperparameters: keyword ``overrides`` and the mapping ``learner_params`` (the
    way to pass one named like an argument of the entry point, ``label`` say); a name in both is refused."""
    if learner_params is None:
        return dict(overrides)
    if not isinstance(learner_params, Mapping) or not all(isinstance(k, str) for k in learner_params):
        raise InvalidArgumentError(
            f"learner_params must be a mapping from hyperparameter names to values; got {learner_params!r}"
        )
    both = sorted(set(overrides) & set(learner_params))
    if both:
        raise InvalidArgumentError(
            f"learner_params and keyword arguments both set {', '.join(map(repr, both))}; expected each hyperparameter "
            f"once (got {', '.join(f'{k}={overrides[k]!r} and {k}={learner_params[k]!r}' for k in both)})"
        )
    return {**overrides, **learner_params}


# -- adversaries ---------------------------------------------------------------------------------------


@attrs.frozen
class AdversaryArg:
    """What an adversary argument is: ``"registered"`` (a name), ``"sequence"`` (an object with
    ``sample(rng)``) or ``"factory"`` (called with ``n``, ``horizon``, ``rng`` and its parameters)."""

    kind: Literal["registered", "sequence", "factory"]
    obj: Any
    label: str

    def parameters(self) -> frozenset[str] | None:
        """The parameters it takes besides n, horizon, rng (None: any, or not known)."""
        from_factory = self.obj if self.kind == "factory" else (
            registry().adversary(self.obj).factory if self.kind == "registered" else None)
        if from_factory is None:
            return frozenset()
        sig = signature(from_factory)
        if sig is None or any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
            return None
        return frozenset(p.name for p in sig.parameters.values()
                         if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in ("n", "horizon", "rng"))


def adversary_arg(adversary: Any, *, label: str | None = None, argument: str = "adversary") -> AdversaryArg:
    """Decide what ``adversary`` is, or refuse it naming ``argument``, what it may be and what came."""
    if isinstance(adversary, str):
        if adversary in registry().adversaries() or not is_reference(adversary):
            _registered(adversary, registry().adversary, "an adversary", argument)
            return AdversaryArg("registered", adversary, label or adversary)
        obj = load_reference(adversary, argument=argument)
        return adversary_arg(obj, label=label or adversary.rpartition(":")[2], argument=argument)
    if not isinstance(adversary, type) and callable(getattr(adversary, "sample", None)):
        return AdversaryArg("sequence", adversary, label or type(adversary).__name__)
    if callable(adversary) and takes_rng(adversary):
        return AdversaryArg("factory", adversary, label or label_of(adversary))
    raise ArgumentTypeError(f"{argument} must be {ADVERSARY_FORMS}; got {adversary!r} ({type(adversary).__name__})")


def build_adversary(arg: AdversaryArg, *, n: int, horizon: int, seed: Any, params: Mapping[str, Any] | None,
                    make_adversary: Callable[..., Any]) -> Any:
    """The distribution sequence ``arg`` stands for, at (``n``, ``horizon``), its own choices drawn
    from ``seed`` (the evaluation's ``adversary`` stream)."""
    params = dict(params or {})
    if arg.kind == "registered":
        return make_adversary(arg.obj, n=n, horizon=horizon, seed=seed, **params)
    if arg.kind == "sequence":
        if params:
            raise InvalidArgumentError(
                f"adversary_params applies only when the adversary is a registered name or a factory; {arg.label!r} is "
                f"a distribution sequence already built; got adversary_params={params!r}"
            )
        return arg.obj
    check_accepts(arg.obj, {"n": n, "horizon": horizon, "rng": None, **params}, what=f"adversary factory {arg.label!r}")
    seq = arg.obj(n=n, horizon=horizon, rng=np.random.default_rng(seed), **params)
    if not callable(getattr(seq, "sample", None)):
        raise LearnerProtocolError(
            f"adversary factory {arg.label!r} must return an object with sample(rng); got {type(seq).__name__}"
        )
    return seq


__all__ = [
    "AdversaryArg", "FactoryBuild", "LearnerArg", "NamedBuild", "WrappedBuild", "adversary_arg", "build_adversary",
    "is_reference", "label_of", "learner_arg", "load_reference", "merged_params",
]
