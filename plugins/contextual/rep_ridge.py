"""``rep-ridge``: a replicable contextual bandit learner — explore with arms drawn from R, and commit,
phase by phase, to the greedy policy of a ridge estimate rounded on a random grid drawn from R.

**What is theirs and what is ours.** Rounding an estimate on a randomly shifted grid to make it
replicable is the mechanism of replicable learning (Impagliazzo, Lei, Pitassi & Sorrell, STOC 2022);
Deb et al. (2026) round a ridge estimator (RepRidge) for linear contextual bandits, but only their
abstract is public. The learner below, its stability argument (Efron–Stein on a ridge estimator
whose regulariser grows with the sample, in the manner of Bousquet & Elisseeff's uniform stability,
JMLR 2002) and every constant are ours, derived here and attacked in ``tests/algorithms/test_contextual.py``.

**The setting.** Contexts iid over time (each step's n feature vectors drawn from one law), costs in
[0, 1] iid given the context, every feature vector of Euclidean norm at most L (``feature_bound``,
default 1; a context beyond it is refused). No linear model is assumed for replicability; the greedy
policy learns when the expected cost is close to linear in the features.

**The algorithm.** Phase boundaries s_k = ⌈T·2^{k−K}⌉ (k = 1..K, K = ``phases``; s_0 = 0; repeated
boundaries merged; K = 3 by default). Phase 0 explores: every step plays an arm drawn uniformly from R. At each s_k,
k < K, the learner fits ridge regression on the N_k exploration samples so far (the played arm's
features and cost),

    θ̂_k = (λ₀N_k·I + Σ x xᵀ)⁻¹ Σ c x,        λ₀ = ``lam`` (30 by default),

rounds each coordinate on a grid of width w_k shifted by a uniform offset drawn from R,
θ̃_k = w_k(⌊θ̂_k/w_k − u⌋ + u + 1/2), and plays phase k: its first ⌈f·|phase|⌉ steps (f = ``explore``)
explore as phase 0 did, the rest play argmin_a ⟨x_{t,a}, θ̃_k⟩ (ties to the lowest arm).
``policy()`` is θ̃ of the phase in force (0 in phase 0). Only exploration steps feed the estimate.

**Replicability (iid, certified: the two runs follow the same policy at every step).** The
exploration steps and arms are drawn from R, so they are the runs' own and shared; the runs part
only if some θ̃_k differ. Given R, the exploration samples (x_t, c_t) are independent across steps
(iid contexts and costs). Replace sample j by an independent copy (x', c'): with A = λ₀N·I + Σ xxᵀ
and A' its replacement, θ̂' − θ̂ = A'⁻¹(x_j r_j − x' r'), r the residuals ⟨x, θ̂⟩ − c, so
‖θ̂' − θ̂‖² ≤ (2L²/(λ₀N)²)(r_j² + r'²). The ridge objective at θ̂ is at most its value at 0:
Σ_j r_j² + λ₀N‖θ̂‖² ≤ Σ c_j² ≤ N, so Σ_j r_j² ≤ N and ‖θ̂‖ ≤ 1/sqrt(λ₀), |r'| ≤ 1 + L/sqrt(λ₀).
Efron–Stein (coordinate by coordinate, summed) then gives

    E‖θ̂ − Eθ̂‖² ≤ ½ Σ_j E‖θ̂ − θ̂^{(j)}‖² ≤ L²(1 + (1 + L/√λ₀)²) / (λ₀² N),

and for two runs' independent estimates E‖θ̂ − θ̂'‖₂ ≤ β/√N, β = L·sqrt(2(1 + (1 + L/√λ₀)²))/λ₀.
A coordinate's two roundings differ with probability min(1, |θ̂_i − θ̂'_i|/w) given the estimates
(the offset is uniform and independent of them), so by a union over coordinates and Cauchy–Schwarz

    P(θ̃_k ≠ θ̃'_k) ≤ E‖θ̂_k − θ̂'_k‖₁ / w_k ≤ √d·β / (w_k·√N_k) =: q_k,      ρ ≤ Σ_k q_k.

The learner takes w_k = √d·β·D/(ρ·√N_k), D the number of decisions, so that each q_k = ρ/D and the
bound is ρ (``params.certified``); ``grid_scale`` multiplies every w_k, the bound becoming
ρ/grid_scale (below 1: a finer grid, measured, not certified). The price is the grid: w_k shrinks
as sqrt(d/N_k)·β/ρ, the d/ρ² samples per unit of precision that replicable estimation costs.

**The measured variance** (``variance="measured"``). The costs in [0, 1] lie within M = ½ of b = ½,
so the second-moment form of the stability constant (the contextual conversion's, with E(c − ½)² ≤
¼) applies, and each decision's width is set by the explored costs' own second moment about ½,
measured and agreed on through R, its share of ρ charged (the derivation and its constants:
:mod:`replify.components.rounded_ridge`, "The measured variance"). Already the declared ¼ makes β
0.041 against 0.073 above (λ₀ = 30, L = 1); costs that stay near ½ narrow it further, up to 8×.

**Defaults.** A larger λ₀ shrinks θ̂ (as 1/λ₀ once λ₀ passes the features' second moments) but
shrinks β faster at first (β → 2L/λ₀): what the grid can resolve, |θ̂|/w, improves up to λ₀ ≈ 30 and
then stays. Measured on ``linear-bernoulli`` with contexts on the sphere (d = 5, n = 10, T = 10⁶, 20
pairs, ρ = 0.1): pseudo-regret 0.96, 0.88, 0.61 and 0.61 × uniform exploration's at λ₀ = 1 (8
phases), 10 (4), 30 (3) and 100 (3); so λ₀ = 30 and K = 3.

**Paths.** Stepped (or in lanes), and on contexts of finite support stretch by stretch
(:class:`~replify.components.rounded_ridge.RoundedRidgeLearner`: an exploring stretch's uniform arms
drawn from R as counts, piece by piece), which the engine plays without stepping.

**Regret** (not certified): the exploration share f·T costs at most f·T·(max cost gap); a greedy
phase costs what the rounded estimate's policy loses. Measured in docs/contextual.md.
"""

from __future__ import annotations

import numpy as np

import replify
from replify.base.checks import check_int
from replify.components.rounded_ridge import RidgeParams, RoundedRidgeLanes, RoundedRidgeLearner, check_widths, ridge_parameters

__all__ = ["RepRidge", "RidgeParams", "RidgeRoundLanes", "check_widths", "ridge_parameters"]

#: rep-ridge's lanes: the rounded-ridge mechanism with arms drawn uniformly from R
RidgeRoundLanes = RoundedRidgeLanes


class RepRidge(RoundedRidgeLearner):
    """Replicable contextual learner: rounded ridge, greedy per phase (module docstring)."""

    _params = ("rho", "phases", "explore", "lam", "feature_bound", "grid_scale", "variance")
    cost_range = (0.0, 1.0)

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, rho: float, phases: int | None = None,
                 explore: float | None = None, lam: float | None = None, feature_bound: float | None = None,
                 grid_scale: float | None = None, variance: str | None = None) -> None:
        n, horizon = check_int("n", n, minimum=2), check_int("horizon", horizon, minimum=1)
        self.params = ridge_parameters(horizon=horizon, n=n, rho=rho, phases=phases, explore=explore, lam=lam,
                                       feature_bound=feature_bound, grid_scale=grid_scale, variance=variance)
        p = self.params
        self.rho, self.phases, self.explore, self.lam, self.variance = p.rho, p.phases, p.explore, p.lam, p.variance
        self.feature_bound, self.grid_scale = p.feature_bound, p.grid_scale
        self._start(RoundedRidgeLanes(n=n, horizon=horizon, rngs=[rng], params=p), n=n, horizon=horizon)


@replify.hookimpl
def register_learners(register):
    register(replify.LearnerSpec(
        "rep-ridge", RepRidge, "contextual", parameters=ridge_parameters, guarantee="iid", feedback="bandit",
        enforces={"horizon", "domain"}, test_params={"rho": 0.2},
        description="explores with arms from R, commits per phase to the greedy policy of a ridge estimate rounded on a "
        "random grid (our stability bound); contexts in the unit ball, costs in [0, 1]; iid rho-replicable",
    ))
