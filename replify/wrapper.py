"""``replify.wrap``: any online learner made replicable by the conversion that serves it.

:func:`wrap` resolves the learner once (:func:`replify.conversions.resolve`: its factory, problem
and feedback), picks the registered conversion (:class:`~replify.ConversionSpec`) that serves it —
the paper's §5 conversion for experts and online linear optimisation (``"experts"``, ℓ1 and ℓ∞),
bandit feedback (``"bandit"``, ours), contextual learners (``"contextual"``, ours), or a third
party's, named with ``conversion=`` — checks the options against that conversion's options class
and hands both to its ``build``. The decorator form returns a :class:`ReplicableFactory`, which
builds the same way once given the rest (``n``, ``seed``).
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable, Literal, Mapping

import numpy as np

from replify.base.checks import check_int, public
from replify.conversions.bandit import ReplicableBandit
from replify.conversions.contextual import ReplicableContextual
from replify.conversions.experts import ReplicableLearner
from replify.conversions.internal import refuse_bandit
from replify.conversions.resolve import Resolved, resolve
from replify.errors import InvalidArgumentError
from replify.plugins.registry import registry
from replify.plugins.specs import ConversionSpec, LearnerSpec

__all__ = ["ReplicableBandit", "ReplicableContextual", "ReplicableFactory", "ReplicableLearner", "wrap"]

#: what every conversion takes besides its own options, and what wrap itself reads
COMMON = ("n", "horizon", "rho", "seed")
CHOOSING = ("feedback", "conversion")


class ReplicableFactory:
    """What the decorator form of :func:`wrap` returns: calling it with the remaining keyword
    arguments (typically ``n`` and ``seed``) builds a :class:`ReplicableLearner`."""

    def __init__(self, learner: Any, options: dict[str, Any], resolved: Resolved | None = None) -> None:
        functools.update_wrapper(self, learner, updated=())
        self.options = options
        # a learner given as an object is resolved here as well (unless wrap hands it over resolved), so
        # that what its conversion refuses (a bandit learner under full information, an option of another
        # conversion) is refused where it is decorated, as the function form refuses it at once; a
        # registered name is looked up when built
        if resolved is None and not isinstance(learner, (str, LearnerSpec)):
            resolved = resolve(learner, norm=options.get("norm"), problem=options.get("problem"))
            conversion_options(choose(resolved, options), resolved, options)
            if resolved.problem != "contextual":
                refuse_bandit(resolved.spec, resolved.feedback)
        if resolved is not None and resolved.problem == "contextual":
            self.problem, self.feedback = "contextual", "bandit"  # what the learners it builds declare

    def __call__(self, **kwargs: Any) -> Any:
        fixed = sorted(k for k, v in kwargs.items() if k in self.options and not _same(self.options[k], v))
        if fixed:
            raise InvalidArgumentError(
                f"{', '.join(fixed)} {'was' if len(fixed) == 1 else 'were'} fixed when {self.__qualname__!r} was wrapped "
                f"({', '.join(f'{k}={self.options[k]!r}' for k in fixed)}); got "
                f"{', '.join(f'{k}={kwargs[k]!r}' for k in fixed)}: leave {'it' if len(fixed) == 1 else 'them'} out, "
                "or wrap the class without"
            )
        return wrap(self.__wrapped__, **{**self.options, **kwargs})

    def __reduce__(self) -> Any:
        # A decorated class is reached by its module and name (the name now holds this factory, not
        # the class): pickle it as that global, the way a class is pickled; any other factory by value.
        # A script's __main__ is not the workers' __main__: there the class inside goes by value
        # (cloudpickle, which joblib and Dask use, does that for __main__'s classes).
        name = getattr(self, "__module__", "")
        found: Any = sys.modules.get(name, None) if name != "__main__" else None
        for part in str(getattr(self, "__qualname__", "")).split("."):
            found = getattr(found, part, None)
        if found is self:
            return self.__qualname__
        return (ReplicableFactory, (self.__wrapped__, dict(self.options)))

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"<replicable {getattr(self.__wrapped__, '__qualname__', self.__wrapped__)!r} ({opts})>"


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays and the like: the same object only
        return a is b


def resolve_spec(learner: Any, *, norm: str | None, problem: str | None) -> LearnerSpec:
    """The spec the experts conversion wraps (:func:`replify.conversions.resolve`'s)."""
    return resolve(learner, norm=norm, problem=problem).spec


def choose(learner: Resolved, options: Mapping[str, Any]) -> ConversionSpec:
    """The registered conversion that serves ``learner``: the one named ``conversion=``, else the
    default one for its problem and the feedback asked (``feedback=``, ``"full"`` by default), else
    the only one that serves them."""
    table = registry().conversions()
    feedback = options.get("feedback", "full")
    if "conversion" in options:
        spec = registry().conversion(options["conversion"])
        if learner.problem not in spec.problems:
            raise InvalidArgumentError(f"conversion={spec.name!r} serves {' and '.join(spec.problems)} learners; "
                                       f"{learner.name!r} declares problem={learner.problem!r}")
        return spec
    serving = [c for c in table.values() if learner.problem in c.problems and feedback in c.feedback]
    chosen = [c for c in serving if c.default] or serving
    if len(chosen) == 1:
        return chosen[0]
    if not chosen:
        raise InvalidArgumentError(f"no registered conversion serves {learner.name!r} (problem={learner.problem!r}) "
                                   f"with feedback={feedback!r}; registered: "
                                   f"{', '.join(f'{c.name} ({c.problems}, {c.feedback})' for c in table.values()) or 'none'}")
    raise InvalidArgumentError(f"{len(chosen)} registered conversions serve {learner.name!r} with feedback={feedback!r} "
                               f"({', '.join(c.name for c in chosen)}); name one with conversion=")


def conversion_options(conversion: ConversionSpec, learner: Resolved, options: Mapping[str, Any]) -> Any:
    """``options`` as ``conversion``'s options class: one it does not take is refused, naming the
    conversion that takes it (module docstring)."""
    own = set(conversion.option_names)
    given = {k: v for k, v in options.items() if k not in COMMON + CHOOSING}
    stray = [k for k in given if k not in own and not (k == "problem" and learner.problem == "contextual")]
    if stray:
        table = registry().conversions()
        said = []
        for k in stray:
            takers = [c.name for c in table.values() if k in c.option_names]
            where = (f"an option of the {' and '.join(repr(t) for t in takers)} conversion{'s' if len(takers) > 1 else ''}"
                     if takers else "an option of no registered conversion")
            said.append(f"{k}={given[k]!r} is {where}")
        raise InvalidArgumentError(
            f"{learner.name!r} (problem={learner.problem!r}) is served by the {conversion.name!r} conversion, which "
            f"takes n, horizon, rho, seed, {', '.join(conversion.option_names)}; got {'; '.join(said)} "
            f"({conversion.docs or 'docs/plugins.md'})")
    return conversion.options(**{k: v for k, v in given.items() if k in own})


@public
def wrap(
    learner: str | LearnerSpec | Callable[..., Any] | None = None,
    /,
    *,
    n: int | None = None,
    horizon: int | None = None,
    rho: float | None = None,
    seed: int | np.random.SeedSequence | None = None,
    norm: Literal["linf", "l1"] | None = None,
    block_size: int | None = None,
    eps: float | Literal["certified"] | None = None,
    rounding: bool = True,
    problem: Literal["experts", "olo", "contextual"] | None = None,
    learner_params: Mapping[str, Any] | None = None,
    blocks: int | None = None,
    feedback: Literal["full", "bandit"] = "full",
    explore: int | None = None,
    model: Literal["shared", "disjoint"] | None = None,
    cost_scale: float | None = None,
    feature_bound: float | None = None,
    feed_rows: int | None = None,
    conversion: str | None = None,
    **extra: Any,
) -> Any:
    """Make any online learner replicable with the registered conversion that serves it (module
    docstring): for experts and online linear optimisation under full information, the paper's
    general framework (``"experts"``: Alg. ``general-framework`` for ``norm="l1"``,
    ``general-framework-ell-infty`` for ``norm="linf"``; guarantees
    ``thm:general-framework-guarantees`` and ``thm:general-framework-guarantees-ell-infty``).
    ``conversion=`` names a registered conversion (a third party's, say); its own options are
    passed as keywords, and an option no conversion serving the learner takes is refused, naming
    the conversion that takes it.

    ``learner`` is a registered learner's name, a :class:`LearnerSpec`, or a factory called as
    ``factory(n=..., horizon=..., rng=...)`` returning an object with ``act()`` and
    ``update(cost)``. Function form: ``wrap(learner, n=, horizon=, rho=, seed=)`` returns a
    :class:`ReplicableLearner`. Decorator form: ``@wrap(horizon=, rho=)`` on a class returns a
    :class:`ReplicableFactory`, called later with the rest (``n=``, ``seed=``).

    Defaults: B and ε from the theorem, with the corrected radius m
    (:func:`replify.guarantees.theory.concentration_radius`; docs/certificates.md);
    ``block_size=`` and ``eps=`` override them (overriding only ``block_size`` keeps ε = 2/B,
    or 2n/B for ℓ1). ``norm`` defaults to the registered learner's, else ``"linf"``.
    ``problem`` (``"experts"`` by default) applies to plain factories. A registered learner whose
    parameters come from a replicability theorem (``"fllb"``, ``"ftplb-star"``, ``"iid-experts"``)
    is built with ``rho`` as :func:`replify.make` builds it; ``learner_params`` are the internal
    learner's own hyperparameters (``{"eta": 0.1}``, ``{"block_size": 4}``). The internal
    learner sees exactly the domain its spec declares (:func:`input_map`); a spec no map serves
    is refused. ``rounding=False``
    is a switch for tests: feed the exact normalised block sums instead of grid points, which
    voids the replicability guarantee — ``params.replicability_bound`` is then ``None``,
    ``params.certified`` False and reports claim only what they measure.

    What scales with T can be given in its own terms, so that one decorated class serves every
    horizon (a sweep over T, docs/wrapper.md "Choosing B and eps"): ``blocks=K`` plays K blocks,
    B = ⌈T/K⌉ (instead of ``block_size``), and ``eps="certified"`` takes the largest ε whose union
    bound still certifies ρ at that B (:func:`replify.certified_eps`; without a block size, the
    theorem's own ε, certified at its own B).

    The regret is at most ``(B + 2/ε)·Regret_{T/B}(internal)`` (ℓ∞; ``B + 2n/ε`` for ℓ1),
    i.e. ``2B·Regret_{T/B}(internal)`` at the theorem's parameters (``learner.params``). With the
    corrected m ~ n√(T ln(T/ρ)) of the ℓ∞ case, B ~ n^{1/2}T^{3/4}ρ^{-1/2} and, with FTPL or Hedge
    inside, the regret is Õ(T^{7/8} n^{1/4} ρ^{-1/4}) — n^{1/4}, not the paper's n^{1/8}; the ℓ1
    case keeps Õ(D T^{7/8} n^{3/8} ρ^{-1/4}). ``learner.params.replicability_bound`` is the
    tightened union bound of :func:`replify.guarantees.theory.framework_union_bound`.

    ``feedback="bandit"`` asks for the conversion under bandit feedback (ours; the open direction of
    the paper's Discussion): the result is a :class:`ReplicableBandit` — it sees only the played
    arm's cost — that explores ``explore`` = m steps per arm in each of ``blocks`` = K blocks on steps
    drawn from R, and feeds the internal (full-information) learner the grid-rounded block-mean
    estimates; ρ-replicable against any oblivious adversary (experts, costs in [0, 1]). ``eps`` may
    be given; ``block_size``, ``norm``, ``rounding`` and ``problem`` belong to the full-information form.
    For a tighter certificate and more learning, the registered ``perturbed-bandit`` commits to a
    Gumbel-perturbed leader instead (docs/bandits.md).

    A **contextual** learner (``problem = "contextual"``: a registered one, a class declaring it, or
    any factory with ``problem="contextual"``) gets the general contextual conversion (ours), with or
    without ``feedback="bandit"``: a :class:`~replify.conversions.contextual.ReplicableContextual`
    that explores on a shared round robin and, phase by phase, fits the learner's linear ``model``
    (``"shared"`` or ``"disjoint"``; the learner's ``model`` attribute by default) by ridge, rounds it
    on a grid from R and feeds the rounded estimate to the learner, which decides every committed step
    — certified iid ρ-replicable, for any learner deterministic given its rng and what it is fed, for
    features of norm at most ``feature_bound`` (1) and costs with E[c² | context] ≤ ``cost_scale``²
    (1), the derivation in that module's docstring (docs/contextual.md, "Your own contextual learner
    made replicable"). It takes ``n``, ``horizon``, ``rho``, ``seed``, ``learner_params``, ``model``,
    ``cost_scale``, ``feature_bound`` and ``feed_rows`` (the pseudo-rows fed to the learner at each
    decision), and as keywords ``cost_center`` (b: the bound is then on E[(c − b)² | context]),
    ``variance="measured"`` (each decision's grid set by the explored costs' own second moment about
    b, agreed on through R; for costs within ``cost_scale`` of b), ``phases`` and ``explore_share``
    (the schedule: docs/contextual.md, "The measured variance, the centre and the schedule"); the
    other options belong to the experts and bandit forms.
    """
    options = {
        k: v
        for k, v in dict(
            n=n, horizon=horizon, rho=rho, seed=seed, norm=norm, block_size=block_size,
            eps=eps, problem=problem, learner_params=learner_params, blocks=blocks, explore=explore, model=model,
            cost_scale=cost_scale, feature_bound=feature_bound, feed_rows=feed_rows, conversion=conversion, **extra,
        ).items()
        if v is not None
    }
    if feedback == "bandit":
        options["feedback"] = "bandit"
        # what the user passed that only the full-information form takes, each as it was given
        clash = [f"{k}={v!r}" for k, v in (("block_size", block_size), ("norm", norm), ("problem", problem),
                                           ("rounding", None if rounding else False), ("eps", eps))
                 if v is not None and (k != "eps" or v == "certified")]
        if clash:
            raise InvalidArgumentError(
                f"feedback='bandit' takes blocks=, explore= and a numeric eps=; got {', '.join(clash)}, which "
                f"{'belongs' if len(clash) == 1 else 'belong'} to the full-information form"
                + (" (the bandit form's eps is a number: the grid width of its block-mean estimates)"
                   if eps == "certified" else "")
            )
    elif explore is not None:
        raise InvalidArgumentError(f"explore={explore} is the bandit form's (feedback='bandit'); the full-information "
                                   "form explores nothing")
    if blocks is not None and block_size is not None:
        raise InvalidArgumentError(
            f"give one of blocks={blocks} (B = ceil(T / blocks)) and block_size={block_size}; got both"
        )
    if blocks is not None:
        check_int("blocks", blocks, minimum=1)
    if not rounding:
        options["rounding"] = False
    if learner is None:
        return lambda target: ReplicableFactory(target, options)
    missing = [k for k in ("n", "horizon", "rho", "seed") if k not in options]
    if missing:
        raise InvalidArgumentError(
            f"wrap() needs {', '.join(missing)} to build a learner (got {sorted(options) or 'none'}); "
            f"to wrap a class for later, use the decorator form @wrap(horizon=..., rho=...)"
        )
    resolved = resolve(learner, norm=norm, problem=problem)  # once: the conversion builds from it
    serving = choose(resolved, options)
    own = conversion_options(serving, resolved, options)
    built = serving.build(resolved, n=options["n"], horizon=options["horizon"], rho=options["rho"],
                             seed=options["seed"], options=own)
    # the decorator form of what was built, less its seed: what replify.evaluate and the other entry
    # points build one copy per run from
    built.factory = ReplicableFactory(learner, {k: v for k, v in options.items() if k != "seed"}, resolved)
    return built
