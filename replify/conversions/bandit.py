"""The general conversion under bandit feedback (ours): :class:`ReplicableBandit`, registered as
the conversion ``"bandit"`` (``replify.wrap(learner, feedback="bandit")``; docs/certificates.md, "The
general conversion under bandit feedback")."""

from __future__ import annotations

from typing import Any, Mapping

import attrs
import numpy as np

from replify.base.checks import check_action
from replify.base.randomness import Seed, Streams, seed_sequence
from replify.components.exploring import ExploringBandit
from replify.components.grid import grid_point
from replify.conversions.internal import build_internal, declared_feedback, input_map, internal_regret_bound, refuse_bandit
from replify.conversions.resolve import Resolved
from replify.guarantees.theory import BanditConversionParams, bandit_conversion_params
from replify.plugins.specs import LearnerSpec


@attrs.frozen(kw_only=True)
class BanditOptions:
    """The bandit conversion's options (``feedback="bandit"``): ``blocks`` K, ``explore`` m (steps per
    arm per block), ``eps`` (the grid width of its block-mean estimates: a number) and
    ``learner_params``."""

    blocks: int | None = None
    explore: int | None = None
    eps: float | None = None
    learner_params: Mapping[str, Any] | None = None


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
        self.factory: Any = None  # the decorator form (set by replify.wrap, as ReplicableLearner's)
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


def build(learner: Resolved, *, n: int, horizon: int, rho: float, seed: Seed,
          options: BanditOptions) -> ReplicableBandit:
    """The conversion around ``learner`` (the ``build`` of its :class:`~replify.ConversionSpec`)."""
    return ReplicableBandit(learner.spec, n=n, horizon=horizon, rho=rho, seed=seed, blocks=options.blocks,
                            explore=options.explore, eps=None if options.eps is None else float(options.eps),
                            learner_params=options.learner_params)
