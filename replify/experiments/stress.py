"""Stress tests: search the stress suite for the adversary that makes a learner's two runs part
most often (it sits on top of :func:`replify.evaluate`, never inside the engine).

The search is successive halving (Jamieson and Talwalkar, "Non-stochastic best arm identification
and hyperparameter optimization", AISTATS 2016) over random candidates: draw candidate adversaries
from every family's parameter space, spend a first round of pairs on each, keep the half with the
highest failure rate, and spend the next round — twice the pairs each — on the survivors, until one
is left or the budget is spent. Pairs go where the evidence is close: a candidate that never parts
is dropped after a few pairs, the worst ones are measured most. Every failure count is over
independent pairs (each round has its own seed), so the final ρ̂ and its exact interval are a
plain measurement on the adversary found (*measured*, on the adversaries tried: docs/claims.md).
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from typing import Any, Callable, Mapping, Sequence

import attrs
import numpy as np

from replify.base.checks import check_int, check_probability, check_rho, check_step_size, public
from replify.engine import limits
from replify.errors import InvalidArgumentError, ReplifyWarning
from replify.evaluation.evaluate import evaluate
from replify.base.progress import reporter
from replify.components.contextual import is_contextual
from replify.base.randomness import INTERNAL, child, seed_sequence
from replify.sources import learner_arg, merged_params
from replify.evaluation.stats import binomial_upper_tail, clopper_pearson

#: The families :func:`stress` searches by default (coin and lazy-leader-trap only at n = 2).
FAMILIES = ("ties", "crossing", "block-switch", "coin", "lazy-leader-trap")
#: The families for contextual learners (docs/contextual.md), each a ``linear-bernoulli`` instance:
#: ``linear-ties`` (fixed features, k arms at equal or near-equal means), ``linear-gaps`` (fixed
#: features, every other arm's gap drawn log-uniformly: some land in a decision's fragile range),
#: ``contexts`` (features drawn on the sphere every step). ``contexts`` is left out for a learner
#: that needs fixed features.
CONTEXTUAL_FAMILIES = ("linear-ties", "linear-gaps", "contexts")
_ADVERSARY_OF = {family: "linear-bernoulli" for family in CONTEXTUAL_FAMILIES}


def stress_adversary(family: str) -> str:
    """The registered adversary a stress family's candidates are instances of (its own name, or
    ``linear-bernoulli`` for the contextual families)."""
    return _ADVERSARY_OF.get(family, family)


def _linear_arms(rng: np.random.Generator, n: int, cosines: np.ndarray) -> dict[str, Any]:
    """linear-bernoulli parameters with fixed features whose means are (1 + cosines)/2: θ = (1, v),
    x_a = (1, u_a)/2 with <u_a, v> = cosines[a] (u_a a unit vector, its part orthogonal to v drawn)."""
    d = int(rng.integers(3, 6))
    v = rng.standard_normal(d - 1)
    v /= np.linalg.norm(v)
    arms = []
    for c in cosines:
        w = rng.standard_normal(d - 1)
        w -= (w @ v) * v
        w /= np.linalg.norm(w)
        u = c * v + math.sqrt(max(0.0, 1.0 - c * c)) * w
        arms.append([0.5, *(0.5 * u).tolist()])
    return {"d": d, "theta": [1.0, *v.tolist()], "arms": arms}


@attrs.frozen(kw_only=True)
class Candidate:
    """One adversary tried: its family and parameters, and the pairs spent on it."""

    family: str
    params: dict[str, Any]
    failures: int
    pairs: int

    @property
    def rho_hat(self) -> float:
        return self.failures / self.pairs if self.pairs else 0.0

    @property
    def rho_ci(self) -> tuple[float, float]:
        return clopper_pearson(self.failures, self.pairs) if self.pairs else (0.0, 1.0)

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "params": self.params, "failures": self.failures, "pairs": self.pairs,
                "rho_hat": self.rho_hat, "rho_ci": list(self.rho_ci)}


@attrs.frozen(kw_only=True)
class StressResult:
    """The worst adversary found (``worst``: the highest ρ̂ among the candidates measured in the
    last round) and every candidate tried, with the pairs spent on each."""

    learner: str
    n: int
    horizon: int
    rho: float | None
    budget: int
    pairs_used: int
    worst: Candidate
    candidates: tuple[Candidate, ...]

    def refutes(self, bound: float, alpha: float = 1e-3) -> bool:
        """Whether the worst adversary's failures refute a claim ρ ≤ ``bound``: P(Bin(pairs, bound)
        ≥ failures) < ``alpha``. (The search picked it for its high ρ̂, so use a small alpha.)
        ``bound`` is a failure probability, in [0, 1]; ``alpha`` a level, in (0, 1)."""
        # A bound above 1 is no claim at all and one below 0 no probability: refuse both rather
        # than answer "not refuted" (or "refuted") about something that is not a claim.
        bound = check_probability("bound", bound)
        alpha = check_probability("alpha", alpha, open_low=True, open_high=True)
        return binomial_upper_tail(self.worst.failures, self.worst.pairs, bound) < alpha

    def to_dict(self) -> dict[str, Any]:
        return {"learner": self.learner, "n": self.n, "horizon": self.horizon, "rho": self.rho, "budget": self.budget,
                "pairs_used": self.pairs_used, "worst": self.worst.to_dict(),
                "candidates": [c.to_dict() for c in self.candidates]}


def _loguniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))


def _sample(family: str, rng: np.random.Generator, *, n: int, horizon: int, block: int, scale: float) -> dict[str, Any]:
    """One random point of a family's parameter space."""
    if family == "ties":
        p = {"k": int(rng.integers(2, n + 1)), "gap": 0.0 if rng.random() < 0.5 else _loguniform(rng, 1e-4, 0.05),
             "mean": float(rng.uniform(0.2, 0.8))}
    elif family == "crossing":
        p = {"at": float(rng.uniform(0.05, 0.95)), "gap": _loguniform(rng, 1e-3, 0.3), "mean": float(rng.uniform(0.3, 0.7))}
    elif family == "block-switch":
        B = block if block > 1 else int(round(_loguniform(rng, 1, max(2, horizon // 4))))
        B = max(1, min(B, horizon - 1))
        offset = int(rng.choice([0, 1, B // 2, B - 1])) % B
        p = {"block_size": B, "offset": offset, "every": int(rng.choice([1, 2, 4])), "gap": _loguniform(rng, 1e-2, 0.5),
             "mean": float(rng.uniform(0.3, 0.7))}
    elif family == "coin":
        # τ from 0.5/√T (a bias the draws can barely show) to 0.24; at T <= 4 that range is empty
        # and τ is 0.24 (the search range, not a user's value: nothing is clipped that was asked for).
        return {"tau": _loguniform(rng, min(0.5 / math.sqrt(horizon), 0.24), 0.24), "sign": int(rng.choice([-1, 1]))}
    elif family == "lazy-leader-trap":
        return {}
    elif family == "linear-ties":
        k, c0 = int(rng.integers(2, n + 1)), float(rng.uniform(-0.6, 0.2))
        gap = 0.0 if rng.random() < 0.5 else _loguniform(rng, 1e-4, 0.05)
        cosines = np.full(n, c0 + 0.4)
        cosines[:k] = c0 + gap * np.arange(k) / (k - 1)
        return _linear_arms(rng, n, cosines)
    elif family == "linear-gaps":
        c0 = float(rng.uniform(-0.9, -0.3))
        cosines = c0 + np.array([0.0, *(_loguniform(rng, 1e-3, 0.6) for _ in range(n - 1))])
        return _linear_arms(rng, n, cosines)
    elif family == "contexts":
        return {"d": int(rng.integers(3, 6)), "contexts": "sphere"}
    else:
        raise InvalidArgumentError(f"families must be among {list(FAMILIES)}; got {family!r}")
    if scale != 1.0:
        p["scale"] = scale
    return p


def _seed(seed: int, *parts: Any) -> int:
    digest = hashlib.sha256(json.dumps([seed, *parts], sort_keys=True, default=str).encode()).digest()
    return int.from_bytes(digest[:8], "big")


@public
def stress(
    learner: Any,  # anything a user holds: replify.sources.learner_arg decides, naming what came
    *,
    n: int,
    horizon: int,
    rho: float | None = None,
    budget: int = 2000,
    seed: int = 0,
    families: Sequence[str] | None = None,
    candidates_per_family: int = 4,
    progress: bool | Callable[[int, int], None] | None = None,
    label: str | None = None,
    learner_params: Mapping[str, Any] | None = None,
    **overrides: Any,
) -> StressResult:
    """Search the stress suite (``ties``, ``crossing``, ``block-switch``; ``coin`` and
    ``lazy-leader-trap`` at n = 2; for a contextual learner :data:`CONTEXTUAL_FAMILIES`) for the adversary with the highest failure rate against
    ``learner`` (anything :func:`replify.evaluate` takes as a learner — a registered name, a
    factory taking n, horizon, rng, a wrapped class, a callable ``seed -> learner`` or a
    ``"module:Name"`` reference — built with ``rho`` and its hyperparameters ``overrides`` and
    ``learner_params`` as evaluate builds it; ``label`` names it in the result),
    by successive halving over
    ``candidates_per_family`` random candidates per family within ``budget`` pairs in all.
    Block-switch candidates use the learner's own block size (the algorithm and B are public).
    Learners whose domain is ℓ1-bounded get costs scaled by 1/n. ``progress=True`` draws a bar
    over the pairs spent (a callable ``progress(used, budget)`` is called as they are). Returns a
    :class:`StressResult`.
    """
    n = check_step_size("n", n, minimum=2, budget=limits.MEMORY_BUDGET)
    horizon = check_int("horizon", horizon, minimum=2)
    budget = check_int("budget", budget, minimum=8)
    candidates_per_family = check_int("candidates_per_family", candidates_per_family, minimum=1)
    if rho is not None:
        rho = check_rho(rho)
    arg = learner_arg(learner, label=label)
    params = merged_params(overrides, learner_params)
    build, label, spec = arg.builder(n=n, horizon=horizon, rho=rho, params=params), arg.label, arg.spec
    block, scale, domain, probe = _learner_shape(build, spec, n=n, seed=seed)
    contextual = is_contextual(probe)
    known = CONTEXTUAL_FAMILIES if contextual else FAMILIES
    chosen = list(known if families is None else families)
    unknown = sorted(set(chosen) - set(known))
    if unknown or not chosen:
        kind = "a contextual learner's" if contextual else "a learner's"
        raise InvalidArgumentError(f"families must be a non-empty list among {list(known)} ({kind} families); "
                                   f"got {list(chosen)}")
    if contextual and getattr(probe, "needs_fixed_contexts", False):
        chosen = [f for f in chosen if f != "contexts"] or ["linear-gaps"]
    if n != 2:
        chosen = [f for f in chosen if f not in ("coin", "lazy-leader-trap")]  # both are two-expert adversaries
        if not chosen:
            raise InvalidArgumentError(f"families {list(families or [])} need n = 2; got n={n}")
    # what evaluate is given for every candidate: the learner as resolved, with its label
    kw = dict(label=label, progress=False, **({} if arg.kind == "seeded" else dict(rho=rho, learner_params=params)))
    learner = arg.obj

    if domain is not None and domain.low > -1.0:  # its day-1 bonus is a cost of -1
        chosen = [f for f in chosen if f != "lazy-leader-trap"]
    rng = np.random.default_rng(_seed(seed, "candidates"))
    pool = [(f, _sample(f, rng, n=n, horizon=horizon, block=block, scale=scale))
            for f in chosen for _ in range(candidates_per_family if f != "lazy-leader-trap" else 1)]
    tallies = {i: [0, 0] for i in range(len(pool))}  # failures, pairs
    alive = list(range(len(pool)))
    rounds = max(1, math.ceil(math.log2(len(pool))))
    used, r = 0, 0
    per_round = budget // rounds
    bar = reporter(progress, f"stress {label}")
    try:
        while alive and used < budget:
            each = max(2, min(per_round // len(alive), (budget - used) // len(alive)))
            if each < 2 or (budget - used) < 2 * len(alive):
                break
            for i in alive:
                family, params = pool[i]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ReplifyWarning)
                    report = evaluate(learner, stress_adversary(family), n=n, horizon=horizon, pairs=each,
                                      seed=_seed(seed, i, r), adversary_params=params, **kw)
                tallies[i][0] += report.failures
                tallies[i][1] += each
                used += each
                if bar is not None:
                    bar(used, budget)
            r += 1
            if len(alive) == 1:
                break
            # keep the half with the highest failure rate (ties: the one measured on more pairs)
            alive.sort(key=lambda i: (tallies[i][0] / tallies[i][1], tallies[i][1]), reverse=True)
            alive = alive[: max(1, len(alive) // 2)]
    finally:
        if bar is not None:
            bar.close()
    found = [Candidate(family=pool[i][0], params=pool[i][1], failures=t[0], pairs=t[1]) for i, t in tallies.items()]
    measured = [found[i] for i in alive] or found
    worst = max(measured, key=lambda c: (c.rho_hat, c.pairs))
    if rho is None and arg.kind == "replicable":  # the rho a wrapped class fixed is the rho it was stressed at
        rho = arg.obj.options.get("rho")
    return StressResult(learner=label, n=n, horizon=horizon, rho=rho, budget=budget, pairs_used=used, worst=worst,
                        candidates=tuple(found))


def _learner_shape(build: Callable[[Any], Any], spec: Any, *, n: int, seed: int) -> tuple[int, float, Any, Any]:
    """The learner's block size (1 without blocks), the cost scale its domain needs, the domain, and
    the learner built (what it is: contextual or not)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplifyWarning)
        built = build(child(seed_sequence(seed), INTERNAL, 0))
    domain = getattr(built, "domain", None)
    if domain is None and spec is not None:
        domain = spec.domain
    scale = 1.0 / n if domain is not None and domain.l1 else 1.0
    return int(getattr(built, "block_size", 1)), scale, domain, built
