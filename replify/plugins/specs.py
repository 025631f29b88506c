"""What a plugin registers: :class:`LearnerSpec`, :class:`AdversarySpec` and :class:`ConversionSpec`
(docs/plugins.md), and the duck-typed protocols they build (docs/wrapper.md)."""

from __future__ import annotations

import inspect
import math
from typing import Any, Callable, Literal, Mapping, Protocol, runtime_checkable

import attrs
import numpy as np

from replify.base.checks import CostDomain
from replify.errors import InvalidArgumentError, LearnerProtocolError

Problem = Literal["experts", "olo", "contextual"]
Norm = Literal["linf", "l1"]
Guarantee = Literal["adversarial", "iid"]
Feedback = Literal["full", "bandit"]
#: The properties beyond the protocol a learner may declare (:attr:`LearnerSpec.enforces`).
ENFORCEABLE = frozenset({"horizon", "domain"})
COST_RANGES = ((0.0, 1.0), (-1.0, 1.0))


@runtime_checkable
class Learner(Protocol):
    """An online learner: ``act()`` returns the action for the current step, then
    ``update(cost)`` reveals that step's cost vector. Built by a factory called with keyword
    arguments ``n``, ``horizon`` and ``rng`` (a :class:`numpy.random.Generator`)."""

    def act(self) -> Any: ...

    def update(self, cost: np.ndarray) -> None: ...


@runtime_checkable
class DistributionSequence(Protocol):
    """An oblivious adversary's choice of D_1..D_T (paper §2). ``sample(rng)`` draws one
    cost sequence S ~ D_1 × … × D_T as a ``(horizon, n)`` array; every call is a fresh,
    independent draw."""

    n: int
    horizon: int

    def sample(self, rng: np.random.Generator) -> np.ndarray: ...


def _name(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, str) or not value or value != value.strip():
        raise InvalidArgumentError(
            f"{attribute.name} must be a non-empty string without surrounding spaces, got {value!r}"
        )


def _callable(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not callable(value):
        raise LearnerProtocolError(f"{attribute.name} must be callable, got {value!r} ({type(value).__name__})")


def _optional_callable(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None:
        _callable(instance, attribute, value)


def _one_of(*allowed: Any) -> Callable[[Any, attrs.Attribute, Any], None]:
    def check(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if value not in allowed:
            raise InvalidArgumentError(f"{attribute.name} must be one of {allowed!r}, got {value!r}")

    return check


def _subset(attribute: attrs.Attribute, value: frozenset, allowed: frozenset) -> None:
    if not all(isinstance(v, str) for v in value) or not value <= allowed:
        raise InvalidArgumentError(
            f"{attribute.name} must hold only {', '.join(map(repr, sorted(allowed)))}; got {sorted(map(repr, value))}"
        )


def _cost_range(value: Any) -> tuple[float, float]:
    try:
        out = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"cost_range must be (0, 1) or (-1, 1), got {value!r}") from None
    if out not in COST_RANGES:
        raise InvalidArgumentError(f"cost_range must be (0, 1) or (-1, 1), got {value!r}")
    return out  # type: ignore[return-value]


#: Arguments every factory receives from the library, not hyperparameters of a regret bound.
_DERIVED = frozenset({"n", "horizon", "rng", "rho", "actions", "seed"})


def _keywords(function: Callable[..., Any]) -> set[str]:
    """The keyword arguments ``function`` names explicitly (``**kwargs`` names none)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature names nothing we can check
        return set()
    kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return {p.name for p in parameters if p.kind in kinds}


def _qualname(factory: Any) -> str:
    return f"{getattr(factory, '__module__', '?')}.{getattr(factory, '__qualname__', type(factory).__name__)}"


@attrs.frozen(repr=False)
class LearnerSpec:
    """A registered learner.

    Only ``name``, ``factory`` and ``problem`` are required. ``problem`` is ``"experts"`` (pick one
    of n experts or arms), ``"olo"`` (online linear optimisation over an action set) or
    ``"contextual"`` (see a context — a feature vector per arm — before picking an arm, with bandit
    feedback: :mod:`replify.components.contextual`, docs/contextual.md). ``factory(*, n, horizon, rng,
    **params)`` builds the learner. ``norm`` and ``cost_range`` say which cost vectors it
    expects: entries in ``cost_range`` (``(0, 1)`` or ``(-1, 1)``), and ℓ1 norm at most 1
    when ``norm == "l1"``. ``guarantee`` is its replicability guarantee (``"adversarial"``,
    ``"iid"`` or ``None``). ``parameters(*, horizon, n, rho[, diameter], block_size=None,
    eps=None)`` gives its theorem's parameters (an object with ``block_size``, ``eps`` and
    ``to_dict()``, the same as the built learner's ``params``); a learner with a parameter
    function needs ``rho`` and one without refuses it. ``regret_bound(*, horizon, n, **params)``
    bounds its expected regret over ``horizon`` steps on costs in ``cost_range`` for the
    hyperparameters ``params`` in force; it must name every hyperparameter it accounts for (a
    hyperparameter it does not name withholds the bound, see :meth:`regret_bound_for`) and may
    return ``None`` where the parameters in force admit no bound.
    ``union_bound(*, horizon, n, rho)`` is its replicability proof's per-transition bound
    (:class:`~replify.guarantees.certificates.UnionBound`), which :func:`replify.certified_eps` inverts.
    """

    name: str = attrs.field(validator=_name)
    factory: Callable[..., Any] = attrs.field(validator=_callable)
    problem: Problem = attrs.field(validator=_one_of("experts", "olo", "contextual"))
    norm: Norm = attrs.field(default="linf", kw_only=True, validator=_one_of("linf", "l1"))
    cost_range: tuple[float, float] = attrs.field(default=(0.0, 1.0), kw_only=True, converter=_cost_range)
    guarantee: Guarantee | None = attrs.field(
        default=None, kw_only=True, validator=_one_of(None, "adversarial", "iid")
    )
    parameters: Callable[..., tuple[int, float]] | None = attrs.field(
        default=None, kw_only=True, validator=_optional_callable
    )
    regret_bound: Callable[..., float] | None = attrs.field(
        default=None, kw_only=True, validator=_optional_callable
    )
    union_bound: Callable[..., Any] | None = attrs.field(default=None, kw_only=True, validator=_optional_callable)
    description: str = attrs.field(default="", kw_only=True)
    #: keyword arguments for :mod:`replify.testing`'s conformance checks (``n`` and ``horizon``
    #: may be among them), or a callable ``(n, horizon) -> dict``
    test_params: Any = attrs.field(factory=dict, kw_only=True)
    #: what the learner sees after each step: ``"full"`` (the whole cost vector, ``update(cost)``)
    #: or ``"bandit"`` (the played arm's cost only, ``update(action, cost)``; docs/bandits.md). The
    #: learner it builds must declare the same (``feedback`` attribute; absent means ``"full"``).
    feedback: Feedback = attrs.field(default="full", kw_only=True, validator=_one_of("full", "bandit"))
    #: properties beyond the protocol that the learner declares and the conformance checks then
    #: test (:mod:`replify.testing`): ``"horizon"`` — an update past the horizon is refused;
    #: ``"domain"`` — a cost outside the declared domain is refused. The protocol itself asks for
    #: neither.
    enforces: frozenset[str] = attrs.field(default=frozenset(), kw_only=True, converter=frozenset,
                                           validator=lambda self, a, v: _subset(a, v, ENFORCEABLE))

    def __attrs_post_init__(self) -> None:
        if self.problem == "contextual" and self.feedback != "bandit":
            raise InvalidArgumentError(f"learner {self.name!r}: a contextual learner sees the played arm's cost only, so "
                                       f"it registers feedback='bandit'; got feedback={self.feedback!r}")

    def __repr__(self) -> str:
        kind = f"{self.guarantee}-replicable" if self.guarantee else "not replicable"
        low, high = self.cost_range
        return (f"LearnerSpec({self.name!r}, {_qualname(self.factory)}, {self.problem}, {self.feedback} feedback, "
                f"{kind}, costs {self.norm} in [{low:g}, {high:g}]: {self.description!r})")

    @property
    def domain(self) -> CostDomain:
        """The cost vectors this learner accepts."""
        return CostDomain.for_input(self.norm, self.cost_range)

    def regret_bound_for(
        self, *, horizon: int, n: int, params: Mapping[str, Any] | None = None
    ) -> tuple[float | None, str | None]:
        """``(bound, None)``: the registered regret bound for the hyperparameters in force
        (``params``, as passed to the factory), or ``(None, why)`` when it is withheld.

        A bound is only as good as the parameters it was derived for: Hedge's sqrt(T ln n / 2)
        holds at its default rate, not at ``eta=10``. So a hyperparameter that the bound function
        does not name as a keyword (one it would swallow in ``**kwargs``) withholds the bound
        rather than print a number that assumes the default; so does a bound function that
        returns ``None`` or a value that is not a finite number ≥ 0."""
        if self.regret_bound is None:
            return None, "the learner registers no regret bound"
        named = _keywords(self.regret_bound)
        given = {k: v for k, v in (params or {}).items() if v is not None and (k in named or k not in _DERIVED)}
        unnamed = sorted(set(given) - named)
        if unnamed:
            return None, (
                f"withheld: the regret bound registered for {self.name!r} does not take {', '.join(unnamed)}, "
                f"which are in force ({', '.join(f'{k}={given[k]!r}' for k in unnamed)}); it holds only at their defaults"
            )
        value = self.regret_bound(horizon=horizon, n=n, **given)
        if value is None:
            return None, f"withheld: {self.name!r} states no regret bound for these parameters ({given or 'defaults'})"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            return None, f"withheld: the regret bound registered for {self.name!r} returned {value!r}, not a number >= 0"
        return float(value), None


@attrs.frozen(repr=False)
class AdversarySpec:
    """A registered oblivious adversary.

    ``factory(*, n, horizon, rng, **params)`` returns a :class:`DistributionSequence`; ``rng``
    is the adversary's own stream, for the choices it makes once, before any cost is drawn.
    ``param_docs`` maps each parameter name to a one-line description.
    """

    name: str = attrs.field(validator=_name)
    factory: Callable[..., Any] = attrs.field(validator=_callable)
    description: str = attrs.field(default="", kw_only=True)
    param_docs: Mapping[str, str] = attrs.field(factory=dict, kw_only=True, converter=dict)
    #: keyword arguments for :mod:`replify.testing`'s conformance checks (``n`` and ``horizon``
    #: may be among them), or a callable ``(n, horizon) -> dict``
    test_params: Any = attrs.field(factory=dict, kw_only=True)

    def __repr__(self) -> str:
        return f"AdversarySpec({self.name!r}, {_qualname(self.factory)}: {self.description!r})"


def _attrs_class(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not (isinstance(value, type) and attrs.has(value)):
        raise InvalidArgumentError(f"{attribute.name} must be an attrs class (its fields are the conversion's options); "
                                   f"got {value!r}")


def _names(allowed: frozenset[str]) -> Callable[[Any, attrs.Attribute, Any], None]:
    def check(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if not isinstance(value, tuple) or not value or not set(value) <= allowed:
            raise InvalidArgumentError(f"{attribute.name} must be a non-empty tuple of {sorted(allowed)}; got {value!r}")
    return check


@attrs.frozen(repr=False)
class ConversionSpec:
    """A conversion a plugin registers (docs/plugins.md, "Registering a conversion"): what
    :func:`replify.wrap` turns a learner into. ``build`` is called as ``build(learner, n=, horizon=,
    rho=, seed=, options=)`` with the learner resolved once (a
    :class:`replify.conversions.Resolved`: its factory, name, spec, problem and feedback) and an
    instance of ``options``, an attrs class whose fields are the conversion's own options (wrap
    refuses any other, naming the conversion that takes it). ``problems``: the learners it serves
    (their declared problem); ``feedback``: what ``wrap(..., feedback=)`` asks of it; ``default``:
    whether wrap picks it for those when no ``conversion=`` is named (the built-ins are the
    defaults: a third party's is picked where no default serves, or by name); ``docs``: the page
    and section that derives its certificate."""

    name: str = attrs.field(validator=_name)
    build: Callable[..., Any] = attrs.field(validator=_callable)
    options: type = attrs.field(validator=_attrs_class)
    problems: tuple[str, ...] = attrs.field(validator=_names(frozenset({"experts", "olo", "contextual"})))
    feedback: tuple[str, ...] = attrs.field(default=("full",), validator=_names(frozenset({"full", "bandit"})))
    default: bool = False
    summary: str = ""
    docs: str = ""

    @property
    def option_names(self) -> tuple[str, ...]:
        """The options it takes besides n, horizon, rho and seed."""
        return tuple(f.name for f in attrs.fields(self.options))

    def __repr__(self) -> str:
        return f"ConversionSpec({self.name!r}, problems={self.problems}, feedback={self.feedback})"
