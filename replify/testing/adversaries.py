"""The conformance checks of an adversary: ``sample`` and its chunks, the law of ``sample_sums``,
and every declaration it makes for the engine's shortcuts held against its own draws."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from replify.errors import InvalidArgumentError
from replify.engine.declarations import contradiction, declared_bounds, declared_pieces
from replify.testing.common import _build, named_spec


def check_sample(spec: Any) -> None:
    """``sample(rng)`` draws a finite ``(horizon, n)`` array; two generators seeded alike agree."""
    spec = named_spec(spec, "adversary")
    seq, n, horizon = _build(spec, 9)
    a = np.asarray(seq.sample(np.random.default_rng(10)))
    b = np.asarray(seq.sample(np.random.default_rng(10)))
    assert a.shape == (horizon, n) and np.isfinite(a).all(), f"{spec.name}: sample() gave shape {a.shape}"
    assert np.array_equal(a, b), f"{spec.name}: sample() is not a function of its generator"


#: Independent draws of ``sample`` that :func:`check_declarations` holds an adversary's
#: declarations to (generators seeded ``DECLARATION_SEED + i``): 400 make a mean difference of a
#: tenth of the cost range visible at a false-alarm probability of 1e-6 at the default sizes (T = 120).
DECLARATION_DRAWS = 400
#: Fewer draws (at least 50) for an adversary whose test sizes are large: draws × T × n ≤ this.
DECLARATION_FLOATS = 1 << 21
DECLARATION_SEED = 1_000
#: The probability that :func:`check_declarations` fails an adversary whose declarations all hold.
DECLARATION_FALSE_ALARM = 1e-6


def check_declarations(spec: Any) -> None:
    """Each declaration an adversary makes for the engine's shortcuts holds against its own draws
    (:mod:`replify.engine.declarations` has the statistics): m = :data:`DECLARATION_DRAWS`
    independent ``sample`` draws (fixed seeds; fewer, down to 50, when m·T·n would pass
    :data:`DECLARATION_FLOATS`) at the spec's test sizes. An adversary whose declarations hold
    fails with probability at most :data:`DECLARATION_FALSE_ALARM` = 1e-6 over all the comparisons
    together (union bound: δ = 1e-6 / their number, per coordinate and test).

    * Well formed: ``iid`` True or False, ``law_changes`` increasing steps in [1, T − 1],
      ``cost_bounds`` (low, high) with low ≤ high — the engine refuses anything else.
    * ``cost_bounds``: every cost of the m draws lies in [low, high], and every ``sample_sums`` sum
      over a quarter of the horizon (20 draws) in L·[low, high]. A violation that each cost commits
      with probability p is seen with probability at least 1 − (1 − p)^(m·T·n).
    * ``iid`` / ``law_changes`` (one law inside each declared piece): inside each piece, the costs
      at even steps against those at the next odd steps, and each quarter of the piece against the
      next, step by step in order. With ``cost_bounds`` (range R), a difference Δ between the mean
      costs of a coordinate at the compared steps is caught with probability at least 1 − 1e-6 once
      |Δ| ≥ 2R·√(2 ln(2/δ)/M), M the compared pairs (m·L/2 for even/odd, m·L/4 for quarters of a
      piece of L steps): at the default sizes (m = 400, T = 120, n = 3, R = 1) |Δ| ≥ 0.08 (even/odd)
      and 0.11 (quarters). A sign test needs no bound: it catches
      |P(first > second) − P(first < second)| ≥ 2√(2 ln(2/δ)/M) with the same probability.
    * ``expected_sums``: on each quarter of the horizon and the whole, against the mean of the m
      draws' sums. With ``cost_bounds`` an error |e| in an expected sum over L steps is caught with
      probability at least 1 − 1e-6 once |e| ≥ 2r, r = R·√(L ln(2/δ)/(2m)) when the steps are
      independent (``iid`` or ``law_changes`` declared; at the defaults an error of 0.06·R per
      step), L·R·√(ln(2/δ)/(2m)) otherwise (0.3·R per step). Without ``cost_bounds`` no exact bound
      exists for unbounded costs: the threshold is z = √(2 ln(2/δ)) sample standard errors, a
      normal approximation."""
    spec = named_spec(spec, "adversary")
    seq, n, horizon = _build(spec, 13)
    try:
        pieces = declared_pieces(seq, horizon)
        bounds = declared_bounds(seq)
    except InvalidArgumentError as exc:
        raise AssertionError(f"{spec.name}: {exc}") from None
    expected = getattr(seq, "expected_sums", None)
    if pieces is None and bounds is None and not callable(expected):
        return  # nothing declared
    m = int(min(DECLARATION_DRAWS, max(50, DECLARATION_FLOATS // (horizon * n))))
    draws = np.stack([np.asarray(seq.sample(np.random.default_rng(DECLARATION_SEED + i)), dtype=np.float64)
                      for i in range(m)])
    if draws.shape[1:] != (horizon, n):
        return  # check_sample names the wrong shape
    cuts = sorted({0, horizon // 4, horizon // 2, 3 * horizon // 4, horizon})
    segments = [(a, b) for a, b in zip(cuts[:-1], cuts[1:])] + ([(0, horizon)] if len(cuts) > 2 else [])
    found = contradiction(seq, draws, np.arange(horizon), horizon=horizon, false_alarm=DECLARATION_FALSE_ALARM,
                          windows=4, expected=segments, approximate=True, name=spec.name, what=f"{m} draws")
    if found is not None:
        raise AssertionError(found)
    if bounds is not None and callable(getattr(seq, "sample_sums", None)):
        starts, stops = np.array(cuts[:-1]), np.array(cuts[1:])
        length = (stops - starts).astype(np.float64)[:, None]
        slack = 1e-9 * np.maximum(length, 1.0)  # the engine's own slack for float sums
        for i in range(20):
            sums = np.asarray(seq.sample_sums(np.random.default_rng(DECLARATION_SEED + i), starts, stops), dtype=np.float64)
            outside = ~((sums >= length * bounds[0] - slack) & (sums <= length * bounds[1] + slack))
            if sums.shape == length.shape[:1] + (n,) and outside.any():
                k = int(np.argwhere(outside)[0][0])
                raise AssertionError(f"{spec.name}: declares cost_bounds {bounds}, but sample_sums() gave {sums[k].tolist()} "
                                     f"over steps {starts[k] + 1}..{stops[k]}, which such costs cannot add up to")


def check_chunks_equal_sample(spec: Any) -> None:
    """Consecutive ``sample_chunk`` calls from one generator equal one ``sample`` call."""
    spec = named_spec(spec, "adversary")
    seq, n, horizon = _build(spec, 11)
    if not callable(getattr(seq, "sample_chunk", None)):
        return
    whole = np.asarray(seq.sample(np.random.default_rng(12)))
    rng = np.random.default_rng(12)
    cuts = [0, horizon // 3, horizon // 3 + 1, horizon]
    parts = [np.asarray(seq.sample_chunk(rng, a, b)) for a, b in zip(cuts[:-1], cuts[1:])]
    assert np.array_equal(np.concatenate(parts), whole), f"{spec.name}: chunks differ from one sample()"


def check_sums_law(spec: Any) -> None:
    """``sample_sums`` has the law of the summed steps: over 400 seeded draws the mean of every
    segment sum matches the mean of the summed ``sample`` rows within 6 standard errors (normal
    approximation; a false alarm below 1e-8 per coordinate)."""
    spec = named_spec(spec, "adversary")
    seq, n, horizon = _build(spec, 13)
    if not callable(getattr(seq, "sample_sums", None)):
        return
    starts = np.array([0, horizon // 4, horizon // 2])
    stops = np.array([horizon // 4, horizon // 2, horizon])
    draws = 400
    sums = np.stack([np.asarray(seq.sample_sums(np.random.default_rng(100 + i), starts, stops)) for i in range(draws)])
    steps = np.stack([
        np.add.reduceat(np.asarray(seq.sample(np.random.default_rng(10_000 + i))), starts, axis=0) for i in range(draws)
    ])
    se = np.sqrt((sums.var(axis=0) + steps.var(axis=0)) / draws) + 1e-12
    assert np.all(np.abs(sums.mean(axis=0) - steps.mean(axis=0)) <= 6 * se + 1e-9), \
        f"{spec.name}: sample_sums() does not have the law of the summed steps"


ADVERSARY_CHECKS: tuple[Callable[[Any], None], ...] = (check_sample, check_chunks_equal_sample, check_sums_law,
                                                       check_declarations)


def check_adversary(spec: Any) -> None:
    """Run every adversary check on an :class:`~replify.AdversarySpec` (or a registered name)."""
    spec = named_spec(spec, "adversary")
    for check in ADVERSARY_CHECKS:
        check(spec)
