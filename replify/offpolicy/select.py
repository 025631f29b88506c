"""Decisions from logs that replicate (ours, after the paper's rounding on a shared random grid):
:func:`replicable_value`, a policy's estimated cost rounded so that two independent logs of the
same logging policy report the same number with probability ≥ 1 − ρ, and :func:`select`, a choice
among candidate policies that two such logs make alike with probability ≥ 1 − ρ — the randomness R
(``seed``) shared, as in the paper. :func:`replicability` measures either over pairs of logs.

**Assumptions.** (i) A log's N rows are iid: a context, the logging policy μ's arm a ~ μ(·|x), its
cost; the two logs are independent, of N rows each. (ii) μ gives every arm probability at least
p_min (``min_propensity``, declared; the log's own smallest propensity must not be below it).
(iii) Costs lie in [−M, M] (``cost_bound``, 1 by default; a cost outside is refused).

**The variance.** The IPS estimate V̂_k = (1/N) Σ_i w_ik c_i, w_ik = π_k(a_i|x_i)/μ(a_i|x_i), has
Var(w c) ≤ E[w² c²] ≤ M² E_x[Σ_a μ(a|x) π_k(a|x)²/μ(a|x)²] = M² E_x[Σ_a π_k(a|x)²/μ(a|x)]
≤ (M²/p_min)·E_x[Σ_a π_k(a|x)²] ≤ M²/p_min. So two independent logs give
E|V̂_k − V̂'_k| ≤ sqrt(2 Var V̂_k) ≤ M·sqrt(2/(N p_min)) =: s.

**The replicable value.** θ̃ = w(⌊V̂/w − u⌋ + u + ½), u uniform on [0, 1) from R. Given the two
estimates, the roundings differ with probability min(1, |V̂ − V̂'|/w), so P(θ̃ ≠ θ̃') ≤ s/w: the width
w = s/ρ certifies ρ, and |θ̃ − V̂| ≤ w/2.

**The replicable selection.** Every V̂_k is rounded with one offset u from R on the width
w = K·s/ρ; the choice is the policy, among those whose rounded value is the least, that comes first
in a random order of the K candidates drawn from R. The choice is a function of the rounded values
and R, so P(choices differ) ≤ Σ_k P(θ̃_k ≠ θ̃'_k) ≤ K·s/w = ρ. The chosen policy's estimate is within
w of the least estimate; its true value within w + 2·max_k |V̂_k − V_k| of the best's.

**The price** is w: at K = 8, uniform logging over 4 arms (p_min = 1/4), M = 1 and N = 10⁶ rows,
s = 0.0028 and w = 0.23 at ρ = 0.1 — the union over the K candidates and the variance bound
M²/p_min, not the estimates' own spread (their standard errors are about 0.0014 there), set it.
Where the other candidates are farther than w from the best, the choice is near-best; where one
lies within w, it may be chosen (docs/offpolicy.md measures both). What is the literature's:
IPS (Horvitz & Thompson 1952), rounding on a random grid for replicability (Impagliazzo, Lei,
Pitassi & Sorrell, STOC 2022); the bounds above and their constants are ours.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import attrs
import numpy as np

from replify.base.randomness import Seed, seed_sequence
from replify.errors import InvalidArgumentError
from replify.evaluation.stats import clopper_pearson
from replify.offpolicy.log import Log, policy_probabilities


@attrs.frozen
class Replicable:
    """A rounded estimate or a choice: ``value`` (the rounded estimate; for a selection, every
    candidate's, (K,)), ``chosen`` (a selection's index, else None), the grid ``width``, the
    certificate's ``rho_bound`` and whether it is ``certified`` (else ``note`` says why), the
    stability constant ``s`` and the ``min_propensity`` and ``cost_bound`` it used."""

    value: Any
    chosen: int | None
    width: float
    rho_bound: float
    certified: bool
    s: float
    min_propensity: float
    cost_bound: float
    note: str | None = None


def _ips(log: Log, policy: Callable[[np.ndarray], Any]) -> float:
    pi = policy_probabilities(policy, log)
    return log.mean(pi[np.arange(log.stored), log.actions] / log.propensities * log.costs)


def _stability(log: Log, rho: float, min_propensity: float | None, cost_bound: float) -> tuple[float, float, bool, str | None]:
    """s, the p_min used, whether certified, and why not (module docstring)."""
    if not (isinstance(rho, float) and 0.0 < rho < 1.0):
        raise InvalidArgumentError(f"rho must be a float in (0, 1); got {rho!r}")
    if not (isinstance(cost_bound, (int, float)) and not isinstance(cost_bound, bool) and 0 < cost_bound < math.inf):
        raise InvalidArgumentError(f"cost_bound must be a finite number > 0 (costs in [-M, M]); got {cost_bound!r}")
    worst = float(np.abs(log.costs).max())
    if worst > cost_bound:
        i = int(np.argmax(np.abs(log.costs)))
        raise InvalidArgumentError(f"cost_bound={cost_bound:g}: row {i} of {log.name} costs {float(log.costs[i])!r}, outside "
                                   f"[-{cost_bound:g}, {cost_bound:g}]; give the bound the costs respect")
    seen = float(log.propensities.min())
    note = None
    if min_propensity is None:
        min_propensity = log.min_propensity
    if min_propensity is None:
        p, certified = seen, False
        note = ("measured, not certified: the certificate needs the logging policy's smallest propensity, declared "
                "(min_propensity=); the log's own smallest was used")
    else:
        if not (isinstance(min_propensity, (int, float)) and 0.0 < min_propensity <= 1.0):
            raise InvalidArgumentError(f"min_propensity must be in (0, 1]; got {min_propensity!r}")
        if seen < min_propensity * (1 - 1e-12):
            raise InvalidArgumentError(f"min_propensity={min_propensity:g}, but {log.name} logs a propensity of {seen:g}: "
                                       "the logging policy's smallest propensity is below what was declared")
        p, certified = float(min_propensity), True
    return cost_bound * math.sqrt(2.0 / (log.rows * p)), p, certified, note


def _round(v: np.ndarray, width: float, u: float) -> np.ndarray:
    return width * (np.floor(v / width - u) + u + 0.5)


def replicable_value(log: Log, policy: Callable[[np.ndarray], Any], *, rho: float, seed: Seed,
                     min_propensity: float | None = None, cost_bound: float = 1.0) -> Replicable:
    """The policy's IPS estimate rounded on a grid of width s/ρ with an offset from R (``seed``):
    two independent logs report the same number with probability ≥ 1 − ρ (module docstring)."""
    s, p, certified, note = _stability(log, rho, min_propensity, cost_bound)
    width = s / rho
    u = float(np.random.default_rng(seed_sequence(seed)).random())
    value = float(_round(np.array([_ips(log, policy)]), width, u)[0])
    return Replicable(value=value, chosen=None, width=width, rho_bound=rho, certified=certified, s=s,
                      min_propensity=p, cost_bound=float(cost_bound), note=note)


def select(log: Log, policies: Sequence[Callable[[np.ndarray], Any]], *, rho: float, seed: Seed,
           min_propensity: float | None = None, cost_bound: float = 1.0) -> Replicable:
    """The candidate of least rounded IPS estimate (ties: the first in a random order from R), the
    estimates rounded with one offset from R on a grid of width K·s/ρ: two independent logs choose
    alike with probability ≥ 1 − ρ (module docstring)."""
    if isinstance(policies, (str, bytes)) or not isinstance(policies, Sequence) or len(policies) < 2:
        raise InvalidArgumentError(f"policies must be a sequence of at least 2 candidate policies; got {policies!r:.80}")
    s, p, certified, note = _stability(log, rho, min_propensity, cost_bound)
    k = len(policies)
    width = k * s / rho
    rng = np.random.default_rng(seed_sequence(seed))
    u, order = float(rng.random()), rng.permutation(k)
    rounded = _round(np.array([_ips(log, pol) for pol in policies]), width, u)
    lowest = np.flatnonzero(rounded == rounded.min())
    chosen = int(order[np.isin(order, lowest)][0])
    return Replicable(value=rounded, chosen=chosen, width=width, rho_bound=rho, certified=certified, s=s,
                      min_propensity=p, cost_bound=float(cost_bound), note=note)


@attrs.frozen
class Measured:
    """Replicability measured over ``pairs`` pairs of independent logs: the fraction ``rho_hat``
    whose two outcomes differed and its exact (Clopper–Pearson) ``interval``."""

    pairs: int
    differ: int
    rho_hat: float
    interval: tuple[float, float]


def replicability(draw_log: Callable[[np.random.SeedSequence], Log], decide: Callable[[Log, Any], Replicable], *,
                  pairs: int, seed: Seed, confidence: float = 0.95) -> Measured:
    """Pairs of independent logs (``draw_log(seed)``, two seeds a pair) and one R a pair (the seed
    ``decide(log, R)`` receives): how often the two outcomes (``chosen``, else ``value``) differ."""
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 1:
        raise InvalidArgumentError(f"pairs must be an integer >= 1; got {pairs!r}")
    differ = 0
    for pair in seed_sequence(seed).spawn(pairs):
        r, s_a, s_b = pair.spawn(3)
        a, b = decide(draw_log(s_a), r), decide(draw_log(s_b), r)
        differ += int(a.chosen != b.chosen if a.chosen is not None else not np.array_equal(a.value, b.value))
    return Measured(pairs=pairs, differ=differ, rho_hat=differ / pairs, interval=clopper_pearson(differ, pairs, confidence))
