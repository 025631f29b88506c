"""Follow the Perturbed Leader with varying Noise and Block Lengths: the iid-replicable experts
algorithm (paper §6, Alg. ``vnilla_replicability_experts``; ``thm:vanilla_replicability_experts``).

    α = sqrt(ln(8n·lnlnT/ρ)),  γ = ρ/(8·lnlnT),  K = C·(1/ρ)(lnlnT)²·ln(n·lnlnT/ρ)·sqrt(T), C = 1000
    for blocks i = 1, 2, …  (length L_i = T^{1 − 2^{−i}}, the last one clipped to T):
        i = 1:  play expert 1 (index 0)
        i ≥ 2:  ε_i = γ/(2α·sqrt(t)), t the steps so far; fresh X_a ~ Geo(ε_i);
                play argmin_a c_{1:t}(a) − X_a for the whole block
        after every step: if the running regret ≥ K − 2·sqrt(T ln n), switch for good to FTPL
        with Geo(sqrt(ln n/T)) noise for the remaining steps.

Two deliberate readings (docs/algorithms.md): ε_i = γ/(2α√t) is the proof's value (the pseudocode's
γ/(2αt) is a typo); and FTPL after the switch restarts on the remaining steps — the proof adds
FTPL's 2·sqrt(T ln n) regret on those steps to the K − 2·sqrt(T ln n) accrued before, which is
FTPL's guarantee for a fresh run. The constant C is the parameter ``K_constant``: at practical T
the paper's 1000 makes the fallback unreachable. Worst-case regret ≤ K; iid ρ-replicable.

**Our certificate, and the default noise** (ours; docs/certificates.md, "Geometric noise, each run
charged its own side"). While the fallback cannot fire — its threshold K − 2√(T ln n) exceeds T − 1,
which no running regret reaches with costs in [0, 1] (every practical T at C = 1000) — the two runs
can part only at the block decisions, each made with fresh Geo(ε_i) noise at step t_i. Each run
charged its own side, decision i parts with probability at most
b_i = min(ε_i(2√(t_i ln n) + 1), ε_i(√(ln n)·√t_i + 1) + ε_i²(κ_n t_i + √(ln n)·√t_i)) against *any*
oblivious adversary (:func:`replify.guarantees.certificates.geometric_sharp`), so
ρ ≤ Σ_i b_i (``replicability_bound``). The proof's own ε_i = γ/(2α√t_i) spends ρ/(8 lnln T) per
decision through a high-probability radius α; this bound certifies the same ρ at 12–27× that noise
parameter (less noise). By default (``noise_scale=None``) ρ is split across the decisions in
proportion to the length of the block each one governs — the decision that picks the expert for
the longest stretch gets the largest share — and each ε_i is the largest with b_i at most its share
(:func:`certified_schedule`; solved in closed form, b_i being increasing in ε_i). Measured against
the proof's shape scaled to spend ρ (equal shares), this lowers the regret by about a quarter at
T = 10⁶ on the README's spread and on random instances (benchmarks/certified_learners.py). A given
``noise_scale`` multiplies the proof's schedule instead, and is certified when our bound is at most
ρ, or — the theorem's own certificate — when it is at most 1 with C ≥ 1000.

The evaluation engine runs it on block sums wherever the fallback check cannot fire
(:meth:`IidExperts.next_segment`): T = 10⁹ costs a handful of draws per run.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

import replify
from replify.base.checks import CostDomain, check_int, check_next_step, check_positive, check_remaining, check_rho
from replify.errors import InvalidArgumentError, ReplicabilityWarning, warn
from replify.components.blocks import CHUNK_ROWS
from replify.components.cumulative import running_sums
from replify.components.describe import Described
from replify.guarantees.certificates import geometric_sharp

ALGORITHM, THEOREM = "vnilla_replicability_experts", "thm:vanilla_replicability_experts"
DOMAIN = CostDomain(low=0.0, high=1.0)
MIN_HORIZON = 16  # ln ln T >= 1 from here on; below it α, γ and K lose their meaning
#: Fewest steps worth a block-sum draw near the fallback threshold; fewer are drawn step by step.
MIN_SUMMED = 1024


def block_lengths(horizon: int) -> tuple[int, ...]:
    """L_i = T^{1 − 2^{−i}} rounded to an integer (at least 1), the last clipped so they sum to T."""
    lengths: list[int] = []
    total, i = 0, 1
    while total < horizon:
        length = min(max(1, round(horizon ** (1.0 - 2.0**-i))), horizon - total)
        lengths.append(length)
        total += length
        i += 1
    return tuple(lengths)


@attrs.frozen(kw_only=True)
class IidExpertsParams:
    """The parameters of Alg. ``vnilla_replicability_experts`` for (T, n, ρ): block lengths
    and ends, the noise ε_i of every block from the second on, α, γ, K, and the fallback."""

    algorithm: str
    theorem: str
    horizon: int
    n: int
    rho: float
    loglog: float
    alpha: float
    gamma: float
    K_constant: float
    K: float
    fallback_threshold: float
    fallback_eps: float
    block_lengths: tuple[int, ...]
    block_ends: tuple[int, ...]
    eps_schedule: tuple[float, ...]
    regret_bound: float
    regret_bound_formula: str
    certified: bool  # rho holds: our bound (replicability_bound <= rho), or the theorem's (C >= 1000, scale <= 1)
    noise_scale: float | None = 1.0  # the proof's ε_i times this (1: the proof's value; None: our certified schedule)
    calibration: str | None = None  # set by replify.calibrate: what the parameters were calibrated on
    #: our bound Σ_i b_i at the ε_i in force (None when the fallback can fire: the argument needs it not to)
    replicability_bound: float | None = None
    #: which certificate holds: "ours" (replicability_bound <= rho), "theorem", or None
    certificate: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = attrs.asdict(self, recurse=False)
        return d | {k: list(d[k]) for k in ("block_lengths", "block_ends", "eps_schedule")}


def decision_bound(eps: Any, steps: Any, n: int) -> float:
    """Σ_i b_i: our bound on the chance that the runs part at any block decision, decision i made
    with Geo(``eps[i]``) noise after ``steps[i]`` steps (module docstring)."""
    eps, t = np.asarray(eps, dtype=np.float64), np.asarray(steps, dtype=np.float64)
    sharp = geometric_sharp(n)
    root = math.sqrt(math.log(n))
    first = eps * (2.0 * root * np.sqrt(t) + 1.0)
    second = eps * (sharp["sharp_now"] * np.sqrt(t) + sharp["sharp_const"]) + eps**2 * (
        sharp["square_t"] * t + sharp["square_root"] * np.sqrt(t))
    return float(np.minimum(1.0, np.minimum(first, second)).sum())


def certified_schedule(steps: Any, lengths: Any, *, n: int, rho: float) -> tuple[float, ...]:
    """The default ε_i: ρ split across the decisions in proportion to ``lengths`` (the block each
    decision governs), each ε_i the largest with b_i ≤ its share (module docstring). Of b_i's two
    forms, ε(2√(t ln n) + 1) and εa + ε²b, either at most the share suffices: the larger of their
    two solutions is taken (capped at 1)."""
    t = np.asarray(steps, dtype=np.float64)
    shares = rho * np.asarray(lengths, dtype=np.float64) / float(np.sum(lengths))
    sharp = geometric_sharp(n)
    first = shares / (2.0 * math.sqrt(math.log(n)) * np.sqrt(t) + 1.0)
    a = sharp["sharp_now"] * np.sqrt(t) + sharp["sharp_const"]
    b = sharp["square_t"] * t + sharp["square_root"] * np.sqrt(t)
    second = 2.0 * shares / (a + np.sqrt(a * a + 4.0 * b * shares))  # a·ε + b·ε² = share, stably
    return tuple(float(e) for e in np.minimum(1.0, np.maximum(first, second)))


def _unreachable(p: IidExpertsParams) -> bool:
    """Whether the fallback can never fire: the running regret after t < T steps is at most t ≤ T − 1."""
    return p.fallback_threshold > p.horizon - 1


def parameters(
    *, horizon: int, n: int, rho: float, K_constant: float = 1000.0, noise_scale: float | None = None
) -> IidExpertsParams:
    """The algorithm's parameters; ``noise_scale`` multiplies every ε_i of the proof's schedule
    (the proof's value is 1: a larger one means less noise and more learning). ``None`` (the
    default) takes our certified schedule (:func:`certified_schedule`; module docstring), or the
    proof's when the fallback can fire."""
    horizon, n, rho = check_int("horizon", horizon, minimum=1), check_int("n", n, minimum=2), check_rho(rho)
    if horizon < MIN_HORIZON:
        raise InvalidArgumentError(
            f"horizon must be >= {MIN_HORIZON} for iid-experts (its parameters use ln ln T, which must be >= 1); got {horizon}"
        )
    c = check_positive("K_constant", K_constant)
    scale = None if noise_scale is None else check_positive("noise_scale", noise_scale)
    rho = float(rho)
    ll = math.log(math.log(horizon))
    alpha = math.sqrt(math.log(8.0 * n * ll / rho))
    gamma = rho / (8.0 * ll)
    K = c * (1.0 / rho) * ll**2 * math.log(n * ll / rho) * math.sqrt(horizon)
    lengths = block_lengths(horizon)
    ends = tuple(int(e) for e in np.cumsum(lengths))
    threshold = K - 2.0 * math.sqrt(horizon * math.log(n))
    unreachable = threshold > horizon - 1
    if scale is None and unreachable and len(ends) > 1:
        schedule = certified_schedule(ends[:-1], lengths[1:], n=n, rho=rho)
    else:
        scale = 1.0 if scale is None else scale
        schedule = tuple(min(1.0, scale * gamma / (2.0 * alpha * math.sqrt(t))) for t in ends[:-1])
    ours = decision_bound(schedule, ends[:-1], n) if unreachable else None
    if ours is not None and ours <= rho * (1.0 + 1e-9):
        certificate: str | None = "ours"
    elif c >= 1000.0 and scale is not None and scale <= 1.0:
        certificate = "theorem"
    else:
        certificate = None
        _uncertified(c, scale, rho, ours)
    return IidExpertsParams(
        algorithm=ALGORITHM, theorem=THEOREM, horizon=horizon, n=n, rho=rho, loglog=ll, alpha=alpha, gamma=gamma,
        K_constant=c, K=K, fallback_threshold=threshold,
        fallback_eps=math.sqrt(math.log(n) / horizon), block_lengths=lengths, block_ends=ends,
        eps_schedule=schedule,
        regret_bound=K, regret_bound_formula="K = C/rho * (lnln T)^2 * ln(n lnln T/rho) * sqrt(T)",
        certified=certificate is not None, noise_scale=scale, replicability_bound=ours, certificate=certificate,
    )


def _uncertified(K_constant: float, scale: float | None, rho: float, ours: float | None) -> None:
    """Say why no certificate holds: the theorem's needs the paper's C ≥ 1000 and the proof's noise
    (scale ≤ 1); ours needs an unreachable fallback and its bound at most ρ."""
    theorem = (f"K_constant={K_constant:g} is below the paper's 1000, which the proof of {THEOREM} uses"
               if K_constant < 1000.0 else f"noise_scale={scale} shrinks the proof's noise")
    mine = ("the fallback can fire, which our bound does not cover" if ours is None
            else f"our bound for these parameters is {ours:.4g} > rho")
    warn(f"iid-experts: {theorem}, and {mine}: rho={rho:g} is not certified (params.certified is False)",
         ReplicabilityWarning)


def regret_bound(*, horizon: int, n: int, rho: float, K_constant: float = 1000.0, noise_scale: float | None = None) -> float:
    """K: the algorithm's worst-case regret (``thm:vanilla_replicability_experts``). The fallback
    to FTPL once the running regret reaches K − 2√(T ln n) caps the regret at K whatever the
    noise, so ``noise_scale`` (which moves the replicability certificate) leaves K as it is."""
    return parameters(horizon=horizon, n=n, rho=rho, K_constant=K_constant, noise_scale=1.0).K


class IidExperts(Described):
    """Alg. ``vnilla_replicability_experts``; see the module docstring."""

    problem = "experts"

    def __init__(
        self, *, n: int, horizon: int, rng: np.random.Generator, rho: float, K_constant: float = 1000.0,
        noise_scale: float | None = None,
    ) -> None:
        self._start(parameters(horizon=horizon, n=n, rho=rho, K_constant=K_constant, noise_scale=noise_scale), rng,
                    first=0)  # block 1 plays expert 1

    def _start(self, params: Any, rng: np.random.Generator, *, first: int) -> None:
        """The state before step 1, for ``params`` (block ends, the ε of each later block, the
        fallback threshold) and the expert ``first`` that block 1 plays; a learner on another
        schedule (``perturbed-commit``) starts here too."""
        self.params = params
        self.n, self.horizon = params.n, params.horizon
        self._rng = rng
        self._t = 0
        self._cum = np.zeros(self.n)
        self._paid = 0.0  # Σ_t c_t(a_t): the running regret is _paid − min_a _cum[a]
        self._block = 0  # index of the current block (block i = _block + 1 in the paper)
        self._action = first
        self.noise: np.ndarray | None = None  # X^{(i)} of the current block
        self.switched_at: int | None = None  # the step after which FTPL took over, if it did
        self._anchor = np.zeros(self.n)  # c_{1:switch}: FTPL restarts from there
        self.ftpl_noise: np.ndarray | None = None  # FTPL's Geo(sqrt(ln n / T)) noise, after the switch

    @property
    def t(self) -> int:
        return self._t

    @property
    def block_size(self) -> int:
        """The length of the current block (1 once FTPL has taken over)."""
        return 1 if self.switched_at is not None else self.params.block_lengths[self._block]

    @property
    def eps(self) -> float | None:
        """The noise parameter in force: ε_i of the current block (None in block 1, which plays
        expert 1), or FTPL's after the switch."""
        if self.switched_at is not None:
            return self.params.fallback_eps
        return None if self._block == 0 else self.params.eps_schedule[self._block - 1]

    def act(self) -> int:
        return self._action

    def _new_block(self) -> None:
        self._block += 1
        self.noise = self._rng.geometric(self.eps, size=self.n).astype(np.float64)
        self._action = int(np.argmin(self._cum - self.noise))

    def _switch(self) -> None:
        self.switched_at = self._t
        self._anchor = self._cum.copy()
        self.ftpl_noise = self._rng.geometric(self.params.fallback_eps, size=self.n).astype(np.float64)
        self._action = self._ftpl_action(self._cum)

    def _ftpl_action(self, cum: np.ndarray) -> int:
        return int(np.argmin((cum - self._anchor) - self.ftpl_noise))

    def update(self, cost: Any) -> None:
        check_next_step(self._t, self.horizon)
        c = DOMAIN.check(cost, n=self.n, step=self._t + 1)
        self._paid += c[self._action]
        self._cum += c
        self._t += 1
        if self._t >= self.horizon:
            return
        if self.switched_at is not None:
            self._action = self._ftpl_action(self._cum)
        elif self._paid - self._cum.min() >= self.params.fallback_threshold:
            self._switch()
        elif self._t == self.params.block_ends[self._block]:
            self._new_block()

    # -- the engine's segment protocol (replify.engine): block sums wherever the check cannot fire
    def next_segment(self) -> tuple[int, bool]:
        """The steps the engine should draw next, and whether their sum is all this learner needs.

        The action is constant on a block, and the fallback check is the only thing that looks at
        single steps. The running regret grows by at most 1 a step (costs lie in [0, 1]: what is
        paid grows by at most 1, the best expert's total never falls), so from a running regret r
        no check can fire in the next ⌈threshold − r⌉ − 1 steps: those are summed (the whole rest
        of the block, at practical thresholds); only closer to the threshold, and after the switch
        to FTPL, are single steps drawn (chunks of at most ``CHUNK_ROWS``, played by :meth:`run`)."""
        left = self.horizon - self._t
        if left <= 0:
            check_next_step(self._t, self.horizon)  # raises
        if self.switched_at is not None:
            return min(left, CHUNK_ROWS), False
        block_left = self.params.block_ends[self._block] - self._t
        room = self.params.fallback_threshold - (self._paid - self._cum.min())
        free = math.ceil(room) - 1 if math.isfinite(room) else block_left
        if free >= block_left:
            return block_left, True
        if free >= MIN_SUMMED:
            return free, True
        return min(block_left, CHUNK_ROWS), False

    def advance(self, total: Any, steps: int) -> None:
        """Play ``steps`` steps of a summed segment (as :meth:`next_segment` gave it) whose costs
        add up to ``total``: pay ``total`` at the block's action, and open the next block at the
        block's end. Equal in law to stepping, as the check cannot fire inside the segment."""
        steps = check_int("steps", steps, minimum=1)
        allowed, summed = self.next_segment()
        if not summed or steps > allowed:
            raise InvalidArgumentError(
                f"advance(total, steps={steps}) at step {self._t}: the learner can take at most "
                f"{allowed if summed else 0} summed steps here (next_segment() says so)"
            )
        total = np.asarray(total, dtype=np.float64)
        if total.shape != (self.n,) or not np.isfinite(total).all():
            raise InvalidArgumentError(f"advance: total must be {self.n} finite cost sums; got {total.tolist()}")
        self._paid += float(total[self._action])
        self._cum = self._cum + total
        self._t += steps
        if self._t < self.horizon and self._t == self.params.block_ends[self._block]:
            self._new_block()

    def run(self, costs: Any) -> np.ndarray:
        """Actions ``(L,)`` on ``costs`` ``(L, n)``, bit-identical to stepping. Inside a block the
        running regret of every step is computed at once and the first step that reaches the
        threshold found with numpy; Python runs once per block (and once at the switch)."""
        c = DOMAIN.check_matrix(costs, n=self.n, first_step=self._t + 1)
        check_remaining(self._t, c.shape[0], self.horizon)
        out = np.empty(c.shape[0], dtype=np.int64)
        threshold = self.params.fallback_threshold
        for start in range(0, c.shape[0], CHUNK_ROWS):
            chunk = c[start : start + CHUNK_ROWS]
            t0, m = self._t, chunk.shape[0]
            cums = running_sums(self._cum, chunk)
            pos = 0
            while pos < m:
                if self.switched_at is not None:  # FTPL: one argmin over the rest of the chunk
                    acts = np.argmin((cums[pos:m] - self._anchor) - self.ftpl_noise, axis=1)
                    out[start + pos : start + m] = acts
                    self._paid = running_sums(np.array([self._paid]), chunk[np.arange(pos, m), acts][:, None])[-1, 0]
                    if t0 + m < self.horizon:
                        self._action = self._ftpl_action(cums[m])
                    break
                end = min(m, self.params.block_ends[self._block] - t0)  # chunk rows of this block
                a = self._action
                paid = running_sums(np.array([self._paid]), chunk[pos:end, a][:, None])[1:, 0]
                steps = t0 + np.arange(pos + 1, end + 1)
                hit = np.flatnonzero((paid - cums[pos + 1 : end + 1].min(axis=1) >= threshold) & (steps < self.horizon))
                stop = end if hit.size == 0 else pos + int(hit[0]) + 1
                out[start + pos : start + stop] = a
                self._paid = paid[stop - pos - 1]
                self._t, self._cum = t0 + stop, cums[stop].copy()
                pos = stop
                if hit.size:
                    self._switch()
                elif self._t == self.params.block_ends[self._block] and self._t < self.horizon:
                    self._new_block()
            self._t, self._cum = t0 + m, cums[m].copy()
        return out


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "iid-experts", IidExperts, "experts",
            norm="linf", cost_range=(0.0, 1.0), guarantee="iid",
            parameters=parameters, regret_bound=regret_bound, test_params={"rho": 0.1},
            enforces={"horizon", "domain"}, description="FTPL with varying noise and block lengths (Alg. vnilla_replicability_experts), iid rho-replicable",
        )
    )
