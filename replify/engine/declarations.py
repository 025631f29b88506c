"""What an adversary declares for the engine's shortcuts, held against its own draws.

An adversary may declare ``iid = True`` (the same law at every step, steps independent),
``law_changes`` (piecewise iid: the law changes only at these 0-based steps), ``cost_bounds =
(low, high)`` (every cost in that interval) and ``expected_sums(starts, stops)`` (the expected
cost sums of segments). The block-sum path of batched bandit learners trusts the first two — it
draws one arm's pulls, spread over a round robin, as one contiguous segment — and the pseudo-regret
trusts the last: a declaration that does not hold gives silently wrong numbers. Nothing here is
trusted either: every comparison is between two sets of steps that have the same law when the
declaration holds, with a threshold from an exact bound, so that an adversary whose declarations
hold is refused with probability at most the stated false-alarm probability.

* **Same law** (``iid``, ``law_changes``): inside every declared piece, the costs at even steps
  against those at the next odd steps, and consecutive windows of the piece against each other,
  step by step in order. Per coordinate, two tests: the mean of the paired differences against
  Hoeffding's bound when ``cost_bounds`` bounds every difference by R = high − low
  (P(|mean| ≥ R·√(2 ln(2/δ)/m)) ≤ δ over m independent pairs), and a sign test that needs no
  bound (the sign of a difference of two independent draws of one law is a fair ±1 given that it
  is not 0, so by Hoeffding P(|Σ signs| ≥ √(2K ln(2/δ))) ≤ δ over K non-zero signs).
* **expected_sums**: the sample's sum over a segment against the declared expected sum. With
  ``cost_bounds`` and independent steps (``iid`` or ``law_changes`` declared), Hoeffding over the
  segment's m·L independent costs: radius R·√(L ln(2/δ)/(2m)) for m draws of L steps; without
  independence, over the m draws' sums (each in L·[low, high]): radius L·R·√(ln(2/δ)/(2m)). With
  no bound on the costs no exact bound exists: the conformance checks use a normal approximation
  with the sample's own standard deviation, z = √(2 ln(2/δ)) (on at least 100 costs), and say so;
  the engine does not refuse an evaluation on an approximation.
* **cost_bounds**: every sampled cost inside the bounds (no statistics: one cost outside refutes it).

δ is the false-alarm probability divided among all the comparisons (union bound).
:func:`contradiction` runs them on a sample; :func:`audit` is the engine's cheap version, before
it takes a path that relies on a declaration; :mod:`replify.testing` runs them on many draws.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from replify.base.checks import as_float_array
from replify.errors import DeclarationError, InvalidArgumentError

#: The engine's false-alarm probability per evaluation: an adversary whose declarations hold is
#: refused at most this often (a sweep of a million evaluations: once in a thousand sweeps).
AUDIT_FALSE_ALARM = 1e-9
#: Floats (steps × n) the engine's audit draws at most: two short chunks per declared piece.
AUDIT_FLOATS = 1 << 15
#: The declared pieces the engine's audit samples at most (the first ones).
AUDIT_PIECES = 64
#: An adversary with only ``sample(rng)`` is audited only up to this many floats (T × n).
AUDIT_WHOLE_FLOATS = 1 << 18
#: The audit's random stream: ``child(root, AUDIT_SLOT)``, a spawn-key slot no other stream of an
#: evaluation uses, so that the audit draws nothing from the pairs' streams (their results are the
#: same with or without it).
AUDIT_SLOT = 9


def declared_pieces(seq: Any, horizon: int) -> list[tuple[int, int]] | None:
    """The steps [start, stop) (0-based) inside which the adversary declares one law: the whole
    horizon for ``iid = True``, the pieces between ``law_changes`` otherwise, None when it
    declares neither. A malformed declaration is refused."""
    name = type(seq).__name__
    iid = getattr(seq, "iid", False)
    if not isinstance(iid, (bool, np.bool_)):
        raise InvalidArgumentError(f"{name}.iid must be True or False (whether every step has the same law); got {iid!r}")
    changes = getattr(seq, "law_changes", None)
    cuts = np.zeros(0, dtype=np.int64)
    if changes is not None:
        steps = np.asarray(changes)
        if steps.size == 0:
            steps = steps.reshape(0).astype(np.int64)  # () is an array of floats: no change is no change
        if (steps.ndim != 1 or steps.dtype.kind not in "iu" or (steps.size and (steps.min() < 1 or steps.max() >= horizon))
                or np.any(np.diff(steps) <= 0)):
            raise InvalidArgumentError(f"{name}.law_changes must be increasing integer steps in [1, {horizon - 1}] "
                                       f"(where a new law starts, 0-based); got {changes!r}")
        cuts = steps.astype(np.int64)
    if iid:
        return [(0, horizon)]
    if changes is None:
        return None
    edges = [0, *cuts.tolist(), horizon]
    return list(zip(edges[:-1], edges[1:]))


def declared_bounds(seq: Any) -> tuple[float, float] | None:
    """``cost_bounds`` as (low, high), None when not declared; a malformed one is refused."""
    bounds = getattr(seq, "cost_bounds", None)
    if bounds is None:
        return None
    b = np.asarray(bounds)
    if b.shape != (2,) or b.dtype.kind not in "iuf" or not b[0] <= b[1]:  # NaN fails too
        raise InvalidArgumentError(f"{type(seq).__name__}.cost_bounds must be (low, high) with low <= high, the range of "
                                   f"every cost; got {bounds!r}")
    return float(b[0]), float(b[1])


def declared_second_moment(seq: Any) -> float | None:
    """``cost_second_moment`` (a bound on E[c² | context] at every step), None when not declared;
    one that is not a finite number ≥ 0 is refused."""
    moment = getattr(seq, "cost_second_moment", None)
    if moment is None:
        return None
    if isinstance(moment, (bool, np.bool_)) or not isinstance(moment, (int, float, np.integer, np.floating)) \
            or not (math.isfinite(float(moment)) and float(moment) >= 0.0):
        raise InvalidArgumentError(f"{type(seq).__name__}.cost_second_moment must be a finite number >= 0, a bound on "
                                   f"E[c^2 | context] at every step; got {moment!r}")
    return float(moment)


def _step_range(a: int, b: int) -> str:
    return f"steps {a + 1}..{b}" if b > a + 1 else f"step {a + 1}"


def _pairs(steps: np.ndarray, pieces: list[tuple[int, int]], windows: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The comparisons of :func:`contradiction` (module docstring): (what, positions, positions)
    in the sample whose steps have one law when the declaration holds, paired in order."""
    out = []
    for s, e in pieces:
        pos = np.flatnonzero((steps >= s) & (steps < e))
        if pos.size < 2:
            continue
        where = _step_range(s, e)
        # even steps against the next (odd) step: a law that alternates is the plainest lie
        even = pos[:-1][(steps[pos[:-1]] % 2 == 0) & (steps[pos[1:]] == steps[pos[:-1]] + 1)]
        if even.size:
            out.append((f"the costs at even steps and at the next odd steps of {where}", even, even + 1))
        # consecutive windows of the piece's sampled steps, step by step in order: a law that
        # drifts or changes inside the piece
        w = min(windows, pos.size)
        m = pos.size // w
        for j in range(w - 1):
            a, b = pos[j * m : (j + 1) * m], pos[(j + 1) * m : (j + 2) * m]
            out.append((f"the costs at {_step_range(int(steps[a[0]]), int(steps[a[-1]]) + 1)} and at "
                        f"{_step_range(int(steps[b[0]]), int(steps[b[-1]]) + 1)} (one piece, {where})", a, b))
    return out


def _segments(steps: np.ndarray, segments: list[tuple[int, int]]) -> list[tuple[int, int, np.ndarray]]:
    """The segments [a, b) whose every step is in the sample, with their positions."""
    out = []
    for a, b in segments:
        pos = np.flatnonzero((steps >= a) & (steps < b))
        if b > a and pos.size == b - a:
            out.append((a, b, pos))
    return out


def contradiction(
    seq: Any, draws: np.ndarray, steps: np.ndarray, *, horizon: int, false_alarm: float, windows: int,
    expected: list[tuple[int, int]] | None, same_law: bool = True, approximate: bool = False, name: str | None = None,
    what: str = "draws",
) -> str | None:
    """The first declaration of ``seq`` that the sample contradicts, in words, or None.

    ``draws`` is (m, L, n): m independent draws of the costs at the 0-based ``steps`` (L,
    increasing). Same-law comparisons cut each declared piece into ``windows`` windows; ``expected``
    lists the segments [a, b) on which ``expected_sums`` is held to the sample (None: not at all);
    ``same_law=False`` skips the same-law comparisons; ``approximate=True`` also holds
    ``expected_sums`` of an adversary without finite ``cost_bounds`` to the sample, by a normal
    approximation (on at least 100 costs or sums: no exact bound exists). An adversary whose
    declarations hold gets None with probability at least 1 − ``false_alarm`` (exactly so but for
    the approximation)."""
    name = name or type(seq).__name__
    m, _, n = draws.shape
    pieces = declared_pieces(seq, horizon)
    bounds = declared_bounds(seq)
    if bounds is not None and draws.size:
        low, high = bounds
        bad = ~((draws >= low) & (draws <= high))  # NaN is outside too
        if bad.any():
            k, i, a = (int(v) for v in np.argwhere(bad)[0])
            return (f"{name} declares cost_bounds {bounds}, but its {what} hold the cost {float(draws[k, i, a])!r} "
                    f"(expert {a}, step {int(steps[i]) + 1})")
    if not np.isfinite(draws).all():
        k, i, a = (int(v) for v in np.argwhere(~np.isfinite(draws))[0])
        return f"{name} drew the non-finite cost {float(draws[k, i, a])!r} (expert {a}, step {int(steps[i]) + 1})"
    pairs = [] if pieces is None or not same_law else _pairs(steps, pieces, windows)
    # Hoeffding needs a finite range; an infinite bound checks the draws above, and no more
    r = None if bounds is None or not math.isfinite(bounds[1] - bounds[0]) else bounds[1] - bounds[0]
    mean_sums = getattr(seq, "expected_sums", None)
    segs = _segments(steps, expected) if expected is not None and callable(mean_sums) else []
    independent = pieces is not None  # iid or piecewise iid: independent steps
    if r is None and not approximate:
        segs = []  # no exact bound for unbounded costs
    elif r is None:
        segs = [seg for seg in segs if (m * (seg[1] - seg[0]) if independent else m) >= 100]
    tests = len(pairs) * n * (2 if r is not None else 1) + len(segs) * n
    if tests == 0:
        return None
    log_term = math.log(2.0 * tests / false_alarm)  # ln(2/δ), δ = false_alarm / tests (union bound)
    declared = ("iid = True" if pieces is not None and getattr(seq, "iid", False)
                else f"law_changes {getattr(seq, 'law_changes', None)!r}")
    for label, pa, pb in pairs:
        diff = (draws[:, pa] - draws[:, pb]).reshape(-1, n)  # m·pairs independent differences per coordinate
        count = diff.shape[0]
        if r is not None:
            radius = r * math.sqrt(2.0 * log_term / count)  # Hoeffding: each difference in [-R, R]
            gap = diff.mean(axis=0)
            hit = np.flatnonzero(np.abs(gap) > radius)
            if hit.size:
                a = int(hit[0])
                return (f"{name} declares {declared}, but {label} differ in its {what}: expert {a}'s mean cost is "
                        f"{float(draws[:, pa, a].mean()):.6g} against {float(draws[:, pb, a].mean()):.6g}, a difference of "
                        f"{float(gap[a]):.6g} where one law gives at most {radius:.3g} (Hoeffding over {count} pairs, "
                        f"false alarm <= {false_alarm:g})")
        signs = np.sign(diff)
        nonzero = np.count_nonzero(signs, axis=0)
        total = signs.sum(axis=0)
        limit = np.sqrt(2.0 * nonzero * log_term)  # Hoeffding on fair signs
        hit = np.flatnonzero((nonzero > 0) & (np.abs(total) > limit))
        if hit.size:
            a = int(hit[0])
            above = int((nonzero[a] + total[a]) // 2)  # the pairs whose first cost is the larger
            return (f"{name} declares {declared}, but {label} differ in its {what}: expert {a}'s first cost is the larger "
                    f"in {above} of {int(nonzero[a])} pairs that differ, where one law gives {nonzero[a] / 2:g} +- "
                    f"{limit[a] / 2:.3g} (sign test, false alarm <= {false_alarm:g})")
    if segs:
        starts = np.array([a for a, _, _ in segs], dtype=np.int64)
        stops = np.array([b for _, b, _ in segs], dtype=np.int64)
        means = as_float_array(f"{name}.expected_sums(starts, stops)", mean_sums(starts, stops))
        if means.shape != (len(segs), n) or not np.isfinite(means).all():
            return (f"{name}.expected_sums(starts, stops) must return finite sums of shape ({len(segs)}, {n}), one row "
                    f"per segment; got {means.tolist() if means.size <= 12 else f'shape {means.shape}'}")
        for j, (a, b, pos) in enumerate(segs):
            length = b - a
            sums = draws[:, pos].sum(axis=1)  # (m, n): each draw's sum over the segment
            got = sums.mean(axis=0)
            if r is not None:
                radius = (r * math.sqrt(length * log_term / (2.0 * m)) if independent
                          else length * r * math.sqrt(log_term / (2.0 * m)))
                how = f"Hoeffding over {m * length} independent costs" if independent else f"Hoeffding over {m} independent sums"
            else:  # at least 100 costs or sums (above): the sample's standard deviation stands for the law's
                if independent:
                    sd = draws[:, pos].reshape(-1, n).std(axis=0, ddof=1) * math.sqrt(length / m)
                else:
                    sd = sums.std(axis=0, ddof=1) / math.sqrt(m)
                radius = math.sqrt(2.0 * log_term) * sd + 1e-12 * length
                how = "normal approximation: no cost_bounds, so no exact bound"
            off = np.abs(got - means[j]) > np.maximum(radius, 1e-9 * np.maximum(1.0, np.abs(means[j])))
            hit = np.flatnonzero(off)
            if hit.size:
                k = int(hit[0])
                r_k = float(np.broadcast_to(radius, (n,))[k])
                return (f"{name}.expected_sums gives {float(means[j, k]):.6g} for expert {k} over {_step_range(a, b)}, but "
                        f"its {what} sum to {float(got[k]):.6g} there on average, a difference of "
                        f"{float(got[k] - means[j, k]):.6g} where the true expected sum gives at most {r_k:.3g} ({how}, "
                        f"false alarm <= {false_alarm:g})")
    return None


def audit(seq: Any, *, n: int, horizon: int, rng: np.random.Generator, same_law: bool, expected: bool) -> None:
    """The engine's cheap look at what ``seq`` declares, before it relies on it: ``same_law``
    before the block-sum path of batched bandit learners (which trusts ``iid``/``law_changes`` and
    ``cost_bounds``), ``expected`` before a pseudo-regret (which trusts ``expected_sums``). It
    draws, from ``rng`` (the audit's own stream), one chunk at the start and one at the end of each
    of the first :data:`AUDIT_PIECES` declared pieces, :data:`AUDIT_FLOATS` floats in all — or a
    whole draw, for an adversary with only ``sample(rng)`` and T·n ≤ :data:`AUDIT_WHOLE_FLOATS`
    (else nothing) — and compares as :func:`contradiction` does, at false-alarm probability
    :data:`AUDIT_FALSE_ALARM`. Only adversaries that declare ``iid`` or ``law_changes`` are
    audited (independent steps make one short draw informative), and ``expected_sums`` only with
    finite ``cost_bounds`` (an exact bound: no evaluation is refused on an approximation); a
    contradiction raises :class:`~replify.errors.DeclarationError`."""
    pieces = declared_pieces(seq, horizon)
    if pieces is None or not (same_law or expected):
        return
    name = type(seq).__name__
    pieces = pieces[:AUDIT_PIECES]
    sample_chunk = getattr(seq, "sample_chunk", None)
    if callable(sample_chunk):
        k = max(4, AUDIT_FLOATS // (2 * n * len(pieces)))
        spans: list[tuple[int, int]] = []
        for s, e in pieces:
            spans += [(s, e)] if e - s <= 2 * k else [(s, s + k), (e - k, e)]
        rows = []
        for a, b in spans:
            got = as_float_array(f"the adversary's sample_chunk(rng, {a}, {b})", sample_chunk(rng, a, b))
            if got.shape != (b - a, n):
                return  # the engine's own draws refuse a wrong shape, naming it
            rows.append(got)
        draws = np.concatenate(rows)[None]
        steps = np.concatenate([np.arange(a, b) for a, b in spans])
    elif horizon * n <= AUDIT_WHOLE_FLOATS:
        full = as_float_array("the adversary's sample(rng)", seq.sample(rng))
        if full.shape != (horizon, n):
            return
        draws, steps = full[None], np.arange(horizon)
        spans = [(s, e) for s, e in pieces]
    else:
        return
    if not np.isfinite(draws).all():
        return  # the engine's own draws refuse it, naming the step
    found = contradiction(seq, draws, steps, horizon=horizon, false_alarm=AUDIT_FALSE_ALARM, windows=2,
                          expected=spans if expected else None, same_law=same_law, name=name, what="sampled costs")
    if found is not None:
        fix = ("fix the declaration (leave iid and law_changes out, and the engine plays every step; or declare the "
               "law_changes where the law changes), or pass fast_path=False" if same_law and "expected_sums" not in found
               else "fix expected_sums, or leave it out (the report then has no pseudo-regret)")
        raise DeclarationError(f"{found}. The evaluation relies on what the adversary declares: {fix}")


def audit_support(seq: Any, support: tuple, *, n: int, horizon: int, rng: np.random.Generator) -> None:
    """Hold a declared finite support (``context_support``: contexts (R, n, d), costs and means
    (R, n), and the rows' weights (R,), checked for shape) to the adversary's own draws, on the
    audit's stream ``rng``: a row fixes its costs, so its means must be its costs; every row
    ``sample_contexts`` draws (up to 4096) must be a row of the support; and their frequencies must
    fit the weights — by the DKW inequality, the empirical distribution over the rows (in the
    support's order) lies within sqrt(ln(2/10⁻⁶)/(2L)) of the declared one but for 10⁻⁶. A
    contradiction raises :class:`~replify.errors.DeclarationError`."""
    x, c, m, w = support
    if not np.array_equal(c, m):
        r, a = (int(v) for v in np.argwhere(c != m)[0])
        raise DeclarationError(f"{type(seq).__name__}.context_support(): row {r}'s cost of arm {a} is {c[r, a]!r} but "
                               f"its mean {m[r, a]!r}; a finite support fixes each row's costs, so its means must be its "
                               "costs")
    rows = min(4096, horizon)
    got = seq.sample_contexts(rng, 0, rows)
    dx, dc = (np.asarray(v, dtype=np.float64) for v in got[:2])
    index = {xr.tobytes() + cr.tobytes(): r for r, (xr, cr) in enumerate(zip(x, c))}
    keys = [a.tobytes() + b.tobytes() for a, b in zip(dx, dc)]
    unknown = [k for k, key in enumerate(keys) if key not in index]
    if unknown:
        raise DeclarationError(f"{type(seq).__name__} declares a finite support (context_support), but its "
                               f"sample_contexts drew a row that is not in it (draw {unknown[0] + 1} of {rows}): the "
                               "support must list every row, with the contexts and costs the draws show")
    freq = np.bincount([index[key] for key in keys], minlength=w.size) / rows
    gap = float(np.abs(np.cumsum(freq) - np.cumsum(w)).max())
    if gap > math.sqrt(math.log(2 / 1e-6) / (2 * rows)):
        raise DeclarationError(f"{type(seq).__name__}'s support_weights do not fit its draws: over {rows} rows of "
                               f"sample_contexts their distribution is {gap:.3g} away from the declared one (beyond "
                               "what chance gives but for 1e-6); declare the rows' probabilities as support_weights")
