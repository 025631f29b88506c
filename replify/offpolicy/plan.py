"""How many rows a replicable choice needs, before any log is collected (docs/offpolicy.md, "Planning
a log"): :func:`rows_for`, and the check of its answer by simulation, :meth:`RowsPlan.simulate`.

**The answer.** At N rows with every propensity at least p_min and costs in [lo, hi] (M = (hi − lo)/2),
each candidate's estimate has standard deviation at most M/√(N p_min) and s = M √(2/(N p_min))
(:mod:`replify.offpolicy.select`); the grid's width is at most λ c_K s/ρ — c_K the selection factor
(c_K⁺ with an incumbent), λ = √2 on the width's ladder, 1 where the logs' least size is declared. The
choice lies in the least cell, below θ ≤ m̂ + w, so a rival k whose true value exceeds the best's by
at least ``gap`` is chosen only if D_k = (V̂_k − V_k) − (V̂_best − V_best) < w − gap, and D_k has
standard deviation at most 2M/√(N p_min) = √2 s. By the normal approximation and a union over the
K − 1 rivals, the best is chosen with probability at least ``confidence`` once

    gap ≥ w + √2 z s,   z = Φ⁻¹(1 − (1 − confidence)/(K − 1)),

that is N ≥ 2 M² (λ c_K/ρ + √2 z)²/(p_min gap²). The normal approximation is the planner's one
assumption (the choice's replicability is certified whatever N); :meth:`RowsPlan.simulate` checks
the answer on the worst case for it — uniform logging over 1/p_min arms, costs at the ends of the
range, every rival exactly ``gap`` above the best — with the real :func:`~replify.offpolicy.select`
on logs drawn exactly in law. Ours."""

from __future__ import annotations

import math
import numbers
from statistics import NormalDist
from typing import Any

import attrs
import numpy as np

from replify.base.checks import check_positive, check_probability, check_rho
from replify.base.randomness import child, Seed, seed_sequence
from replify.errors import InvalidArgumentError
from replify.offpolicy.log import Log
from replify.offpolicy.select import incumbent_factor, select, selection_factor


@attrs.frozen
class RowsPlan:
    """The rows a replicable choice needs (module docstring): ``rows``, and what they were computed
    for — the ``gap`` between the best candidate and the others, ``rho``, the number of
    ``candidates``, ``min_propensity``, ``cost_range``, the ``confidence`` of choosing the best,
    ``ladder`` (False where the logs' least size is declared) and ``incumbent`` — with the grid's
    largest ``width`` at those rows."""

    rows: int
    gap: float
    rho: float
    candidates: int
    min_propensity: float
    cost_range: tuple[float, float]
    confidence: float
    ladder: bool
    incumbent: bool
    width: float

    def simulate(self, *, logs: int = 200, seed: Seed = 0) -> float:
        """The fraction of ``logs`` simulated logs of ``rows`` rows on which :func:`select` chose the
        best candidate, on the worst case of the module docstring (uniform logging over 1/p_min arms,
        costs lo or hi, the best's mean gap/2 below the middle and every rival's gap/2 above), each
        log drawn exactly in law as counts of (arm, cost) and R drawn anew for each."""
        if isinstance(logs, bool) or not isinstance(logs, numbers.Integral) or logs < 1:
            raise InvalidArgumentError(f"logs must be an integer >= 1; got {logs!r}")
        n = int(round(1.0 / self.min_propensity))
        if abs(n * self.min_propensity - 1.0) > 1e-9 or n < self.candidates:
            raise InvalidArgumentError(f"simulate needs min_propensity = 1/n for a whole number n >= the {self.candidates} "
                                       f"candidates (uniform logging over n arms); got {self.min_propensity:g}")
        lo, hi = self.cost_range
        chance = np.full(n, 0.5 + self.gap / (2.0 * (hi - lo)))  # P(cost = hi) per arm: rivals gap/2 above the middle
        chance[0] = 0.5 - self.gap / (2.0 * (hi - lo))
        probs = np.stack([chance, 1.0 - chance], axis=1).ravel() / n  # (arm, hi), (arm, lo), ...
        root = seed_sequence(seed)  # children without spawning: the caller's SeedSequence is never moved
        data, rs = child(root, 0), child(root, 1)
        rng = np.random.default_rng(data)
        pols = [lambda c, a=a: np.full(c.shape[0], a) for a in range(self.candidates)]
        contexts = np.zeros((2 * n, n, 1))
        actions, costs = np.repeat(np.arange(n), 2), np.tile([hi, lo], n)
        best = 0
        for counts, r in zip(rng.multinomial(self.rows, probs, size=logs), rs.spawn(logs)):
            keep = counts > 0
            log = Log(contexts=contexts[keep], actions=actions[keep], costs=costs[keep],
                      propensities=np.full(int(keep.sum()), 1.0 / n), n=n, weights=counts[keep].astype(np.int64),
                      min_propensity=self.min_propensity, cost_range=self.cost_range, name="plan")
            got = select(log, pols, rho=self.rho, seed=r, incumbent=0 if self.incumbent else None,
                         min_rows=None if self.ladder else self.rows)
            best += got.chosen == 0
        return best / logs


def rows_for(gap: float | np.floating, *, rho: float | np.floating, candidates: int | np.integer,
             min_propensity: float | np.floating, cost_range: Any = (0.0, 1.0), confidence: float | np.floating = 0.95,
             min_rows_declared: bool = False, incumbent: bool = False) -> RowsPlan:
    """The rows a replicable choice among ``candidates`` at ``rho`` needs to choose the best with
    probability ``confidence`` where every other candidate's true cost is at least ``gap`` above
    it (module docstring: N = 2 M² (λ c_K/ρ + √2 z)²/(p_min gap²)). ``min_rows_declared``: the
    decisions will declare the logs' least size (no ladder); ``incumbent``: they will keep an
    incumbent (the factor c_K⁺). Check the answer with :meth:`RowsPlan.simulate`."""
    rho = check_rho(rho)
    confidence = check_probability("confidence", confidence, open_low=True, open_high=True)
    p = check_probability("min_propensity", min_propensity, open_low=True)
    if isinstance(candidates, (bool, np.bool_)) or not isinstance(candidates, numbers.Integral) or candidates < 2:
        raise InvalidArgumentError(f"candidates must be an integer >= 2; got {candidates!r}")
    try:
        lo, hi = (float(v) for v in cost_range)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"cost_range must be a pair (lo, hi); got {cost_range!r:.80}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise InvalidArgumentError(f"cost_range must be a pair (lo, hi) of finite numbers with lo < hi; got {cost_range!r}")
    gap = check_positive("gap", gap)
    if gap >= hi - lo:
        raise InvalidArgumentError(f"gap must be below the cost range's width {hi - lo:g} (no two costs in [{lo:g}, "
                                   f"{hi:g}] are further apart); got {gap:g}")
    k = int(candidates)
    factor = incumbent_factor(k) if incumbent else selection_factor(k)
    ladder = math.sqrt(2.0) if not min_rows_declared else 1.0
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / (k - 1))
    m = hi / 2.0 - lo / 2.0  # no overflow at a range near ±1.8e308
    try:
        need = 2.0 * (m / gap) ** 2 * (ladder * factor / rho + math.sqrt(2.0) * z) ** 2 / p
    except OverflowError:  # Python's float power raises where numpy's gives inf
        need = math.inf
    if not need <= 2.0**62:  # an int64 count of rows; inf where the gap is vanishingly small
        raise InvalidArgumentError(f"gap={gap:g}: separating candidates this close over the cost range [{lo:g}, {hi:g}] "
                                   f"needs more than 2**62 rows ({need:.3g}) at rho={rho:g} and min_propensity={p:g}; "
                                   "no log is that large")
    rows = math.ceil(need)
    width = ladder * factor * m * math.sqrt(2.0 / (rows * p)) / rho
    return RowsPlan(rows=rows, gap=gap, rho=rho, candidates=k, min_propensity=p, cost_range=(lo, hi),
                    confidence=confidence, ladder=not min_rows_declared, incumbent=bool(incumbent), width=width)
