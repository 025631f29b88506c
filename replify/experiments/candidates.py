"""What :func:`replify.calibrate` tries and what it tests each candidate on: the grid of candidate
knobs (block sizes and multiples of the certified ε or noise), the adversaries of the stress
suite a candidate must pass, and the checks of calibrate's arguments, made before any pair runs."""

from __future__ import annotations

import math
import warnings
from typing import Any, Mapping, Sequence

from replify.base.checks import check_int, check_real
from replify.errors import InvalidArgumentError, LearnerProtocolError, ReplifyWarning, UnknownNameError
from replify.evaluation.sequential import BetaBinomialCS
from replify.guarantees.theory import certified_eps
from replify.plugins.factory import make, make_adversary
from replify.sources import learner_arg


#: The learners calibrate knows the knobs of.
CALIBRATABLE = ("ftplb-star", "fllb", "iid-experts", "split-commit")

#: ε (or noise) multipliers of the certified value tried, and block sizes as fractions of T.
MULTIPLIERS = tuple(2.0 ** (k / 2) for k in range(21))  # 1, √2, 2, …, 1024
BLOCK_FRACTIONS = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 0.2, 1 / 3, 0.5)

#: iid-experts' K_constant values tried: the paper's, and one whose fallback threshold K − 2√(T ln n)
#: lies within practical horizons (regret capped near K: at T = 10⁵, n = 10, ρ = 0.1, K ≈ 0.1·T).
IID_K_CONSTANTS = (1000.0, 0.1)

#: Candidates whose regret is measured again on ``refine_pairs`` before the tests.
REFINE_TOP = 12

#: Pairs of the screen run before any sequential test: a candidate whose rate on two-way ties is
#: clearly above ρ (the exact 95% interval's lower end above it) is not worth a test. A heuristic
#: that saves time, permissive so as not to drop a candidate whose rate is near ρ; the claim
#: rests on the sequential tests alone.
SCREEN_PAIRS = 100


def _suite(
    n: int, block: int, horizon: int, iid: bool = False, reference: tuple[str, dict[str, Any]] | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """The fixed part of the stress suite at a candidate's block size, after the ``reference``
    itself (a learner calibrated to learn there must be replicable there: spread means hold many
    near-ties); :func:`replify.stress` adds the worst adversary it finds at the candidate's
    parameters. A learner whose guarantee is iid replicability is held to the iid part (ties,
    near-ties, and an iid reference): it claims nothing about the others."""
    head = [] if reference is None else [reference]
    suite = [("ties", {}), ("ties", {"k": 2}), ("ties", {"k": 2, "gap": 0.01})]
    if iid:
        return head + suite
    suite = head + suite[:2] + [("crossing", {"at": 0.5, "gap": 0.02})]
    if 1 < block < horizon:
        suite.append(("block-switch", {"block_size": block, "offset": block - 1, "gap": 0.05}))
    return suite


def _grid(
    name: str, *, n: int, horizon: int, rho: float, fractions: Sequence[float] = BLOCK_FRACTIONS,
    multipliers: Sequence[float] = MULTIPLIERS,
) -> list[tuple[dict[str, Any], float]]:
    """Candidate knobs, each with its multiplier of the certified ε or noise (1: certified)."""
    out: list[tuple[dict[str, Any], float]] = []
    grid_m = tuple(multipliers)
    if name in ("ftplb-star", "fllb"):
        for frac in fractions:
            B = max(1, int(round(frac * horizon)))
            if B >= horizon:
                continue
            base = certified_eps(name, horizon=horizon, n=n, rho=rho, block_size=B)
            for m in grid_m:
                eps = base * m
                if name == "ftplb-star" and eps > 1.0:
                    continue
                out.append(({"block_size": B, "eps": eps}, m))
    elif name == "iid-experts":
        # noise_scale: the proof's noise is ~1e3·sqrt(t), so the grid reaches 2^16; K_constant: the
        # paper's 1000 (the fallback never fires at practical T) and two that cap the regret at K
        # by falling back to FTPL, which the replicability tests then judge.
        scales = tuple(grid_m) + tuple(m for m in (2.0**11, 2.0**12, 2.0**14, 2.0**16) if m > max(grid_m))
        out = [({"noise_scale": m}, m) for m in scales]
        # A fallback that fires runs FTPL step by step: every fourth scale (16× apart) is enough to
        # see whether capping the regret at K can pass the tests, at a fraction of the cost.
        out += [({"noise_scale": m, "K_constant": c}, m) for c in IID_K_CONSTANTS if c != 1000.0 for m in scales[::4]]
    elif name == "split-commit":
        for frac in (0.05, 0.1, 0.25, 0.5):
            base = make("split-commit", n=n, horizon=horizon, seed=0, rho=rho, fraction=frac).params.eps
            out += [({"fraction": frac, "eps": base * m}, m) for m in grid_m[:11:2]]
    return out


def _check_arguments(
    *, n: int, horizon: int, rho: float, seed: Any, adversaries: Any, reference: Any, budget: Any, alpha: Any,
    regret_pairs: Any, refine_pairs: Any, test_pairs: Any, block_fractions: Any, multipliers: Any,
) -> None:
    """Every argument of :func:`calibrate` checked before any pair runs, each error naming its own
    argument: a calibration that would claim something from nothing (no adversary, a test that can
    never decide "below ρ") is refused, not run for minutes."""
    check_int("seed", seed, minimum=0)
    check_int("budget", budget, minimum=100)
    check_int("regret_pairs", regret_pairs, minimum=2)
    check_int("refine_pairs", refine_pairs, minimum=2)
    alpha = check_real("alpha", alpha)
    if not 0.0 < alpha < 1.0:
        raise InvalidArgumentError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    test_pairs = check_int("test_pairs", test_pairs, minimum=2)
    # The sequential test decides "below rho" only once even a clean record (no pair parts) is
    # evidence enough; fewer pairs than that make every candidate fail, whatever it is.
    least = least_pairs_below(rho, alpha, test_pairs)
    if least is None:
        raise InvalidArgumentError(
            f"test_pairs={test_pairs} is too few for the sequential test to ever decide below rho={rho:g} at "
            f"alpha={alpha:g}, even if no pair parts; expected at least {least_pairs_below(rho, alpha, 10**7)}"
        )
    for argument, values, low, high in (("block_fractions", block_fractions, 0.0, 1.0),
                                         ("multipliers", multipliers, 0.0, math.inf)):
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence) or len(values) == 0:
            raise InvalidArgumentError(f"{argument} must be a non-empty list of numbers, got {values!r}")
        for v in values:
            x = check_real(f"{argument} entry", v)
            if not low < x < high:
                where = f"strictly between {low:g} and {high:g}" if high < math.inf else f"> {low:g}"
                raise InvalidArgumentError(f"{argument} entries must be {where}, got {v!r} in {list(values)!r}")
    if isinstance(adversaries, str):
        if adversaries != "stress":
            raise InvalidArgumentError(
                f"adversaries must be 'stress' or a non-empty list of (name, params) pairs, got {adversaries!r}"
            )
        listed = []
    else:
        listed = list(adversaries) if isinstance(adversaries, Sequence) else None
        if not listed:
            raise InvalidArgumentError(
                "adversaries must be 'stress' or a non-empty list of (name, params) pairs: a calibration on no "
                f"adversary would claim nothing; got {adversaries!r}"
            )
    named = [("adversaries", a) for a in listed] + ([] if reference is None else [("reference", reference)])
    for argument, entry in named:
        if (not isinstance(entry, (tuple, list)) or len(entry) != 2 or not isinstance(entry[0], str)
                or not isinstance(entry[1], Mapping)):
            raise InvalidArgumentError(f"{argument} entries must be (name, params) pairs (params a dict), got {entry!r}")
        try:  # built once here, so a typo in a name or a parameter fails now, not after minutes
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ReplifyWarning)
                make_adversary(entry[0], n=n, horizon=horizon, seed=0, **dict(entry[1]))
        except (InvalidArgumentError, UnknownNameError, LearnerProtocolError) as exc:
            raise InvalidArgumentError(f"{argument}: {entry[0]!r} with {dict(entry[1])!r} cannot be built: {exc}") from None


def least_pairs_below(rho: float, alpha: float, budget: int) -> int | None:
    """The fewest pairs (at most ``budget``) after which the sequential test of
    :mod:`replify.evaluation.sequential` decides "below ``rho``" when no pair has parted, or None."""
    cs = BetaBinomialCS(alpha=alpha)
    t = 1
    while t <= budget:
        if cs.decide(0, t, rho) == "below":
            # the first t with that decision: evidence grows with t at zero failures, so bisect back
            lo = t // 2
            while t - lo > 1:
                mid = (lo + t) // 2
                lo, t = (lo, mid) if cs.decide(0, mid, rho) == "below" else (mid, t)
            return t
        t = min(budget, 2 * t) if t < budget else budget + 1
    return None


def _user_build(factory: Any, *, n: int, horizon: int, rho: float, knobs: Mapping[str, Any]) -> Any:
    """``seed -> learner`` for a user's factory with ``knobs``; ``rho`` only if it takes one."""
    arg = learner_arg(factory)
    return arg.builder(n=n, horizon=horizon, rho=rho if arg.takes_rho() else None, params=dict(knobs))
