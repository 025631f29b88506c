"""Anytime-valid decisions about a failure rate: is ρ (the chance that the two runs of a pair
part) below or above a target?

The confidence sequence is the beta-binomial mixture martingale (Robbins 1970; Howard, Ramdas,
McAuliffe and Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann.
Statist. 2021, §3): after t pairs with s failures,

    M_t(p) = B(a + s, b + t − s) / B(a, b) / (p^s (1 − p)^{t − s})

is a nonnegative martingale with mean 1 under failure rate p, so by Ville's inequality
P(∃ t: M_t(p) ≥ 1/α) ≤ α. The set C_t = {p : M_t(p) < 1/α} is therefore an interval that holds the
true rate at *every* t with probability ≥ 1 − α — however often one looks and whenever one stops.
A test that stops the first time C_t lies wholly below the target ("below") or wholly above it
("above") decides wrongly with probability at most α, whatever the true rate (at the target
itself, both decisions are wrong, and their total chance is still at most α).

The default mixing prior Beta(1, 1) stops after about 70 pairs when no pair fails and the target
is 0.1 at α = 0.05 ((t + 1)·0.9^t ≤ 1/20).
"""

from __future__ import annotations

import math
from typing import Literal

import attrs

from replify.base.checks import check_int, check_positive, check_real
from replify.errors import InvalidArgumentError
from replify.evaluation.stats import bisect

Decision = Literal["below", "above", "undecided"]


def _log_martingale(p: float, failures: int, trials: int, a: float, b: float) -> float:
    log_beta = lambda x, y: math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y)  # noqa: E731
    value = log_beta(a + failures, b + trials - failures) - log_beta(a, b)
    if failures:
        value -= failures * math.log(p) if p > 0 else -math.inf
    if trials - failures:
        value -= (trials - failures) * math.log1p(-p) if p < 1 else -math.inf
    return value


@attrs.frozen(kw_only=True)
class BetaBinomialCS:
    """The beta-binomial confidence sequence at level ``alpha`` with prior Beta(``a``, ``b``)."""

    alpha: float = attrs.field(default=0.05)
    a: float = 1.0
    b: float = 1.0

    def __attrs_post_init__(self) -> None:
        alpha = check_real("alpha", self.alpha)
        if not 0.0 < alpha < 1.0:
            raise InvalidArgumentError(f"alpha must lie strictly between 0 and 1, got {alpha}")
        check_positive("a", self.a)
        check_positive("b", self.b)

    def interval(self, failures: int, trials: int) -> tuple[float, float]:
        """C_t = {p : M_t(p) < 1/α}: an interval around the observed rate (M_t is convex in p)."""
        trials = check_int("trials", trials, minimum=0)
        failures = check_int("failures", failures, minimum=0)
        if failures > trials:
            raise InvalidArgumentError(f"failures must be <= trials, got {failures} > {trials}")
        if trials == 0:
            return 0.0, 1.0
        level = math.log(1.0 / self.alpha)
        f = lambda p: _log_martingale(p, failures, trials, self.a, self.b) - level  # noqa: E731
        centre = failures / trials
        return _edge(f, centre, 0.0), _edge(f, centre, 1.0)

    def log_evidence(self, failures: int, trials: int, target: float) -> float:
        """log M_t(target): the evidence against "the rate is ``target``"; 1/sup_t M_t is an
        anytime-valid p-value (Ville), which :func:`holm` adjusts across many tests."""
        return _log_martingale(target, failures, trials, self.a, self.b) if trials else 0.0

    def decide(self, failures: int, trials: int, target: float) -> Decision:
        """"below" when C_t lies wholly below ``target``, "above" when wholly above, else
        "undecided". C_t is an interval around the observed rate, so it excludes the target
        exactly when M_t(target) ≥ 1/α: one evaluation, no bisection."""
        trials = check_int("trials", trials, minimum=0)
        failures = check_int("failures", failures, minimum=0)
        if failures > trials:
            raise InvalidArgumentError(f"failures must be <= trials, got {failures} > {trials}")
        target = check_real("target", target)
        if not 0.0 < target < 1.0:
            raise InvalidArgumentError(f"target must lie strictly between 0 and 1, got {target}")
        if trials == 0 or _log_martingale(target, failures, trials, self.a, self.b) < math.log(1.0 / self.alpha):
            return "undecided"
        return "below" if failures / trials < target else "above"


def _edge(f, inside: float, outside: float) -> float:
    """The point between ``inside`` (f < 0 there: the observed rate is in every C_t) and
    ``outside`` where f crosses 0 (to float precision, by the bisection of :mod:`replify.evaluation.stats`);
    ``outside`` itself when f stays below 0."""
    if f(outside) < 0.0:
        return outside
    x = bisect(lambda x: f(inside + x * (outside - inside)), 0.0, 1.0)
    return inside + x * (outside - inside)


#: Pairs between looks: every 16 pairs up to 128, then doubling up to 256. The test may look as
#: often as it likes (the sequence is anytime-valid); batches only amortise the engine's start-up.
STEP, EVEN_UNTIL, MAX_BATCH = 16, 128, 256


def batches(budget: int) -> list[int]:
    """The pair counts after which the sequential test looks (16, 32, …, 128, 256, 512, 768, …),
    ending at ``budget``."""
    looks, done, step = [], 0, STEP
    while done < budget:
        done = min(budget, done + step)
        looks.append(done)
        if done >= EVEN_UNTIL:
            step = min(MAX_BATCH, step * 2)
    return looks


def holm(p_values: list[float], sides: list[str], alpha: float) -> list[str]:
    """Holm's step-down procedure (Holm 1979) on anytime-valid p-values: family-wise error at most
    ``alpha`` over all the decisions. A rejected hypothesis "rate = target" becomes the side the data
    lie on (``sides``: "below" or "above"); the others stay "undecided"."""
    alpha = check_real("alpha", alpha)
    if not 0.0 < alpha < 1.0:
        raise InvalidArgumentError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    if len(p_values) != len(sides):
        raise InvalidArgumentError(
            f"p_values and sides must have one entry per test; got {len(p_values)} p-values and {len(sides)} sides"
        )
    for i, (p, side) in enumerate(zip(p_values, sides)):
        p = check_real(f"p_values[{i}]", p)
        if not 0.0 <= p <= 1.0:
            raise InvalidArgumentError(f"p_values[{i}] must lie in [0, 1], got {p}")
        if side not in ("below", "above", "undecided"):
            raise InvalidArgumentError(f"sides[{i}] must be 'below', 'above' or 'undecided', got {side!r}")
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    out = ["undecided"] * len(p_values)
    m = len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (m - rank):
            break
        out[i] = sides[i]
    return out
