"""``rep-gap-elimination``: replicable successive elimination whose certificate charges each arm once,
at the one phase whose threshold range can hold its gap.

**What is theirs and what is ours.** Random thresholds shared by the two runs are the mechanism of
the replicable-bandits literature (Esfandiari, Kalavasis, Karbasi, Krause, Mirrokni & Velegkas,
"Replicable Bandits", ICLR 2023; Impagliazzo, Lei, Pitassi & Sorrell's replicable statistical
queries, STOC 2022), and Komiyama, Ito, Yoshida & Koshino ("Replicability is asymptotically free in
multi-armed bandits", arXiv 2402.07391) show that with care the price of replicability vanishes as
T grows. The schedule below — one geometric threshold range per phase, disjoint across phases once
widened by the concentration radius, so that the union bound runs over arms rather than over
arms × phases — and every constant are ours, derived here and attacked in
``tests/algorithms/test_rep_gap_elimination.py``. It is not a transcription of either paper.

**The algorithm** (costs in [0, 1], n arms, horizon T, target ρ; notation of ``docs/certificates.md``:
two runs share R and see independent iid draws). Phase p = 1, …, P brings every active arm to N_p
pulls (round robin over the active arms). Let a_p = r^{−p} (r = ``ratio``, 3 by default) and

    ε_p = sqrt(ln(2n/δ_p) / (2 n_p))                        (Hoeffding radius of one arm's mean)
    lo_p = a_p + 2ε_p,   hi_p = min(1, r·a_p) − 2ε_{p−1}      (ε_0 = 0),   w_p = hi_p − lo_p > 0.

At the end of phase p, with m_i the mean of arm i's n_p = N_p − N_{p−1} costs *of this phase*
(N_0 = 0) and M = min over active arms of m_j, draw θ_p ~ U[lo_p, hi_p) from R and drop every
active arm with Ĝ_i = m_i − M > θ_p. After phase P the survivors are played round robin to the
horizon. (Deciding on each phase's own costs only costs a share 1/r² of them, and makes the active
set, fixed by earlier phases, independent of the costs a decision reads.)

**Replicability (iid, certified).** Model arm i's costs as an iid stack read in order (for an iid
adversary the costs an arm sees in the order it is pulled are iid, the schedule being fixed before
they are seen): its mean over cards N_{p−1}+1 … N_p, m_i, is defined whatever the history. Let G be
the event that in both runs, at every phase, every arm's mean is within ε_p of μ_i; by Hoeffding and
a union bound over the n arms, the P phases and the two runs, P(not G) ≤ 2 Σ_p δ_p.

On G the best arm is never dropped (its Ĝ ≤ 2ε_p < lo_p ≤ θ_p), so Δ_i = μ_i − min_j μ_j is the
gap to an active arm, and |Ĝ_i − Δ_i| ≤ 2ε_p in both runs. If the runs agree through phase p − 1
they part at phase p only if θ_p falls between Ĝ_i and Ĝ'_i for some arm i. On G that needs
Δ_i ∈ V_p = (lo_p − 2ε_p, hi_p + 2ε_p) = (a_p, min(1, r·a_p) − 2ε_{p−1} + 2ε_p), and V_p lies left
of a_{p−1} = r·a_p, the open left end of V_{p−1} (ε_p ≤ ε_{p−1}): **each arm can be charged at one
phase at most**, and the best arm at none. Given the history F_{p−1} (the earlier thresholds and
cards), on which the runs agree, the active set A is fixed, both runs' phase-p means are
independent copies independent of F_{p−1}, and θ_p is independent of all of them, so

    P(θ_p between Ĝ_i and Ĝ'_i | F_{p−1}) ≤ E|Ĝ_i − Ĝ'_i| / w_p ≤ sqrt(2 Var Ĝ_i) / w_p
                                          ≤ sqrt(5/2) / (sqrt(n_p) · w_p) =: q_p,

by Cauchy–Schwarz (Ĝ_i and Ĝ'_i are independent copies) and the Efron–Stein inequality for
Ĝ_i = m_i − M_A as a function of the phase's n_p·|A| independent costs in [0, 1]: replacing one of
arm i's costs by an independent copy moves Ĝ_i by at most |c − c'|/n_p (if i is the argmin on both
sides Ĝ_i stays 0; if on one side, the move is at most that of m_i), a mean square of at most
1/(2n_p²); replacing one of arm j's costs (j ≠ i) moves Ĝ_i only through M_A, by at most 1/n_p and
only if j is the argmin before or after. So Var Ĝ_i ≤ ½ (n_p · 1/(2n_p²) + Σ_j n_p · 2P(j is the
argmin)/n_p²) ≤ ½ (1/(2n_p) + 2/n_p) = 5/(4n_p) — whatever the number of arms and their ties
(the argmin is the lowest index among the minima). With at most n − 1 arms of positive gap,

    ρ ≤ 2 Σ_{p ≤ P} δ_p + (n − 1) · max_p q_p.

Where to spend ρ: an instance may put every arm of positive gap in the range of one phase, so the
certificate pays (n − 1)·max_p q_p, and a split that gives some phases a larger share of ρ only
raises that maximum: each phase gets the same charge. What the early phases save is pulls — their
ranges are wide, so the same charge needs far fewer of them (N_p grows as 1/w_p² ≈ 9^p) — and that
is where the regret is saved. The default schedule spends ``delta_share``·ρ (default 2%) on the
first term, δ_p equal across phases, and takes each N_p the smallest (above N_{p−1}) with w_p > 0, q_p ≤ (1 − delta_share)·ρ
/ (n − 1), ε_p ≤ ε_{p−1} (the disjointness above needs it) and ε_p ≤ (1 − 1/r)·a_p/4 (so that the
next phase's range is not empty: without it a loose ρ would stop after one phase): the bound is
then at most ρ (``params.certified``). ``pull_scale`` < 1 shortens every
phase, keeping the thresholds: the bound is recomputed for the shorter phases — larger than ρ, or
none at all (infinite) when their radii no longer keep lo_p > 2ε_p and the widened ranges
disjoint: measured, not certified. Against costs whose law changes over time the stack argument fails: measured only.

**Regret** (not certified). On G an arm of gap Δ ∈ (a_p, r·a_p) is dropped at phase p with
probability about (Δ − lo_p)/w_p and surely at phase p + 1, after N_{p+1} ≈ r²·N_p pulls; N_p grows
as (n/(ρ a_p))²: the (n/ρ)² price of a union over arms, once per arm, that the papers discuss.
``rep-elimination``'s bound charges every arm at every phase; the regret of both, on the same
means, is measured in ``docs/bandits.md``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import attrs
import numpy as np

import replify
from replify.base.checks import check_int, check_positive, check_rho
from replify.errors import InvalidArgumentError
from replify_plugins.bandits.rep_elimination import RepElimination

#: Phases beyond which no schedule is searched (r^−60 is below any gap a double can hold).
MAX_PHASES = 60


@attrs.frozen(kw_only=True)
class GapParams:
    """The schedule in force: the phase ends ``pulls`` (N_p), the threshold ranges [lo_p, hi_p),
    the radii ε_p (on each phase's own n_p = N_p − N_{p−1} pulls) and failure probabilities δ_p,
    each phase's charge q_p, and the bound."""

    horizon: int
    n: int
    rho: float
    ratio: float
    delta_share: float
    pull_scale: float
    pulls: tuple[int, ...]
    lows: tuple[float, ...]
    highs: tuple[float, ...]
    radii: tuple[float, ...]
    deltas: tuple[float, ...]
    charges: tuple[float, ...]
    rho_bound: float
    certified: bool
    overrides: tuple[str, ...] = ()
    calibration: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class PhaseModel:
    """What a phased elimination with one threshold range per phase needs of its estimates: with
    ``fresh`` samples in a phase (each arm's own pulls here; the size of a design for
    ``rep-linear-elimination``), the radius ε = sqrt(``spread``·ln(2n/δ)/fresh) within which every
    arm's estimate lies but with probability δ, the charge q = ``charge``/(sqrt(fresh)·w) of one arm
    at its phase, and the gaps' scale ``top`` (a_p = top·r^{−p}; ranges capped at top). The
    defaults are this module's: Hoeffding's radius and the Efron–Stein charge sqrt(5/2), costs in [0, 1]."""

    spread: float = 0.5
    charge: float = math.sqrt(2.5)
    top: float = 1.0


#: this module's estimates: each arm's mean of its own costs in [0, 1]
HOEFFDING = PhaseModel()


def charge(*, fresh: float, width: float, model: PhaseModel = HOEFFDING) -> float:
    """q_p = sqrt(5/2) / (sqrt(n_p)·w_p): one arm's charge at its phase, n_p the phase's own pulls
    of each active arm (module docstring); ``model.charge`` in place of sqrt(5/2) for other estimates."""
    return model.charge / (math.sqrt(fresh) * width)


def replicability_bound(*, n: int, deltas: Any, charges: Any) -> float:
    """2 Σ_p δ_p + (n − 1)·max_p q_p: the iid bound of the module docstring."""
    deltas, charges = np.asarray(deltas, dtype=float), np.asarray(charges, dtype=float)
    return float(2.0 * deltas.sum() + (n - 1) * (charges.max() if charges.size else 0.0))


def _ranges(n: int, pulls: list[int], delta: float, ratio: float,
            model: PhaseModel = HOEFFDING) -> tuple[list, list, list]:
    """ε_p, lo_p, hi_p for the phase ends ``pulls`` at failure probability ``delta`` per phase."""
    radii, lows, highs, prev, done = [], [], [], 0.0, 0
    for p, pulls_p in enumerate(pulls, start=1):
        a = model.top * ratio**-p
        eps = math.sqrt(math.log(2.0 * n / delta) / ((pulls_p - done) / model.spread))
        done = pulls_p
        radii.append(eps)
        lows.append(a + 2.0 * eps)
        highs.append(min(model.top, ratio * a) - 2.0 * prev)
        prev = eps
    return radii, lows, highs


def _schedule(n: int, horizon: float, delta: float, ratio: float, target: float,
              model: PhaseModel = HOEFFDING) -> list[int]:
    """The smallest N_1 < N_2 < … with w_p > 0 and q_p ≤ ``target``, while 2·N_p ≤ T."""
    out: list[int] = []
    prev_eps = 0.0
    log_term = math.log(2.0 * n / delta)
    for p in range(1, MAX_PHASES + 1):
        a = model.top * ratio**-p

        done = out[-1] if out else 0

        def fits(pulls: int) -> bool:
            eps = math.sqrt(log_term / ((pulls - done) / model.spread))
            width = min(model.top, ratio * a) - 2.0 * prev_eps - a - 2.0 * eps
            # ε_p ≤ ε_{p−1} keeps the widened ranges disjoint; ε_p ≤ (1 − 1/r)·a_p/4 leaves the next
            # phase a range (hi_{p+1} = a_p − 2ε_p above lo_{p+1}), so a loose ρ still gets phases
            return (width > 0 and (not out or eps <= prev_eps) and eps <= (1.0 - 1.0 / ratio) * a / 4.0
                    and charge(fresh=pulls - done, width=width, model=model) <= target)

        step = 1  # the phase's own pulls: doubled until they fit, then bisected
        while not fits(done + step):
            step *= 2
            if done + step > horizon:
                return out
        low, high = done + step // 2 + 1, done + step
        while low < high:
            mid = (low + high) // 2
            if fits(mid):
                high = mid
            else:
                low = mid + 1
        if 2 * low > horizon:
            return out
        out.append(low)
        prev_eps = math.sqrt(log_term / ((low - done) / model.spread))
    return out


@functools.lru_cache(maxsize=256)
def _phases(n: int, reach: float, budget: float, ratio: float, target: float,
            model: PhaseModel = HOEFFDING) -> tuple[tuple[int, ...], int]:
    """δ_p = budget/P: the largest P whose schedule at that δ_p still has P phases, and that
    schedule (a larger P means a smaller δ_p, longer phases and fewer of them: the first P that
    fails ends the search). Cached: every pair of an evaluation builds the learner twice."""
    best: list[int] = []
    phases = 1
    for count in range(1, MAX_PHASES + 1):
        found = _schedule(n, reach, budget / count, ratio, target, model)
        if len(found) < count:
            break
        best, phases = found[:count], count
    return tuple(best), phases


def gap_parameters(
    *, horizon: int, n: int, rho: float, ratio: float | None = None, delta_share: float | None = None,
    pull_scale: float | None = None,
) -> GapParams:
    """The schedule, ranges and bound for (T, n, ρ); the defaults certify iid ρ-replicability."""
    rho = check_rho(rho)
    horizon, n = check_int("horizon", horizon, minimum=1), check_int("n", n, minimum=2)
    given = {"ratio": ratio, "delta_share": delta_share, "pull_scale": pull_scale}
    overrides = tuple(k for k, v in given.items() if v is not None)
    r = 3.0 if ratio is None else check_positive("ratio", ratio)
    if not r > 1.0:
        raise InvalidArgumentError(f"ratio must be above 1 (the threshold ranges shrink by it each phase); got {r}")
    share = 0.02 if delta_share is None else check_positive("delta_share", delta_share)
    if not share < 1.0:
        raise InvalidArgumentError(f"delta_share must be in (0, 1) (the share of rho spent on failures); got {share}")
    scale = 1.0 if pull_scale is None else check_positive("pull_scale", pull_scale)
    return GapParams(horizon=horizon, n=n, rho=rho, ratio=r, delta_share=share, pull_scale=scale, overrides=overrides,
                     **phase_schedule(horizon=horizon, n=n, rho=rho, ratio=r, share=share, scale=scale))


def phase_schedule(*, horizon: float, n: int, rho: float, ratio: float, share: float, scale: float,
                   model: PhaseModel = HOEFFDING) -> dict[str, Any]:
    """The phase ends, threshold ranges, radii, failure probabilities, charges and bound of the
    module docstring for estimates of the kind ``model`` says (``rep-linear-elimination`` brings its
    own), ``pulls`` scaled by ``scale``; ``certified``: whether the bound is at most ρ."""
    target = (1.0 - share) * rho / (n - 1)
    # δ_p = share·ρ/(2P); the unscaled schedule whose scaled phases fit the horizon
    best, phases = _phases(n, horizon / scale, share * rho / 2.0, ratio, target, model)
    delta = share * rho / (2.0 * phases)
    pulls: list[int] = []
    for v in best:  # shortened, and still increasing
        pulls.append(max(math.ceil(v * scale), pulls[-1] + 1 if pulls else 1))
    # the thresholds are the full schedule's; the radii and charges are those of the phases played
    _, lows, highs = _ranges(n, list(best), delta, ratio, model)
    radii = _ranges(n, pulls, delta, ratio, model)[0]
    fresh = np.diff(np.concatenate([[0], pulls]))
    charges = [charge(fresh=float(v), width=h - lo, model=model) for v, lo, h in zip(fresh, lows, highs)]
    # the derivation needs lo_p > 2 eps_p and the widened ranges (lo_p - 2 eps_p, hi_p + 2 eps_p)
    # disjoint: a shortened schedule whose radii break either certifies nothing
    left = [lo - 2.0 * e for lo, e in zip(lows, radii)]
    right = [h + 2.0 * e for h, e in zip(highs, radii)]
    # (compared to rounding: with ε_p = ε_{p−1}, which the schedule allows, the two ends are one
    # number computed two ways, and a difference in the last bit is not an overlap)
    if any(lo <= 2.0 * e for lo, e in zip(lows, radii)) or any(
            right[i] > left[i - 1] + 1e-12 * abs(left[i - 1]) for i in range(1, len(pulls))):
        charges = [math.inf] * len(pulls)
    deltas = [delta] * len(pulls)
    bound = replicability_bound(n=n, deltas=deltas, charges=charges)
    return {"pulls": tuple(pulls), "lows": tuple(lows), "highs": tuple(highs), "radii": tuple(radii),
            "deltas": tuple(deltas), "charges": tuple(charges), "rho_bound": bound,
            "certified": bound <= rho * (1 + 1e-12)}


class RepGapElimination(RepElimination):
    """Successive elimination on gaps to the empirical best, each phase with a threshold drawn
    from its own range (module docstring)."""

    _params = ("ratio", "delta_share", "pull_scale")

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, rho: float, ratio: float | None = None,
                 delta_share: float | None = None, pull_scale: float | None = None) -> None:
        # the base's phase machinery (round robin to N_p, batches, stepping), with this schedule
        super(RepElimination, self).__init__(n=n, horizon=horizon)
        self.params = gap_parameters(horizon=self.horizon, n=self.n, rho=rho, ratio=ratio, delta_share=delta_share,
                                     pull_scale=pull_scale)
        p = self.params
        self.rho, self.ratio, self.delta_share, self.pull_scale = p.rho, p.ratio, p.delta_share, p.pull_scale
        self.rule = "eliminate"
        self._rng = rng
        self._pulls = np.asarray(p.pulls, dtype=np.int64)
        self._lows, self._highs = np.asarray(p.lows), np.asarray(p.highs)
        self.active = np.arange(self.n)
        self.phase = 0
        self._mark = np.zeros(self.n)  # the cost sums at the start of the phase
        self._plan()

    def _decide(self) -> None:
        """The end of a phase: drop every active arm whose gap to the empirical best, on this
        phase's own costs, exceeds a threshold drawn from this phase's range."""
        p = self.phase
        fresh = self._pulls[p] - (self._pulls[p - 1] if p else 0)
        means = (self.sums[self.active] - self._mark[self.active]) / fresh
        low, high = float(self._lows[p]), float(self._highs[p])
        threshold = low + (high - low) * self._rng.random()
        self.active = self.active[~(means - means.min() > threshold)]
        self._mark = self.sums.copy()
        self.phase += 1


@replify.hookimpl
def register_learners(register):
    register(replify.LearnerSpec(
        "rep-gap-elimination", RepGapElimination, "experts", parameters=gap_parameters, norm="linf",
        cost_range=(0.0, 1.0), guarantee="iid", enforces={"horizon", "domain"}, feedback="bandit",
        test_params={"rho": 0.2, "pull_scale": 1e-3},
        description="replicable successive elimination, one threshold range per phase, each arm charged once "
        "(our bound); bandit feedback; iid rho-replicable",
    ))
