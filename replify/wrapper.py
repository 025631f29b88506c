"""The paper's general replicable conversion (§5) as a wrapper around any online learner.

Alg. ``general-framework`` (ℓ1) and Alg. ``general-framework-ell-infty`` (ℓ∞): play the
internal learner's first action for block 1; at each transition t = kB+1 (k ≥ 1) draw two
fresh offsets, round c_{1:t-1} to the grid point g inside ``c_{1:t-1} + [0,1/ε)^n`` and
c_{1:t-1-B} to the grid point g' inside ``c_{1:t-1-B} + [0,1/ε)^n`` (for k = 1 that cube sits
at the origin), feed ``(g − g')/(B + 2n/ε)`` (ℓ1) or ``(g − g')/(B + 2/ε)`` (ℓ∞) to the internal
learner and play its action for the next B steps (docs/algorithms.md).
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable, Literal, Mapping

import attrs
import numpy as np

from replify.base.checks import CostDomain, check_action, check_factory, check_int, check_rho, public
from replify.errors import InvalidArgumentError
from replify.guarantees.theory import BanditConversionParams, FrameworkParams, bandit_conversion_params, certified_eps, framework_params
from replify.components.exploring import ExploringBandit
from replify.components.blocks import BlockLearner
from replify.components.grid import grid_point
from replify.plugins.registry import registry
from replify.plugins.specs import LearnerSpec
from replify.base.randomness import Seed, Streams, seed_sequence
from replify.base.references import is_reference, load_reference
from replify.components.contextual_conversion import ReplicableContextual
from replify.contextual_wrap import build_contextual, check_contextual_options, contextual_target
from replify.internal_learner import build_internal, declared_feedback, input_map, internal_regret_bound, refuse_bandit


class ReplicableLearner(BlockLearner):
    """An adversarially ρ-replicable learner built from an internal learner by the general
    framework (Alg. ``general-framework`` / ``general-framework-ell-infty``).

    Build it with :func:`wrap`. It accepts cost vectors with entries in [-1, 1] (and, for
    ``norm="l1"``, ℓ1 norm at most 1). The internal learner is built with horizon
    ``ceil(T/B)`` (it sees one vector per block) and is called only at transitions.
    """

    def __init__(
        self,
        spec: LearnerSpec,
        *,
        n: int,
        horizon: int,
        rho: float,
        seed: Seed,
        norm: Literal["linf", "l1"],
        block_size: int | None = None,
        eps: float | None = None,
        rounding: bool = True,
        learner_params: Mapping[str, Any] | None = None,
    ) -> None:
        self.spec = spec
        self.seed = seed_sequence(seed)
        n, horizon = check_int("n", n, minimum=2), check_int("horizon", horizon, minimum=1)
        rho = check_rho(rho)
        refuse_bandit(spec, declared_feedback(spec.factory, spec.feedback))  # before any warning on B or eps
        self._affine = input_map(spec, norm)
        #: what :attr:`factory` rebuilds this learner from (set by :func:`wrap`)
        self._source: tuple[Any, dict[str, Any]] = (spec, {})
        params = framework_params(
            horizon=horizon, n=n, rho=rho, norm=norm, block_size=block_size, eps=eps, rounding=rounding,
        )
        super().__init__(
            n=n, horizon=horizon, block_size=params.block_size,
            domain=CostDomain(low=-1.0, high=1.0, l1=norm == "l1"),
        )
        streams = Streams(self.seed)
        self._grid_rng = streams.grid
        self.internal = build_internal(
            spec, n=n, horizon=params.n_blocks, rng=streams.internal, rho=rho, learner_params=learner_params or {}
        )
        # Actions as the internal learner plays them (FLLB over the simplex plays expert indices).
        self.problem = getattr(self.internal, "problem", spec.problem)
        internal_regret, note = internal_regret_bound(
            spec, self.internal, n=n, blocks=params.n_blocks, learner_params=learner_params or {}
        )
        # Regret on x ∈ [-1,1]^n is twice the regret on (x+1)/2 for experts (a·1 = 1 on the simplex).
        scale = 2.0 if self._affine else 1.0
        self.params: FrameworkParams = attrs.evolve(
            params, regret_bound=None if internal_regret is None else params.normaliser * scale * internal_regret,
            regret_bound_note=note,
        )
        self._anchor = np.zeros(self.n)  # c_{1:t-1-B}: the cumulative cost at the last transition
        self._action = self._check(self.internal.act(), 1)

    @property
    def eps(self) -> float:
        return self.params.eps

    @property
    def factory(self) -> ReplicableFactory:
        """The decorator form of this learner: a :class:`ReplicableFactory` with the options it was
        wrapped with, less its seed — what :func:`replify.evaluate` and the other entry points use
        to build one copy of it per run (the learner itself may also be passed: they use this)."""
        target, options = self._source
        return ReplicableFactory(target, {k: v for k, v in options.items() if k != "seed"})

    def __repr__(self) -> str:
        p = self.params
        return (
            f"ReplicableLearner({self.spec.name!r}, n={self.n}, horizon={self.horizon}, rho={p.rho}, "
            f"norm={p.norm!r}, block_size={p.block_size}, eps={p.eps:.6g})"
        )

    @property
    def action_source(self) -> str:
        return f"internal learner {self.spec.name!r}"

    def _decide(self, cums: np.ndarray, steps: np.ndarray) -> Any:
        """Round every transition's cumulative costs at once (two fresh offsets each), then
        feed the internal learner one vector per transition, in order."""
        fed = self._fed(cums, np.vstack([self._anchor[None, :], cums[:-1]]))
        self._anchor = cums[-1].copy()
        actions = []
        for x, s in zip(fed, steps.tolist()):  # the internal learner is sequential: once per block
            self.internal.update(x)
            actions.append(self._check(self.internal.act(), s + 1))
        return actions

    def _fed(self, cum: np.ndarray, anchor: np.ndarray) -> np.ndarray:
        """The vectors fed to the internal learner at k transitions: rows of ``cum`` are
        c_{1:t-1}, rows of ``anchor`` c_{1:t-1-B}."""
        u = self._grid_rng.random((cum.shape[0], 2, self.n))
        if self.params.rounding:
            diff = grid_point(cum, u[:, 0], self.eps) - grid_point(anchor, u[:, 1], self.eps)
        else:  # the documented test switch: the exact block sums, same normalisation
            diff = cum - anchor
        x = diff / self.params.normaliser
        return (x + 1.0) / 2.0 if self._affine else x
class ReplicableBandit(ExploringBandit):
    """The general conversion under bandit feedback (ours; ``replify.wrap(learner, feedback="bandit")``),
    around any full-information internal learner: blocks of B steps; in each of the first K − 1, a
    stretch of n·m steps at an offset drawn from R explores every arm m times (the same steps in
    both runs), and the other steps play the internal learner's action. At the end of block k the
    cumulative block-mean estimates Ĉ_k (each arm's explored sum over m) and Ĉ_{k−1} are rounded on
    two fresh grids of spacing 1/ε (paper §5, Alg. ``general-framework-ell-infty``) and the internal
    learner is fed ``(g − g′)/(1 + 2/ε)`` — mapped to [0, 1] when it expects that — before it picks
    the next block's action.

    Certified against any oblivious adversary: the runs part only if some pair of grid points
    differs, with probability at most ε·E‖Ĉ_k − Ĉ′_k‖₁ each, and Ĉ_k − Ĉ′_k sums k·m shared steps'
    independent cost differences per arm (:func:`replify.guarantees.theory.bandit_drift`). Regret at
    most n·m·(K − 1) + B + B·(1 + 2/ε)·Regret_{K−1}(internal) (twice that with the map), the explored
    means being unbiased block averages (docs/certificates.md, "The general conversion under bandit
    feedback")."""

    problem = "experts"

    def __init__(self, spec: LearnerSpec, *, n: int, horizon: int, rho: float, seed: Seed, blocks: int | None = None,
                 explore: int | None = None, eps: float | None = None,
                 learner_params: Mapping[str, Any] | None = None) -> None:
        super().__init__(n=n, horizon=horizon)
        self.spec = spec
        self.seed = seed_sequence(seed)
        refuse_bandit(spec, declared_feedback(spec.factory, spec.feedback))
        self._affine = input_map(spec, "linf")
        self._source: tuple[Any, dict[str, Any]] = (spec, {})
        params = bandit_conversion_params(horizon=self.horizon, n=self.n, rho=rho, blocks=blocks, explore=explore, eps=eps)
        streams = Streams(self.seed)
        self.internal = build_internal(spec, n=self.n, horizon=max(1, params.decisions), rng=streams.internal, rho=rho,
                                       learner_params=learner_params or {})
        internal_regret, note = internal_regret_bound(spec, self.internal, n=self.n, blocks=max(1, params.decisions),
                                                      learner_params=learner_params or {})
        scale = 2.0 if self._affine else 1.0
        regret = None if internal_regret is None else min(float(self.horizon), self.n * params.explore * params.decisions
                                                           + params.block_size * (1.0 + params.normaliser * scale * internal_regret))
        self.params: BanditConversionParams = attrs.evolve(params, regret_bound=regret, regret_bound_note=note)
        self.rho = params.rho
        self._anchor = np.zeros(self.n)  # Ĉ_{k−1}
        first = check_action(self.internal.act(), n=self.n, problem="experts", step=1, source="internal learner act()")
        self._start(rng=streams.grid, block_size=params.block_size, decisions=params.decisions, explore=params.explore,
                    window=None, first=int(first))

    @property
    def eps(self) -> float:
        return self.params.eps

    @property
    def factory(self) -> ReplicableFactory:
        """The decorator form of this learner (as :attr:`ReplicableLearner.factory`)."""
        target, options = self._source
        return ReplicableFactory(target, {k: v for k, v in options.items() if k != "seed"})

    def __repr__(self) -> str:
        p = self.params
        return (f"ReplicableBandit({self.spec.name!r}, n={self.n}, horizon={self.horizon}, rho={p.rho}, "
                f"blocks={p.blocks}, explore={p.explore}, eps={p.eps:.6g})")

    def _commit(self, total: np.ndarray) -> int:
        cum = total / self.explore  # Ĉ_k, in block-mean units
        u = self._rng.random((2, self.n))  # two fresh offsets, from R
        x = (grid_point(cum, u[0], self.eps) - grid_point(self._anchor, u[1], self.eps)) / self.params.normaliser
        self._anchor = cum
        self.internal.update((x + 1.0) / 2.0 if self._affine else x)
        return check_action(self.internal.act(), n=self.n, problem="experts", step=self._t + 1,
                            source="internal learner act()")


class ReplicableFactory:
    """What the decorator form of :func:`wrap` returns: calling it with the remaining keyword
    arguments (typically ``n`` and ``seed``) builds a :class:`ReplicableLearner`."""

    def __init__(self, learner: Any, options: dict[str, Any]) -> None:
        functools.update_wrapper(self, learner, updated=())
        self.options = options
        # a bandit learner is refused where it is decorated, as the function form refuses it at once; a
        # contextual one goes to the contextual conversion, whose options are checked here too
        if options.get("problem") == "contextual" or contextual_target(learner) is not None:
            check_contextual_options(options, problem=options.get("problem"))
            self.problem, self.feedback = "contextual", "bandit"  # what the learners it builds declare
        elif not isinstance(learner, (str, LearnerSpec)):
            refuse_bandit(resolve_spec(learner, norm=options.get("norm"), problem=options.get("problem")),
                          declared_feedback(learner, "full"))

    def __call__(self, **kwargs: Any) -> ReplicableLearner | ReplicableBandit | ReplicableContextual:
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
    """The spec the framework wraps: a registered one (by name or as a spec), or one made for a
    plain factory, which receives the normalised vectors as they are (entries in [-1, 1])."""
    if isinstance(learner, str) and learner not in registry().learners() and is_reference(learner):
        learner = load_reference(learner, argument="learner")  # "file.py:Name" / "module:Name": the object it names
    if isinstance(learner, (LearnerSpec, str)):
        spec = learner if isinstance(learner, LearnerSpec) else registry().learner(learner)
        if problem is not None and problem != spec.problem:
            raise InvalidArgumentError(
                f"problem must match learner {spec.name!r}, which is registered for {spec.problem!r}; got {problem!r}"
            )
        return spec
    check_factory(learner, name="learner")
    return LearnerSpec(
        getattr(learner, "__qualname__", None) or type(learner).__name__,
        learner,
        problem or "experts",
        norm=norm or "linf",
        cost_range=(-1.0, 1.0),
    )


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
) -> Any:
    """Make any online learner adversarially ρ-replicable with the paper's general framework
    (Alg. ``general-framework`` for ``norm="l1"``, ``general-framework-ell-infty`` for
    ``norm="linf"``; guarantees ``thm:general-framework-guarantees`` and
    ``thm:general-framework-guarantees-ell-infty``).

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
    without ``feedback="bandit"``: a :class:`~replify.components.contextual_conversion.ReplicableContextual`
    that explores on a shared round robin and, phase by phase, fits the learner's linear ``model``
    (``"shared"`` or ``"disjoint"``; the learner's ``model`` attribute by default) by ridge, rounds it
    on a grid from R and feeds the rounded estimate to the learner, which decides every committed step
    — certified iid ρ-replicable, for any learner deterministic given its rng and what it is fed, for
    features of norm at most ``feature_bound`` (1) and costs with E[c² | context] ≤ ``cost_scale``²
    (1), the derivation in that module's docstring (docs/contextual.md, "Your own contextual learner
    made replicable"). It takes ``n``, ``horizon``, ``rho``, ``seed``, ``learner_params``, ``model``,
    ``cost_scale``, ``feature_bound`` and ``feed_rows`` (the pseudo-rows fed to the learner at each
    decision); the other options belong to the experts and bandit forms.
    """
    options = {
        k: v
        for k, v in dict(
            n=n, horizon=horizon, rho=rho, seed=seed, norm=norm, block_size=block_size,
            eps=eps, problem=problem, learner_params=learner_params, blocks=blocks, explore=explore, model=model,
            cost_scale=cost_scale, feature_bound=feature_bound, feed_rows=feed_rows,
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
    target = contextual_target(learner) or ((learner, getattr(learner, "__qualname__", type(learner).__name__)) if problem == "contextual" else None)
    if target is not None:  # a contextual learner: the contextual conversion, with or without feedback="bandit"
        check_contextual_options(options, problem=problem)
        built = build_contextual(target, options)
        built.factory = ReplicableFactory(learner, {k: v for k, v in options.items() if k != "seed"})
        return built
    only = [f"{k}={options[k]!r}" for k in ("model", "cost_scale", "feature_bound", "feed_rows") if k in options]
    if only:
        raise InvalidArgumentError(f"{', '.join(only)} {'applies' if len(only) == 1 else 'apply'} to contextual "
                                   "learners (problem = 'contextual'), which the contextual conversion wraps")
    spec = resolve_spec(learner, norm=norm, problem=problem)
    if feedback == "bandit":
        conversion = ReplicableBandit(spec, n=options["n"], horizon=options["horizon"], rho=options["rho"],
                                      seed=options["seed"], blocks=blocks, explore=explore,
                                      eps=None if eps is None else float(eps), learner_params=learner_params)
        conversion._source = (learner, options)
        return conversion
    if blocks is not None:
        block_size = max(1, -(-options["horizon"] // blocks))
    if eps == "certified":
        # one block has no transition and is replicable for any eps: the theorem's own stands
        eps = None if block_size is None or block_size >= options["horizon"] else certified_eps(
            learner if isinstance(learner, str) else None, horizon=options["horizon"], n=options["n"],
            rho=options["rho"], block_size=block_size, norm=norm or spec.norm)
    built = ReplicableLearner(
        spec,
        n=options["n"],
        horizon=options["horizon"],
        rho=options["rho"],
        seed=options["seed"],
        norm=norm or spec.norm,
        block_size=block_size,
        eps=eps,
        rounding=rounding,
        learner_params=learner_params,
    )
    built._source = (learner, options)
    return built
