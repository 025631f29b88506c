"""Off-policy estimates of a target policy π's expected cost from a :class:`~replify.offpolicy.Log`,
each with a confidence interval (docs/offpolicy.md).

With w_i = π(a_i | x_i)/p_i (the importance weight of row i: the target's probability of the
logged action over the logging policy's) and ĉ(x, a) a cost model:

- ``"ips"`` — inverse propensity scoring (Horvitz & Thompson, JASA 1952): V = (1/N) Σ w_i c_i;
- ``"snips"`` — self-normalised IPS (Swaminathan & Joachims, NeurIPS 2015): V = Σ w_i c_i / Σ w_i;
- ``"dm"`` — the direct method: V = (1/N) Σ_i Σ_a π(a | x_i) ĉ(x_i, a);
- ``"dr"`` — doubly robust (Dudík, Langford & Li, ICML 2011):
  V = (1/N) Σ_i [Σ_a π(a | x_i) ĉ(x_i, a) + w_i (c_i − ĉ(x_i, a_i))];
- ``"sndr"`` — self-normalised DR (Kallus & Uehara, NeurIPS 2019):
  V = (1/N) Σ_i Σ_a π(a | x_i) ĉ(x_i, a) + Σ_i w_i (c_i − ĉ(x_i, a_i)) / Σ_i w_i;
- ``"switch-dr"`` — switch DR (Wang, Agarwal & Dudík, ICML 2017): DR's correction kept where
  w_i ≤ λ, the cost model alone elsewhere: V = (1/N) Σ_i [Σ_a π ĉ + 1{w_i ≤ λ} w_i (c_i − ĉ_i)];
- ``"dros"`` — DR with optimistic shrinkage (Su, Dimakopoulou, Krishnamurthy & Dudík, ICML 2020):
  the weight shrunk to ŵ = λw/(w² + λ) in DR's correction (λ = ∞: DR; λ → 0: DM);
- ``"sg-ips"`` — sub-Gaussian IPS (Metelli, Russo & Restelli, NeurIPS 2021): the weight smoothed to
  ŵ = w/(1 − λ + λw), λ ∈ [0, 1] (0: IPS), V = (1/N) Σ ŵ_i c_i.

These are the Open Bandit Pipeline's definitions (its ``SelfNormalizedDoublyRobust``,
``SwitchDoublyRobust`` with the indicator w ≤ λ, ``DoublyRobustWithShrinkage`` and
``SubGaussianInverseProbabilityWeighting``), each equal to its formula to 10⁻¹⁰ in
``tests/experiments/test_offpolicy_estimators.py``.

**Their λ** (``lam=``). A number fixes it. By default (``lam="tuned"``) it is chosen on the log as
Su, Srinath & Krishnamurthy (ICML 2020) and the Open Bandit Pipeline's ``"mse"`` tuning choose it:
the candidate of least estimated mean squared error, the terms' variance over N plus the square of a
high-probability bound on the bias, |E_N[(w − ŵ)(c − ĉ)]| + (2 E_N[w²] ln(2/δ)/N)^½ + 2 max w ln(2/δ)/(3N)
with δ = 0.05 (IPS's terms for ``"sg-ips"``, with ĉ = 0). The candidates: for ``"switch-dr"`` λ = 2^j
up to the largest weight and ∞; for ``"dros"`` λ = 4^j, j = −2…12, and ∞; for ``"sg-ips"`` λ ∈ {0,
0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1}. The λ chosen is the estimate's ``lam``. A λ tuned on the log
makes the interval's coverage the tuned estimator's, not a fixed one's: the estimate says so.

**Cross-fitting** (``folds=k``, ``seed=``; Chernozhukov et al., Econometrics Journal 2018; Narita,
Yasui & Yata, arXiv 2002.08536, for off-policy evaluation). Where the cost model is fitted on the log
(no ``model=`` given), the model that predicts row i is fitted on the other folds only: the stored
rows dealt into k folds by a permutation from ``seed`` (a compact log's row goes whole to one fold).
It serves every estimator with a cost model (``"dm"``, ``"dr"``, ``"sndr"``, ``"switch-dr"``, ``"dros"``).

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

**Other intervals** (``interval=``). ``"bootstrap"``: the percentile interval of B = 2 000 resamples
of the log's rows (Efron & Tibshirani 1993, §13; the Open Bandit Pipeline's
``estimate_confidence_interval_by_bootstrap``), drawn from ``seed``: each resample recomputes the
estimate (the ratio of SNIPS and SNDR included) at the λ and the cost model of the whole log. It
assumes what the normal one does, that the resampled law stands for the log's, and is as
asymptotic. ``"bernstein"``: a finite-sample interval from the empirical Bernstein bound (Maurer &
Pontil, COLT 2009, Theorem 4, each side at α/2): for N iid terms in a range of width R, with the
terms' unbiased sample variance V, the mean lies within (2V ln(4/α)/N)^½ + 7R ln(4/α)/(3(N − 1)) of
the estimate with probability at least 1 − α, whatever the law; intersected with the cost range,
which holds every policy's value. It covers the policy's value where the terms' mean is that value
and their range is known: IPS (unclipped), and DR with a ``model=`` fitted elsewhere (the log's own
model makes the terms dependent); the range is the one the rule of three uses, with the largest
weight 1/p_min where ``min_propensity`` is declared — else the largest weight measured on the log's
contexts, and the estimate says so (``caveat``). Elsewhere it is refused by name.

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

from replify.base.randomness import seed_sequence
from replify.errors import InvalidArgumentError, SmallSampleWarning, warn
from replify.offpolicy.log import Log, policy_probabilities, unlogged_arms
from replify.offpolicy.policies import model_scores

ESTIMATORS = ("ips", "snips", "dm", "dr", "sndr", "switch-dr", "dros", "sg-ips")

#: the intervals an estimate may carry (module docstring), and the bootstrap's resamples
INTERVALS = ("normal", "bootstrap", "bernstein")
BOOTSTRAP_SAMPLES = 2000

#: the estimators with a cost model, and those with a λ (module docstring)
MODELLED = ("dm", "dr", "sndr", "switch-dr", "dros")
TUNED = ("switch-dr", "dros", "sg-ips")

#: Su et al.'s δ for the bias bound in the estimated mean squared error that tunes λ (module docstring)
TUNING_DELTA = 0.05


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
    #: "normal", "rule of three" (every term the same), "bootstrap", "bernstein" or None (no interval)
    interval_kind: str | None = "normal"
    #: the estimator's λ (``"switch-dr"``, ``"dros"``, ``"sg-ips"``), and whether it was tuned on the log
    lam: float | None = None
    tuned: bool = False
    #: the folds the cost model was cross-fitted on (None: fitted on the whole log, or given)
    folds: int | None = None

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
        tuned = "; lam tuned on the log (least estimated mean squared error): the tuned estimator's interval" if self.tuned else ""
        if self.interval_kind == "rule of three":
            return "measured; a rule-of-three interval (every term the same: a normal one would have width 0)" + tuned
        if self.interval_kind == "bootstrap":
            return "measured; a percentile bootstrap interval (asymptotic)" + tuned
        if self.interval_kind == "bernstein":
            return "measured; a finite-sample interval (empirical Bernstein: iid terms of a known range)"
        return "measured; an asymptotic normal interval (central limit theorem)" + tuned


@attrs.frozen
class Moments:
    """What an estimate's interval reads of a log and its per-row terms: the interactions ``rows``, the
    log's ``name`` and declared ``cost_range``, its least and greatest cost, the terms' mean, central
    second and third moments (over the interactions) and largest absolute value, and the cost model's
    least and greatest prediction (None without one). :meth:`of` takes them from a log in memory;
    :mod:`replify.offpolicy.stream` adds them up chunk by chunk."""

    rows: int
    name: str
    cost_range: tuple[float, float] | None
    cost_lo: float
    cost_hi: float
    mean: float
    m2: float
    m3: float
    biggest: float
    hat_lo: float | None = None
    hat_hi: float | None = None

    @classmethod
    def of(cls, log: Log, terms: np.ndarray, hat: np.ndarray | None) -> Moments:
        m = log.mean(terms)
        return cls(rows=log.rows, name=log.name, cost_range=log.cost_range, cost_lo=float(log.costs.min()),
                   cost_hi=float(log.costs.max()), mean=m, m2=log.mean((terms - m) ** 2),
                   m3=log.mean((terms - m) ** 3), biggest=float(np.abs(terms).max()),
                   hat_lo=None if hat is None else float(hat.min()), hat_hi=None if hat is None else float(hat.max()))


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


def estimate(log: Log, policy: Any, estimator: str = "ips", *,
             model: Callable[[np.ndarray], Any] | None = None, clip: Any = None,
             confidence: Any = 0.95, lam: Any = None, folds: Any = None, seed: Any = None,
             interval: str = "normal") -> Estimate:
    """The expected cost of ``policy`` (a function of the contexts, all rows at once, returning arms
    (rows,) or probabilities (rows, n)) estimated from ``log`` by ``estimator`` (module docstring),
    with its interval at ``confidence``. ``model`` serves the estimators with a cost model (``"dm"``,
    ``"dr"``, ``"sndr"``, ``"switch-dr"``, ``"dros"``; the others use none, so that one call can loop
    over the estimators), ``folds`` and ``seed`` cross-fit the model fitted on the log, ``lam`` is the
    λ of ``"switch-dr"``, ``"dros"`` and ``"sg-ips"`` (tuned on the log by default), and ``clip``
    serves ``"ips"`` and ``"dr"``; each is refused elsewhere, since it would change nothing the caller
    could see. ``interval`` is ``"normal"``, ``"bootstrap"`` (resampled from ``seed``) or
    ``"bernstein"`` (finite-sample; IPS, and DR with a given model: module docstring)."""
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
    lam = _checked_lam(estimator, lam)
    if interval not in INTERVALS:
        raise InvalidArgumentError(f"interval must be one of {INTERVALS}; got {interval!r}")
    if interval == "bernstein" and not bernstein_applies(estimator, model, clip):
        raise InvalidArgumentError(
            f"interval='bernstein' needs terms whose mean is the policy's value and whose range is known: 'ips' "
            f"(unclipped) or 'dr' with a model= fitted elsewhere; got estimator={estimator!r}"
            + (" with clip" if clip is not None else "") + (" with the log's own model" if estimator in MODELLED and model is None else ""))
    if interval == "bootstrap" and seed is None:
        raise InvalidArgumentError("interval='bootstrap' resamples the log at random: give seed=")
    how = interval
    folds = _checked_folds(estimator, folds, seed if folds is not None or interval != "bootstrap" else None, model)
    if log.rows < 2:
        raise InvalidArgumentError(f"log: an interval needs at least 2 rows; got {log.rows}")
    pi = policy_probabilities(policy, log)
    rows = np.arange(log.stored)
    w = pi[rows, log.actions] / log.propensities
    clipped = 0
    if clip is not None:
        clipped = int((w > clip).sum() if log.weights is None else log.weights[w > clip].sum())
        w = np.minimum(w, clip)
    tuned = estimator in TUNED and lam is None
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below, naming it
        c = log.costs
        direct, err, hat = row_parts(log, pi, estimator, model, folds, seed)
        if tuned:
            lam = _tune(log, estimator, w, direct, err)
        if estimator in ("snips", "sndr"):  # SNIPS is SNDR with the cost model 0
            mean_w = log.mean(w)
            if mean_w <= 0.0:
                raise InvalidArgumentError(f"{estimator}: the policy gives probability 0 to every logged action of "
                                           f"{log.name}; its self-normalised estimate is undefined")
            ratio = log.mean(w * err) / mean_w
            value = log.mean(direct) + ratio
            terms = direct + w * (err - ratio) / mean_w  # its influence function (the delta method), mean = value
        else:
            terms = _terms(estimator, w, c, direct, err, lam)
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
    big = _effective_weight(estimator, weight[0], lam)
    moments = Moments.of(log, terms, hat)
    band, kind, caveat = _interval(moments, estimator, value, se, ess, confidence, (big, weight[1]),
                                   _term_range(moments, estimator, value, big))
    missing = unlogged_arms(log, pi)
    if log.propensity_model is not None:  # said first: it qualifies every number below
        caveat = "; ".join(filter(None, [f"the propensities were {log.propensity_model}: measured, not certified (the "
                                         "estimators are unbiased for the logging policy's own propensities only, and "
                                         "the interval does not count the model's error)", caveat]))
    if how == "bootstrap":
        resampled = _bootstrap(log, estimator, terms, w, direct, err, seed)
        alpha = 1.0 - confidence
        band, kind = (float(np.quantile(resampled, alpha / 2)), float(np.quantile(resampled, 1 - alpha / 2))), "bootstrap"
    elif how == "bernstein":
        band, kind, said = _bernstein(moments, value, confidence, (big, weight[1]),
                                          _term_range(moments, estimator, value, big))
        caveat = said
    if missing:  # IPS and SNIPS count those rows as nothing; DM and DR put the cost model there
        caveat = "; ".join(filter(None, [caveat, f"the policy: {missing}" + (
            " (the cost model stands in for it)" if estimator in MODELLED else "")]))
    return Estimate(estimator=estimator, value=value, interval=band, standard_error=se,
                    confidence=confidence, rows=log.rows, clip=None if clip is None else float(clip), clipped=clipped,
                    true_value=truth, ess=ess, caveat=caveat, interval_kind=kind, lam=lam, tuned=tuned, folds=folds)


def _bootstrap(log: Log, estimator: str, terms: np.ndarray, w: np.ndarray, direct: np.ndarray, err: np.ndarray,
               seed: Any) -> np.ndarray:
    """The estimate on ``BOOTSTRAP_SAMPLES`` resamples of the log's rows (module docstring): counts
    of the stored rows, Multinomial(N, their weights/N), in blocks of 100."""
    rng = np.random.default_rng(seed_sequence(seed, name="seed"))
    columns = np.stack([direct, w * err, w] if estimator in ("snips", "sndr") else [terms], axis=1)
    out = []
    for _ in range(BOOTSTRAP_SAMPLES // 100):  # a loop over blocks of resamples
        if log.weights is None:  # N rows drawn with replacement: their sums, column by column
            sums = columns[rng.integers(0, log.stored, size=(100, log.rows))].sum(axis=1)
        else:  # a compact log: how many of the N interactions fall on each stored row
            sums = rng.multinomial(log.rows, log.weights / float(log.weights.sum()), size=100).astype(np.float64) @ columns
        tiny = np.finfo(float).tiny
        if estimator in ("snips", "sndr"):  # SNIPS: the cost model is 0
            out.append(sums[:, 0] / log.rows + sums[:, 1] / np.maximum(sums[:, 2], tiny))
        else:
            out.append(sums[:, 0] / log.rows)
    return np.concatenate(out)


def _bernstein(moments: Moments, value: float, confidence: float, weight: tuple[float, bool],
               term_range: tuple[float, float]) -> tuple[tuple[float, float], str, str | None]:
    """The empirical Bernstein interval (module docstring, "Other intervals"), within the cost range."""
    lo, hi = term_range
    big, bounded = weight
    n, big_l = moments.rows, math.log(4.0 / (1.0 - confidence))
    var = (moments.m2 + (moments.mean - value) ** 2) * n / (n - 1)  # the unbiased sample variance about the value
    half = math.sqrt(2.0 * var * big_l / n) + 7.0 * (hi - lo) * big_l / (3.0 * (n - 1))
    c_lo, c_hi = moments.cost_range if moments.cost_range is not None else (-math.inf, math.inf)
    caveat = None if bounded else (f"the terms' range uses the largest weight measured on this log's contexts ({big:.4g}): "
                                   "declare min_propensity for the bound the interval assumes")
    return (max(value - half, c_lo), min(value + half, c_hi)), "bernstein", caveat


def bernstein_applies(estimator: str, model: Any, clip: Any = None) -> bool:
    """Whether the finite-sample interval covers ``estimator``'s value (module docstring, "Other
    intervals"): IPS unclipped, and DR with a cost model fitted elsewhere (given)."""
    return clip is None and (estimator == "ips" or (estimator == "dr" and model is not None))


def row_parts(log: Log, pi: np.ndarray, estimator: str, model: Callable[[np.ndarray], Any] | None, folds: int | None,
              seed: Any, hat: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Each row's direct term Σ_a π(a|x) ĉ(x, a), its residual c − ĉ(x, a) at the logged arm, and the
    cost model's predictions (stored, n; ``hat`` where already computed) — for an estimator without a
    model, 0, the cost itself and None."""
    if estimator not in MODELLED:
        return np.zeros_like(log.costs), log.costs, None  # IPS's family: the cost model is 0
    hat = cost_model(log, model, folds, seed) if hat is None else hat
    return (pi * hat).sum(axis=1), log.costs - hat[np.arange(log.stored), log.actions], hat


def _checked_lam(estimator: str, lam: Any) -> float | None:
    """λ as given (None: tuned), refused where the estimator has none or outside its range."""
    if lam is None or (isinstance(lam, str) and lam == "tuned"):
        return None
    if estimator not in TUNED:
        raise InvalidArgumentError(f"lam applies to {', '.join(map(repr, TUNED))}; got estimator={estimator!r}")
    if isinstance(lam, (bool, np.bool_)) or not isinstance(lam, numbers.Real) or math.isnan(lam) or lam < 0:
        raise InvalidArgumentError(f"lam must be a number >= 0 (or 'tuned'); got {lam!r}")
    if estimator == "sg-ips" and lam > 1:
        raise InvalidArgumentError(f"lam for 'sg-ips' must be in [0, 1] (0 is IPS); got {lam!r}")
    return float(lam)


def _checked_folds(estimator: str, folds: Any, seed: Any, model: Any) -> int | None:
    """The folds of cross-fitting (module docstring), refused where nothing is fitted."""
    if folds is None:
        if seed is not None:
            raise InvalidArgumentError("seed deals the rows into folds: give folds= too (or neither)")
        return None
    if estimator not in MODELLED:
        raise InvalidArgumentError(f"folds cross-fit the cost model of {', '.join(map(repr, MODELLED))}; got "
                                   f"estimator={estimator!r}")
    if model is not None:
        raise InvalidArgumentError("folds cross-fit the cost model fitted on the log; a model= given is used as it is")
    if isinstance(folds, (bool, np.bool_)) or not isinstance(folds, numbers.Integral) or folds < 2:
        raise InvalidArgumentError(f"folds must be an integer >= 2; got {folds!r}")
    if seed is None:
        raise InvalidArgumentError("folds need a seed (the rows are dealt into folds at random): give seed=")
    return int(folds)


def cost_model(log: Log, model: Callable[[np.ndarray], Any] | None, folds: int | None, seed: Any) -> np.ndarray:
    """Every arm's predicted cost on every stored row (stored, n): ``model``'s where given, else
    :func:`ridge_model`'s fitted on the log — on the other folds than the row's own where ``folds``
    is given (module docstring, "Cross-fitting")."""
    if model is not None:
        return model_scores(model, log.contexts, log.n)
    if folds is None:
        return model_scores(ridge_model(log), log.contexts, log.n)
    if log.stored < folds:
        raise InvalidArgumentError(f"folds={folds}: {log.name} stores {log.stored} rows, fewer than one a fold")
    fold = np.empty(log.stored, dtype=np.int64)
    fold[np.random.default_rng(seed_sequence(seed, name="seed")).permutation(log.stored)] = np.arange(log.stored) % folds
    hat = np.empty((log.stored, log.n))
    for k in range(folds):  # a loop over the folds
        train = np.flatnonzero(fold != k)
        fitted = ridge_model(log._subset(train, None if log.weights is None else log.weights[train]))
        mine = fold == k
        hat[mine] = model_scores(fitted, log.contexts[mine], log.n)
    return hat


def shrunk_weights(estimator: str, w: np.ndarray, lam: float) -> np.ndarray:
    """ŵ, the weight in the correction (module docstring): 1{w ≤ λ}w for ``"switch-dr"``,
    λw/(w² + λ) for ``"dros"`` (w at λ = ∞, 0 at λ = 0), w/(1 − λ + λw) for ``"sg-ips"`` (0 where
    w = 0 at λ = 1)."""
    if estimator == "switch-dr":
        return np.where(w <= lam, w, 0.0)
    if estimator == "dros":
        if math.isinf(lam):
            return w
        return np.divide(lam * w, w * w + lam, out=np.zeros_like(w), where=(w * w + lam) > 0)
    if estimator == "sg-ips":
        den = 1.0 - lam + lam * w
        return np.divide(w, den, out=np.zeros_like(w), where=den > 0)
    return w


def _terms(estimator: str, w: np.ndarray, c: np.ndarray, direct: np.ndarray, err: np.ndarray,
           lam: float | None) -> np.ndarray:
    """The per-row terms whose mean is the estimate (module docstring)."""
    if estimator == "ips":
        return w * c
    if estimator == "dm":
        return direct
    if estimator == "dr":
        return direct + w * err
    return direct + shrunk_weights(estimator, w, lam) * err  # switch-dr, dros; sg-ips with direct = 0, err = c


def tuning_candidates(estimator: str, w: np.ndarray) -> tuple[float, ...]:
    """The λ tried when tuning (module docstring)."""
    if estimator == "switch-dr":
        top = max(float(w.max()), 1.0)
        return tuple(2.0**j for j in range(0, int(math.ceil(math.log2(top))) + 1)) + (math.inf,)
    if estimator == "dros":
        return tuple(4.0**j for j in range(-2, 13)) + (math.inf,)
    return (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)


def _tune(log: Log, estimator: str, w: np.ndarray, direct: np.ndarray, err: np.ndarray) -> float:
    """λ of least estimated mean squared error (module docstring, "Their λ"): the terms' variance over
    N plus the squared high-probability bound on the bias."""
    n, big_l = log.rows, math.log(2.0 / TUNING_DELTA)
    seen = w if log.weights is None else w[log.weights > 0]
    spread = math.sqrt(2.0 * log.mean(w * w) * big_l / n) + 2.0 * float(seen.max()) * big_l / (3.0 * n)
    best, best_mse = math.inf, math.inf
    for lam in tuning_candidates(estimator, w):  # a loop over the few candidates
        what = shrunk_weights(estimator, w, lam)
        terms = direct + what * err
        m = log.mean(terms)
        mse = log.mean((terms - m) ** 2) / n + (abs(log.mean((w - what) * err)) + spread) ** 2
        if mse < best_mse:
            best, best_mse = lam, mse
    return best


def _effective_weight(estimator: str, big: float, lam: float | None) -> float:
    """The largest weight the estimator's correction can carry, given the largest importance weight."""
    if lam is None or estimator not in TUNED:
        return big
    if estimator == "switch-dr":
        return min(big, lam)
    if estimator == "dros":
        return big if math.isinf(lam) else min(big, math.sqrt(lam) / 2.0)  # λw/(w² + λ) peaks at w = √λ
    return float(shrunk_weights(estimator, np.array([big]), lam)[0])


def _term_range(moments: Moments, estimator: str, value: float, big: float) -> tuple[float, float]:
    """The range of the quantity whose mean is the estimate, each row's weight up to ``big``: w·c for
    IPS, the DR term for DR (the model's predictions widen the cost range), and v + w(c − v) for SNIPS
    (E w = 1, so the estimate less v is the mean of w(c − v)). Costs in the log's declared range, else
    its own."""
    lo, hi = moments.cost_range if moments.cost_range is not None else (moments.cost_lo, moments.cost_hi)
    if estimator == "dm":  # no interval: any range serves
        return lo, hi
    if estimator in ("ips", "sg-ips"):
        return big * min(lo, 0.0), big * max(hi, 0.0)
    if estimator == "snips":
        return value + big * min(lo - value, 0.0), value + big * max(hi - value, 0.0)
    c_lo, c_hi = min(lo, moments.hat_lo), max(hi, moments.hat_hi)
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


def _interval(moments: Moments, estimator: str, value: float, se: float, ess: float, confidence: float,
              weight: tuple[float, bool], term_range: tuple[float, float]) -> tuple[tuple[float, float] | None, str | None,
                                                                                    str | None]:
    """The interval, its kind and its caveat (module docstring: the normal interval, a caveat where
    Cochran's rule or the largest term says the sample is too small, the rule of three's where
    every term is the same)."""
    if estimator == "dm":
        return None, None, None
    big, bounded = weight
    how = "" if bounded else " (the largest weight measured on this log's contexts: no min_propensity declared)"
    rows = moments.rows
    spread = max(abs(value), moments.biggest, 1.0) * 1e-12
    if se * math.sqrt(rows) <= spread:  # every term the same: the normal interval's width would be 0
        lo, hi = term_range
        if hi <= lo:
            return None, None, ("every term is the same and every logged cost too, with no cost range declared: "
                                "nothing bounds the costs not seen, so no interval")
        # every one of the N rows gave the same term y0: P(a term differs) <= tau with confidence 1 - alpha,
        # and a term lies in [lo, hi] (the weights up to W), so the mean lies within tau of y0 in that range
        tau = 1.0 - ((1.0 - confidence) / 2.0) ** (1.0 / rows)
        caveat = (f"every term is the same on {rows} rows: a rule-of-three interval over the terms' range "
                  f"[{lo:.4g}, {hi:.4g}] (weights up to {big:.4g}{how}), not a normal one of width 0")
        return (value - max(value - lo, 0.0) * tau, value + max(hi - value, 0.0) * tau), "rule of three", caveat
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    gamma = moments.m3 / moments.m2**1.5
    need = COCHRAN * gamma * gamma
    said = []
    if rows < need:
        said.append(f"the terms' skewness {gamma:.3g} asks for {need:,.0f} rows (Cochran's rule, 25 x skewness^2)")
    lo, hi = term_range
    if (hi - lo) / rows > z * se:  # a row the log never drew could move the estimate past its interval
        said.append(f"one row of the largest weight ({big:.4g}{how}) would move the estimate by up to "
                    f"{(hi - lo) / rows:.3g}, more than the interval's half-width {z * se:.3g}")
    caveat = None
    if said:
        caveat = (f"too few effective rows for the normal interval (effective sample size {ess:.3g} of {rows} "
                  f"rows): " + "; and ".join(said) + "; its coverage may fall well below the nominal level")
        warn(f"{estimator} on {moments.name}: {caveat}", SmallSampleWarning)
    return (value - z * se, value + z * se), "normal", caveat
