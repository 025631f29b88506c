"""Replicability certificates: the union bounds that the paper's proofs give, corrected and
tightened where that stays rigorous (docs/certificates.md; the derivation is written out in
``docs/certificates.md``).

Every replicable block learner here (the general framework of §5, FLLB of §3, FTPLB* of §4)
decides at transitions t_k = kB (k = 1..⌈T/B⌉−1) from R and the cumulative costs there. Two
runs that share R can part only at a transition, and the proofs bound the chance that they part
at transition k by the *drift* Δ_t = c_{1:t} − c'_{1:t} between the two independent draws:

* **grid rounding** (general framework, FLLB) — for a fixed Δ, a uniform grid offset puts the
  two grid points in different cells with probability at most min(1, ε‖Δ‖₁) (the paper's cube
  overlap argument). The offset is independent of the costs, so unconditionally the chance is
  at most ε·E‖Δ_t‖₁. The paper instead splits on ‖Δ_t‖₁ ≤ m (probability ≥ 1 − γ) and charges
  γ + εm; every radius m it can use is the mean bound plus a deviation term, so ε·(mean bound)
  is always the smaller charge — and the split is where the paper's constants went wrong (the
  ℓ1 lemma's bounded difference; the ℓ∞ case's ℓ1 norm).
* **geometric noise** (FTPLB*) — given the costs and the other experts' noise, run 1 picks a*
  iff X_{a*} clears a threshold, and run 2's threshold is at most ⌈max Δ − min Δ⌉ higher;
  memorylessness of Geo(ε) (on the integers, hence the ⌈·⌉) makes the chance of parting at most
  ε·(E[max Δ − min Δ] + 1). Charging each run only the side of the threshold its own choice sits
  on, and adding the two runs' charges (:func:`geometric_sharp`), gives the sharper
  (ε/2)(R + 2) + (ε²/2)·R(R + 1) per decision, R = max Δ − min Δ — ours, derived in
  docs/certificates.md, "Geometric noise, each run charged its own side".

The expected drifts are bounded by independence across steps and zero mean of each
v_i − w_i (Jensen per coordinate, then Cauchy–Schwarz):

* ℓ1-bounded costs (‖c‖₁ ≤ 1):       E‖Δ_t‖₁ ≤ √(2n t)        (Σ_a Var c(a) ≤ E‖c‖₂² ≤ 1)
* costs in [−1, 1]^n:                 E‖Δ_t‖₁ ≤ n √(2t)        (Var c(a) ≤ 1)
* costs in [0, 1]^n, range of Δ:      E[max Δ − min Δ] ≤ 2√(t ln n)  (each Δ_a is a sum of
  2t independent terms of range 1, sub-Gaussian with variance proxy t/2; E max of n such
  ≤ √(2·(t/2)·ln n), and Δ is symmetric)

A :class:`UnionBound` holds the coefficients of the per-transition bound
ε·(now·√t_k + prev·√t_{k−1} + const) — ``prev`` for the framework's second grid point g′, which
rounds the total one block earlier (at k = 1 it is the origin in both runs and costs nothing) —
and sums it over the transitions that occur.

The high-probability *radii* (``radius``·√t: ‖Δ_t‖ exceeds it with probability at most the
stated γ) are kept for what the paper's theorems use them for — their default block sizes —
and for :attr:`replify.Report.concentration`, which sets the measured drift beside them.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import attrs
import numpy as np

from replify.errors import ReplicabilityWarning, warn

DriftNorm = Literal["l1", "range"]

#: Below this many transitions the sums of square roots are added term by term; above it the
#: concave-function bound Σ_{k≤N} √k ≤ (2/3)N^{3/2} + √N/2 is used (it overshoots by < 0.21).
EXACT_TERMS = 1 << 20


def sqrt_sum(count: int) -> float:
    """An upper bound on Σ_{k=1}^{count} √k, exact (to rounding) up to :data:`EXACT_TERMS`
    terms. Above that the trapezoid rule, which underestimates the integral of a concave
    function, gives Σ √k − √N/2 ≤ ∫_0^N √x dx."""
    if count <= 0:
        return 0.0
    if count <= EXACT_TERMS:
        return math.fsum(np.sqrt(np.arange(1, count + 1, dtype=np.float64)).tolist())
    return (2.0 / 3.0) * count**1.5 + 0.5 * math.sqrt(count)


def mcdiarmid_radius(*, steps: float, mean: float, difference: float, tail: float) -> float:
    """r with P(f ≥ mean + (r − mean)) ≤ ``tail`` for f = ‖Δ_t‖₁ as a function of the 2t
    independent cost vectors, each moving f by at most ``difference`` (McDiarmid):
    r = mean + difference·√(t·ln(1/γ)) (from exp(−2s²/(2t·difference²)) = γ)."""
    return mean + difference * math.sqrt(steps * math.log(1.0 / tail))


def drift_l1(n: int, domain: Literal["l1", "linf"]) -> float:
    """M with E‖c_{1:t} − c'_{1:t}‖₁ ≤ M·√t: √(2n) for ℓ1-bounded costs, n·√2 for costs in
    [−1, 1]^n (see the module docstring)."""
    return math.sqrt(2.0 * n) if domain == "l1" else n * math.sqrt(2.0)


def radius_l1(n: int, domain: Literal["l1", "linf"], *, horizon: int, tail: float) -> float:
    """The corrected concentration radius m at t = T with tail γ: ‖c_{1:t} − c'_{1:t}‖₁ ≤ m
    for a given t ≤ T except with probability γ.

    ℓ1-bounded costs (``lemma:concentration_in_ell_1_norm``, corrected): changing one of the 2t
    vectors moves the norm by at most 2, so m = √(2nT) + 2√(T ln(1/γ)); the lemma's proof took
    the bounded difference of u_i = v_i − w_i (t variables) as 2 where it is 4, which made its
    tail exp(−(c−2)²n/2) where exp(−(c−2)²n/4) holds. Costs in [−1, 1]^n (the ℓ∞ framework, whose
    experts corollary applied the ℓ1 lemma to vectors of ℓ1 norm up to n): changing one vector
    moves the norm by up to 2n, so m = n√(2T) + 2n√(T ln(1/γ)) = n√T(√2 + 2√(ln(1/γ)))."""
    difference = 2.0 if domain == "l1" else 2.0 * n
    return mcdiarmid_radius(
        steps=horizon, mean=drift_l1(n, domain) * math.sqrt(horizon), difference=difference, tail=tail
    )


def max_square_factor(n: int) -> float:
    """κ_n with E[max_a Z_a²] ≤ κ_n·σ² for any n random variables, each sub-Gaussian with variance
    proxy σ² (E e^{sZ} ≤ e^{s²σ²/2}), whatever their dependence: for λ < 1/(2σ²),
    E e^{λZ²} = E_G E_Z e^{√(2λ) G Z} ≤ E_G e^{λσ²G²} = (1 − 2λσ²)^{−1/2} (G standard normal, independent
    of Z), so by Jensen E max Z² ≤ (1/λ)·ln Σ_a E e^{λZ_a²} ≤ (2σ²/c)(ln n − ½ ln(1 − c)) at λ = c/(2σ²);
    the minimum over a grid of c ∈ (0, 1) is taken (any c gives a valid bound)."""
    c = np.linspace(0.01, 0.99, 99)
    return float(np.min(2.0 * (math.log(n) - 0.5 * np.log1p(-c)) / c))


def geometric_sharp(n: int) -> dict[str, float]:
    """The coefficients of the sharper geometric-noise bound per decision at step t (module
    docstring; docs/certificates.md): given the costs, P(part) ≤ (ε/2)(R + 2) + (ε²/2)R(R + 1)
    with R = max Δ − min Δ; each Δ_a sums 2t independent terms of range 1 (sub-Gaussian, variance
    proxy σ² = t/2), so E R ≤ 2√(t ln n) and E R² ≤ 4·E max_a Δ_a² ≤ 4κ_n·t/2 = 2κ_n·t
    (:func:`max_square_factor`). Hence per decision
    ε·(√(ln n)·√t + 1) + ε²·(κ_n·t + √(ln n)·√t).

    At n = 2, R = |Δ_1 − Δ_2| is the absolute value of one sum of 2t independent mean-zero terms
    (c_{s,1} − c_{s,2} of either run, in [−1, 1]: variance at most 1), so E R² ≤ 2t and E R ≤ √(2t):
    per decision ε·(√2/2·√t + 1) + ε²·(t + √2/2·√t), sharper than the general form (√(ln 2) = 0.83,
    κ_2 = 3.7)."""
    if n == 2:
        half = math.sqrt(2.0) / 2.0
        return {"sharp_now": half, "sharp_const": 1.0, "square_t": 1.0, "square_root": half}
    root = math.sqrt(math.log(n))
    return {"sharp_now": root, "sharp_const": 1.0, "square_t": max_square_factor(n), "square_root": root}


def race_parting(costs: Any, other: Any, eps: float) -> np.ndarray:
    """The exact chance that two runs part at one decision with shared Gumbel noise of scale 1/ε,
    given their cost totals (rows of ``costs`` and ``other``, shape (..., n)): each run plays
    argmin_a C_a − G_a/ε, an exponential race on Hedge's weights p ∝ e^{−εC} and q ∝ e^{−εC′},
    which agree on i with probability 1/Σ_j max(p_j/p_i, q_j/q_i) (docs/certificates.md, "Gumbel
    noise: the exponential race"). What the certificates below bound, and what their tests and
    audits compute exactly."""
    c, d = np.asarray(costs, dtype=np.float64), np.asarray(other, dtype=np.float64)
    p = np.exp(-eps * (c - c.min(axis=-1, keepdims=True)))
    q = np.exp(-eps * (d - d.min(axis=-1, keepdims=True)))
    p, q = p / p.sum(axis=-1, keepdims=True), q / q.sum(axis=-1, keepdims=True)
    agree = sum(1.0 / np.sum(np.maximum(p / p[..., i:i + 1], q / q[..., i:i + 1]), axis=-1) for i in range(c.shape[-1]))
    return np.asarray(1.0 - agree)


def gumbel_decision_bound(eps: Any, steps: Any, n: int) -> np.ndarray:
    """Our bound on the chance that two runs part at one decision made with *fresh* Gumbel noise
    of scale 1/ε — each run plays argmin_a c_{1:t}(a) − G_a/ε, G_a iid standard Gumbel, shared —
    after ``steps`` = t steps of costs in [0, 1]^n from any oblivious adversary (elementwise over
    ``eps`` and ``steps``). With f = 1 − 1/n,

        b = ε·√(f·S/2) + f·ε²·e^{5ε²t/2}·(t·e^{6ε} + 5ε²t²·e^{12ε}),
        S = e^{ε²t/2}·(t·e^{2ε}/2 + ε²t²·e^{4ε}/4),

    at most 1 — about ε√t·√f/2 + f·ε²t when ε is small: n-free to first order (the geometric
    bound of :func:`geometric_sharp` charges √(ln n)). At n = 2 the race is a maximal coupling:
    P(part | costs) = |σ(εD) − σ(εD′)| ≤ (ε/4)|D − D′| exactly (D = C_1 − C_2, σ the logistic
    function), and Var(D − D′) ≤ 2t, so b = ε√(2t)/4, with no second-order term. Derived in
    docs/certificates.md, "Gumbel noise: the exponential race" (ours): the runs' choices are an exponential race on Hedge's
    weights p ∝ e^{−εc_{1:t}} and q ∝ e^{−εc'_{1:t}}, whose exact agreement probability gives
    P(part | costs) ≤ Σ_{i,j} p_i p_j (e^{ε(δ_i − δ_j)⁺} − 1), δ = c'_{1:t} − c_{1:t}; over the costs,
    p is tilted back to the weights at the expected costs, step by step."""
    eps, t = np.asarray(eps, dtype=np.float64), np.asarray(steps, dtype=np.float64)
    if n == 2:  # exactly TV = |σ(εD) − σ(εD′)| ≤ (ε/4)|D − D′|, D = C_1 − C_2, Var(D − D′) ≤ 2t
        return np.asarray(np.minimum(1.0, eps * np.sqrt(2.0 * t) / 4.0))
    f = 1.0 - 1.0 / n
    with np.errstate(over="ignore", invalid="ignore"):
        e2t = eps * eps * t
        s = np.exp(e2t / 2.0) * (t * np.exp(2.0 * eps) / 2.0 + e2t * t * np.exp(4.0 * eps) / 4.0)
        second = f * eps * eps * np.exp(2.5 * e2t) * (t * np.exp(6.0 * eps) + 5.0 * e2t * t * np.exp(12.0 * eps))
        bound = eps * np.sqrt(f * s / 2.0) + second
    return np.asarray(np.where(np.isfinite(bound), np.minimum(bound, 1.0), 1.0))


def gumbel_bandit_bound(eps: Any, pulls: Any, n: int) -> np.ndarray:
    """The bandit twin of :func:`gumbel_decision_bound`: one decision, with fresh Gumbel noise of
    scale 1/ε, on each arm's *sum* of at most ``pulls`` = M observed costs in [0, 1], the
    observation steps shared by the two runs and drawn from R independently of the costs (each
    arm's at its own steps). With f = 1 − 1/n,

        b = ε·√(f·S/2) + (f·ε²/2)·e^{7ε²M/4}·(M·e^{3ε} + (5/2)·ε²M²·e^{6ε}),
        S = e^{ε²M/4}·(M·e^{ε}/2 + ε²M²·e^{2ε}/16),

    at most 1 — about ε√M·√f/2 + f·ε²M/2; at n = 2 exactly ε√M/4 (the race is then a maximal
    coupling, P(part | sums) ≤ (ε/4)|D − D′|, and D − D′ sums 2M independent differences of variance
    at most ½). The per-cost inequality is the full-information one; over
    the costs each observation moves one arm's sum only, which is what changes the constants
    (docs/certificates.md, "Gumbel noise under bandit feedback"; ours)."""
    eps, m = np.asarray(eps, dtype=np.float64), np.asarray(pulls, dtype=np.float64)
    if n == 2:  # exactly TV ≤ (ε/4)|D − D′|, D = C_1 − C_2: 2M independent differences of variance ≤ ½
        return np.asarray(np.minimum(1.0, eps * np.sqrt(m) / 4.0))
    f = 1.0 - 1.0 / n
    with np.errstate(over="ignore", invalid="ignore"):
        e2m = eps * eps * m
        s = np.exp(e2m / 4.0) * (m * np.exp(eps) / 2.0 + e2m * m * np.exp(2.0 * eps) / 16.0)
        second = f * eps * eps / 2.0 * np.exp(1.75 * e2m) * (m * np.exp(3.0 * eps) + 2.5 * e2m * m * np.exp(6.0 * eps))
        bound = eps * np.sqrt(f * s / 2.0) + second
    return np.asarray(np.where(np.isfinite(bound), np.minimum(bound, 1.0), 1.0))


def gumbel_eps(shares: Any, steps: Any, n: int, *, bandit: bool = False) -> np.ndarray:
    """Elementwise, the largest ε (to 1e-12 relative, from below) with
    :func:`gumbel_decision_bound` (or, with ``bandit``, :func:`gumbel_bandit_bound`, ``steps``
    then the pulls per arm) at most ``shares``; the bound increases with ε, so a bisection on
    ln ε finds it (certified: the value returned is on the side that holds)."""
    bound = gumbel_bandit_bound if bandit else gumbel_decision_bound
    shares, t = np.broadcast_arrays(np.asarray(shares, dtype=np.float64), np.asarray(steps, dtype=np.float64))
    low = np.full(shares.shape, -60.0)  # ln ε: e^-60 charges far below any share here
    high = np.full(shares.shape, 5.0)
    for _ in range(80):
        mid = (low + high) / 2.0
        fits = bound(np.exp(mid), t, n) <= shares
        low, high = np.where(fits, mid, low), np.where(fits, high, mid)
    return np.asarray(np.exp(low))


def certify(bound: float, rho: float, *, algorithm: str, detail: str) -> bool:
    """Whether ``bound`` certifies ``rho`` (docs/claims.md). When it does not, say so once with a
    :class:`~replify.errors.ReplicabilityWarning` naming both numbers."""
    if bound <= rho * (1.0 + 1e-9):
        return True
    if bound >= 1.0:
        # A bound on a probability at or above 1 says nothing: do not state it as if it did.
        what = (f"certify no rho at all: the proof's union bound for them is {bound:.4g}, which is at least 1 and so "
                f"bounds nothing")
    else:
        what = f"certify only rho <= {bound:.4g}, not the rho={rho:g} that was passed"
    warn(
        f"{algorithm}: the parameters in force ({detail}) {what}; params.certified is False and reports say so. "
        f"replify.certified_eps(...) gives an eps that certifies rho={rho:g} at this block size.",
        ReplicabilityWarning,
    )
    return False


@attrs.frozen(kw_only=True)
class UnionBound:
    """A replicability proof's bound, per transition k at step t_k = kB:
    P(the two runs part at k) ≤ ε·(now·√t_k + prev·√t_{k−1} + const); summed over the
    ⌈T/B⌉ − 1 transitions that occur (the paper writes T/B), it bounds ρ.

    ``norm`` names the drift the proof charges (``"l1"``: ‖Δ‖₁; ``"range"``: max Δ − min Δ);
    ``radius`` (optional) is the coefficient r of the proof's high-probability radius r·√t, and
    ``tail`` its γ, reported beside the measured drift; ``source`` names the derivation.

    A second, sharper bound may hold beside the first (``sharp_now`` given): per transition
    ε·(sharp_now·√t_k + sharp_const) + ε²·(square_t·t_k + square_root·√t_k) (:func:`geometric_sharp`).
    Both bound the same probability, so the smaller of the two totals bounds ρ (and, per
    transition, the smaller of the two terms)."""

    now: float
    prev: float = 0.0
    const: float = 0.0
    norm: DriftNorm = "l1"
    mean: float = 0.0
    radius: float | None = None
    tail: float | None = None
    source: str = ""
    sharp_now: float | None = None
    sharp_const: float = 0.0
    square_t: float = 0.0
    square_root: float = 0.0

    def weight(self, *, horizon: int, block_size: int) -> float:
        """Σ_k (now·√t_k + prev·√t_{k−1} + const): the bound is ε times this."""
        transitions = max(0, -(-horizon // block_size) - 1)
        root = math.sqrt(block_size)
        return (
            self.now * root * sqrt_sum(transitions)
            + self.prev * root * sqrt_sum(transitions - 1)
            + self.const * transitions
        )

    def sharp_weights(self, *, horizon: int, block_size: int) -> tuple[float, float]:
        """(a, b) with the sharper total a·ε + b·ε² (``sharp_now`` given)."""
        transitions = max(0, -(-horizon // block_size) - 1)
        roots = math.sqrt(block_size) * sqrt_sum(transitions)  # Σ_k √t_k
        steps = block_size * transitions * (transitions + 1) / 2.0  # Σ_k t_k
        return (self.sharp_now * roots + self.sharp_const * transitions,
                self.square_t * steps + self.square_root * roots)

    def value(self, eps: float, *, horizon: int, block_size: int) -> float:
        """The bound on ρ for the parameters in force: the smaller of the two totals."""
        first = eps * self.weight(horizon=horizon, block_size=block_size)
        if self.sharp_now is None:
            return first
        a, b = self.sharp_weights(horizon=horizon, block_size=block_size)
        return min(first, a * eps + b * eps * eps)

    def per_transition(self, eps: float, *, horizon: int, block_size: int) -> np.ndarray:
        """The bound on each transition k = 1..⌈T/B⌉−1 (capped at 1)."""
        k = np.arange(1, max(1, -(-horizon // block_size)), dtype=np.float64)
        root = math.sqrt(block_size)
        out = eps * (self.now * root * np.sqrt(k) + self.prev * root * np.sqrt(k - 1) + self.const)
        if self.sharp_now is not None:
            t = block_size * k
            out = np.minimum(out, eps * (self.sharp_now * np.sqrt(t) + self.sharp_const)
                             + eps * eps * (self.square_t * t + self.square_root * np.sqrt(t)))
        return np.minimum(1.0, out)

    def certified_eps(self, rho: float, *, horizon: int, block_size: int) -> float:
        """The largest ε for which the bound is at most ρ (the larger of the two bounds' answers:
        the total is their minimum, each increasing in ε)."""
        first = rho / self.weight(horizon=horizon, block_size=block_size)
        if self.sharp_now is None:
            return first
        a, b = self.sharp_weights(horizon=horizon, block_size=block_size)
        # a·ε + b·ε² = ρ, in the form that keeps its precision when 4bρ ≪ a²
        sharp = 2.0 * rho / (a + math.sqrt(a * a + 4.0 * b * rho)) if a > 0 else math.sqrt(rho / b)
        return max(first, sharp)

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)
