"""The paper's general replicable conversion (§5) for experts and online linear optimisation,
full information: Alg. ``general-framework`` (ℓ1) and Alg. ``general-framework-ell-infty`` (ℓ∞) as
:class:`ReplicableLearner`, registered as the conversion ``"experts"`` (docs/wrapper.md).

Play the internal learner's first action for block 1; at each transition t = kB+1 (k ≥ 1) draw two
fresh offsets, round c_{1:t-1} to the grid point g inside ``c_{1:t-1} + [0,1/ε)^n`` and
c_{1:t-1-B} to the grid point g' inside ``c_{1:t-1-B} + [0,1/ε)^n`` (for k = 1 that cube sits
at the origin), feed ``(g − g')/(B + 2n/ε)`` (ℓ1) or ``(g − g')/(B + 2/ε)`` (ℓ∞) to the internal
learner and play its action for the next B steps (docs/algorithms.md).
"""

from __future__ import annotations

from typing import Any, Literal, Mapping

import attrs
import numpy as np

from replify.base.checks import CostDomain, check_int, check_rho
from replify.base.randomness import Seed, Streams, seed_sequence
from replify.components.blocks import BlockLearner
from replify.components.grid import grid_point
from replify.conversions.internal import build_internal, declared_feedback, input_map, internal_regret_bound, refuse_bandit
from replify.conversions.resolve import Resolved
from replify.guarantees.theory import FrameworkParams, certified_eps, framework_params
from replify.plugins.specs import LearnerSpec


@attrs.frozen(kw_only=True)
class ExpertsOptions:
    """The experts conversion's options (:func:`replify.wrap`'s, for a full-information learner):
    ``norm`` (``"linf"`` or ``"l1"``; the registered learner's by default), ``block_size`` B or
    ``blocks`` K (B = ⌈T/K⌉), ``eps`` (a number, or ``"certified"``: the largest ε whose union bound
    certifies ρ at that B), ``rounding`` (False: the test switch that voids the guarantee),
    ``problem`` (``"experts"`` or ``"olo"``, for a plain factory) and ``learner_params``."""

    norm: Literal["linf", "l1"] | None = None
    block_size: int | None = None
    blocks: int | None = None
    eps: Any = None
    rounding: bool = True
    problem: str | None = None
    learner_params: Mapping[str, Any] | None = None


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
        #: the decorator form of this learner, with the options it was wrapped with less its seed: what
        #: replify.evaluate and the other entry points build one copy per run from (set by replify.wrap)
        self.factory: Any = None
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


def build(learner: Resolved, *, n: int, horizon: int, rho: float, seed: Seed,
          options: ExpertsOptions) -> ReplicableLearner:
    """The conversion around ``learner`` (the ``build`` of its :class:`~replify.ConversionSpec`):
    ``blocks`` gives B = ⌈T/K⌉, ``eps="certified"`` the largest ε certified at that B."""
    block_size, eps = options.block_size, options.eps
    if options.blocks is not None:
        block_size = max(1, -(-horizon // options.blocks))
    norm = options.norm or learner.spec.norm
    if eps == "certified":
        # one block has no transition and is replicable for any eps: the theorem's own stands
        eps = None if block_size is None or block_size >= horizon else certified_eps(
            learner.name if learner.by_name else None, horizon=horizon, n=n, rho=rho, block_size=block_size,
            norm=norm)
    return ReplicableLearner(learner.spec, n=n, horizon=horizon, rho=rho, seed=seed, norm=norm,
                             block_size=block_size, eps=eps, rounding=options.rounding,
                             learner_params=options.learner_params)
