"""``race-hedge``: Hedge with block updates, each block's expert sampled by an exponential race that
the two runs share. Adversarially ρ-replicable *and* an adversarial regret bound — the guarantees
FTPLB* (paper §4) gives, with noise that costs less of ρ.

    draw e ~ U{1..n} from R;  play e until step t_1.
    after step t_k (k = 1..K−1):  draw G^{(k)}_a iid standard Gumbel from R;
                                  play argmin_a c_{1:t_k}(a) − G^{(k)}_a/ε_k until step t_{k+1} (t_K = T)

with nonincreasing ε_1 ≥ … ≥ ε_{K−1} and decisions t_k = ⌈T(k/K)^β⌉ (dense early, where a
decision is cheap: it is charged ∝ ε_k√t_k).

**What is the paper's and what is ours.** FTPLB* (paper §4, Alg. ``FTPLB-star``) follows the
leader perturbed by geometric noise drawn once and updates every B steps; its replicability rests
on memorylessness and charges the largest drift among all experts, a √(ln n) (docs/certificates.md,
"Geometric noise"). Here the noise is Gumbel and drawn afresh at every decision, so each block's
expert is an exact draw from Hedge's weights p ∝ e^{−ε_k c_{1:t_k}} (the Gumbel-max trick), and
the two runs' draws are the exponential race (P-MinHash; Moulton & Jiang, ICDM 2018) whose
agreement probability is exact. The certificate (:func:`~replify.guarantees.certificates.gumbel_decision_bound`,
derived in docs/certificates.md, "Gumbel noise: the exponential race"), the decision schedule and
the choice of its default are ours; the regret bound is Hedge's with nonincreasing learning rates
(de Rooij, van Erven, Grünwald & Koolen, "Follow the leader if you can, hedge if you must", JMLR
2014, Lemma 1, with Hoeffding's bound on the mixability gap). It is the class of ``perturbed-commit``
(the same play given the same schedule); that learner spends ρ on two or three decisions and has no
adversarial regret bound, this one spends it on many and keeps one.

**Replicability against any oblivious adversary (certified).** The runs share e and every G^{(k)}
and part only if some decision picks differently; decision k parts with probability at most
b(ε_k, t_k, n) ≈ ε_k√t_k·√(1 − 1/n)/2 whatever the costs' law (each step's cost vector drawn
independently from a law fixed in advance). By the union bound ρ ≤ Σ_k b(ε_k, t_k, n)
(``replicability_bound``). ρ is split as ρ_k ∝ t_k^s (``split`` = s), each ε_k is the largest with
b(ε_k, t_k, n) ≤ ρ_k (:func:`~replify.guarantees.certificates.gumbel_eps`), and then lowered to the
running minimum min_{j ≤ k} ε_j, which keeps the rates nonincreasing and, b being increasing in ε,
the bound at most ρ.

**Regret against any oblivious adversary (certified).** Given the costs, block k plays an expert
drawn from Hedge's weights at rate ε_k on the costs so far (block 0 plays the uniform weights, Hedge's
at any rate; take its rate ε_1). Hedge on the blocks' cost vectors, which lie in [0, L_k]^n
(L_k = t_{k+1} − t_k, L_0 = t_1), with nonincreasing rates has regret at most the mix loss's ln n/η_last
plus the mixability gaps, each at most η_k L_k²/8 by Hoeffding's lemma (de Rooij et al. 2014, Lemma 1):

    E[regret] ≤ ln n/ε_{K−1} + Σ_{k=0}^{K−1} ε_{max(k,1)} L_k²/8        (``regret_bound``, stated at most T)

against every fixed sequence, hence in expectation against every oblivious adversary (and on iid
costs for the pseudo-regret). The expectation is over the Gumbel draws, which the adversary does
not see.

**The default schedule** (ours). Over K ∈ :data:`BLOCK_COUNTS`, β ∈ :data:`POWERS` and s ∈ :data:`SPLITS`,
the certified regret bound above has a least value U*. Of the schedules whose bound is at most
:data:`BOUND_SLACK`·U*, the default is the one whose regret is smallest under ``perturbed-commit``'s
reference prior (means iid uniform on [0.25, 0.75], sampling noise neglected;
:func:`replify_plugins.learners.perturbed_commit.model_regret`): the worst case is paid for at most
twice, and the typical case decides within that. The bound's own minimiser is the schedule with
``BOUND_SLACK`` = 1; ``decisions=`` and ``split=`` keep a user's choice (the rates are still made
nonincreasing, and both bounds still hold).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import attrs
import numpy as np

import replify
from replify.errors import InvalidArgumentError
from replify.guarantees.certificates import certify
from replify_plugins.learners import perturbed_commit as pc

ALGORITHM = "race-hedge"
#: The default's search: numbers of blocks K, powers β of t_k = ⌈T(k/K)^β⌉, split exponents s.
BLOCK_COUNTS = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 96, 128)
POWERS = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0)
SPLITS = (0.0, 0.25, 0.5)
#: The default's schedule has a certified regret bound at most this multiple of the least one.
BOUND_SLACK = 2.0


def rates(decisions: Any, split: float, *, n: int, rho: float) -> np.ndarray:
    """Each decision's ε (rows of ``decisions`` are schedules): the largest with b(ε_k, t_k, n) ≤ ρ_k,
    ρ_k ∝ t_k^split, lowered to the running minimum so that the rates never increase."""
    return np.minimum.accumulate(pc.split_eps(decisions, split, n=n, rho=rho), axis=-1)


def regret_bound(decisions: Any, eps: Any, *, horizon: int, n: int) -> np.ndarray:
    """ln n/ε_{K−1} + Σ_k ε_{max(k,1)} L_k²/8 for schedules in the rows of ``decisions`` (module
    docstring; Hedge with nonincreasing rates on block costs of range L_k)."""
    t = np.asarray(decisions, dtype=np.float64)
    eps = np.asarray(eps, dtype=np.float64)
    full = np.full(t.shape[:-1] + (1,), float(horizon))
    lengths = np.diff(np.concatenate([np.zeros_like(full), t, full], axis=-1), axis=-1)
    used = np.concatenate([eps[..., :1], eps], axis=-1)  # block 0 is uniform: Hedge's at rate ε_1
    return np.asarray(math.log(n) / eps[..., -1] + np.sum(used * lengths**2, axis=-1) / 8.0)


def _candidates(horizon: int) -> dict[int, np.ndarray]:
    """Schedules ⌈T(k/K)^β⌉ by their number of decisions (duplicates and steps outside [1, T−1] dropped)."""
    out: dict[int, set] = {}
    for blocks in BLOCK_COUNTS:
        for beta in POWERS:
            steps = np.ceil(horizon * (np.arange(1, blocks) / blocks) ** beta).astype(np.int64)
            steps = tuple(int(v) for v in np.unique(steps[(steps >= 1) & (steps < horizon)]))
            if steps:
                out.setdefault(len(steps), set()).add(steps)
    return {k: np.array(sorted(v), dtype=np.int64) for k, v in out.items()}


@functools.lru_cache(maxsize=128)
def best_schedule(horizon: int, n: int, rho: float, decisions: tuple[int, ...] | None,
                  split: float | None) -> tuple[tuple[int, ...], float]:
    """The default's (decisions, split) (module docstring), keeping whichever of the two was given."""
    groups = _candidates(horizon) if decisions is None else {len(decisions): np.array([decisions])}
    rows: list[tuple[float, float, tuple[int, ...], float]] = []
    for s in SPLITS if split is None else (split,):
        for sched in groups.values():
            eps = rates(sched, s, n=n, rho=rho)
            bound = regret_bound(sched, eps, horizon=horizon, n=n)
            model = pc.model_regret(sched, eps, horizon=horizon, n=n)
            rows += [(float(b), float(m), tuple(int(v) for v in r), s) for b, m, r in zip(bound, model, sched)]
    if not rows:  # T = 1: nothing to decide
        return (), 0.0 if split is None else split
    least = min(r[0] for r in rows)
    _, _, sched, s = min((r for r in rows if r[0] <= BOUND_SLACK * least), key=lambda r: (r[1], r[0]))
    return sched, s


def parameters(*, horizon: int, n: int, rho: float, decisions: Any = None,
               split: float | None = None) -> pc.CommitParams:
    """The schedule (given, or the default of the module docstring), each decision's ε, and both
    certificates: Σ_k b_k ≤ ρ and the regret bound."""
    checked = pc.check_schedule(horizon, n, rho, decisions, split)
    if checked[3] == ():
        raise InvalidArgumentError("decisions must name at least one step (race-hedge decides at each); got []")
    params = _parameters(*checked)
    certify(params.replicability_bound, params.rho, algorithm=ALGORITHM, detail=f"decisions={list(params.decisions)}")
    return params


@functools.lru_cache(maxsize=256)
def _parameters(horizon: int, n: int, rho: float, given: tuple[int, ...] | None, split: float | None,
                overrides: tuple[str, ...]) -> pc.CommitParams:
    sched, s = best_schedule(horizon, n, rho, given, split)
    base = pc.commit_params(sched, s, horizon=horizon, n=n, rho=rho, overrides=overrides, algorithm=ALGORITHM,
                            eps=tuple(float(e) for e in rates(np.array(sched), s, n=n, rho=rho)) if sched else ())
    # stated at most T (costs in [0, 1]), as the formula exceeds it at small T or large n
    bound = float(regret_bound(np.array(sched), np.array(base.eps_schedule), horizon=horizon, n=n)) if sched else horizon
    return attrs.evolve(
        base, regret_bound=min(bound, float(horizon)),
        regret_bound_formula="min(T, ln(n)/eps_last + sum_k eps_max(k,1) L_k^2/8) (Hedge, nonincreasing rates)",
        schedule_source=(f"least reference-prior model regret among schedules whose certified regret bound is within "
                         f"{BOUND_SLACK:g}x the least (race_hedge module docstring)"))


class RaceHedge(pc.PerturbedCommit):
    """Hedge with block updates by a shared exponential race (module docstring): ``perturbed-commit``'s
    play on a schedule of many decisions with nonincreasing rates."""

    _parameters_of = staticmethod(parameters)


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            ALGORITHM, RaceHedge, "experts",
            norm="linf", cost_range=(0.0, 1.0), guarantee="adversarial", parameters=parameters,
            test_params={"rho": 0.1}, enforces={"horizon", "domain"},
            description="Hedge with block updates, each block's expert drawn by an exponential race the runs "
            "share: adversarially rho-replicable and an adversarial regret bound (our bounds)",
        )
    )
