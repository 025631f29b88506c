"""``rep-linear-elimination``: replicable phased elimination for a linear bandit with a finite action
set, on G-optimal designs, each arm charged once.

**What is theirs and what is ours.** Phased elimination on a G-optimal (Kiefer–Wolfowitz) design is
Lattimore & Szepesvári's (*Bandit Algorithms*, 2020, ch. 22, Alg. 12; Kiefer & Wolfowitz 1960 for
the design, Frank–Wolfe / Fedorov–Wynn for computing it, ch. 21). Random thresholds shared by the
two runs are the replicable-bandits literature's (Esfandiari et al., "Replicable Bandits", ICLR 2023,
who treat linear bandits too). The schedule — ``rep-gap-elimination``'s one threshold range per
phase, disjoint across phases, so that each arm is charged at one phase only — carried to
least-squares estimates on a design, the charge for correlated estimates below, and every constant
are ours, derived here and attacked in ``tests/algorithms/test_contextual.py``.

**The setting.** n arms with fixed features x_a ∈ R^d (the context, shown at every step), costs iid
over time with mean μ_a = ⟨x_a, θ⟩ and noise c − μ_a that is σ-sub-Gaussian (``sigma``; 1/2 for any
costs in an interval of length 1, σ for N(μ, σ²)). Let r be the rank of the features.

**The algorithm.** Phase p = 1, …, P, with active set A (all arms at first): coordinates y_a of the
active arms in an orthonormal basis of their span (rank r_A ≤ r); a design π on A with
max_{a∈A} y_aᵀV(π)⁻¹y_a ≤ 1.1·r_A (Frank–Wolfe from the uniform design, stopped there; deterministic
given A, so two runs that agree on A compute the same design); arm a pulled N_a = ⌈π_a m_p⌉ times
(round robins over the arms still owed pulls), m_p the phase's design size; least squares on this
phase's costs only, φ̂ = V⁻¹ Σ_a y_a S_a (V = Σ N_a y_a y_aᵀ ⪰ m_p V(π), S_a arm a's cost sum), and
the estimates m̂_a = ⟨y_a, φ̂⟩. With M = min_{j∈A} m̂_j, draw θ_p ~ U[lo_p, hi_p) from R and drop every
arm with Ĝ_a = m̂_a − M > θ_p. After phase P (or with one arm left) the active arms are played round
robin to the horizon.

**The estimates.** m̂_a − μ_a = y_aᵀV⁻¹ Σ_b y_b (S_b − N_b μ_b): a weighted sum of independent
σ-sub-Gaussian noises, sub-Gaussian with variance proxy σ²·y_aᵀV⁻¹y_a ≤ σ²·1.1·r/m_p =: s_p²
(E m̂_a = μ_a: the means are linear, and V is invertible on the span). Hence

    P(|m̂_a − μ_a| > ε_p) ≤ δ_p/n   for   ε_p = sqrt(2.2·r·σ²·ln(2n/δ_p) / m_p),

and for two runs' independent estimates Z_a = m̂_a − m̂'_a is sub-Gaussian with proxy 2s_p².

**Replicability (iid, certified).** The argument of ``rep-gap-elimination`` (its module docstring)
goes through with ε_p above: on the event G that every estimate of both runs at every phase is
within ε_p (P(not G) ≤ 2 Σ_p δ_p: n arms, P phases, two runs), the best arm is never dropped,
|Ĝ_a − Δ_a| ≤ 2ε_p, and an arm can part the runs at phase p only if its gap Δ_a lies in
V_p = (a_p, min(D, r·a_p) − 2ε_{p−1} + 2ε_p) (a_p = D·ratio^{−p}, D = ``gap_scale``), disjoint across
phases: each arm is charged at one phase at most, the best arms (ties included) at none. Given the
history, on which the runs agree, the active set and the design are fixed and the two runs'
phase-p estimates are independent copies; θ_p is independent of both, so

    P(θ_p between Ĝ_a and Ĝ'_a | history) ≤ E|Ĝ_a − Ĝ'_a| / w_p
                                            ≤ (E|Z_a| + E max_{j∈A} |Z_j|) / w_p
                                            ≤ sqrt(2)·s_p·(1 + sqrt(2 ln(2n))) / w_p =: q_p,

since |min m̂ − min m̂'| ≤ max_j |Z_j|, E|Z_a| ≤ sqrt(2)·s_p, and the maximum of 2|A| ≤ 2n
sub-Gaussian variables with proxy 2s_p² has mean at most sqrt(2·2s_p²·ln(2n)). (Unlike
``rep-gap-elimination``'s per-arm means, the estimates here are correlated through φ̂: the
maximum inequality needs no independence, at a price of sqrt(2 ln 2n).) So

    ρ ≤ 2 Σ_p δ_p + (n − 1)·max_p q_p,

with q_p = σ·sqrt(2.2 r)·(1 + sqrt(2 ln 2n)) / (sqrt(m_p)·w_p). The schedule is
``rep-gap-elimination``'s (:func:`~replify_plugins.bandits.rep_gap_elimination.phase_schedule`) with
these ε_p and q_p (m_p in place of an arm's pulls; :class:`PhaseModel` ``spread = 2.2 r σ²``,
``charge = σ sqrt(2.2 r)(1 + sqrt(2 ln 2n))``, ``top = D``), so the bound is at most ρ
(``params.certified``). A phase's steps are Σ_a ⌈π_a m_p⌉ ≤ m_p + n. A phase the horizon cuts
short decides nothing and is charged nothing. Collinear or repeated arms, ties and d > n are
covered: the design lives in the span of the active arms (a direction counts unless it is zero to
rounding, numpy's ``matrix_rank`` tolerance), and r ≤ min(n, d). Against costs whose
law changes over time, or whose means are not linear in the features, the argument fails: measured only.

**Regret** (not certified): an arm of gap Δ is dropped by the phase whose a_p is below Δ/ratio, after
Σ_p m_p ≈ (n σ sqrt(r ln n)/(ρ a_p))² steps — the (n/ρ)² price of the union over arms.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

import replify
from replify.base.checks import (
    NO_COST, CostDomain, as_float_array, check_int, check_next_step, check_positive, check_rho, refuse_cost_vector_update,
)
from replify.components.exploring import MAX_BATCH
from replify.components.describe import Described
from replify.errors import ActionError, CostError, HorizonError, InvalidArgumentError, LearnerProtocolError
from replify_plugins.bandits.rep_gap_elimination import GapParams, PhaseModel, phase_schedule

#: Frank–Wolfe stops once max_a y_aᵀV(π)⁻¹y_a ≤ (1 + DESIGN_SLACK)·r (Kiefer–Wolfowitz: r is the least).
DESIGN_SLACK = 0.1


@attrs.frozen(kw_only=True)
class LinearParams(GapParams):
    """``rep-gap-elimination``'s schedule record (cumulative design sizes ``pulls`` M_p, threshold
    ranges, radii, failure probabilities, charges, the bound) for features of rank ``dim``, noise
    scale ``sigma`` and gaps on the scale ``gap_scale``."""

    dim: int
    sigma: float
    gap_scale: float


def phase_model(*, n: int, dim: int, sigma: float, gap_scale: float) -> PhaseModel:
    """ε_p and q_p of the module docstring, as a :class:`PhaseModel`."""
    return PhaseModel(spread=2.2 * dim * sigma**2,
                      charge=sigma * math.sqrt(2.2 * dim) * (1.0 + math.sqrt(2.0 * math.log(2.0 * n))), top=gap_scale)


def linear_parameters(
    *, horizon: int, n: int, rho: float, dim: int | None = None, sigma: float | None = None,
    gap_scale: float | None = None, ratio: float | None = None, delta_share: float | None = None,
    pull_scale: float | None = None,
) -> LinearParams:
    """The schedule and bound for (T, n, ρ) and features of rank ``dim`` (default n, the most the
    rank of n arms' features can be); the defaults certify iid ρ-replicability."""
    rho = check_rho(rho)
    horizon, n = check_int("horizon", horizon, minimum=1), check_int("n", n, minimum=2)
    given = {"sigma": sigma, "gap_scale": gap_scale, "ratio": ratio, "delta_share": delta_share, "pull_scale": pull_scale}
    overrides = tuple(k for k, v in given.items() if v is not None)
    dim = n if dim is None else check_int("dim", dim, minimum=1)
    sigma = 0.5 if sigma is None else check_positive("sigma", sigma)
    top = 2.0 if gap_scale is None else check_positive("gap_scale", gap_scale)
    r = 3.0 if ratio is None else check_positive("ratio", ratio)
    if not r > 1.0:
        raise InvalidArgumentError(f"ratio must be above 1 (the threshold ranges shrink by it each phase); got {r}")
    share = 0.02 if delta_share is None else check_positive("delta_share", delta_share)
    if not share < 1.0:
        raise InvalidArgumentError(f"delta_share must be in (0, 1) (the share of rho spent on failures); got {share}")
    scale = 1.0 if pull_scale is None else check_positive("pull_scale", pull_scale)
    model = phase_model(n=n, dim=dim, sigma=sigma, gap_scale=top)
    return LinearParams(horizon=horizon, n=n, rho=rho, dim=dim, sigma=sigma, gap_scale=top, ratio=r, delta_share=share,
                        pull_scale=scale, overrides=overrides,
                        **phase_schedule(horizon=horizon, n=n, rho=rho, ratio=r, share=share, scale=scale, model=model))


def g_optimal_design(y: np.ndarray, slack: float = DESIGN_SLACK) -> np.ndarray:
    """A design π on the rows of ``y`` (k, r), of full column rank, with
    max_a y_aᵀV(π)⁻¹y_a ≤ (1 + slack)·r, V(π) = Σ_a π_a y_a y_aᵀ: Frank–Wolfe (Fedorov–Wynn) from the
    uniform design, each step moving weight γ = (g/r − 1)/(g − 1) to the arm of largest g (the exact
    line search for log det; Lattimore & Szepesvári 2020, note 21.2). Deterministic."""
    k, r = y.shape
    # the design does not change when the features are scaled: scaled to unit size, tiny features
    # (1e-200) do not underflow V(π)
    y = y / np.abs(y).max()
    pi = np.full(k, 1.0 / k)
    for _ in range(100_000):
        g = np.einsum("ij,ij->i", y, np.linalg.solve((y * pi[:, None]).T @ y, y.T).T)
        a = int(np.argmax(g))
        if g[a] <= (1.0 + slack) * r:
            return pi
        gamma = (g[a] / r - 1.0) / (g[a] - 1.0)
        pi *= 1.0 - gamma
        pi[a] += gamma
    raise RuntimeError("the G-optimal design did not converge")  # pragma: no cover - FW converges in O(r log log k + r/slack)


def _span(x: np.ndarray) -> np.ndarray:
    """Coordinates of the rows of ``x`` in an orthonormal basis of their span, (k, rank)."""
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    # numpy's matrix_rank tolerance: a direction is dropped only when it is zero to rounding
    rank = int(np.sum(s > s[0] * max(x.shape) * np.finfo(float).eps)) if s.size and s[0] > 0 else 0
    return x @ vt[:rank].T


class RepLinearElimination(Described):
    """Replicable phased elimination on G-optimal designs (module docstring). Plays step by step
    (``act(context)``/``update``), in batches (``next_batch(context)``/``observe``) or as round robins
    on cost sums (``next_cycle(context)``/``observe_sums``, the engine's block-sum path); all three
    play the same arms."""

    problem = "contextual"
    feedback = "bandit"
    cost_range = (-math.inf, math.inf)
    #: a linear bandit's learner: the engine refuses an adversary whose contexts change
    needs_fixed_contexts = True
    _params = ("rho", "sigma", "gap_scale", "ratio", "delta_share", "pull_scale")

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, rho: float, sigma: float | None = None,
                 gap_scale: float | None = None, ratio: float | None = None, delta_share: float | None = None,
                 pull_scale: float | None = None) -> None:
        self.n, self.horizon = check_int("n", n, minimum=2), check_int("horizon", horizon, minimum=1)
        self._given = {"sigma": sigma, "gap_scale": gap_scale, "ratio": ratio, "delta_share": delta_share,
                       "pull_scale": pull_scale}
        # the schedule for the most a rank can be; recomputed for the features' rank at the first context
        self.params = linear_parameters(horizon=self.horizon, n=self.n, rho=rho, **self._given)
        p = self.params
        self.rho, self.sigma, self.gap_scale, self.ratio = p.rho, p.sigma, p.gap_scale, p.ratio
        self.delta_share, self.pull_scale = p.delta_share, p.pull_scale
        self._rng = rng
        self.features: np.ndarray | None = None
        self.active = np.arange(self.n)
        self.phase = 0
        self._t = 0
        self._segments: list[tuple[np.ndarray, int]] = []
        self._seg, self._j = 0, 0
        self._sums = np.zeros(self.n)  # this phase's cost sums per arm
        self._pulls = np.zeros(self.n, dtype=np.int64)
        self._pending = np.empty(0, dtype=np.int64)  # the last next_batch()

    @property
    def t(self) -> int:
        return self._t

    @property
    def domain(self) -> CostDomain:
        """Any real cost: the certificate asks for σ-sub-Gaussian noise, not bounded costs."""
        return CostDomain(low=-math.inf, high=math.inf)

    # -- the phases ---------------------------------------------------------------------------
    def _see(self, context: Any) -> None:
        x = as_float_array("context", context)
        if self.features is None:
            if x.ndim != 2 or x.shape[0] != self.n:
                raise InvalidArgumentError(f"{type(self).__name__}: context must be features of shape (n, d) = "
                                           f"({self.n}, d); got shape {x.shape}")
            if not np.isfinite(x).all():
                raise InvalidArgumentError(f"{type(self).__name__}: context must be finite; got "
                                           f"{x[~np.isfinite(x)][:3].tolist()}")
            self.features = x.copy()
            self.params = linear_parameters(horizon=self.horizon, n=self.n, rho=self.rho,
                                            dim=max(1, _span(self.features).shape[1]), **self._given)
            self._plan()
        elif x.shape != self.features.shape or not np.array_equal(x, self.features):
            raise InvalidArgumentError(f"{type(self).__name__} is for a linear bandit with fixed features (a finite "
                                       f"action set); the context changed at step {self._t + 1}: use rep-ridge for "
                                       "contexts that change")

    def _plan(self) -> None:
        """The current phase's round robins: arm a owed ⌈π_a m_p⌉ pulls; or, after the last
        decision or with one arm left, the active arms round robin to the horizon."""
        left = self.horizon - self._t
        pulls = np.asarray(self.params.pulls)
        self._sums[:] = 0.0
        self._pulls[:] = 0
        if self.active.size > 1 and self.phase < pulls.size:
            fresh = int(pulls[self.phase] - (pulls[self.phase - 1] if self.phase else 0))
            y = _span(self.features[self.active])
            # features all zero: every estimate is 0, any design does; spread the pulls evenly
            design = np.full(self.active.size, 1.0 / self.active.size) if y.shape[1] == 0 else g_optimal_design(y)
            owed = np.ceil(design * fresh).astype(np.int64)
            segments = []
            while owed.max() > 0:  # round robins over the arms still owed pulls
                live = owed > 0
                k = int(owed[live].min())
                segments.append((self.active[live], k * int(live.sum())))
                owed[live] -= k
            self._deciding = True
        else:
            segments, self._deciding = [(self.active.copy(), left)], False
        cut, out = left, []
        for arms, length in segments:  # the horizon cuts the phase short: it then decides nothing
            if cut <= 0:
                break
            out.append((arms, min(length, cut)))
            cut -= length
        if cut < 0:
            self._deciding = False
        self._segments, self._seg, self._j = out, 0, 0

    def _decide(self) -> None:
        """Least squares on this phase's costs; drop every arm whose estimated gap exceeds a threshold from R."""
        p = self.phase
        act = self.active
        y = _span(self.features[act])
        if y.shape[1] == 0:
            est = np.zeros(act.size)
        else:
            n_a = self._pulls[act].astype(np.float64)
            v = (y * n_a[:, None]).T @ y
            est = y @ np.linalg.solve(v, y.T @ self._sums[act])
        low, high = self.params.lows[p], self.params.highs[p]
        threshold = low + (high - low) * self._rng.random()
        self.active = act[~(est - est.min() > threshold)]
        self.phase += 1

    def _advance(self, steps: int) -> None:
        self._j += steps
        self._t += steps
        if self._j == self._segments[self._seg][1]:
            self._seg, self._j = self._seg + 1, 0
            if self._seg == len(self._segments) and self._t < self.horizon:
                if self._deciding:
                    self._decide()
                self._plan()

    def _arm(self) -> int:
        arms = self._segments[self._seg][0]
        return int(arms[self._j % arms.size])

    def _cost(self, cost: Any) -> float:
        if isinstance(cost, (bool, np.bool_)) or np.ndim(cost) != 0:
            raise CostError(f"cost at step {self._t + 1} must be a real number (the played arm's cost); got {cost!r}")
        c = float(cost)
        if not math.isfinite(c):
            raise CostError(f"cost at step {self._t + 1} must be finite; got {cost!r}")
        return c

    # -- stepping
    def act(self, context: Any) -> int:
        """The arm for the current step, given the (fixed) features."""
        if self._t >= self.horizon:
            raise HorizonError(f"{type(self).__name__}.act() for step {self._t + 1}, past the horizon T={self.horizon}")
        self._see(context)
        return self._arm()

    def update(self, action: Any, cost: Any = NO_COST) -> None:
        """The cost of the arm played at this step."""
        if cost is NO_COST:
            refuse_cost_vector_update(self, action, step=self._t + 1)
        check_next_step(self._t, self.horizon)
        if self.features is None:
            raise LearnerProtocolError(f"{type(self).__name__}.update() at step 1 before act(context)")
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)) or int(action) != self._arm():
            raise ActionError(f"update() at step {self._t + 1}: action must be the arm act() returned ({self._arm()}); "
                              f"got {action!r}")
        c = self._cost(cost)
        self._sums[int(action)] += c
        self._pulls[int(action)] += 1
        self._advance(1)

    # -- batches
    def next_batch(self, context: Any) -> np.ndarray:
        """The next arms of the current round robin (at most ``MAX_BATCH``)."""
        self._see(context)
        arms, length = self._segments[self._seg]
        size = min(MAX_BATCH, length - self._j)
        self._pending = arms[(self._j + np.arange(size)) % arms.size]
        return self._pending.copy()

    def observe(self, costs: Any) -> None:
        """The costs of the arms the last :meth:`next_batch` gave, in order."""
        arms, c = self._pending, np.asarray(costs, dtype=np.float64)
        if arms.size == 0 or c.shape != arms.shape or not np.isfinite(c).all():
            raise CostError(f"observe() needs the {arms.size} finite costs of the last next_batch(); got {costs!r}")
        np.add.at(self._sums, arms, c)  # in order: the sums stepping makes
        np.add.at(self._pulls, arms, 1)
        self._pending = np.empty(0, dtype=np.int64)
        self._advance(arms.size)

    # -- round robins on cost sums (the engine's block-sum path)
    def next_cycle(self, context: Any) -> tuple[np.ndarray, int]:
        """The rest of the current round robin as ``(arms, length)``."""
        self._see(context)
        arms, length = self._segments[self._seg]
        return np.roll(arms, -(self._j % arms.size)), length - self._j

    def observe_sums(self, sums: Any, pulls: Any) -> None:
        """Each arm's cost sum and pull count over the last :meth:`next_cycle`."""
        arms, length = self._segments[self._seg]
        c, m = np.asarray(sums, dtype=np.float64), np.asarray(pulls)
        if c.shape != (self.n,) or m.shape != (self.n,) or m.sum() != length - self._j or not np.isfinite(c).all():
            raise InvalidArgumentError(f"observe_sums() needs {self.n} finite cost sums and pull counts adding up to the "
                                       f"{length - self._j} steps of the cycle; got shapes {c.shape} and {m.shape}")
        self._sums += c
        self._pulls += m.astype(np.int64)
        self._advance(length - self._j)


@replify.hookimpl
def register_learners(register):
    register(replify.LearnerSpec(
        "rep-linear-elimination", RepLinearElimination, "contextual", parameters=linear_parameters, guarantee="iid",
        feedback="bandit", enforces={"horizon", "domain"}, test_params={"rho": 0.2, "pull_scale": 1e-3},
        description="replicable phased elimination on G-optimal designs, linear bandits with fixed features, each arm "
        "charged once (our bound); iid rho-replicable",
    ))
