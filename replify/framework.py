"""The paper's general replicable conversion (§5) as a wrapper around any online learner.

Alg. ``general-framework`` (ℓ1) and Alg. ``general-framework-ell-infty`` (ℓ∞): play the
internal learner's first action for block 1; at each transition t = kB+1 (k ≥ 1) draw two
fresh offsets, round c_{1:t-1} to the grid point g inside ``c_{1:t-1} + [0,1/ε)^n`` and
c_{1:t-1-B} to the grid point g' inside ``c_{1:t-1-B} + [0,1/ε)^n`` (for k = 1 that cube sits
at the origin), feed ``(g − g')/(B + 2n/ε)`` (ℓ1) or ``(g − g')/(B + 2/ε)`` (ℓ∞) to the internal
learner and play its action for the next B steps (DESIGN.md §5).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Literal

import numpy as np

from .blocks import BlockLearner
from .checks import CostDomain, check_factory, check_int, check_learner, check_rho, public
from .errors import InvalidArgumentError
from .grid import grid_point
from .plugins import registry
from .randomness import Seed, Streams, seed_sequence
from .specs import LearnerSpec
from .theory import FrameworkParams, framework_params


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
    ) -> None:
        self.spec = spec
        self.problem = spec.problem
        self.seed = seed_sequence(seed)
        n, horizon = check_int("n", n, minimum=2), check_int("horizon", horizon, minimum=1)
        if spec.norm == "l1" and norm == "linf":
            raise InvalidArgumentError(
                f"norm must be 'l1' for learner {spec.name!r}, which expects l1-bounded costs; got 'linf' "
                f"(the l-infinity normalisation can feed it vectors of l1 norm up to n)"
            )
        # An internal learner that expects [0,1] costs gets the affine image (x+1)/2 of the
        # fed vector x ∈ [-1,1]^n; its regret on x is then twice its regret on (x+1)/2.
        self._affine = spec.cost_range == (0.0, 1.0)
        scale = 2.0 if self._affine else 1.0
        internal_regret = None
        if spec.regret_bound is not None:
            internal_regret = lambda k: scale * spec.regret_bound(horizon=k, n=n)  # noqa: E731
        self.params: FrameworkParams = framework_params(
            horizon=horizon, n=n, rho=check_rho(rho), norm=norm, block_size=block_size, eps=eps,
            internal_regret=internal_regret, rounding=rounding,
        )
        super().__init__(
            n=n, horizon=horizon, block_size=self.params.block_size,
            domain=CostDomain(low=-1.0, high=1.0, l1=norm == "l1"),
        )
        streams = Streams(self.seed)
        self._grid_rng = streams.grid
        self.internal = check_learner(
            spec.factory(n=self.n, horizon=self.params.n_blocks, rng=streams.internal),
            source=f"learner factory {spec.name!r}",
        )
        self._anchor = np.zeros(self.n)  # c_{1:t-1-B}: the cumulative cost at the last transition
        self._action = self._check(self.internal.act(), 1)

    @property
    def eps(self) -> float:
        return self.params.eps

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
class ReplicableFactory:
    """What the decorator form of :func:`wrap` returns: calling it with the remaining keyword
    arguments (typically ``n`` and ``seed``) builds a :class:`ReplicableLearner`."""

    def __init__(self, learner: Any, options: dict[str, Any]) -> None:
        functools.update_wrapper(self, learner, updated=())
        self.options = options

    def __call__(self, **kwargs: Any) -> ReplicableLearner:
        return wrap(self.__wrapped__, **{**self.options, **kwargs})

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"<replicable {getattr(self.__wrapped__, '__qualname__', self.__wrapped__)!r} ({opts})>"


def _resolve(learner: Any, *, norm: str | None, problem: str | None) -> LearnerSpec:
    if isinstance(learner, (LearnerSpec, str)):
        spec = learner if isinstance(learner, LearnerSpec) else registry().learner(learner)
        if problem is not None and problem != spec.problem:
            raise InvalidArgumentError(
                f"problem must match learner {spec.name!r}, which is registered for {spec.problem!r}; got {problem!r}"
            )
        return spec
    check_factory(learner, name="learner")
    # A plain factory receives the normalised vector as it is, entries in [-1, 1].
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
    eps: float | None = None,
    rounding: bool = True,
    problem: Literal["experts", "olo"] | None = None,
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

    Defaults: B and ε from the theorem (m from ``lemma:concentration_in_ell_1_norm``);
    ``block_size=`` and ``eps=`` override them (overriding only ``block_size`` keeps ε = 2/B,
    or 2n/B for ℓ1). ``norm`` defaults to the registered learner's, else ``"linf"``.
    ``problem`` (``"experts"`` by default) applies to plain factories. ``rounding=False``
    is a switch for tests: feed the exact normalised block sums instead of grid points, which
    voids the replicability guarantee.

    The regret is at most ``(B + 2/ε)·Regret_{T/B}(internal)`` (ℓ∞; ``B + 2n/ε`` for ℓ1),
    i.e. ``2B·Regret_{T/B}(internal)`` at the theorem's parameters (``learner.params``).
    """
    options = {
        k: v
        for k, v in dict(
            n=n, horizon=horizon, rho=rho, seed=seed, norm=norm, block_size=block_size,
            eps=eps, problem=problem,
        ).items()
        if v is not None
    }
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
    spec = _resolve(learner, norm=norm, problem=problem)
    return ReplicableLearner(
        spec,
        n=options["n"],
        horizon=options["horizon"],
        rho=options["rho"],
        seed=options["seed"],
        norm=norm or spec.norm,
        block_size=block_size,
        eps=eps,
        rounding=rounding,
    )
