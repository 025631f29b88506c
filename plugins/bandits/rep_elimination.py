"""``rep-elimination`` and ``rep-etc``: replicable batched elimination and explore-then-commit on
means rounded on a random grid — the mechanism of the replicable-bandits literature:

* Esfandiari, Kalavasis, Karbasi, Krause, Mirrokni & Velegkas, "Replicable Bandits", ICLR 2023:
  batched arm elimination in which every decision reads only the arms' mean estimates rounded on
  a grid whose offset is drawn from the shared randomness R, so that the two runs decide alike
  unless a grid line falls between their two estimates;
* Komiyama, Ito, Yoshida & Koshino, "Replicability is asymptotically free in multi-armed bandits"
  (arXiv 2402.07391): the replicable explore-then-commit (REC — explore every arm alike, then
  commit at once to one arm) and successive elimination (RSE) forms, with randomness in the
  decisions and care in the size of the confidence bounds.

**What is theirs and what is ours.** The papers' pseudocode and constants were not available to
us when this was written (only their abstracts and reviews were); this module is the mechanism
they describe, with **our** schedule, thresholds and replicability bound, derived below and tested
(``tests/test_rep_elimination.py``). It is not a transcription of either paper's algorithm, and
its numbers are not theirs.

**The algorithm** (costs in [0, 1], n arms, horizon T). Phase p = 1, …, P brings every active arm
to N_p = N₁·2^{p−1} pulls (round robin over the active arms; P is the last phase with 2·N_P ≤ T).
At the end of phase p, with m_i the mean cost of arm i's N_p pulls:

    draw u_p ~ U[0, 1) from R;  r_i = the point of the grid {(u_p + z)·w_p : z ∈ Z} in [m_i, m_i + w_p)
    β_p = c_β·sqrt(ln(2nP/δ) / (2N_p))             (Hoeffding, all arms and phases; δ = 1/T by default)
    arm i is beaten if r_i − min_j r_j > 2β_p + w_p  (then μ_i > μ_j with probability ≥ 1 − δ)
    rep-elimination: drop the beaten arms;   rep-etc: commit to argmin_j r_j if every other arm is beaten
    one arm left: play it to the horizon.   After phase P: the active arms round robin to the horizon.

**Replicability (iid, certified).** For iid costs, arm i's N_p costs are its first N_p draws
whatever the schedule, so in the two runs its means m_i, m'_i are independent with the same
law, of variance ≤ 1/(4N_p), and E|m_i − m'_i| ≤ sqrt(E(m_i − m'_i)²) ≤ sqrt(1/(2N_p)). The offset
u_p is independent of both, so the two roundings differ with probability E min(1, |m_i − m'_i|/w_p).
Every decision reads only the rounded means; the runs can therefore part only at a phase end where
some arm's rounding differs, and a union bound over arms and phases gives

    ρ ≤ Σ_{p ≤ P} n·sqrt(1/(2N_p)) / w_p.

The default widths spend ρ on the phases in proportion to sqrt(N_p): phase p's term is
ρ_p = ρ·sqrt(N_p)/Σ_q sqrt(N_q), so w_p = n·sqrt(1/(2N_p))/ρ_p = n·S/(sqrt(2)·ρ·N_p) with
S = Σ_q sqrt(N_q) ≈ 3.4·sqrt(N_P). The terms sum to ρ: the learner is then iid ρ-replicable
(``params.certified``). (An equal split, ρ/P per phase, would make the last, finest grid P/3.4
times coarser: the late phases, where small gaps are decided, get the larger share.)
``width_scale`` multiplies w_p: below 1 the bound no longer holds and ρ is measured
(``replify.stress``) or calibrated (``replify.calibrate``). Against costs whose law changes over
time (``crossing``) the stack argument fails: measured only.

**Regret** (not certified). With probability ≥ 1 − δ the best arm is never dropped (or committed
against); an arm of gap Δ is beaten once 2β_p + 2w_p < Δ. The certified last grid is
w_P ≈ 2.4·n/(ρ·sqrt(N_P)) — the K²/ρ² price the papers discuss — so at T = 10⁵, n = 10, ρ = 0.1 it
is about 1.3 wide, resolves no gap below 1, and the learner plays like ``constant`` (measured in
``docs/bandits.md``).
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

import replify
from replify.base.checks import check_int, check_positive, check_rho
from replify.errors import InvalidArgumentError
from replify.components.bandits import BanditLearner
from replify.components.grid import grid_point

RULES = ("eliminate", "commit")
#: The most arms one next_batch() hands out (8 MiB of them): a phase runs as several batches.
MAX_BATCH = 1 << 20


def phase_pulls(*, horizon: int, first_pulls: int) -> np.ndarray:
    """N_1, …, N_P: the per-arm pulls at each phase end, N_p = N₁·2^{p−1}, while 2·N_p ≤ T (a
    decision needs at least two arms pulled N_p times). Empty when T < 2·N₁."""
    out, pulls = [], first_pulls
    while 2 * pulls <= horizon:
        out.append(pulls)
        pulls *= 2
    return np.asarray(out, dtype=np.int64)


def replicability_bound(*, n: int, pulls: np.ndarray, widths: np.ndarray) -> float:
    """Σ_p n·sqrt(1/(2N_p))/w_p: the iid bound on ρ derived in the module docstring."""
    if pulls.size == 0:
        return 0.0
    return float(np.sum(n * np.sqrt(0.5 / pulls) / widths))


@attrs.frozen(kw_only=True)
class EliminationParams:
    """The parameters in force: the phase ends (``pulls``), the grid widths w_p and confidence
    radii β_p at each, and whether they certify ρ (``rho_bound`` ≤ ρ: ``width_scale`` ≥ 1)."""

    horizon: int
    n: int
    rho: float
    rule: str
    first_pulls: int
    width_scale: float
    confidence_scale: float
    delta: float
    pulls: tuple[int, ...]
    widths: tuple[float, ...]
    radii: tuple[float, ...]
    rho_bound: float
    certified: bool
    overrides: tuple[str, ...] = ()
    calibration: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def parameters(
    *, horizon: int, n: int, rho: float, rule: str = "eliminate", first_pulls: int | None = None,
    width_scale: float | None = None, confidence_scale: float | None = None, delta: float | None = None,
) -> EliminationParams:
    """The schedule, widths and radii for (T, n, ρ); the defaults certify iid ρ-replicability."""
    rho = check_rho(rho)
    horizon, n = check_int("horizon", horizon, minimum=1), check_int("n", n, minimum=2)
    if rule not in RULES:
        raise InvalidArgumentError(f"rule must be one of {RULES}; got {rule!r}")
    given = {"first_pulls": first_pulls, "width_scale": width_scale, "confidence_scale": confidence_scale,
             "delta": delta}
    overrides = tuple(k for k, v in given.items() if v is not None)
    n1 = 16 if first_pulls is None else check_int("first_pulls", first_pulls, minimum=1)
    scale = 1.0 if width_scale is None else check_positive("width_scale", width_scale)
    c_beta = 1.0 if confidence_scale is None else check_positive("confidence_scale", confidence_scale)
    d = min(0.5, 1.0 / horizon) if delta is None else check_positive("delta", delta)  # 1/T, kept < 1 at T = 1
    if not d < 1.0:
        raise InvalidArgumentError(f"delta must be in (0, 1) (a failure probability); got {d}")
    pulls = phase_pulls(horizon=horizon, first_pulls=n1)
    phases = max(1, pulls.size)
    # phase p's term of the bound is ρ_p/width_scale, ρ_p = ρ·sqrt(N_p)/Σ_q sqrt(N_q)
    shares = rho * np.sqrt(pulls) / np.sqrt(pulls).sum() if pulls.size else np.empty(0)
    widths = scale * n * np.sqrt(0.5 / pulls) / shares if pulls.size else np.empty(0)
    radii = c_beta * np.sqrt(math.log(2.0 * n * phases / d) / (2.0 * pulls)) if pulls.size else np.empty(0)
    bound = replicability_bound(n=n, pulls=pulls, widths=widths)
    return EliminationParams(
        horizon=horizon, n=n, rho=rho, rule=rule, first_pulls=n1, width_scale=scale, confidence_scale=c_beta, delta=d,
        pulls=tuple(int(v) for v in pulls), widths=tuple(float(v) for v in widths),
        radii=tuple(float(v) for v in radii), rho_bound=bound, certified=bound <= rho * (1 + 1e-12), overrides=overrides,
    )


class RepElimination(BanditLearner):
    """Phases of round-robin pulls; decisions on means rounded on a grid with an offset from R
    (module docstring). ``rule="eliminate"`` drops beaten arms; ``rule="commit"`` commits when
    every arm but one is beaten."""

    _params = ("rule", "first_pulls", "width_scale", "confidence_scale", "delta")

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, rho: float, rule: str = "eliminate",
                 first_pulls: int | None = None, width_scale: float | None = None,
                 confidence_scale: float | None = None, delta: float | None = None) -> None:
        super().__init__(n=n, horizon=horizon)
        self.params = parameters(horizon=self.horizon, n=self.n, rho=rho, rule=rule, first_pulls=first_pulls,
                                 width_scale=width_scale, confidence_scale=confidence_scale, delta=delta)
        p = self.params
        self.rho, self.rule, self.first_pulls = p.rho, p.rule, p.first_pulls
        self.width_scale, self.confidence_scale, self.delta = p.width_scale, p.confidence_scale, p.delta
        self._rng = rng
        self._pulls = np.asarray(p.pulls, dtype=np.int64)
        self._widths, self._radii = np.asarray(p.widths), np.asarray(p.radii)
        self.active = np.arange(self.n)
        self.phase = 0  # decisions taken so far
        self._plan()

    def _plan(self) -> None:
        """The next batch: the next phase's round robin over the active arms, or (after the last
        decision, or with one arm left) the active arms round robin to the horizon. Its arms are
        ``self._cycle[j % len(cycle)]`` for j < ``self._length``: never materialised whole (a phase
        at T = 10⁹ is billions of steps)."""
        left = self.horizon - self._t
        if self.active.size > 1 and self.phase < self._pulls.size:
            done = int(self._pulls[self.phase - 1]) if self.phase else 0
            length = min(left, (int(self._pulls[self.phase]) - done) * self.active.size)
        else:
            length = left
        self._cycle, self._length, self._j = self.active.copy(), length, 0
        self._given = np.empty(0, dtype=np.int64)
        self._action = int(self._cycle[0])

    def _decide(self) -> None:
        """The end of a phase: round the active arms' means on a fresh grid, then drop (or commit)."""
        p = self.phase
        width, radius = float(self._widths[p]), float(self._radii[p])
        means = self.sums[self.active] / self._pulls[p]
        offset = np.full(self.active.size, self._rng.random())  # one offset per phase, from R
        rounded = grid_point(means, offset, 1.0 / width)
        beaten = rounded - rounded.min() > 2.0 * radius + width
        if self.rule == "eliminate":
            self.active = self.active[~beaten]
        elif np.count_nonzero(beaten) == self.active.size - 1:
            self.active = self.active[~beaten]
        self.phase += 1

    def _end_batch(self) -> None:
        if self.active.size > 1 and self.phase < self._pulls.size:
            self._decide()
        if self._t < self.horizon:
            self._plan()

    # -- stepping (act/update): the base class calls _learn then _choose
    def _learn(self, action: int, cost: float) -> None:
        self._j += 1

    def _choose(self) -> int:
        if self._j == self._length:
            self._end_batch()
        return int(self._cycle[self._j % self._cycle.size])

    # -- batches: the current phase, in slices of at most MAX_BATCH arms
    def next_batch(self) -> np.ndarray:
        """The next arms of the current phase (at most ``MAX_BATCH``): fixed by the active arms."""
        size = min(MAX_BATCH, self._length - self._j)
        self._given = self._cycle[(self._j + np.arange(size)) % self._cycle.size]
        return self._given.copy()

    def observe(self, costs: Any) -> None:
        """The costs of the arms the last :meth:`next_batch` gave, in order."""
        arms = self._given
        self._batch_costs(arms, costs)
        self._t += arms.size
        self._j += arms.size
        self._given = np.empty(0, dtype=np.int64)
        if self._j == self._length and self._t < self.horizon:
            self._end_batch()


    # -- cycles: the rest of the current phase as a round robin, for the engine's block-sum path
    def next_cycle(self) -> tuple[np.ndarray, int]:
        """The rest of the current phase as ``(arms, length)``: its steps play
        ``arms[j % len(arms)]`` for j < length. The engine's block-sum path asks for it on an iid
        adversary and answers with :meth:`observe_sums`."""
        k = self._cycle.size
        return np.roll(self._cycle, -(self._j % k)), self._length - self._j

    def observe_sums(self, sums: Any, pulls: Any) -> None:
        """Each arm's cost sum ``sums`` and pull count ``pulls`` (both (n,)) over the steps of the
        last :meth:`next_cycle`."""
        length = self._length - self._j
        self._cycle_sums(sums, pulls, length)
        self._t += length
        self._j = self._length
        self._given = np.empty(0, dtype=np.int64)
        if self._t < self.horizon:
            self._end_batch()


class RepETC(RepElimination):
    """Explore-then-commit: ``rep-elimination`` with ``rule="commit"`` (module docstring)."""

    _params = ("first_pulls", "width_scale", "confidence_scale", "delta")

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, rho: float, first_pulls: int | None = None,
                 width_scale: float | None = None, confidence_scale: float | None = None,
                 delta: float | None = None) -> None:
        super().__init__(n=n, horizon=horizon, rng=rng, rho=rho, rule="commit", first_pulls=first_pulls,
                         width_scale=width_scale, confidence_scale=confidence_scale, delta=delta)


def etc_parameters(
    *, horizon: int, n: int, rho: float, first_pulls: int | None = None, width_scale: float | None = None,
    confidence_scale: float | None = None, delta: float | None = None,
) -> EliminationParams:
    """:func:`parameters` with ``rule="commit"``."""
    return parameters(horizon=horizon, n=n, rho=rho, rule="commit", first_pulls=first_pulls, width_scale=width_scale,
                      confidence_scale=confidence_scale, delta=delta)


@replify.hookimpl
def register_learners(register):
    common = dict(norm="linf", cost_range=(0.0, 1.0), guarantee="iid",
                  test_params={"rho": 0.2, "first_pulls": 3, "width_scale": 0.01})
    register(replify.LearnerSpec(
        "rep-elimination", RepElimination, "experts", parameters=parameters,
        enforces={"horizon", "domain"}, feedback="bandit", description="replicable batched elimination on randomly rounded means (after Esfandiari et al. 2023, "
        "Komiyama et al.'s RSE), bandit feedback; iid rho-replicable (our bound)", **common,
    ))
    register(replify.LearnerSpec(
        "rep-etc", RepETC, "experts", parameters=etc_parameters,
        enforces={"horizon", "domain"}, feedback="bandit", description="replicable explore-then-commit on randomly rounded means (after Komiyama et al.'s REC), "
        "bandit feedback; iid rho-replicable (our bound)", **common,
    ))
