"""A ridge estimate fitted on exploration that both runs schedule alike, rounded on a random grid,
and the greedy policy of the rounded estimate committed to, phase by phase: the mechanism of
``rep-ridge`` and of the general contextual conversion (``replify.wrap`` on a contextual learner).
Each derives its certificate in its own module docstring; this module holds what they share —
the phase schedule, the stability constant β of the ridge estimate, the grid widths and the lanes
that play it.

**Schedule.** Phase boundaries s_k = ⌈T·2^{k−K}⌉ (k = 1..K, K = ``phases``; s_0 = 0; repeated
boundaries merged). Phase 0 explores; phase k ≥ 1 explores its first ⌈f·|phase|⌉ steps (f =
``explore``) and plays the greedy policy of the rounded estimate θ̃_k on the rest. The estimate
decided at s_k reads the N_k exploration samples before it (``samples``).

**Exploration.** ``"uniform"``: each exploring step's arm drawn uniformly from R (``rep-ridge``);
``"round-robin"``: the arms in turn from the start of each exploring stretch, drawn from nothing
(the contextual conversion: on fixed features a stretch is one round robin, which the engine's
block-sum path plays without a per-step draw). Either way the arms are the same in both runs.

**Estimate.** θ̂_k = (λ₀N_k·I + Σ z zᵀ)⁻¹ Σ c z, z the played arm's features (``model="shared"``:
one θ over the arms' features) or its block features e_a ⊗ x_a (``"disjoint"``: one θ per arm,
dimension n·d; the system is block-diagonal, solved arm by arm). Its stability,
E‖θ̂ − θ̂'‖₂ ≤ β/√N for two runs' independent samples, is derived by each user's docstring:
:func:`stability_constant` gives β for costs in [0, 1] (``rep-ridge``) or for costs of second
moment at most M² (the conversion).

**Centre.** The ridge fits c − b, b = ``cost_center`` (0 by default), and predicts ⟨z, θ⟩ + b: the
greedy arm is the same for every b, but the stability below then pays the costs' second moment
about b, E(c − b)² ≤ M², which for costs in [lo, hi] is ((hi − lo)/2)² about the midpoint against
max(lo², hi²) about 0 (a quarter, for costs in [0, 1]).

**Rounding.** θ̃_k = w_k(⌊θ̂_k/w_k − u⌋ + u + 1/2) with an offset u uniform on [0, 1)^p from R, and
w_k = √p·β·/(ρ_k·√N_k) (p the estimate's dimension, D the number of decisions, ρ_k = ρ/D the
decision's share), so that each decision's two roundings differ with probability at most ρ_k.

**The measured variance** (``variance="measured"``; ours). The stability constant β is linear in
M, and M² enters the derivation only as a bound on μ_k = (1/N_k) Σ_j E(c_j − b)², the explored
costs' mean second moment about b (each user's docstring: E Σ r_j² ≤ N μ, E‖θ̂‖² ≤ μ/λ₀ and
E r′² ≤ 2μ(1 + L²/λ₀) hold with μ in place of M²). Where the costs are bounded, |c − b| ≤ M surely,
μ_k can be measured on the samples the estimate reads and agreed on through R, as the off-policy
overlap form agrees on its overlap (docs/offpolicy.md, "The overlap"):

1. *An upper bound.* Y_j = (c_j − b)² ∈ [0, B], B = M², are independent given R, so with the floor
   φ = B/q (q = ``MEASURED_FLOOR`` = 64: the width narrows at most 8×) Bernstein's inequality
   (:func:`~replify.components.grid.bernstein_lower`) gives P(Ȳ ≤ (1 − t_k)μ_k) ≤ δ where μ_k ≥ φ, t_k
   solving exp(−N_k t²/(2q(1 + t/3))) = δ, δ = ρ/(1000·D). So V_k⁺ = min(B, max(Ȳ/(1 − t_k), φ)) ≥ μ_k
   but with probability δ a run (μ_k ≤ B surely; where μ_k < φ the floor holds it).
2. *The width.* w₀ = √p·β(V_k⁺)/(ρ_k·√N_k), β(V) = β·(V/M²)^½, rounded up to the ladder
   2^{h(j + v)} (:func:`~replify.components.grid.ladder_point`, h = ½, v uniform from R, one per
   decision).
3. *The ladder's charge.* Two runs' indices differ with probability at most E min(1,
   |log₂(V⁺/V⁺′)|) over v. On the event both upper bounds hold, |ln V⁺ − ln V⁺′| ≤ |Ȳ − Ȳ′|/((1 −
   t)·max(μ, φ)) (the max with φ and the min with B are 1-Lipschitz in the logarithm), and
   E|Ȳ − Ȳ′| ≤ (2 Var Ȳ)^½ ≤ (2μ(B − μ)/N)^½ (Bhatia & Davis 2000, and the concavity of μ(B − μ) over
   the samples' own means), whose ratio to max(μ, φ) is largest at μ = φ: the charge is
   χ_k = 2δ + (2(q − 1)/N_k)^½ / ((1 − t_k) ln 2), 2δ for the events where a bound fails.

   On the event both bounds hold and the indices agree, both runs round on one width, at least the
   ladder point above √p·β(μ_k)/(ρ_k√N_k), a function of v alone; the offsets u are independent of
   it and of the samples, so the cells part with probability at most ρ_k as in the declared form.
   Decision k thus parts with probability at most ρ_k + χ_k, and the measured form gives it
   ρ_k = ρ/D − χ_k (``params.shares``, ``params.charges``): **ρ ≤ Σ_k (ρ_k + χ_k) = ρ**. A decision
   whose χ_k would take more than a quarter of ρ/D (few samples: χ_k ≈ 16/√N_k) keeps the declared
   width (``params.measured``), which both runs know from N_k alone. Where the engine gives the
   lanes cost sums without the squares (the block-sum path on fixed features), the declared width
   is used too, at the decision's share ρ_k: a finer certificate than the bound says, never a
   coarser one. What it buys: the ratio (μ_k/M²)^½, up to the ladder's step (a factor 1.19 on
   average, √2 at most); nothing where the costs fill their range (0/1 costs about their midpoint).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import attrs
import numpy as np

from replify.base.checks import byte_size, check_int, check_positive, check_rho
from replify.components.contextual import ContextLanes, ContextualLearner
from replify.components.grid import bernstein_lower, ladder_point
from replify.errors import InvalidArgumentError

#: The default regulariser λ₀ and number of phases K (rep-ridge's docstring measures the choice).
DEFAULT_LAM, DEFAULT_PHASES, DEFAULT_EXPLORE = 30.0, 3, 0.1

#: The most bytes one learner's ridge statistics may take (read when its features' d is known): the
#: lanes' d × d Gram blocks, and the two copies the solve makes at each decision. Raise it to fit a
#: larger d on purpose; beyond it the learner refuses, naming d, n and its estimate.
RIDGE_BYTES = 4 * 2**30

#: Explored steps one lane holds before folding them into its Gram: one matmul over a batch (BLAS at
#: full speed) instead of a d × d outer product per step (memory-bound: 40 s for 10⁴ steps at
#: d = 3 000). Fixed per lane, so that a lane played alone and in a stack adds its samples in the
#: same batches; below the Gram's own size wherever d ≥ 256.
PENDING_ROWS = 256

#: What bounds the costs' second moment in the stability constant: the declared M², or the explored
#: costs' own, measured at each decision and agreed on through R (module docstring).
VARIANCES = ("declared", "measured")

#: The measured form's floor ratio q: V⁺ ≥ M²/q, so the width narrows at most √q = 8× (module docstring).
MEASURED_FLOOR = 64.0


@attrs.frozen(kw_only=True)
class RidgeParams:
    """The schedule in force: phase starts ``starts`` (s_k), exploration steps per phase
    ``explores``, the samples N_k each decision reads, the constants β and λ₀, and the bound.
    ``cost_scale`` is M for a certificate on costs of second moment at most M² (None: costs in
    [0, 1])."""

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
    cost_scale: float | None = None
    guarantee: str = "iid"
    cost_center: float = 0.0
    variance: str = "declared"
    #: per decision: whether its width is measured, its share ρ_k of ρ, the charge χ_k for agreeing
    #: on the measured variance and Bernstein's t_k (module docstring, "The measured variance")
    measured: tuple[bool, ...] = ()
    shares: tuple[float, ...] = ()
    charges: tuple[float, ...] = ()
    tails: tuple[float, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    def widths(self, dim: int) -> np.ndarray:
        """w_k for an estimate of dimension ``dim`` in the declared form (module docstring); a
        measured decision's width is this times (V⁺/M²)^½, on the ladder."""
        shares = np.asarray(self.shares or (self.rho / max(len(self.samples), 1),) * len(self.samples), float)
        return self.grid_scale * math.sqrt(dim) * self.beta / (shares * np.sqrt(np.asarray(self.samples, float)))


def phase_schedule(horizon: int, phases: int, explore: float) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(starts, explores, samples) of the module docstring's schedule."""
    cuts = sorted({0, *(math.ceil(horizon * 2.0 ** (j - phases)) for j in range(1, phases))} - {horizon})
    starts = tuple(int(c) for c in cuts)
    ends = starts[1:] + (horizon,)
    explores = tuple([ends[0] - starts[0]] + [math.ceil(explore * (e - s)) for s, e in zip(starts[1:], ends[1:])])
    samples = tuple(int(v) for v in np.cumsum(explores)[:-1])  # what decisions 1..D read
    return starts, explores, samples


def stability_constant(lam: float, feature_bound: float, cost_scale: float | None) -> float:
    """β with E‖θ̂ − θ̂'‖₂ ≤ β/√N: L·sqrt(2(1 + (1 + L/√λ₀)²))/λ₀ for costs in [0, 1] (rep-ridge's
    derivation), L·M·sqrt(2(3 + 2L²/λ₀))/λ₀ for costs with E c² ≤ M² (the conversion's)."""
    big_l = feature_bound
    try:  # Python's float ** raises OverflowError where numpy would give inf
        if cost_scale is None:
            return big_l * math.sqrt(2.0 * (1.0 + (1.0 + big_l / math.sqrt(lam)) ** 2)) / lam
        return big_l * cost_scale * math.sqrt(2.0 * (3.0 + 2.0 * big_l**2 / lam)) / lam
    except OverflowError:
        return math.inf


def round_on_grid(theta: np.ndarray, width: Any, offset: np.ndarray) -> np.ndarray:
    """θ̃ = w(⌊θ/w − u⌋ + u + ½): ``theta`` rounded on the grid of width ``width`` (broadcast) and
    offset ``offset`` (uniform on [0, 1) from R, one per coordinate): the module docstring's rounding."""
    return width * (np.floor(theta / width - offset) + offset + 0.5)


def measured_charges(samples: Sequence[int], rho: float) -> tuple[tuple[bool, ...], tuple[float, ...],
                                                                    tuple[float, ...], tuple[float, ...]]:
    """Per decision reading N_k ``samples``: whether its width is measured, its share ρ_k, the
    charge χ_k and Bernstein's t_k (module docstring, "The measured variance")."""
    decisions = len(samples)
    if not decisions:
        return (), (), (), ()
    q, delta, each = MEASURED_FLOOR, rho / (1000.0 * decisions), rho / decisions
    tails = tuple(bernstein_lower(int(m), q, delta) for m in samples)
    charges = tuple(2.0 * delta + math.sqrt(2.0 * (q - 1.0) / m) / ((1.0 - t) * math.log(2.0)) if t < 1.0 else math.inf
                    for m, t in zip(samples, tails))
    measured = tuple(c <= each / 4.0 for c in charges)
    charges = tuple(c if on else 0.0 for c, on in zip(charges, measured))
    return measured, tuple(each - c for c in charges), charges, tails


def ridge_parameters(*, horizon: int, n: int, rho: float, phases: int | None = None, explore: float | None = None,
                     lam: float | None = None, feature_bound: float | None = None, grid_scale: float | None = None,
                     cost_scale: float | None = None, cost_center: float | None = None,
                     variance: str | None = None) -> RidgeParams:
    """The schedule and bound for (T, n, ρ); the defaults certify iid ρ-replicability. With
    ``cost_scale=M`` the stability constant is the one for costs whose second moment about
    ``cost_center`` b (0) is at most M²; with ``variance="measured"`` each decision's width is set by
    the explored costs' own second moment about b, for costs with |c − b| ≤ M (module docstring;
    without ``cost_scale``, costs in [0, 1]: b = M = ½)."""
    rho = check_rho(rho)
    horizon, n = check_int("horizon", horizon, minimum=1), check_int("n", n, minimum=2)
    given = {"phases": phases, "explore": explore, "lam": lam, "feature_bound": feature_bound, "grid_scale": grid_scale}
    overrides = tuple(k for k, v in given.items() if v is not None)
    k = DEFAULT_PHASES if phases is None else check_int("phases", phases, minimum=1)
    f = DEFAULT_EXPLORE if explore is None else check_positive("explore", explore)
    if not f <= 1.0:
        raise InvalidArgumentError(f"explore must be in (0, 1] (the share of each phase spent exploring); got {f}")
    lam0 = DEFAULT_LAM if lam is None else check_positive("lam", lam)
    bound_l = 1.0 if feature_bound is None else check_positive("feature_bound", feature_bound)
    scale = 1.0 if grid_scale is None else check_positive("grid_scale", grid_scale)
    m = None if cost_scale is None else check_positive("cost_scale", cost_scale)
    form = "declared" if variance is None else variance
    if form not in VARIANCES:
        raise InvalidArgumentError(f"variance must be one of {VARIANCES} (the declared bound on the costs' second moment, "
                                   f"or the explored costs' own, measured); got {variance!r}")
    center = 0.0 if cost_center is None else float(cost_center)
    if not math.isfinite(center):
        raise InvalidArgumentError(f"cost_center must be a finite number (the ridge fits the costs less it); got {cost_center!r}")
    if m is None and (form == "measured" or cost_center is not None):
        if cost_center is not None and center != 0.5:
            raise InvalidArgumentError(f"cost_center={center:g} needs cost_scale (the bound on the costs' distance from it); "
                                       "without it the costs lie in [0, 1], about their midpoint 0.5")
        m, center = 0.5, 0.5  # costs in [0, 1]: the second-moment form about their midpoint
    starts, explores, samples = phase_schedule(horizon, k, f)
    beta = stability_constant(lam0, bound_l, m)
    if not math.isfinite(horizon * lam0):
        why = "lam too large for this horizon"
    elif not math.isfinite(beta) or not math.isfinite(1.0 / beta if beta > 0.0 else math.inf):
        why = ("lam too small or feature_bound too large" if not math.isfinite(beta) or beta > 1.0
               else "feature_bound too small")
    else:
        why = None
    if why is not None:
        raise InvalidArgumentError(
            f"lam={lam0!r} and feature_bound={bound_l!r} make the stability constant beta={beta!r}; expected a finite "
            f"number > 0 whose inverse is finite too (the grid widths are proportional to it): {why} (float64 cannot "
            "hold them; the defaults are lam=30, feature_bound=1)"
        )
    if form == "measured":
        measured, shares, charges, tails = measured_charges(samples, rho)
    else:
        measured, shares, charges, tails = (False,) * len(samples), (rho / len(samples),) * len(samples) if samples else (), (0.0,) * len(samples), ()
    bound = (rho / scale if form == "declared" else sum(shares) / scale + sum(charges)) if samples else 0.0
    params = RidgeParams(horizon=horizon, n=n, rho=rho, phases=k, explore=f, lam=lam0, feature_bound=bound_l,
                         grid_scale=scale, starts=starts, explores=explores, samples=samples, beta=beta, rho_bound=bound,
                         certified=bound <= rho * (1 + 1e-12), overrides=overrides, cost_scale=m, cost_center=center,
                         variance=form, measured=measured, shares=shares, charges=charges, tails=tails)
    check_widths(params, 1)  # the features' d comes later; the widths grow with sqrt(d)
    return params


def check_widths(params: RidgeParams, dim: int, name: str = "rep-ridge", what: str | None = None) -> np.ndarray:
    """The grid widths w_k for an estimate of dimension ``dim``, refused unless they and their
    inverses are finite (θ̂/w would overflow, and the rounding give NaN)."""
    with np.errstate(all="ignore"):
        widths = params.widths(dim)
        usable = np.isfinite(widths).all() and np.isfinite(1.0 / widths).all()
    if not usable:
        raise InvalidArgumentError(
            f"{name}: the rounding grid's widths for {what or f'an estimate of dimension {dim}'} are {widths.tolist()}; expected "
            f"finite numbers > 0: lam={params.lam!r}, feature_bound={params.feature_bound!r} and "
            f"grid_scale={params.grid_scale!r} are too extreme for float64 (the defaults are lam=30, feature_bound=1, "
            "grid_scale=1)"
        )
    return widths


class RoundedRidgeLanes(ContextLanes):
    """The mechanism of the module docstring for every lane: ``model`` ``"shared"`` or
    ``"disjoint"``, ``exploration`` ``"uniform"`` or ``"round-robin"``."""

    shared = ("params", "model", "exploration")
    #: what errors call the learner
    label = "rep-ridge"

    def __init__(self, *, n: int, horizon: int, rngs: Sequence[Any], params: RidgeParams, model: str = "shared",
                 exploration: str = "uniform") -> None:
        super().__init__(n=n, horizon=horizon, rngs=rngs)
        self.params, self.model, self.exploration = params, model, exploration

    def _setup(self, d: int) -> None:
        k = self.n if self.model == "disjoint" else 1  # one block of the estimate per arm, or one
        # the Gram blocks, the regularised copy and the solve's own copy at a decision, the identity, and
        # the held steps
        need = 8 * (d * d * (3 * self.lanes * k + 1) + self.lanes * PENDING_ROWS * (d + 2))
        if need > RIDGE_BYTES:
            raise InvalidArgumentError(
                f"{self.label}: d={d} features with n={self.n} arms ({self.model} model: {k} block(s) of d x d per lane, "
                f"{self.lanes} lane(s)) need about {byte_size(need)} for the ridge statistics, more than "
                f"replify.components.rounded_ridge.RIDGE_BYTES = {byte_size(RIDGE_BYTES)}; give fewer features (a "
                "projection; for classification-bandit, features_as='same' with model='disjoint' has d = features + 1 "
                "instead of n(features + 1)), run fewer pairs together, or raise RIDGE_BYTES if the memory is there")
        self.gram = np.zeros((self.lanes, k, d, d))
        held = PENDING_ROWS
        self._pending = (np.zeros((self.lanes, held), np.int64), np.zeros((self.lanes, held, d)), np.zeros((self.lanes, held)))
        self._held = 0
        self.b = np.zeros((self.lanes, k, d))
        # Σ (c − b)² over the explored samples, for the measured variance; unknown (NaN) once a sum of
        # costs came without its squares (the block-sum path)
        self.squares = np.zeros(self.lanes)
        #: per decision, each lane's width and whether it was measured (module docstring)
        self.decided_widths: list[tuple[np.ndarray, bool]] = []
        self.rounded = np.zeros((self.lanes, k, d))
        self.widths = check_widths(self.params, k * d, self.label,
                                   f"d={d} features" + (f" (one estimate per arm: dimension {k * d})" if k > 1 else ""))
        self._starts = np.asarray(self.params.starts + (self.horizon,))
        self._phase = 0
        self._explore_until = int(self._starts[1])

    def _exploring(self) -> bool:
        return bool(self.t < self._explore_until)

    def check_features(self, x: np.ndarray, step: int) -> None:
        """Refuse a feature vector beyond ``feature_bound`` (the certificate assumes the bound)."""
        norms = np.einsum("...d,...d->...", x, x)
        if norms.max() > self.params.feature_bound**2 * (1.0 + 1e-12):
            raise InvalidArgumentError(f"{self.label}: a feature vector of norm {math.sqrt(norms.max()):.6g} at step "
                                       f"{step}, above feature_bound={self.params.feature_bound:g} (its "
                                       "certificate assumes the bound)")

    def explored_arm(self) -> int:
        """The round robin's arm at the current (exploring) step."""
        return int((self.t - self._starts[self._phase]) % self.n)

    def scores(self, x: np.ndarray) -> np.ndarray:
        """⟨x_a, θ̃⟩ for every lane and arm of contexts ``x`` (lanes, n, d)."""
        if self.model == "shared":
            return np.einsum("lnd,ld->ln", x, self.rounded[:, 0])
        return np.einsum("lnd,lnd->ln", x, self.rounded)

    def _choose(self) -> np.ndarray:
        self.check_features(self._x, self.t + 1)
        if self.exploration == "uniform":
            u = self._uniforms(1)[:, 0]  # drawn at every step: the stream does not depend on the phase
            if self._exploring():
                return np.minimum((u * self.n).astype(np.int64), self.n - 1)
        elif self._exploring():
            return np.full(self.lanes, self.explored_arm(), dtype=np.int64)
        return np.argmin(self.scores(self._x), axis=1)

    def check_costs(self, costs: np.ndarray, step: int) -> None:
        """In the measured form, refuse a cost farther than M from the centre b (its certificate
        assumes |c − b| ≤ M surely, module docstring)."""
        p = self.params
        if p.variance != "measured":
            return
        far = np.abs(np.asarray(costs, dtype=np.float64) - p.cost_center)
        if np.nanmax(far, initial=0.0) > p.cost_scale * (1.0 + 1e-12):
            raise InvalidArgumentError(
                f"{self.label}: a cost of {float(np.asarray(costs, dtype=np.float64).ravel()[np.nanargmax(far.ravel())]):.6g} "
                f"at step {step}, {np.nanmax(far):.6g} from cost_center={p.cost_center:g}, beyond "
                f"cost_scale={p.cost_scale:g}: variance='measured' assumes costs within [{p.cost_center - p.cost_scale:g}, "
                f"{p.cost_center + p.cost_scale:g}] (declare a wider cost_scale, or use variance='declared')")

    def add_samples(self, arms: np.ndarray, x: np.ndarray, weights: np.ndarray, sums: np.ndarray,
                    squares: np.ndarray | None = None) -> None:
        """Add exploration statistics: for each lane i and entry j, ``weights[i, j]`` samples of
        arm ``arms[i, j]`` with features ``x[i, j]`` (d,) whose costs sum to ``sums[i, j]`` and
        whose squared distances from the centre b sum to ``squares[i, j]`` (None where the engine
        gives sums alone: the measured variance is then unknown)."""
        center = self.params.cost_center
        if center:
            sums = sums - center * weights  # the ridge fits c − b (module docstring, "Centre")
        self.squares = self.squares + (np.nan if squares is None else np.sum(squares, axis=1))
        block = arms if self.model == "disjoint" else np.zeros_like(arms)
        # each block's statistics as Xᵀ W X and Xᵀ s, batched matmuls over the entries: never one d × d
        # outer product per entry (a bootstrapped data set's support has R·n entries: digits' 17 970 at
        # d = 650 would be 57 GiB)
        for k in range(self.gram.shape[1]):  # a loop over the few blocks (one, or one per arm)
            mine = block == k
            self.gram[:, k] += np.matmul(np.swapaxes(x * np.where(mine, weights, 0.0)[..., None], 1, 2), x)
            self.b[:, k] += np.matmul(np.where(mine, sums, 0.0)[:, None, :], x)[:, 0]

    def _learn(self, arms: np.ndarray, x: np.ndarray, costs: np.ndarray) -> None:
        if self._exploring():  # held, then folded in by batches (PENDING_ROWS)
            self.check_costs(costs, self.t + 1)
            held_arms, held_x, held_costs = self._pending
            j = self._held
            held_arms[:, j], held_x[:, j], held_costs[:, j] = arms, x, costs
            self._held = j + 1
            if self._held == held_arms.shape[1]:
                self._fold()
        self.advanced(self.t + 1)

    def _fold(self) -> None:
        """Add the held exploration samples to the statistics."""
        j, (held_arms, held_x, held_costs) = self._held, self._pending
        if j:
            costs = held_costs[:, :j]
            self.add_samples(held_arms[:, :j], held_x[:, :j], np.ones((self.lanes, j)), costs,
                             (costs - self.params.cost_center) ** 2)
            self._held = 0

    def advanced(self, t: int) -> None:
        """Decide at the phase boundary, once ``t`` steps are played."""
        if t == self._starts[self._phase + 1] and self._phase + 1 < len(self.params.starts):
            self._decide()

    def _decide(self) -> None:
        """θ̃ for the next phase: ridge on the exploration samples so far, rounded on a grid from R."""
        self._fold()
        k = self._phase
        samples = self.params.samples[k]
        d = self.d
        theta = np.linalg.solve(self.gram + self.params.lam * samples * np.eye(d), self.b[..., None])[..., 0]
        w, measured = np.full(self.lanes, self.widths[k]), bool(self.params.measured[k]) if self.params.measured else False
        if measured:
            w = self._measured_width(k, w)
            measured = bool(np.isfinite(self.squares).all())
        blocks = self.gram.shape[1]
        offset = np.stack([r.random(blocks * d) for r in self.rngs]).reshape(theta.shape)  # from R: shared by a pair
        self.rounded = round_on_grid(theta, w[:, None, None], offset)
        self.decided_widths.append((w, measured))
        self._phase = k + 1
        self._explore_until = int(self._starts[k + 1] + self.params.explores[k + 1])

    def _measured_width(self, k: int, declared: np.ndarray) -> np.ndarray:
        """Decision k's widths in the measured form (module docstring, "The measured variance"): the
        declared width times (V⁺/M²)^½, rounded up on the ladder of an offset v from R; the declared
        width where the squares are unknown."""
        p = self.params
        v = np.array([r.random() for r in self.rngs])  # the ladder's offset, from R (drawn in either case)
        bound = p.cost_scale**2
        upper = np.minimum(bound, np.maximum(self.squares / p.samples[k] / (1.0 - p.tails[k]), bound / MEASURED_FLOOR))
        return np.array([ladder_point(w0 * math.sqrt(u / bound), vi)[0] if math.isfinite(u) else w0
                         for w0, u, vi in zip(declared, upper, v)])  # a loop over the lanes

    def policy(self) -> np.ndarray:
        if self.d is None:
            return np.zeros((self.lanes, 1))
        return self.rounded.reshape(self.lanes, -1)


class RoundedRidgeLearner(ContextualLearner):
    """A contextual learner stepped through :class:`RoundedRidgeLanes` of one lane, which also plays
    stretch by stretch on contexts of finite support (the engine's finite-support path,
    :mod:`replify.engine.support`): an exploring stretch is a round robin (``"cycle"``) or, for arms
    drawn uniformly from R, each arm's pulls drawn from R piece by piece (``"pulls"``: Multinomial(ℓ,
    1/n) over a piece of ℓ steps, the counts of ℓ uniform arms); a committed one plays the rounded
    estimate's arm on each row (``"policy"``)."""

    _lane: RoundedRidgeLanes

    def next_stretch(self, contexts: Any) -> tuple[str, Any, int]:
        """The rest of the current stretch on the support's rows ``contexts`` (R, n, d)."""
        lane = self._lane
        x = np.asarray(contexts, dtype=np.float64)
        if x.ndim != 3 or x.shape[1] != self.n:
            raise InvalidArgumentError(f"{type(self).__name__}.next_stretch(contexts): contexts must have shape "
                                       f"(R, n, d) with n={self.n}; got shape {x.shape}")
        if lane.d is None:
            lane.d = int(x.shape[2])
            lane._setup(lane.d)
            lane.check_features(x, 1)
        self._support = x
        if lane._exploring():
            self._stretch = lane._explore_until - lane.t
            if lane.exploration == "uniform":  # the counts of uniform arms from R, piece by piece
                rng, p = lane.rngs[0], np.full(self.n, 1.0 / self.n)
                return "pulls", lambda size: rng.multinomial(size, p), self._stretch
            return "cycle", np.roll(np.arange(self.n), -lane.explored_arm()), self._stretch
        self._stretch = int(lane._starts[lane._phase + 1]) - lane.t
        # every row scored as the lanes score a step (one einsum, the same order of sums: arms whose
        # features are equal tie exactly, and the lowest index plays, as when stepping)
        rows = x.shape[0]
        theta = lane.rounded[0]  # (blocks, d): this one lane's rounded estimate
        scores = (np.einsum("lnd,ld->ln", x, np.broadcast_to(theta[0], (rows, theta.shape[1]))) if lane.model == "shared"
                  else np.einsum("lnd,lnd->ln", x, np.broadcast_to(theta, (rows,) + theta.shape)))
        return "policy", np.argmin(scores, axis=1), self._stretch

    def observe_stretch(self, counts: Any, costs: Any) -> None:
        """How often each arm was played on each row over the last :meth:`next_stretch` (n, R), and
        the costs it paid there (NaN where it never played)."""
        lane, x = self._lane, self._support
        k = np.asarray(counts)
        if k.shape != (self.n, x.shape[0]) or k.dtype.kind not in "iu" or int(k.sum()) != self._stretch:
            raise InvalidArgumentError(f"observe_stretch() needs counts of shape ({self.n}, {x.shape[0]}) adding up to "
                                       f"the {self._stretch} steps of the stretch; got {k.shape}")
        if lane._exploring():
            arm, row = np.nonzero(k)
            c = np.asarray(costs, dtype=np.float64)[arm, row]  # a row's cost is fixed by the row: its square too
            lane.check_costs(c, lane.t + 1)
            lane.add_samples(arm[None], x[row, arm][None], k[arm, row][None].astype(np.float64), (k[arm, row] * c)[None],
                             (k[arm, row] * (c - lane.params.cost_center) ** 2)[None])
        lane.t += self._stretch
        lane.advanced(lane.t)


#: E over v of the ladder point above a raw width, over the raw width: (2^h − 1)/(h ln 2) for h = ½.
LADDER_MEAN = (2.0**0.5 - 1.0) / (0.5 * math.log(2.0))


def support_of(adversary: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An adversary's finite support as (contexts (R, n, d), costs (R, n), weights (R,)): its
    ``context_support()`` and ``support_weights`` (uniform where it declares none), or the three
    arrays themselves."""
    if isinstance(adversary, tuple) and len(adversary) == 3:
        x, c, w = (np.asarray(a, dtype=np.float64) for a in adversary)
    else:
        support = getattr(adversary, "context_support", None)
        if not callable(support):
            raise InvalidArgumentError(f"expected an adversary of finite support (one with context_support(), as "
                                       f"classification-bandit) or (contexts, costs, weights); got {type(adversary).__name__}")
        x, c = (np.asarray(a, dtype=np.float64) for a in support()[:2])
        given = getattr(adversary, "support_weights", None)
        w = np.full(x.shape[0], 1.0 / x.shape[0]) if given is None else np.asarray(given, dtype=np.float64)
    if x.ndim != 3 or c.shape != x.shape[:2] or w.shape != x.shape[:1]:
        raise InvalidArgumentError(f"a finite support is contexts (R, n, d), costs (R, n) and weights (R,); got shapes "
                                   f"{x.shape}, {c.shape} and {w.shape}")
    return x, c, w


def population_estimate(adversary: Any, *, lam: float = DEFAULT_LAM, center: float = 0.0,
                        model: str = "shared") -> np.ndarray:
    """The limit of the ridge estimate on many explored samples of an adversary of finite support:
    θ* = (λ₀I + E zzᵀ)⁻¹ E[z(c − b)], z the explored arm's features (every arm alike, as round-robin
    and uniform exploration play them), shape (blocks, d) as the lanes hold θ̃."""
    x, c, w = support_of(adversary)
    n = x.shape[1]
    if model == "shared":
        gram = np.einsum("r,rnd,rne->de", w, x, x) / n
        cz = np.einsum("r,rnd,rn->d", w, x, c - center) / n
        return np.linalg.solve(lam * np.eye(x.shape[2]) + gram, cz)[None]
    gram = np.einsum("r,rnd,rne->nde", w, x, x) / n  # one block per arm, each seen a 1/n share of the time
    cz = np.einsum("r,rnd,rn->nd", w, x, c - center) / n
    return np.linalg.solve(lam * np.eye(x.shape[2])[None] + gram, cz[..., None])[..., 0]


def planned_cost(adversary: Any, params: RidgeParams, *, model: str = "shared", draws: int = 64,
                 seed: int = 0) -> float:
    """The mean cost per step the schedule ``params`` is expected to pay on an adversary of finite
    support (measured against runs in docs/contextual.md, "How long a horizon"; not certified): the
    exploring steps pay the arms' mean cost; phase k's committed steps the cost of the greedy policy
    of θ* rounded on decision k's grid, averaged over ``draws`` offsets. It neglects the estimate's
    own noise (at most ρ/(D√p) of a cell, by the stability bound) and prices the measured form's
    width at its expected ladder point, the declared width times (max(μ, M²/q)/M²)^½·1.195."""
    x, c, w = support_of(adversary)
    theta = population_estimate((x, c, w), lam=params.lam, center=params.cost_center, model=model)
    widths = params.widths(theta.size)
    if params.variance == "measured":
        mu = float(np.einsum("r,rn->", w, (c - params.cost_center) ** 2) / x.shape[1])
        bound = params.cost_scale**2
        widths = np.where(params.measured, widths * math.sqrt(min(1.0, max(mu, bound / MEASURED_FLOOR) / bound)) * LADDER_MEAN,
                          widths)
    rng = np.random.default_rng(seed)
    ends = params.starts[1:] + (params.horizon,)
    total = float(np.sum(params.explores)) * float(w @ c.mean(axis=1))
    for k, (start, end) in enumerate(zip(params.starts[1:], ends[1:])):  # a loop over the decisions
        committed = end - start - params.explores[k + 1]
        cost = 0.0
        for _ in range(draws):  # a loop over the offsets drawn
            u = rng.random(theta.shape)
            rounded = round_on_grid(theta, widths[k], u)
            scores = np.einsum("rnd,d->rn", x, rounded[0]) if model == "shared" else np.einsum("rnd,nd->rn", x, rounded)
            cost += float(w @ c[np.arange(x.shape[0]), np.argmin(scores, axis=1)])
        total += committed * cost / draws
    return total / params.horizon


@attrs.frozen(kw_only=True)
class HorizonPlan:
    """The least horizon on a quarter-decade grid whose schedule :func:`planned_cost` expects to pay at
    most ``target`` per step (``horizon``; None where none up to ``largest`` does), the cost planned
    there (``cost``), and what every horizon tried was planned to cost (``tried``: (T, cost) pairs)."""

    horizon: int | None
    cost: float | None
    target: float
    tried: tuple[tuple[int, float], ...]


def horizon_for(adversary: Any, *, target: float, rho: float | None = None,
                parameters: Callable[[int], RidgeParams] | None = None, model: str = "shared", largest: float = 1e16,
                draws: int = 16, **schedule: Any) -> HorizonPlan:
    """The horizon a rounded-ridge schedule needs to pay at most ``target`` per step on an adversary of
    finite support, by :func:`planned_cost` (not certified: a plan, checked against runs in
    docs/contextual.md, "How long a horizon"): a bisection over T = 10^(j/4) up to ``largest``.
    ``parameters(T)`` is the schedule at T — by default rep-ridge's, :func:`ridge_parameters` with
    ``rho`` and ``schedule`` (``phases``, ``explore``, ``variance``, ...); the contextual conversion's
    is ``replify.conversions.contextual.conversion_parameters``. The planned cost falls with T (a finer
    grid at every decision) to the exploration's floor; a target below the floor has no horizon."""
    target = float(target)
    if parameters is None:
        if rho is None:
            raise InvalidArgumentError("horizon_for() needs rho (for rep-ridge's schedule) or parameters= (a function "
                                       "of the horizon returning the schedule); got neither")
        arms = support_of(adversary)[0].shape[1]
        parameters = lambda horizon: ridge_parameters(horizon=horizon, n=arms, rho=rho, **schedule)  # noqa: E731
    grid = [int(round(10 ** (j / 4))) for j in range(8, int(4 * math.log10(largest)) + 1)]
    memo: dict[int, float] = {}

    def cost(j: int) -> float:
        if j not in memo:
            memo[j] = planned_cost(adversary, parameters(grid[j]), model=model, draws=draws)
        return memo[j]

    lo, hi = 0, len(grid) - 1
    if cost(hi) > target:
        return HorizonPlan(horizon=None, cost=None, target=target, tried=tuple((grid[j], memo[j]) for j in sorted(memo)))
    while lo < hi:  # the least j whose plan meets the target
        mid = (lo + hi) // 2
        if cost(mid) <= target:
            hi = mid
        else:
            lo = mid + 1
    return HorizonPlan(horizon=grid[lo], cost=cost(lo), target=target, tried=tuple((grid[j], memo[j]) for j in sorted(memo)))
