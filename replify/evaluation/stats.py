"""Exact confidence intervals, with numpy only (the core install stays small; the tests check
these against scipy.stats).

* :func:`clopper_pearson` — the exact binomial interval for ρ̂: its endpoints solve
  P(X ≥ k | p) = α/2 and P(X ≤ k | p) = α/2, found by bisection on the binomial tails.
* :func:`t_interval` — Student's t interval for a mean; the t CDF for integer degrees of
  freedom is the finite trigonometric series of Abramowitz & Stegun 26.7.3–26.7.4.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from typeguard import typeguard_ignore

from replify.base.checks import check_int, check_probability, check_real
from replify.errors import ArgumentTypeError, InvalidArgumentError

_BISECTIONS = 200  # enough to reach the fixed point of float64 bisection on [0, 1]


def bisect(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of a function increasing on [lo, hi], to float precision."""
    if not callable(f):
        raise ArgumentTypeError(f"f must be a callable of one float, got {f!r} ({type(f).__name__})")
    lo, hi = check_real("lo", lo), check_real("hi", hi)
    if lo > hi:
        raise InvalidArgumentError(f"need lo <= hi, got lo={lo}, hi={hi}")
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if f(mid) < 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@typeguard_ignore  # hot (each step or chunk): its callers check what it is given
def _log_binom_pmf(trials: int, p: float) -> np.ndarray:
    j = np.arange(1, trials + 1, dtype=np.float64)
    log_choose = np.concatenate(([0.0], np.cumsum(np.log(trials - j + 1.0) - np.log(j))))
    i = np.arange(trials + 1, dtype=np.float64)
    return log_choose + i * math.log(p) + (trials - i) * math.log1p(-p)


@typeguard_ignore  # hot (each step or chunk): its callers check what it is given
def _binom_mass(trials: int, p: float, lo: int, hi: int) -> float:
    """P(lo ≤ X ≤ hi) for X ~ Binomial(trials, p), 0 < p < 1, summed in log space so that
    small tails keep their precision."""
    logs = _log_binom_pmf(trials, p)[lo : hi + 1]
    top = logs.max()
    return float(min(1.0, math.exp(top) * np.exp(logs - top).sum()))


def _counts(successes: Any, trials: Any, *, min_trials: int) -> tuple[int, int]:
    """``successes`` and ``trials`` as ints with 0 ≤ successes ≤ trials and trials ≥ min_trials."""
    trials = check_int("trials", trials, minimum=min_trials)
    successes = check_int("successes", successes, minimum=0)
    if successes > trials:
        raise InvalidArgumentError(f"successes must be at most trials={trials}, got {successes}")
    return successes, trials


def _confidence(value: Any) -> float:
    return check_probability("confidence", value, open_low=True, open_high=True)


def binomial_upper_tail(successes: int, trials: int, p: float) -> float:
    """P(X ≥ successes) for X ~ Binomial(trials, p): the exact p-value of ``successes`` against
    the claim that the rate is at most ``p`` (``p`` in [0, 1], 0 ≤ successes ≤ trials)."""
    successes, trials = _counts(successes, trials, min_trials=0)
    p = check_probability("p", p)
    if successes <= 0 or p >= 1.0:
        return 1.0
    if p <= 0.0:
        return 0.0
    return _binom_mass(trials, p, successes, trials)


def clopper_pearson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper–Pearson) two-sided interval for a binomial proportion, at level
    ``confidence`` in (0, 1)."""
    successes, trials = _counts(successes, trials, min_trials=1)
    confidence = _confidence(confidence)
    half = (1.0 - confidence) / 2.0
    k, n = successes, trials
    # P(X ≥ k | p) increases with p and P(X ≤ k | p) decreases with it.
    lower = 0.0 if k == 0 else bisect(lambda p: _binom_mass(n, p, k, n) - half, 0.0, 1.0)
    upper = 1.0 if k == n else bisect(lambda p: half - _binom_mass(n, p, 0, k), 0.0, 1.0)
    return lower, upper


def _t_central(theta: float, df: int) -> float:
    """P(|T| ≤ sqrt(df)·tan θ) for T ~ Student t with ``df`` degrees of freedom (A&S 26.7.3–4)."""
    s, c2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 0:
        i = np.arange(1, df // 2, dtype=np.float64)
        return s * (1.0 + np.cumprod((2 * i - 1) / (2 * i) * c2).sum())
    i = np.arange(1, (df - 1) // 2, dtype=np.float64)
    series = 1.0 + np.cumprod(2 * i / (2 * i + 1) * c2).sum()
    return (2.0 / math.pi) * (theta + (s * math.sqrt(c2) * series if df > 1 else 0.0))


def t_quantile(q: float, df: int) -> float:
    """The ``q``-quantile (q ≥ ½) of Student's t with integer ``df`` ≥ 1 degrees of freedom."""
    df = check_int("df", df, minimum=1)
    q = check_real("q", q)
    if not 0.5 <= q < 1.0:
        raise InvalidArgumentError(f"q must lie in [0.5, 1) (an upper quantile), got {q}")
    theta = bisect(lambda th: _t_central(th, df) - (2.0 * q - 1.0), 0.0, math.pi / 2)
    return math.sqrt(df) * math.tan(theta)


def t_interval(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """Student's t interval for the mean of iid ``values`` (a 1-d array of at least two finite
    numbers), at level ``confidence`` in (0, 1)."""
    confidence = _confidence(confidence)
    raw = np.asarray(values)
    if raw.dtype.kind not in "iuf":
        raise InvalidArgumentError(f"values must be real numbers, got an array of dtype {raw.dtype}")
    if raw.ndim != 1:
        raise InvalidArgumentError(f"values must be a 1-d array, got shape {raw.shape}")
    values = raw.astype(np.float64)
    k = values.size
    if k < 2:
        raise InvalidArgumentError(f"values must hold at least 2 numbers for a t interval, got {k}")
    if not np.isfinite(values).all():
        i = int(np.argmin(np.isfinite(values)))
        raise InvalidArgumentError(f"values must be finite, got {values[i]} at index {i}")
    mean = float(values.mean())
    half = t_quantile(0.5 + confidence / 2.0, k - 1) * float(values.std(ddof=1)) / math.sqrt(k)
    return mean - half, mean + half
