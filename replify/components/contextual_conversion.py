"""The general conversion for contextual bandits (ours): ``replify.wrap`` on a contextual learner
returns a :class:`ReplicableContextual`, iid ρ-replicable with a certificate (docs/contextual.md,
"A contextual learner's model made replicable").

**What it does.** The wrapper explores on a schedule both runs share and commits, phase by phase,
to the greedy policy of an estimate of the learner's *model*, rounded on a random grid drawn from
R (:mod:`replify.components.rounded_ridge`: the schedule, the estimate and the rounding). The model
is linear in the features — ``"shared"`` (one θ over the arms' features, as a textbook LinUCB) or
``"disjoint"`` (one θ per arm, as Li et al.'s disjoint LinUCB) — taken from the learner's ``model``
attribute where it names one, else from ``wrap(..., model=)``, else shared. The estimate is the
wrapper's own ridge fit of that model on the explored samples: no learner's estimator can be
certified without a statement of its stability (a learner could return any function of its data),
so the wrapper certifies the one it computes, and the learner supplies the model. Exploration is a
round robin over the arms from the start of each exploring stretch: on fixed features a stretch is
one round robin, which the engine's block-sum path plays without a per-step draw
(:meth:`ReplicableContextual.next_cycle`), and on contexts of finite support (a bootstrapped data
set) a stretch is a round robin or a policy on the support's rows, which the engine's
finite-support path draws as multinomial counts (:meth:`~replify.components.rounded_ridge.RoundedRidgeLearner.next_stretch`): so
horizons of 10⁸–10¹⁰ take seconds.

**The certificate.** Assume (i) the contexts and costs are iid over time: each step's (n, d)
context and its costs drawn from one law, independently of the other steps; (ii) every feature
vector has norm at most L (``feature_bound``, default 1; a larger one is refused); (iii) every cost
has second moment at most M² given its context, E[c² | x] ≤ M² (``cost_scale``, default 1; costs
in [−1, 1] qualify, as do Gaussian costs with |mean|² + σ² ≤ M²). No linear model is assumed for
replicability.

Given R the exploring steps and arms are fixed and shared, and the N exploration samples (z_j, c_j)
(z the played arm's features, or its block features e_a ⊗ x_a for the disjoint model: the same
norm) are independent. With A = λ₀N·I + Σ z zᵀ, θ̂ = A⁻¹ Σ c z, and sample j replaced by an
independent copy (z', c'), A'(θ̂' − θ̂) = z_j r_j − z' r' with residuals r = ⟨z, θ̂⟩ − c at the old
estimate, and A' ⪰ λ₀N·I, so ‖θ̂' − θ̂‖² ≤ (2L²/(λ₀N)²)(r_j² + r'²). The ridge objective at θ̂ is at
most its value at 0: Σ r_j² + λ₀N‖θ̂‖² ≤ Σ c_j², hence E Σ_j r_j² ≤ N M², E‖θ̂‖² ≤ M²/λ₀ and
E r'² ≤ 2L² E‖θ̂‖² + 2 E c'² ≤ 2M²(1 + L²/λ₀). Efron–Stein, coordinate by coordinate, summed:

    E‖θ̂ − Eθ̂‖² ≤ ½ Σ_j E‖θ̂ − θ̂^{(j)}‖² ≤ L²M²(3 + 2L²/λ₀) / (λ₀² N),

so two runs' estimates, independent given R, have E‖θ̂ − θ̂'‖₂ ≤ β/√N with
β = L·M·sqrt(2(3 + 2L²/λ₀))/λ₀. A coordinate's two roundings on one offset differ with probability
at most |θ̂_i − θ̂'_i|/w; over the p = d (shared) or n·d (disjoint) coordinates and by Cauchy–Schwarz
P(θ̃_k ≠ θ̃'_k) ≤ √p·β/(w_k·√N_k). With w_k = √p·β·D/(ρ·√N_k) each of the D decisions costs ρ/D:
**ρ ≤ Σ_k ρ/D = ρ** (``params.rho_bound``). The runs part only where some θ̃_k differ: the exploring
arms are shared, and equal rounded estimates give the same arm on the same context. On contexts
that change, the two runs' policies (θ̃) are what is compared; on fixed features, their arms.

What is ours and what is the literature's: rounding on a randomly shifted grid is the mechanism
of replicable learning (Impagliazzo, Lei, Pitassi & Sorrell, STOC 2022) and of the paper's §5
conversion; the Efron–Stein stability argument for ridge regression with a regulariser that grows
with the sample is in the manner of Bousquet & Elisseeff (JMLR 2002); the wrapper, the
second-moment form of the bound and every constant are ours. The engine voids the certificate
where (i) or (iii) is not known to hold on the adversary (``replify.evaluate``: "measured, not
certified", with the reason). Its attacks (ties, duplicated and collinear arms, noise at the
declared scale, the estimate's largest variance) and bound ÷ measured are in
``tests/algorithms/test_contextual_wrap.py`` and docs/contextual.md.

**Regret** (not certified): phase 0 (a quarter of T with the default K = 3) and a share f of every
later phase explore; the committed steps cost what the rounded ridge estimate's greedy policy
loses (its shrinkage towards 0 by λ₀ is part of the price).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from replify.base.checks import check_int
from replify.base.protocol import check_learner
from replify.base.randomness import Seed, Streams, seed_sequence
from replify.components.contextual import check_contexts, is_contextual
from replify.components.rounded_ridge import RidgeParams, RoundedRidgeLanes, RoundedRidgeLearner, ridge_parameters
from replify.errors import InvalidArgumentError, LearnerProtocolError

MODELS = ("shared", "disjoint")


def conversion_parameters(*, horizon: int, n: int, rho: float, cost_scale: float | None = None,
                          feature_bound: float | None = None, phases: int | None = None, explore: float | None = None,
                          lam: float | None = None, grid_scale: float | None = None) -> RidgeParams:
    """The conversion's schedule and certificate (module docstring): M = ``cost_scale`` (1 by
    default), L = ``feature_bound`` (1 by default); the other knobs as ``rep-ridge``'s."""
    return ridge_parameters(horizon=horizon, n=n, rho=rho, phases=phases, explore=explore, lam=lam,
                            feature_bound=feature_bound, grid_scale=grid_scale,
                            cost_scale=1.0 if cost_scale is None else cost_scale)


def model_of(learner: Any, model: str | None) -> str:
    """The linear model the conversion fits: ``model`` where given, else the learner's own
    ``model`` attribute where it names one of :data:`MODELS`, else ``"shared"``."""
    if model is not None:
        if model not in MODELS:
            raise InvalidArgumentError(f"model must be one of {MODELS} (one θ over the arms' features, or one per "
                                       f"arm); got {model!r}")
        return model
    own = getattr(learner, "model", None)
    return own if isinstance(own, str) and own in MODELS else "shared"


class ConversionLanes(RoundedRidgeLanes):
    """The conversion's lanes: the rounded-ridge mechanism, round-robin exploration."""

    label = "replify.wrap (contextual)"


class ReplicableContextual(RoundedRidgeLearner):
    """A contextual learner made iid ρ-replicable by the general contextual conversion (module
    docstring). Build it with :func:`replify.wrap`; ``internal`` is the user's learner, built once
    (with R's ``internal`` stream) for its model, ``params`` the schedule and the certificate."""

    def __init__(self, factory: Callable[..., Any], *, n: int, horizon: int, rho: float, seed: Seed,
                 model: str | None = None, cost_scale: float | None = None, feature_bound: float | None = None,
                 learner_params: Mapping[str, Any] | None = None, name: str | None = None) -> None:
        n, horizon = check_int("n", n, minimum=2), check_int("horizon", horizon, minimum=1)
        self.name = name or getattr(factory, "__qualname__", None) or type(factory).__name__
        self.seed = seed_sequence(seed)
        streams = Streams(self.seed)
        clash = sorted(set(learner_params or {}) & {"n", "horizon", "rng", "rho"})
        if clash:
            raise InvalidArgumentError(f"learner_params must not set {', '.join(clash)}: the wrapper derives them; got "
                                       f"{dict(learner_params or {})!r}")
        self.internal = check_learner(factory(n=n, horizon=horizon, rng=streams.internal, **dict(learner_params or {})),
                                      source=f"learner factory {self.name!r}")
        if not is_contextual(self.internal):
            raise LearnerProtocolError(f"{self.name!r} is not a contextual learner (it declares problem="
                                       f"{getattr(self.internal, 'problem', 'experts')!r}); the contextual conversion "
                                       "wraps learners that declare problem = 'contextual'")
        self.model = model_of(self.internal, model)
        self.params = conversion_parameters(horizon=horizon, n=n, rho=rho, cost_scale=cost_scale,
                                            feature_bound=feature_bound)
        self.rho = self.params.rho
        self._start(ConversionLanes(n=n, horizon=horizon, rngs=[streams.grid], params=self.params, model=self.model,
                                    exploration="round-robin"), n=n, horizon=horizon)
        self._cycle: tuple[np.ndarray, int] | None = None

    def __repr__(self) -> str:
        p = self.params
        return (f"ReplicableContextual({self.name!r}, n={self.n}, horizon={self.horizon}, rho={p.rho}, "
                f"model={self.model!r}, cost_scale={p.cost_scale:g}, phases={len(p.starts)})")

    # -- round robins on cost sums, on fixed features (the engine's block-sum path)
    def next_cycle(self, context: Any) -> tuple[np.ndarray, int]:
        """The rest of the current stretch as ``(arms, length)``: an exploring stretch is a round
        robin over every arm, a committed one the rounded estimate's arm on these (fixed) features."""
        lane = self._lane
        if lane.t >= self.horizon:
            raise LearnerProtocolError(f"{type(self).__name__}.next_cycle() after the horizon ({self.horizon} steps)")
        if lane.d is None:
            x = np.asarray(context)
            if x.ndim != 2 or x.shape[0] != self.n:
                raise InvalidArgumentError(f"{type(self).__name__}.next_cycle(context): context must have shape (n, d) = "
                                           f"({self.n}, d); got shape {x.shape}")
            lane.d = int(x.shape[1])
            lane._setup(lane.d)
        x = check_contexts(context, (self.n, lane.d), f"{type(self).__name__}.next_cycle()")
        lane.check_features(x, lane.t + 1)
        self._features = x
        boundary = int(lane._starts[lane._phase + 1])
        if lane._exploring():
            arms, length = np.roll(np.arange(self.n), -lane.explored_arm()), lane._explore_until - lane.t
        else:
            arms, length = np.argmin(lane.scores(x[None]), axis=1), boundary - lane.t
        self._cycle = (arms, int(length))
        return arms.copy(), int(length)

    def observe_sums(self, sums: Any, pulls: Any) -> None:
        """Each arm's cost sum and pull count over the last :meth:`next_cycle`."""
        if self._cycle is None:
            raise LearnerProtocolError(f"{type(self).__name__}.observe_sums() before next_cycle()")
        lane, (_, length) = self._lane, self._cycle
        c, m = np.asarray(sums, dtype=np.float64), np.asarray(pulls)
        if (c.shape != (self.n,) or m.shape != (self.n,) or m.dtype.kind not in "iu" or (m < 0).any()
                or int(m.sum()) != length or not np.isfinite(c).all()):
            raise InvalidArgumentError(f"observe_sums() needs {self.n} finite cost sums and non-negative integer pull "
                                       f"counts adding up to the {length} steps of the cycle; got shapes {c.shape} "
                                       f"and {m.shape}")
        if lane._exploring():
            arms = np.arange(self.n)[None]
            lane.add_samples(arms, self._features[None], m[None].astype(np.float64), c[None])
        lane.t += length
        self._cycle = None
        lane.advanced(lane.t)
