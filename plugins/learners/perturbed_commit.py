"""``perturbed-commit``: play an expert drawn from R, then commit, at a few decision steps
t_1 < … < t_K, to the leader of the costs so far perturbed by fresh Gumbel noise — a draw from
Hedge's weights by an exponential race shared by the two runs. Adversarially ρ-replicable, and a
learner on stochastic costs.

    draw e ~ U{1..n} from R.
    t = 1..t_1:              play e
    after step t_k:          draw G^{(k)}_a iid standard Gumbel from R;
                             play argmin_a c_{1:t_k}(a) − G^{(k)}_a/ε_k until step t_{k+1} (t_{K+1} = T)

**What is the paper's and what is ours.** Committing to a perturbed leader with fresh noise at
a few block decisions is the shape of the paper's iid-replicable experts algorithm (§6, Alg.
``vnilla_replicability_experts``, with geometric noise; this learner is that module's class on
another schedule, with Gumbel noise and no fallback). The argmin with Gumbel noise is a draw from
Hedge's weights p ∝ e^{−εc_{1:t}} (the Gumbel-max trick); with the noise shared it is the
exponential race, or P-MinHash, of the consistent-sampling literature (Manasse, McSherry & Talwar
2010; Moulton & Jiang, "Maximally consistent sampling and the Jaccard index of probability
distributions", ICDM 2018), whose agreement probability is exact. The certificate built on it
(:func:`replify.guarantees.certificates.gumbel_decision_bound`), the few-decisions design, the split
of ρ and the default schedule are ours (docs/certificates.md, "Gumbel noise: the exponential race").

**Replicability against any oblivious adversary (certified).** The two runs share e and every
G^{(k)}; they play the same actions up to t_1, and part only if some decision k picks differently.
The noise G^{(k)} is drawn independently of both runs' costs (an oblivious adversary fixes each
step's law in advance; the draws are independent of R), so decision k parts with probability at
most b_k = b(ε_k, t_k, n) of :func:`~replify.guarantees.certificates.gumbel_decision_bound`, about
ε_k√t_k·√(1 − 1/n)/2 — whatever the costs' law, the number of experts or the decisions before. By
the union bound ρ ≤ Σ_k b_k (``replicability_bound``). Nothing here asks the costs to be identically
distributed: the bound holds for every oblivious adversary of the paper's model (each step's cost
vector drawn independently, from a law fixed in advance). ρ is split as ρ_k ∝ t_k^s (``split`` = s)
and each ε_k is the largest with b_k ≤ ρ_k (:func:`~replify.guarantees.certificates.gumbel_eps`), so
the bound is at most ρ. Against the worst adversaries we built (a balanced coin between two
experts, every mean tied) the bound is 1.25–1.3× the parting rate at n = 2 (where the race is a maximal
coupling and the bound is ε√(2t)/4) and 1.6–2.2× at n = 3…100, at the default schedules.

**Regret** (not certified). No adversarial guarantee: a commit can be wrong for the rest of the
run, as ``split-commit``'s can. On iid costs decision k picks the leader of the means perturbed by
Gumbel noise of scale 1/(ε_k t_k) ≈ 1/(2ρ_k√t_k) in mean units, which (at ρ ≤ 1) is larger than the
sampling noise 1/(2√t_k): late decisions see finer gaps, early ones cost less of ρ per unit of
noise. That trade-off sets the schedule.

**The default schedule** (ours). Of the schedules with K ≤ 4 decisions on the grid
t ∈ {T·2^{−j/2}}, consecutive decisions 2, 4, 8 or 16 times apart, and s ∈ {0, ½, 1, 3/2, 2}, the
default is the one whose regret is smallest on a *reference prior* (a model, stated here, and not
the instance a user runs): every expert's mean drawn independently and uniformly from
[0.25, 0.75], the sampling noise neglected beside the replicability noise — so decision k picks
argmin_a μ_a − G_a/(ε_k t_k), with expected gap G(1/(ε_k t_k)), G computed once per n by a seeded
Monte Carlo (:func:`reference_gaps`), and the model's regret is t_1·G(∞) + Σ_k (t_{k+1} − t_k)·
G(1/(ε_k t_k)). A schedule given as ``decisions`` keeps its steps, and ``split`` its exponent;
either one not given is the model's best. The certificate is the same whichever schedule is played.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any, Mapping

import attrs
import numpy as np

import replify
from replify.base.checks import check_int, check_real, check_rho
from replify.errors import InvalidArgumentError
from replify.guarantees.certificates import certify, gumbel_decision_bound, gumbel_eps
from replify_plugins.learners.iid_experts import IidExperts

ALGORITHM = "perturbed-commit"
#: The reference prior the default schedule is chosen on: means iid uniform on this interval.
REFERENCE_MEANS = (0.25, 0.75)
REFERENCE_SEED = 20261126
#: Noise scales (mean units) at which the reference gap G is tabulated; log-interpolated between.
SCALES = np.logspace(-4.0, 3.0, 57)
#: The default's search: ratios between consecutive decisions, split exponents, most decisions.
RATIOS, SPLITS, MAX_DECISIONS = (2, 4, 8, 16), (0.0, 0.5, 1.0, 1.5, 2.0), 4


@attrs.frozen(kw_only=True)
class CommitParams:
    """The schedule in force (decision steps, ρ's split, each decision's ε), the block form the
    class plays (its blocks end at the decisions and at T; no fallback) and the certificate."""

    algorithm: str
    horizon: int
    n: int
    rho: float
    decisions: tuple[int, ...]
    split: float
    shares: tuple[float, ...]
    eps_schedule: tuple[float, ...]
    block_lengths: tuple[int, ...]
    block_ends: tuple[int, ...]
    replicability_bound: float
    certified: bool
    overrides: tuple[str, ...]
    regret_bound: float | None = None
    regret_bound_formula: str = "none adversarially (commits); on iid costs see the module docstring"
    schedule_source: str = ("the model regret's minimum on the reference prior (means iid U[0.25, 0.75]; "
                            "perturbed_commit module docstring)")
    fallback_threshold: float = math.inf  # the class's fallback check never fires
    fallback_eps: float | None = None
    calibration: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = attrs.asdict(self, recurse=False)
        return d | {k: list(d[k]) for k in ("decisions", "shares", "eps_schedule", "block_lengths", "block_ends",
                                            "overrides")}


@functools.lru_cache(maxsize=64)
def reference_gaps(n: int) -> tuple[tuple[float, ...], float]:
    """G on :data:`SCALES`, and G(∞): the expected gap μ_pick − min μ of argmin_a μ_a − s·G_a (G_a
    standard Gumbel) when the n means are iid uniform on :data:`REFERENCE_MEANS`, and of a uniform pick.
    A seeded Monte Carlo (the same table in every process): at most 2^20 means, at least 256 draws."""
    draws = int(min(4096, max(256, (1 << 20) // n)))
    rng = np.random.default_rng(REFERENCE_SEED)
    mu = rng.uniform(*REFERENCE_MEANS, size=(draws, n))
    noise = rng.gumbel(size=(draws, n))
    best, rows = mu.min(axis=1), np.arange(draws)
    gaps = tuple(float(np.mean(mu[rows, np.argmin(mu - s * noise, axis=1)] - best)) for s in SCALES)
    return gaps, float(np.mean(mu.mean(axis=1) - best))


def model_regret(decisions: Any, eps: Any, *, horizon: int, n: int) -> np.ndarray:
    """The reference prior's regret model (module docstring), t_1·G(∞) + Σ_k (t_{k+1} − t_k)·
    G(1/(ε_k t_k)), for schedules given as rows of ``decisions`` (shape (..., K), K ≥ 1) with the
    matching ``eps``. A model used to choose the default, not a measurement."""
    table, uniform = reference_gaps(n)
    t = np.asarray(decisions, dtype=np.float64)
    scale = 1.0 / (np.asarray(eps, dtype=np.float64) * t)
    gap = np.interp(np.log(scale), np.log(SCALES), np.asarray(table), right=uniform)
    ends = np.concatenate([t, np.full(t.shape[:-1] + (1,), float(horizon))], axis=-1)
    return t[..., 0] * uniform + np.sum(np.diff(ends, axis=-1) * gap, axis=-1)


def split_eps(decisions: Any, split: float, *, n: int, rho: float) -> np.ndarray:
    """Each decision's ε at ρ_k ∝ t_k^split (rows of ``decisions`` are schedules)."""
    weights = np.asarray(decisions, dtype=np.float64) ** split
    return gumbel_eps(rho * weights / weights.sum(axis=-1, keepdims=True), decisions, n)


def _candidates(horizon: int) -> dict[int, np.ndarray]:
    """Decision schedules on the grid T·2^{−j/2}, by their number K ≤ :data:`MAX_DECISIONS` of
    decisions (an array (count, K) each), consecutive decisions :data:`RATIOS` apart."""
    points = {round(horizon * 2.0 ** (-j / 2.0)) for j in range(1, 2 * math.ceil(math.log2(horizon)) + 1)}
    grid = np.array(sorted(t for t in points if 1 <= t < horizon), dtype=np.int64)
    steps = [round(2 * math.log2(r)) for r in RATIOS]  # grid points per ratio
    out: dict[int, np.ndarray] = {}
    for k in range(1, MAX_DECISIONS + 1):
        rows = set()
        for gaps in itertools.product(steps, repeat=k - 1):
            back = np.cumsum((0,) + gaps)[::-1]  # the earlier decisions' distance below the last, in grid points
            for last in range(int(back[0]), grid.size):
                rows.add(tuple(int(v) for v in grid[last - back]))
        if rows:
            out[k] = np.array(sorted(rows), dtype=np.int64)
    return out


@functools.lru_cache(maxsize=128)
def best_schedule(horizon: int, n: int, rho: float, decisions: tuple[int, ...] | None,
                  split: float | None) -> tuple[tuple[int, ...], float]:
    """The (decisions, split) of least model regret over the search of the module docstring,
    keeping whichever of the two was given; no decision at all (play e throughout) competes too."""
    groups = _candidates(horizon) if decisions is None else ({len(decisions): np.array([decisions])} if decisions else {})
    best: tuple[float, tuple[int, ...], float] = (horizon * reference_gaps(n)[1], (), 0.0 if split is None else split)
    for s in SPLITS if split is None else (split,):
        for sched in groups.values():
            value = model_regret(sched, split_eps(sched, s, n=n, rho=rho), horizon=horizon, n=n)
            i = int(np.argmin(value))
            if value[i] < best[0] * (1.0 - 1e-12):
                best = (float(value[i]), tuple(int(v) for v in sched[i]), s)
    return best[1], best[2]


def check_decisions(decisions: Any, horizon: int) -> tuple[int, ...]:
    # a dict or a set iterates too, but over keys or in no order: a sequence of steps is asked for
    if isinstance(decisions, (str, bytes, Mapping, set, frozenset)) or not hasattr(decisions, "__iter__"):
        raise InvalidArgumentError(f"decisions must be a sequence of steps (integers in [1, {horizon - 1}]); "
                                   f"got {type(decisions).__name__} {decisions!r}")
    steps = tuple(check_int("decisions", d, minimum=1) for d in decisions)
    if any(d >= horizon for d in steps) or any(b <= a for a, b in zip(steps, steps[1:])):
        raise InvalidArgumentError(f"decisions must increase strictly and lie in [1, {horizon - 1}] (after step "
                                   f"t the learner commits until the next one); got {list(steps)}")
    return steps


def check_schedule(horizon: Any, n: Any, rho: Any, decisions: Any, split: Any) -> tuple[int, int, float, tuple[int, ...] | None, float | None, tuple[str, ...]]:
    """The checked (T, n, ρ, decisions, split) and the names of those a user gave."""
    horizon, n, rho = check_int("horizon", horizon, minimum=1), check_int("n", n, minimum=2), float(check_rho(rho))
    given = tuple(check_decisions(decisions, horizon)) if decisions is not None else None
    if split is not None:
        split = check_real("split", split)
        if not 0.0 <= split <= 10.0:
            raise InvalidArgumentError(f"split must lie in [0, 10] (rho_k is proportional to t_k**split); got {split}")
    overrides = tuple(k for k, v in (("decisions", decisions), ("split", split)) if v is not None)
    return horizon, n, rho, given, None if split is None else float(split), overrides


def parameters(*, horizon: int, n: int, rho: float, decisions: Any = None,
               split: float | None = None) -> CommitParams:
    """The schedule (given, or the reference prior's best: module docstring), each decision's ε
    at ρ_k ∝ t_k^split, and the certificate Σ_k b_k (at most ρ)."""
    params = _parameters(*check_schedule(horizon, n, rho, decisions, split))
    certify(params.replicability_bound, params.rho, algorithm=ALGORITHM, detail=f"decisions={list(params.decisions)}")
    return params


@functools.lru_cache(maxsize=256)
def _parameters(horizon: int, n: int, rho: float, given: tuple[int, ...] | None, split: float | None,
                overrides: tuple[str, ...]) -> CommitParams:
    """:func:`parameters` on checked arguments, cached: every pair of an evaluation builds the
    learner twice, and each ε_k is a bisection."""
    sched, s = best_schedule(horizon, n, rho, given, split)
    eps = tuple(float(e) for e in split_eps(np.array(sched), s, n=n, rho=rho)) if sched else ()
    return commit_params(sched, s, eps=eps, horizon=horizon, n=n, rho=rho, overrides=overrides, algorithm=ALGORITHM)


def commit_params(sched: tuple[int, ...], split: float, *, eps: tuple[float, ...], horizon: int, n: int, rho: float,
                  overrides: tuple[str, ...], algorithm: str) -> CommitParams:
    """The block form and the certificate Σ_k b(ε_k, t_k, n) of a schedule and its rates."""
    weights = np.asarray(sched, dtype=np.float64) ** split
    shares = tuple(float(w) for w in rho * weights / weights.sum()) if sched else ()
    bound = float(np.sum(gumbel_decision_bound(eps, sched, n))) if sched else 0.0
    ends = sched + (horizon,)
    return CommitParams(
        algorithm=algorithm, horizon=horizon, n=n, rho=rho, decisions=sched, split=split, shares=shares,
        eps_schedule=eps, block_ends=ends, block_lengths=tuple(int(v) for v in np.diff((0,) + ends)),
        replicability_bound=bound, overrides=overrides, certified=bound <= rho * (1.0 + 1e-9),
    )


class PerturbedCommit(IidExperts):
    """Play an expert drawn from R, then commit to the perturbed leader at each decision, with
    fresh Gumbel noise of scale 1/ε_k (module docstring). The block machinery (stepping,
    whole-sequence runs, the engine's block sums) is the iid-replicable experts algorithm's, with
    no fallback."""

    _params = ("decisions", "split")
    _parameters_of = staticmethod(parameters)

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, rho: float,
                 decisions: Any = None, split: float | None = None) -> None:
        params = self._parameters_of(horizon=horizon, n=n, rho=rho, decisions=decisions, split=split)
        self.decisions, self.split = list(params.decisions), params.split
        self._start(params, rng, first=int(rng.integers(params.n)))

    def _new_block(self) -> None:
        # a decision: fresh standard Gumbel noise from R, scaled by 1/ε_k (the exponential race)
        self._block += 1
        self.noise = self._rng.gumbel(size=self.n) / self.eps
        self._action = int(np.argmin(self._cum - self.noise))


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            ALGORITHM, PerturbedCommit, "experts",
            norm="linf", cost_range=(0.0, 1.0), guarantee="adversarial", parameters=parameters,
            test_params={"rho": 0.1}, enforces={"horizon", "domain"},
            description="an expert drawn from R, then commits to the perturbed leader at a few steps, fresh "
            "Gumbel noise each: adversarially rho-replicable (our bound), learns on stochastic costs",
        )
    )
