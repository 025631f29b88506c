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

**Defaults.** A larger λ₀ shrinks θ̂ (as 1/λ₀ once λ₀ passes the features' second moments) but
shrinks β faster at first (β → 2L/λ₀): what the grid can resolve, |θ̂|/w, improves up to λ₀ ≈ 30 and
then stays. Measured on ``linear-bernoulli`` with contexts on the sphere (d = 5, n = 10, T = 10⁶, 20
pairs, ρ = 0.1): pseudo-regret 0.96, 0.88, 0.61 and 0.61 × uniform exploration's at λ₀ = 1 (8
phases), 10 (4), 30 (3) and 100 (3); so λ₀ = 30 and K = 3.

**Regret** (not certified): the exploration share f·T costs at most f·T·(max cost gap); a greedy
phase costs what the rounded estimate's policy loses. Measured in docs/contextual.md.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import attrs
import numpy as np

import replify
from replify.base.checks import check_int, check_positive, check_rho
from replify.components.contextual import ContextLanes, ContextualLearner
from replify.errors import InvalidArgumentError


@attrs.frozen(kw_only=True)
class RidgeParams:
    """The schedule in force: phase starts ``starts`` (s_k), exploration steps per phase
    ``explores``, the samples N_k each decision reads, the constants β and λ₀, and the bound."""

    horizon: int
    n: int
    rho: float
    phases: int
    explore: float
    lam: float
    feature_bound: float
    grid_scale: float
    starts: tuple[int, ...]
    explores: tuple[int, ...]
    samples: tuple[int, ...]
    beta: float
    rho_bound: float
    certified: bool
    overrides: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    def widths(self, d: int) -> np.ndarray:
        """w_k for features of dimension d (module docstring)."""
        decisions = len(self.samples)
        return self.grid_scale * math.sqrt(d) * self.beta * decisions / (self.rho * np.sqrt(np.asarray(self.samples, float)))


def ridge_parameters(*, horizon: int, n: int, rho: float, phases: int | None = None, explore: float | None = None,
                     lam: float | None = None, feature_bound: float | None = None,
                     grid_scale: float | None = None) -> RidgeParams:
    """The schedule and bound for (T, n, ρ); the defaults certify iid ρ-replicability."""
    rho = check_rho(rho)
    horizon, n = check_int("horizon", horizon, minimum=1), check_int("n", n, minimum=2)
    given = {"phases": phases, "explore": explore, "lam": lam, "feature_bound": feature_bound, "grid_scale": grid_scale}
    overrides = tuple(k for k, v in given.items() if v is not None)
    k = 3 if phases is None else check_int("phases", phases, minimum=1)
    f = 0.1 if explore is None else check_positive("explore", explore)
    if not f <= 1.0:
        raise InvalidArgumentError(f"explore must be in (0, 1] (the share of each phase spent exploring); got {f}")
    lam0 = 30.0 if lam is None else check_positive("lam", lam)
    bound_l = 1.0 if feature_bound is None else check_positive("feature_bound", feature_bound)
    scale = 1.0 if grid_scale is None else check_positive("grid_scale", grid_scale)
    cuts = sorted({0, *(math.ceil(horizon * 2.0 ** (j - k)) for j in range(1, k))} - {horizon})
    starts = tuple(int(c) for c in cuts)
    ends = starts[1:] + (horizon,)
    explores = tuple([ends[0] - starts[0]] + [math.ceil(f * (e - s)) for s, e in zip(starts[1:], ends[1:])])
    samples = tuple(int(v) for v in np.cumsum(explores)[:-1])  # what decisions 1..D read
    try:  # Python's float ** raises OverflowError where numpy would give inf
        beta = bound_l * math.sqrt(2.0 * (1.0 + (1.0 + bound_l / math.sqrt(lam0)) ** 2)) / lam0
    except OverflowError:
        beta = math.inf
    if not math.isfinite(horizon * lam0):
        why = "lam too large for this horizon"
    elif not math.isfinite(beta) or not math.isfinite(1.0 / beta if beta > 0.0 else math.inf):
        why = "lam too small or feature_bound too large" if not math.isfinite(beta) or beta > 1.0 else "feature_bound too small"
    else:
        why = None
    if why is not None:
        raise InvalidArgumentError(
            f"lam={lam0!r} and feature_bound={bound_l!r} make the stability constant beta={beta!r}; expected a finite "
            f"number > 0 whose inverse is finite too (the grid widths are proportional to it): {why} (float64 cannot "
            "hold them; the defaults are lam=30, feature_bound=1)"
        )
    bound = rho / scale if samples else 0.0
    params = RidgeParams(horizon=horizon, n=n, rho=rho, phases=k, explore=f, lam=lam0, feature_bound=bound_l,
                       grid_scale=scale, starts=starts, explores=explores, samples=samples, beta=beta, rho_bound=bound,
                       certified=bound <= rho * (1 + 1e-12), overrides=overrides)
    check_widths(params, 1)  # the features' d comes later; the widths grow with sqrt(d)
    return params


def check_widths(params: RidgeParams, d: int) -> np.ndarray:
    """The grid widths w_k for ``d`` features, refused unless they and their inverses are finite
    (θ̂/w would overflow, and the rounding give NaN)."""
    with np.errstate(all="ignore"):
        widths = params.widths(d)
        usable = np.isfinite(widths).all() and np.isfinite(1.0 / widths).all()
    if not usable:
        raise InvalidArgumentError(
            f"rep-ridge: the rounding grid's widths for d={d} features are {widths.tolist()}; expected finite numbers "
            f"> 0: lam={params.lam!r}, feature_bound={params.feature_bound!r} and grid_scale={params.grid_scale!r} are "
            "too extreme for float64 (the defaults are lam=30, feature_bound=1, grid_scale=1)"
        )
    return widths


class RidgeRoundLanes(ContextLanes):
    """rep-ridge for every lane (module docstring)."""

    shared = ("params",)

    def __init__(self, *, n: int, horizon: int, rngs: Sequence[Any], params: RidgeParams) -> None:
        super().__init__(n=n, horizon=horizon, rngs=rngs)
        self.params = params

    def _setup(self, d: int) -> None:
        self.gram = np.zeros((self.lanes, d, d))
        self.b = np.zeros((self.lanes, d))
        self.rounded = np.zeros((self.lanes, d))
        self.widths = check_widths(self.params, d)
        self._starts = np.asarray(self.params.starts + (self.horizon,))
        self._phase = 0
        self._explore_until = self._starts[1]

    def _exploring(self) -> bool:
        return bool(self.t < self._explore_until)

    def _choose(self) -> np.ndarray:
        norms = np.einsum("lnd,lnd->ln", self._x, self._x)
        if norms.max() > self.params.feature_bound**2 * (1.0 + 1e-12):
            raise InvalidArgumentError(f"rep-ridge: a feature vector of norm {math.sqrt(norms.max()):.6g} at step "
                                       f"{self.t + 1}, above feature_bound={self.params.feature_bound:g} (its "
                                       "certificate assumes the bound)")
        u = self._uniforms(1)[:, 0]  # drawn at every step: the stream does not depend on the phase
        if self._exploring():
            return np.minimum((u * self.n).astype(np.int64), self.n - 1)
        return np.argmin(np.einsum("lnd,ld->ln", self._x, self.rounded), axis=1)

    def _learn(self, arms: np.ndarray, x: np.ndarray, costs: np.ndarray) -> None:
        if self._exploring():
            self.gram += x[:, :, None] * x[:, None, :]
            self.b += costs[:, None] * x
        if self.t + 1 == self._starts[self._phase + 1] and self._phase + 1 < len(self.params.starts):
            self._decide()

    def _decide(self) -> None:
        """θ̃ for the next phase: ridge on the exploration samples so far, rounded on a grid from R."""
        k = self._phase
        samples = self.params.samples[k]
        d = self.d
        theta = np.linalg.solve(self.gram + self.params.lam * samples * np.eye(d), self.b[..., None])[..., 0]
        w = self.widths[k]
        offset = np.stack([r.random(d) for r in self.rngs])  # from R: the two runs of a pair share it
        self.rounded = w * (np.floor(theta / w - offset) + offset + 0.5)
        self._phase = k + 1
        self._explore_until = self._starts[k + 1] + self.params.explores[k + 1]

    def policy(self) -> np.ndarray:
        if self.d is None:
            return np.zeros((self.lanes, 1))
        return self.rounded


class RepRidge(ContextualLearner):
    """Replicable contextual learner: rounded ridge, greedy per phase (module docstring)."""

    _params = ("rho", "phases", "explore", "lam", "feature_bound", "grid_scale")
    cost_range = (0.0, 1.0)

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, rho: float, phases: int | None = None,
                 explore: float | None = None, lam: float | None = None, feature_bound: float | None = None,
                 grid_scale: float | None = None) -> None:
        n, horizon = check_int("n", n, minimum=2), check_int("horizon", horizon, minimum=1)
        self.params = ridge_parameters(horizon=horizon, n=n, rho=rho, phases=phases, explore=explore, lam=lam,
                                       feature_bound=feature_bound, grid_scale=grid_scale)
        p = self.params
        self.rho, self.phases, self.explore, self.lam = p.rho, p.phases, p.explore, p.lam
        self.feature_bound, self.grid_scale = p.feature_bound, p.grid_scale
        self._start(RidgeRoundLanes(n=n, horizon=horizon, rngs=[rng], params=p), n=n, horizon=horizon)


@replify.hookimpl
def register_learners(register):
    register(replify.LearnerSpec(
        "rep-ridge", RepRidge, "contextual", parameters=ridge_parameters, guarantee="iid", feedback="bandit",
        enforces={"horizon", "domain"}, test_params={"rho": 0.2},
        description="explores with arms from R, commits per phase to the greedy policy of a ridge estimate rounded on a "
        "random grid (our stability bound); contexts in the unit ball, costs in [0, 1]; iid rho-replicable",
    ))
