"""Off-policy estimates of a target policy π's expected cost from a :class:`~replify.offpolicy.Log`,
each with a confidence interval (docs/offpolicy.md).

With w_i = π(a_i | x_i)/p_i (the importance weight of row i: the target's probability of the
logged action over the logging policy's) and ĉ(x, a) a cost model:

- ``"ips"`` — inverse propensity scoring (Horvitz & Thompson, JASA 1952): V = (1/N) Σ w_i c_i;
- ``"snips"`` — self-normalised IPS (Swaminathan & Joachims, NeurIPS 2015): V = Σ w_i c_i / Σ w_i;
- ``"dm"`` — the direct method: V = (1/N) Σ_i Σ_a π(a | x_i) ĉ(x_i, a);
- ``"dr"`` — doubly robust (Dudík, Langford & Li, ICML 2011):
  V = (1/N) Σ_i [Σ_a π(a | x_i) ĉ(x_i, a) + w_i (c_i − ĉ(x_i, a_i))].

**Intervals.** Each estimate is a mean of per-row terms (SNIPS: a ratio of two, by the delta method,
terms w_i(c_i − V)/w̄), and its interval is the normal one, V ± z·s/√N, s the terms' sample standard
deviation: asymptotic (central limit theorem), stated as such. The direct method gets no interval:
its error is the model's bias, which the log cannot bound (measured: a ridge model on wine's
features, 95% "intervals" from the terms' spread covered the truth in 0 of 1000 logs, where IPS's,
SNIPS's and DR's covered it in 969, 986 and 1000 of them; docs/offpolicy.md).

**Small samples.** The normal interval needs the central limit theorem to have set in. Where the
terms are skewed (a rare arm's rare cost: weights of 50 on a Bernoulli(0.1) cost) it has not, and a
"95%" interval covered the truth in 63% of 1 000 logs of 500 rows and 91% of 2 000 rows. The
estimate then carries a ``caveat`` and a :class:`~replify.errors.SmallSampleWarning` naming the
effective sample size (Kish's, (Σ w)²/Σ w² over the rows) and what is missing: the rows Cochran's
rule asks for, N ≥ 25 γ² with γ the terms' sample skewness (Cochran, *Sampling Techniques*, 1977,
§2.15; measured on that log, coverage reaches 93% near N = 10 000, where the rule asks for about
12 000), or — where the rare event was never drawn, so that the sample's skewness cannot see it — a
single row of the largest weight W moving the estimate by more than the interval's half-width:
W·(hi − lo)/N > z·se, W = π/p_min where ``min_propensity`` is declared, else the largest weight on
the log's contexts (an independent review found the skewness alone silent on 68% of logs of 2·10⁴
rows whose rare arm was logged with probability 10⁻⁴, covering the truth in 18% of them).

Where every term is the same (SNIPS on a policy whose matched rows all cost 1) the sample's spread
is 0 and the normal interval would claim certainty. The interval is then the rule of three's (ours,
after Hanley & Lippman-Hand, JAMA 1983): all N rows gave the same term y₀, so with confidence
1 − α the probability that a row's term differs is at most τ = 1 − α^{1/N}, and a term lies in
[T_lo, T_hi] — w·c for IPS with w ≤ W and c in the cost range; the DR term's range with the
model's predictions; w(c − v) for SNIPS, whose estimate less v is the mean of w(c − v) since
E w = 1 — so the mean lies in [y₀ − (y₀ − T_lo)τ, y₀ + (T_hi − y₀)τ], α = (1 − confidence)/2 a
side. The cost range is the log's declared one, else its own; where every logged cost is the same
and none is declared, nothing bounds the costs not seen and there is no interval. (A first version
used Kish's effective sample size for N with the cost range alone: the review's rare arm, logged
with probability 0.001 and all its few rows costing 0, got [0, 0.0016] around a truth of 0.01.)

**Clipping.** ``clip=M`` replaces every weight by min(w, M) in IPS and DR (Bottou et al., JMLR
2013): a bias towards 0 traded for variance; the result says how many weights were clipped.

**The cost model.** ``model`` is a function of the contexts (all rows at once) returning every
arm's predicted cost (rows, n); without one, :func:`ridge_model` fits one on the log itself: ridge
regression of the logged costs on the logged arm's features, one model per arm (the same data
then serve the model and the correction; state it where it matters).
"""

from __future__ import annotations

import math
import numbers
from statistics import NormalDist
from typing import Any, Callable

import attrs
import numpy as np

from replify.errors import InvalidArgumentError, SmallSampleWarning, warn
from replify.offpolicy.log import Log, policy_probabilities, unlogged_arms
from replify.offpolicy.policies import model_scores

ESTIMATORS = ("ips", "snips", "dm", "dr")


@attrs.frozen
class Estimate:
    """A policy's estimated expected cost: ``value``, its ``interval`` at ``confidence`` (normal,
    asymptotic; None for the direct method, whose error is its model's bias), ``standard_error``, the ``estimator``, the log's ``rows``, how many weights were
    ``clipped`` (at ``clip``), and, on a simulated log, the ``true_value`` and the ``bias``."""

    estimator: str
    value: float
    interval: tuple[float, float] | None
    standard_error: float
    confidence: float
    rows: int
    clip: float | None = None
    clipped: int = 0
    true_value: float | None = None
    #: the effective sample size (Kish: (Σ w)²/Σ w² over the rows' importance weights)
    ess: float | None = None
    #: what the interval assumes that this log may not give it (too few effective rows for the
    #: normal approximation), or why it is the rule of three's; None where nothing is to be said
    caveat: str | None = None
    #: "normal", "rule of three" (every term the same) or None (no interval)
    interval_kind: str | None = "normal"

    @property
    def bias(self) -> float | None:
        """value − true value (a simulated log only)."""
        return None if self.true_value is None else self.value - self.true_value

    @property
    def covers(self) -> bool | None:
        """Whether the interval holds the true value (a simulated log only)."""
        if self.true_value is None or self.interval is None:
            return None
        return self.interval[0] <= self.true_value <= self.interval[1]

    @property
    def kind(self) -> str:
        """What the interval is (every number here is measured on the log)."""
        if self.interval is None:
            if self.estimator == "dm":
                return "measured; no interval: the direct method's error is its cost model's bias"
            return "measured; no interval: every term is the same and no cost range bounds the others"
        if self.interval_kind == "rule of three":
            return "measured; a rule-of-three interval (every term the same: a normal one would have width 0)"
        return "measured; an asymptotic normal interval (central limit theorem)"


def ridge_model(log: Log, lam: float = 1.0) -> Callable[[np.ndarray], np.ndarray]:
    """A cost model fitted on ``log``: per arm, ridge regression (λ = ``lam``) of its logged costs
    on its features (the arm's row of the contexts, or the shared context), with an intercept that
    is not penalised (features and costs centred on the arm's weighted means), so that a constant
    cost is predicted exactly whatever the features. An arm never played is predicted the log's
    mean cost."""
    x = log.contexts
    feats = x[np.arange(log.stored), log.actions] if x.ndim == 3 else x
    k = np.ones(log.stored) if log.weights is None else log.weights.astype(np.float64)
    d = feats.shape[1]
    theta = np.zeros((log.n, d))
    intercept = np.full(log.n, log.mean(log.costs))  # an arm never played: the log's mean cost
    for a in range(log.n):  # a loop over the arms
        pick = log.actions == a
        if not pick.any():
            continue
        z, c, w = feats[pick], log.costs[pick], k[pick]
        z_mean, c_mean = np.average(z, axis=0, weights=w), float(np.average(c, weights=w))
        zc = z - z_mean
        theta[a] = np.linalg.solve(lam * np.eye(d) + (zc * w[:, None]).T @ zc, (zc * w[:, None]).T @ (c - c_mean))
        intercept[a] = c_mean - z_mean @ theta[a]

    def predict(contexts: np.ndarray) -> np.ndarray:
        c = np.asarray(contexts, dtype=np.float64)
        return (np.einsum("rnd,nd->rn", c, theta) if c.ndim == 3 else c @ theta.T) + intercept

    return predict


def estimate(log: Log, policy: Callable[[np.ndarray], Any], estimator: str = "ips", *,
             model: Callable[[np.ndarray], Any] | None = None, clip: Any = None,
             confidence: Any = 0.95) -> Estimate:
    """The expected cost of ``policy`` (a function of the contexts, all rows at once, returning arms
    (rows,) or probabilities (rows, n)) estimated from ``log`` by ``estimator`` (module docstring),
    with its interval at ``confidence``. ``model`` serves ``"dm"`` and ``"dr"`` (``"ips"`` and
    ``"snips"`` use none, so that one call can loop over the estimators); ``clip`` serves ``"ips"``
    and ``"dr"`` and is refused elsewhere, since it would change nothing the caller could see."""
    if not isinstance(log, Log):
        raise InvalidArgumentError(f"log must be a replify.offpolicy.Log; got {type(log).__name__}")
    if estimator not in ESTIMATORS:
        raise InvalidArgumentError(f"estimator must be one of {ESTIMATORS}; got {estimator!r}")
    if isinstance(confidence, (bool, np.bool_)) or not (isinstance(confidence, numbers.Real) and 0.0 < confidence < 1.0):
        raise InvalidArgumentError(f"confidence must be a number in (0, 1); got {confidence!r}")
    confidence = float(confidence)
    if clip is not None and not (isinstance(clip, numbers.Real) and not isinstance(clip, (bool, np.bool_))
                                 and 0 < clip < math.inf):
        raise InvalidArgumentError(f"clip must be a number > 0 (the largest importance weight kept); got {clip!r}")
    if clip is not None and estimator not in ("ips", "dr"):
        raise InvalidArgumentError(f"clip applies to 'ips' and 'dr'; got estimator={estimator!r}")
    if log.rows < 2:
        raise InvalidArgumentError(f"log: an interval needs at least 2 rows; got {log.rows}")
    pi = policy_probabilities(policy, log)
    rows = np.arange(log.stored)
    w = pi[rows, log.actions] / log.propensities
    clipped = 0
    if clip is not None:
        clipped = int((w > clip).sum() if log.weights is None else log.weights[w > clip].sum())
        w = np.minimum(w, clip)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below, naming it
        c = log.costs
        if estimator in ("dm", "dr"):
            hat = model_scores(model if model is not None else ridge_model(log), log.contexts, log.n)
            direct = (pi * hat).sum(axis=1)
        if estimator == "ips":
            terms = w * c
        elif estimator == "dm":
            terms = direct
        elif estimator == "dr":
            terms = direct + w * (c - hat[rows, log.actions])
        if estimator == "snips":
            mean_w = log.mean(w)
            if mean_w <= 0.0:
                raise InvalidArgumentError(f"snips: the policy gives probability 0 to every logged action of {log.name}; "
                                           "its self-normalised estimate is undefined")
            value = log.mean(w * c) / mean_w
            terms = w * (c - value) / mean_w
            se = log.std(terms) / math.sqrt(log.rows)
        else:
            value = log.mean(terms)
            se = log.std(terms) / math.sqrt(log.rows)
    if not (math.isfinite(value) and math.isfinite(se)):
        raise InvalidArgumentError(f"{estimator}: the estimate on {log.name} overflows float64 (costs up to "
                                   f"{float(np.abs(c).max()):g} over propensities down to "
                                   f"{float(log.propensities.min()):g}); rescale the costs (the estimate scales with them)")
    truth = None if log.means is None else log.true_value(policy)
    k = np.ones(log.stored) if log.weights is None else log.weights
    ess = float(np.sum(k * w)) ** 2 / float(np.sum(k * w * w)) if np.any(w > 0) else 0.0
    weight = largest_weight(log, pi)
    interval, kind, caveat = _interval(log, estimator, value, se, terms, ess, confidence, weight,
                                       _term_range(log, estimator, value, weight[0], hat if estimator == "dr" else None))
    missing = unlogged_arms(log, pi)
    if missing:  # IPS and SNIPS count those rows as nothing; DM and DR put the cost model there
        caveat = "; ".join(filter(None, [caveat, f"the policy: {missing}" + (
            " (the cost model stands in for it)" if estimator in ("dm", "dr") else "")]))
    return Estimate(estimator=estimator, value=value, interval=interval, standard_error=se,
                    confidence=confidence, rows=log.rows, clip=None if clip is None else float(clip), clipped=clipped,
                    true_value=truth, ess=ess, caveat=caveat, interval_kind=kind)


def _term_range(log: Log, estimator: str, value: float, big: float, hat: np.ndarray | None) -> tuple[float, float]:
    """The range of the quantity whose mean is the estimate, each row's weight up to ``big``: w·c for
    IPS, the DR term for DR (the model's predictions widen the cost range), and v + w(c − v) for SNIPS
    (E w = 1, so the estimate less v is the mean of w(c − v)). Costs in the log's declared range, else
    its own."""
    lo, hi = log.cost_range if log.cost_range is not None else (float(log.costs.min()), float(log.costs.max()))
    if estimator == "dm":  # no interval: any range serves
        return lo, hi
    if estimator == "ips":
        return big * min(lo, 0.0), big * max(hi, 0.0)
    if estimator == "snips":
        return value + big * min(lo - value, 0.0), value + big * max(hi - value, 0.0)
    c_lo, c_hi = min(lo, float(hat.min())), max(hi, float(hat.max()))
    return c_lo - big * (c_hi - c_lo), c_hi + big * (c_hi - c_lo)


#: Cochran's rule for the normal approximation to a mean of skewed terms: N ≥ 25 γ² (module docstring)
COCHRAN = 25.0


def largest_weight(log: Log, pi: np.ndarray) -> tuple[float, bool]:
    """W, the largest importance weight π(a|x)/μ(a|x) the policy can get, and whether it is a bound:
    1/p_min where the log declares its logging policy's least probability (a bound), else the
    largest over the log's rows of its recorded logging distribution (or of the logged weights):
    measured on these contexts."""
    if log.min_propensity is not None:
        return float(pi.max()) / float(log.min_propensity), True
    if log.distribution is not None:
        return float(np.max(pi / np.maximum(log.distribution, np.finfo(float).tiny))), False
    return float(np.max(pi[np.arange(log.stored), log.actions] / log.propensities)), False


def _interval(log: Log, estimator: str, value: float, se: float, terms: np.ndarray, ess: float, confidence: float,
              weight: tuple[float, bool], term_range: tuple[float, float]) -> tuple[tuple[float, float] | None, str | None,
                                                                                    str | None]:
    """The interval, its kind and its caveat (module docstring: the normal interval, a caveat where
    Cochran's rule or the largest term says the sample is too small, the rule of three's where
    every term is the same)."""
    if estimator == "dm":
        return None, None, None
    big, bounded = weight
    how = "" if bounded else " (the largest weight measured on this log's contexts: no min_propensity declared)"
    spread = max(abs(value), float(np.abs(terms).max()), 1.0) * 1e-12
    if se * math.sqrt(log.rows) <= spread:  # every term the same: the normal interval's width would be 0
        lo, hi = term_range
        if hi <= lo:
            return None, None, ("every term is the same and every logged cost too, with no cost range declared: "
                                "nothing bounds the costs not seen, so no interval")
        # every one of the N rows gave the same term y0: P(a term differs) <= tau with confidence 1 - alpha,
        # and a term lies in [lo, hi] (the weights up to W), so the mean lies within tau of y0 in that range
        tau = 1.0 - ((1.0 - confidence) / 2.0) ** (1.0 / log.rows)
        caveat = (f"every term is the same on {log.rows} rows: a rule-of-three interval over the terms' range "
                  f"[{lo:.4g}, {hi:.4g}] (weights up to {big:.4g}{how}), not a normal one of width 0")
        return (value - max(value - lo, 0.0) * tau, value + max(hi - value, 0.0) * tau), "rule of three", caveat
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    m = log.mean(terms)
    gamma = log.mean((terms - m) ** 3) / log.mean((terms - m) ** 2) ** 1.5
    need = COCHRAN * gamma * gamma
    said = []
    if log.rows < need:
        said.append(f"the terms' skewness {gamma:.3g} asks for {need:,.0f} rows (Cochran's rule, 25 x skewness^2)")
    lo, hi = term_range
    if (hi - lo) / log.rows > z * se:  # a row the log never drew could move the estimate past its interval
        said.append(f"one row of the largest weight ({big:.4g}{how}) would move the estimate by up to "
                    f"{(hi - lo) / log.rows:.3g}, more than the interval's half-width {z * se:.3g}")
    caveat = None
    if said:
        caveat = (f"too few effective rows for the normal interval (effective sample size {ess:.3g} of {log.rows} "
                  f"rows): " + "; and ".join(said) + "; its coverage may fall well below the nominal level")
        warn(f"{estimator} on {log.name}: {caveat}", SmallSampleWarning)
    return (value - z * se, value + z * se), "normal", caveat
