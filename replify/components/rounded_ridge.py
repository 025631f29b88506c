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

**Rounding.** θ̃_k = w_k(⌊θ̂_k/w_k − u⌋ + u + 1/2) with an offset u uniform on [0, 1)^p from R, and
w_k = √p·β·D/(ρ·√N_k) (p the estimate's dimension, D the number of decisions), so that each
decision's two roundings differ with probability at most ρ/D.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import attrs
import numpy as np

from replify.base.checks import byte_size, check_int, check_positive, check_rho
from replify.components.contextual import ContextLanes, ContextualLearner
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

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    def widths(self, dim: int) -> np.ndarray:
        """w_k for an estimate of dimension ``dim`` (module docstring)."""
        decisions = len(self.samples)
        return self.grid_scale * math.sqrt(dim) * self.beta * decisions / (self.rho * np.sqrt(np.asarray(self.samples, float)))


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


def ridge_parameters(*, horizon: int, n: int, rho: float, phases: int | None = None, explore: float | None = None,
                     lam: float | None = None, feature_bound: float | None = None, grid_scale: float | None = None,
                     cost_scale: float | None = None) -> RidgeParams:
    """The schedule and bound for (T, n, ρ); the defaults certify iid ρ-replicability. With
    ``cost_scale=M`` the stability constant is the one for costs of second moment at most M²."""
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
    bound = rho / scale if samples else 0.0
    params = RidgeParams(horizon=horizon, n=n, rho=rho, phases=k, explore=f, lam=lam0, feature_bound=bound_l,
                         grid_scale=scale, starts=starts, explores=explores, samples=samples, beta=beta, rho_bound=bound,
                         certified=bound <= rho * (1 + 1e-12), overrides=overrides, cost_scale=m)
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

    def add_samples(self, arms: np.ndarray, x: np.ndarray, weights: np.ndarray, sums: np.ndarray) -> None:
        """Add exploration statistics: for each lane i and entry j, ``weights[i, j]`` samples of
        arm ``arms[i, j]`` with features ``x[i, j]`` (d,) whose costs sum to ``sums[i, j]``."""
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
            self.add_samples(held_arms[:, :j], held_x[:, :j], np.ones((self.lanes, j)), held_costs[:, :j])
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
        w = self.widths[k]
        blocks = self.gram.shape[1]
        offset = np.stack([r.random(blocks * d) for r in self.rngs]).reshape(theta.shape)  # from R: shared by a pair
        self.rounded = w * (np.floor(theta / w - offset) + offset + 0.5)
        self._phase = k + 1
        self._explore_until = int(self._starts[k + 1] + self.params.explores[k + 1])

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
            lane.add_samples(arm[None], x[row, arm][None], k[arm, row][None].astype(np.float64),
                             (k[arm, row] * np.asarray(costs, dtype=np.float64)[arm, row])[None])
        lane.t += self._stretch
        lane.advanced(lane.t)
