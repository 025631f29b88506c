"""Reading a report back from data (:meth:`replify.Report.from_dict`): every field checked, and
the fields checked against each other, before a number is believed.

A report read from a file is only as trustworthy as the file. A hand-edited or damaged report
must not come back as measured numbers. Every field has its type and range, and every relation
the engine's outcomes obey between fields is checked (:func:`report_fields`; T = ``horizon``,
B = ``segment_length``):

* a pair is identical exactly when its first divergence is 0, and then its agreement is 1; a
  pair that parts at step f agrees on a whole number of steps between f − 1 and T − 1, and f is
  the first step of a segment (f − 1 a multiple of B: a block learner plays one action a block);
* ``disagreement_counts`` has one count per segment of B steps (⌈T/B⌉); segment k counts at most
  the pairs parted by its end and at least those that part inside it; the counts, weighted by the
  segments' lengths, add up to the steps the pairs disagree on (``agreement``), and per time bin to
  what ``agreement_curve`` leaves;
* ``agreement_curve`` over its bins adds up to the steps the pairs agree on;
* ``action_counts`` (experts) are whole numbers, each run's add up to T, and a pair's two runs'
  differ by at most twice the steps they disagree on; ``action_counts`` and ``constant_regret``
  come together (experts), and ``pseudo_regret`` only with them;
* ``constant_regret`` (the total of the expert ``constant`` plays minus the best total) is ≥ 0;
* ``curve_steps`` are the bins' ends (for block learners the first block end at or after each),
  the last one T, where ``regret_curve_values`` is the ``regret``; ``drift_steps`` are block
  ends inside the horizon, and ‖Δ‖₁ ≥ max Δ − min Δ ≥ 0;
* with ``cost_range`` (the range every cost lay in, R = high − low; experts): |regret| and
  |pseudo_regret| ≤ T·R, ``constant_regret`` ≤ T·R, the regret curve ≤ t·R at step t,
  and the drift ≤ n·t·R (‖Δ‖₁) and 2·t·R (max − min);
* a sequential run's interval, decision and p-value are what the confidence sequence gives for
  its failures, pairs, target and alpha; ``regret_bound`` is the one ``params`` states;
  ``provenance``'s configuration names this report's learner, adversary, sizes and seed;
* every summary stated beside the rows (``failures``, ``rho_hat``, ``rho_ci``, ``regret_mean``,
  ``learning_gain``, ``pseudo_regret_mean``, ``max_step_disagreement``, ``regret_curve``, …) is
  what the rows give (:func:`check_summaries`), and no field is unknown.

Each refusal is an :class:`~replify.errors.InvalidArgumentError` that names the fields, what was
expected and what came.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping

import numpy as np

from replify.errors import InvalidArgumentError
from replify.evaluation.sequential import BetaBinomialCS

#: The report's stored arrays: dtype kind, whether NaN may stand for "not measured" (a step not
#: reached, a drift not measured), and the shape as a function of (pairs, n).
ARRAYS: dict[str, tuple[Any, bool]] = {
    "identical": (np.bool_, False), "agreement": (np.float64, False), "first_divergence": (np.int64, False),
    "regret": (np.float64, False), "agreement_curve": (np.float64, False), "curve_edges": (np.int64, False),
    "action_counts": (np.float64, False), "constant_regret": (np.float64, False),
    "disagreement_counts": (np.int64, False), "drift_steps": (np.int64, False), "drift": (np.float64, True),
    "pseudo_regret": (np.float64, False), "curve_steps": (np.int64, False), "regret_curve_values": (np.float64, True),
}
DECISIONS = (None, "below", "above", "undecided")
#: Relative tolerance for a stated float summary against the one recomputed from the rows (the
#: JSON round trip is exact; a mean over pairs may be summed in another order).
SUMMARY_RTOL = 1e-9


def _bad(field: str, expected: str, got: Any) -> InvalidArgumentError:
    text = repr(got)
    if len(text) > 80:
        text = text[:77] + "..."
    return InvalidArgumentError(f"Report.from_dict: {field} must be {expected}, got {text}")


def _get(data: Mapping[str, Any], field: str) -> Any:
    if field not in data:
        raise InvalidArgumentError(
            f"Report.from_dict: the field {field!r} is missing (a report written by to_dict(per_pair=True) has it)"
        )
    return data[field]


def _int(field: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise _bad(field, f"an integer >= {minimum}", value)
    return int(value)


def _real(field: str, value: Any, low: float | None = None, high: float | None = None, *, open_: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise _bad(field, "a finite number", value)
    v = float(value)
    if low is not None and (v <= low if open_ else v < low) or high is not None and (v >= high if open_ else v > high):
        where = f"strictly between {low} and {high}" if open_ else f"in [{low}, {high}]"
        raise _bad(field, f"a number {where}", value)
    return v


def _bool(field: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise _bad(field, "true or false", value)
    return bool(value)


def _text(field: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise _bad(field, "a non-empty string", value)
    return value


def _array(field: str, value: Any, shape: tuple[int | None, ...] | None) -> np.ndarray | None:
    """A stored array: nested lists of JSON numbers (booleans for ``identical``), ``None`` standing
    for NaN where the array allows it; the element types are checked before numpy converts
    anything, so a string is never read as ``True`` nor a boolean as 1."""
    if value is None:
        return None
    dtype, nan_ok = ARRAYS[field]
    try:
        raw = np.asarray(value, dtype=object)
    except ValueError:  # ragged nesting
        raise _bad(field, "a rectangular array (nested lists of equal lengths)", value) from None
    flat = raw.reshape(-1)
    if dtype is np.bool_:
        ok = all(isinstance(v, (bool, np.bool_)) for v in flat)
        expected = "an array of true/false"
    elif dtype is np.int64:
        ok = all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in flat)
        expected = "an array of integers"
    else:
        ok = all((v is None and nan_ok) or (isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)))
                 for v in flat)
        expected = "an array of numbers" + (" (null where not measured)" if nan_ok else "")
    if not ok:
        bad = next(v for v in flat if not _element_ok(v, dtype, nan_ok))
        raise _bad(field, expected, bad)
    if dtype is np.float64:
        out = np.asarray(np.where(raw == None, np.nan, raw).astype(np.float64))  # noqa: E711 (elementwise)
        finite = np.isfinite(out) | (np.isnan(out) & nan_ok)
        if not finite.all():
            raise _bad(field, "finite numbers" + (" (null where not measured)" if nan_ok else ""), out[~finite][0])
    else:
        out = raw.astype(dtype)
    if shape is not None and (out.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, out.shape))):
        want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
        raise _bad(field, f"an array of shape {want}", f"shape {out.shape}")
    return out


def _element_ok(v: Any, dtype: Any, nan_ok: bool) -> bool:
    if dtype is np.bool_:
        return isinstance(v, (bool, np.bool_))
    if isinstance(v, (bool, np.bool_)):
        return False
    if dtype is np.int64:
        return isinstance(v, numbers.Integral)
    return (v is None and nan_ok) or isinstance(v, numbers.Real)


def _seed(value: Any) -> Any:
    if isinstance(value, Mapping):
        entropy, key = value.get("entropy"), value.get("spawn_key")
        if (isinstance(entropy, bool) or not isinstance(entropy, numbers.Integral) or entropy < 0
                or not isinstance(key, list) or not all(isinstance(k, numbers.Integral) and not isinstance(k, bool)
                                                        and k >= 0 for k in key)):
            raise _bad("seed", "an integer >= 0 or {'entropy': int >= 0, 'spawn_key': [int >= 0, ...]}", value)
        return np.random.SeedSequence(int(entropy), spawn_key=tuple(int(k) for k in key))
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise _bad("seed", "an integer >= 0 or {'entropy': int >= 0, 'spawn_key': [int >= 0, ...]}", value)
    return int(value)


def _close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= SUMMARY_RTOL * max(1.0, abs(a), abs(b))


def report_fields(data: Any) -> dict[str, Any]:
    """The keyword arguments of :class:`replify.Report` that ``data`` describes, every field and
    their consistency checked (see the module docstring)."""
    if not isinstance(data, Mapping):
        raise _bad("data", "a mapping (the dict that Report.to_dict(per_pair=True) returns)", type(data).__name__)
    missing = [k for k in ("identical", "agreement", "first_divergence", "regret") if k not in data]
    if missing:
        raise InvalidArgumentError(
            f"Report.from_dict needs the per-pair arrays (write them with to_dict(per_pair=True)); missing {', '.join(missing)}"
        )
    n = _int("n", _get(data, "n"), 2)
    horizon = _int("horizon", _get(data, "horizon"), 1)
    pairs = _int("pairs", _get(data, "pairs"), 1)
    kw: dict[str, Any] = {
        "learner": _text("learner", _get(data, "learner")),
        "adversary": _text("adversary", _get(data, "adversary")),
        "n": n, "horizon": horizon, "pairs": pairs, "seed": _seed(_get(data, "seed")),
        "confidence": _real("confidence", _get(data, "confidence"), 0.0, 1.0, open_=True),
        "fast_path": _bool("fast_path", _get(data, "fast_path")),
        "segment_length": _int("segment_length", data.get("segment_length", 1), 1),
    }
    params = _get(data, "params")
    if params is not None and not isinstance(params, Mapping):
        raise _bad("params", "a mapping or null", params)
    kw["params"] = None if params is None else dict(params)
    bound = _get(data, "regret_bound")
    kw["regret_bound"] = None if bound is None else _real("regret_bound", bound, 0.0)
    note = data.get("regret_bound_note")
    kw["regret_bound_note"] = None if note is None else _text("regret_bound_note", note)

    identical = _array("identical", data["identical"], (pairs,))
    agreement = _array("agreement", data["agreement"], (pairs,))
    first = _array("first_divergence", data["first_divergence"], (pairs,))
    regret = _array("regret", data["regret"], (pairs, 2))
    if ((agreement < 0) | (agreement > 1)).any():
        raise _bad("agreement", "fractions in [0, 1]", agreement[(agreement < 0) | (agreement > 1)][0])
    if ((first < 0) | (first > horizon)).any():
        raise _bad("first_divergence", f"steps in [0, horizon={horizon}]", first[(first < 0) | (first > horizon)][0])
    parted = first > 0
    if (parted == identical).any():
        k = int(np.flatnonzero(parted == identical)[0])
        raise InvalidArgumentError(
            f"Report.from_dict: pair {k} contradicts itself: identical={bool(identical[k])} but first_divergence="
            f"{int(first[k])} (a pair is identical exactly when its runs never part, first_divergence 0)"
        )
    if (identical & (agreement != 1.0)).any():
        k = int(np.flatnonzero(identical & (agreement != 1.0))[0])
        raise InvalidArgumentError(
            f"Report.from_dict: pair {k} is identical but its agreement is {float(agreement[k])}, not 1"
        )
    kw |= {"identical": identical, "agreement": agreement, "first_divergence": first, "regret": regret}

    shapes = {
        "action_counts": (pairs, 2, n), "constant_regret": (pairs, 2), "pseudo_regret": (pairs, 2),
        "disagreement_counts": (None,), "drift_steps": (None,), "drift": (pairs, None, 2),
        "curve_steps": (None,), "regret_curve_values": (pairs, 2, None),
    }
    for name, shape in shapes.items():
        kw[name] = _array(name, data.get(name), shape)
    if kw["disagreement_counts"] is not None and ((kw["disagreement_counts"] < 0) | (kw["disagreement_counts"] > pairs)).any():
        raise _bad("disagreement_counts", f"counts of pairs in [0, pairs={pairs}]", kw["disagreement_counts"].tolist())
    if kw["action_counts"] is not None and (kw["action_counts"] < 0).any():
        raise _bad("action_counts", "counts >= 0", kw["action_counts"][kw["action_counts"] < 0][0])
    for steps, values, axis in (("drift_steps", "drift", 1), ("curve_steps", "regret_curve_values", 2)):
        s, v = kw[steps], kw[values]
        if (s is None) != (v is None) or (s is not None and v.shape[axis] != s.size):
            raise InvalidArgumentError(
                f"Report.from_dict: {values} and {steps} go together, one entry per step; got "
                f"{None if v is None else v.shape} and {None if s is None else s.shape}"
            )
        if s is not None and (((s < 1) | (s > horizon)).any() or (np.diff(s) <= 0).any()):
            raise _bad(steps, f"increasing steps in [1, horizon={horizon}]", s.tolist())
    curve = data.get("agreement_curve")
    if curve is not None:
        if not isinstance(curve, Mapping) or "fraction" not in curve or "edges" not in curve:
            raise _bad("agreement_curve", "{'edges': [...], 'fraction': [...]}", curve)
        fraction = _array("agreement_curve", curve["fraction"], (None,))
        edges = _array("curve_edges", curve["edges"], (fraction.size + 1,))
        if ((fraction < 0) | (fraction > 1)).any():
            raise _bad("agreement_curve", "fractions in [0, 1]", fraction.tolist())
        if edges[0] != 0 or edges[-1] != horizon or (np.diff(edges) <= 0).any():
            raise _bad("agreement_curve edges", f"increasing steps from 0 to horizon={horizon}", edges.tolist())
        kw["agreement_curve"], kw["curve_edges"] = fraction, edges

    decision = data.get("decision")
    if decision not in DECISIONS:
        raise _bad("decision", f"one of {DECISIONS}", decision)
    target, alpha, interval = data.get("target"), data.get("alpha"), data.get("sequential_interval")
    p_value = data.get("sequential_p_value")
    if decision is None:
        stray = [k for k, v in (("target", target), ("alpha", alpha), ("sequential_interval", interval),
                                ("sequential_p_value", p_value)) if v is not None]
        if stray:
            raise InvalidArgumentError(
                f"Report.from_dict: {', '.join(stray)} belong to a sequential run, which states its decision; got no decision"
            )
    else:
        target = _real("target", target, 0.0, 1.0, open_=True)
        alpha = _real("alpha", alpha, 0.0, 1.0, open_=True)
        if not isinstance(interval, (list, tuple)) or len(interval) != 2:
            raise _bad("sequential_interval", "[low, high]", interval)
        lo, hi = (_real("sequential_interval", v, 0.0, 1.0) for v in interval)
        rate = float((~identical).sum()) / pairs
        if not lo <= rate <= hi:
            raise InvalidArgumentError(
                f"Report.from_dict: sequential_interval [{lo}, {hi}] does not hold the observed rate {rate} "
                f"({int((~identical).sum())}/{pairs}): the confidence sequence always does"
            )
        if decision == "below" and hi >= target or decision == "above" and lo <= target:
            raise InvalidArgumentError(
                f"Report.from_dict: decision {decision!r} contradicts sequential_interval [{lo}, {hi}] and target {target}"
            )
        interval = (lo, hi)
        p_value = None if p_value is None else _real("sequential_p_value", p_value, 0.0, 1.0)
    kw |= {"decision": decision, "target": target, "alpha": alpha, "sequential_interval": interval,
           "sequential_p_value": p_value}
    provenance = data.get("provenance")
    if provenance is not None and not isinstance(provenance, Mapping):
        raise _bad("provenance", "a mapping or null", provenance)
    kw["provenance"] = None if provenance is None else dict(provenance)
    cost_range = data.get("cost_range")
    if cost_range is not None:
        if not isinstance(cost_range, (list, tuple)) or len(cost_range) != 2:
            raise _bad("cost_range", "[low, high] or null", cost_range)
        low, high = (_real("cost_range", v) for v in cost_range)
        if not low <= high:
            raise _bad("cost_range", "[low, high] with low <= high", cost_range)
        cost_range = (low, high)
    kw["cost_range"] = cost_range
    if data.get("curve_edges") is not None and kw.get("curve_edges") is None:
        raise InvalidArgumentError("Report.from_dict: curve_edges are agreement_curve's edges, and there is no agreement_curve")
    if "curve_edges" in data and kw.get("curve_edges") is not None and data["curve_edges"] != kw["curve_edges"].tolist():
        raise InvalidArgumentError(
            f"Report.from_dict: curve_edges {_short(data['curve_edges'])} differ from agreement_curve's edges "
            f"{_short(kw['curve_edges'].tolist())}: they are one array, written twice"
        )
    _relations(kw)
    return kw


def _short(value: Any) -> str:
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) <= 80 else text[:77] + "..."


def _tol(scale: Any) -> Any:
    """Float slack for a relation between sums of magnitude ``scale``: the engine adds in
    another order than a check does."""
    return SUMMARY_RTOL * np.maximum(1.0, np.abs(scale))


def _relations(kw: dict[str, Any]) -> None:
    """Every relation between the fields that the engine's outcomes obey (module docstring)."""
    horizon, pairs, b = kw["horizon"], kw["pairs"], kw["segment_length"]
    agreement, first, regret = kw["agreement"], kw["first_divergence"], kw["regret"]
    # (identical against first_divergence and agreement is checked as the rows are read)
    # agreement: the fraction of the T steps on which the two runs play alike
    agreeing = agreement * horizon
    whole = np.abs(agreeing - np.round(agreeing)) <= _tol(agreeing)
    if not whole.all():
        k = int(np.argmin(whole))
        raise InvalidArgumentError(
            f"Report.from_dict: pair {k}'s agreement {float(agreement[k])!r} is not a whole number of the horizon={horizon} "
            f"steps (agreement x horizon = {float(agreeing[k])!r})"
        )
    parted = first > 0
    low, high = first - 1, horizon - 1
    off = parted & ((agreeing < low - _tol(agreeing)) | (agreeing > high + _tol(agreeing)))
    if off.any():
        k = int(np.argmax(off))
        raise InvalidArgumentError(
            f"Report.from_dict: pair {k} parts at first_divergence={int(first[k])}, so its runs agree on the "
            f"{int(first[k]) - 1} steps before and differ on that one: its agreement must lie in "
            f"[{(int(first[k]) - 1) / horizon!r}, {(horizon - 1) / horizon!r}], got {float(agreement[k])!r}"
        )
    off = parted & ((first - 1) % b != 0)
    if off.any():  # block learners play one action per block of segment_length steps
        k = int(np.argmax(off))
        raise InvalidArgumentError(
            f"Report.from_dict: pair {k} first differs at step {int(first[k])}, inside a segment of segment_length={b} "
            f"steps, on each of which a run plays one action: a pair parts at a segment's first step (k x {b} + 1)"
        )
    disagreeing = horizon - np.round(agreeing)  # per pair
    segments = -(-horizon // b)
    lengths = np.minimum(np.arange(1, segments + 1) * b, horizon) - np.arange(segments) * b
    counts = kw["disagreement_counts"]
    if counts is not None:
        if counts.size != segments:
            raise InvalidArgumentError(
                f"Report.from_dict: disagreement_counts must hold one count per segment of segment_length={b} steps, "
                f"ceil(horizon / segment_length) = {segments}; got {counts.size}"
            )
        seg_of_first = np.bincount((first[parted] - 1) // b, minlength=segments)
        parted_by = np.cumsum(seg_of_first)  # pairs parted by the end of each segment
        over = counts > parted_by
        if over.any():
            k = int(np.argmax(over))
            raise InvalidArgumentError(
                f"Report.from_dict: disagreement_counts[{k}] = {int(counts[k])} pairs differ on steps "
                f"{k * b + 1}..{min((k + 1) * b, horizon)}, but only {int(parted_by[k])} have parted by then "
                f"(first_divergence, identical): a pair differs only after it parts"
            )
        under = counts < seg_of_first
        if under.any():
            k = int(np.argmax(under))
            raise InvalidArgumentError(
                f"Report.from_dict: disagreement_counts[{k}] = {int(counts[k])}, but {int(seg_of_first[k])} pairs first "
                f"differ on steps {k * b + 1}..{min((k + 1) * b, horizon)} (first_divergence)"
            )
        total, stated = float(counts @ lengths), float(disagreeing.sum())
        if abs(total - stated) > _tol(stated):
            raise InvalidArgumentError(
                f"Report.from_dict: disagreement_counts add up to {total:g} pair-steps on which the runs differ "
                f"(each count times its segment's length), but agreement leaves {stated:g}"
            )
    fraction, edges = kw.get("agreement_curve"), kw.get("curve_edges")
    if fraction is not None:
        widths = np.diff(edges)
        agree_bins = fraction * widths * pairs  # agreeing pair-steps per bin
        total, stated = float(agree_bins.sum()), float(np.round(agreeing).sum())
        if abs(total - stated) > _tol(pairs * horizon):
            raise InvalidArgumentError(
                f"Report.from_dict: agreement_curve adds up to {total:g} pair-steps on which the runs agree (each "
                f"fraction times its bin's steps and the pairs), but agreement gives {stated:g}"
            )
        if counts is not None:
            # F(t): the disagreeing pair-steps before step t, segment by segment (a pair plays one
            # action per segment)
            before = np.concatenate([[0.0], np.cumsum(counts * lengths)])
            seg = np.minimum(edges // b, segments - 1)
            f_at = before[seg] + counts[seg] * (edges - seg * b)
            differ = np.diff(f_at)
            gap = np.abs((widths * pairs - agree_bins) - differ) > _tol(widths * pairs)
            if gap.any():
                j = int(np.argmax(gap))
                raise InvalidArgumentError(
                    f"Report.from_dict: agreement_curve[{j}] = {float(fraction[j])!r} on steps {int(edges[j]) + 1}.."
                    f"{int(edges[j + 1])}, but disagreement_counts put {float(differ[j]):g} differing pair-steps there, "
                    f"an agreement of {1 - float(differ[j]) / (widths[j] * pairs)!r}"
                )
    actions, constant, pseudo = kw["action_counts"], kw["constant_regret"], kw["pseudo_regret"]
    if (actions is None) != (constant is None):
        raise InvalidArgumentError(
            f"Report.from_dict: action_counts and constant_regret come together (an experts report has both, an OLO "
            f"report neither); got action_counts {'null' if actions is None else 'given'} and constant_regret "
            f"{'null' if constant is None else 'given'}"
        )
    if pseudo is not None and actions is None:
        raise InvalidArgumentError("Report.from_dict: pseudo_regret is measured for experts only, and an experts report "
                                   "has action_counts; got pseudo_regret without them")
    if actions is not None:
        if (np.abs(actions - np.round(actions)) > 0).any():
            raise _bad("action_counts", "whole numbers of steps", actions[np.abs(actions - np.round(actions)) > 0][0])
        sums = actions.sum(axis=2)
        wrong = sums != horizon
        if wrong.any():
            p, r = (int(v) for v in np.argwhere(wrong)[0])
            raise InvalidArgumentError(
                f"Report.from_dict: action_counts[{p}][{r}] add up to {float(sums[p, r]):g} steps, but every run plays "
                f"one expert at each of the horizon={horizon} steps"
            )
        apart = np.abs(actions[:, 0] - actions[:, 1]).sum(axis=1)
        wrong = apart > 2 * disagreeing
        if wrong.any():
            p = int(np.argmax(wrong))
            raise InvalidArgumentError(
                f"Report.from_dict: pair {p}'s two runs' action_counts differ by {float(apart[p]):g} (l1), but they "
                f"disagree on {int(disagreeing[p])} steps (agreement {float(agreement[p])!r}), and each such step "
                f"moves the counts by at most 2"
            )
    if constant is not None and (constant < -_tol(constant)).any():
        raise _bad("constant_regret", "numbers >= 0 (the total of the expert constant plays minus the best's)",
                   constant[constant < -_tol(constant)][0])
    if kw["cost_range"] is not None and actions is not None:
        _within_cost_range(kw)
    steps, curve = kw["curve_steps"], kw["regret_curve_values"]
    if steps is not None:
        if steps[-1] != horizon:
            raise _bad("curve_steps", f"steps ending at horizon={horizon} (the regret curve ends with the run)",
                       steps.tolist())
        if edges is not None:
            ends = edges[1:]
            want = np.unique(np.minimum(-(-ends // b) * b, horizon)) if b > 1 else ends
            if not np.array_equal(steps, want):
                raise InvalidArgumentError(
                    f"Report.from_dict: curve_steps must be the ends of agreement_curve's bins (with "
                    f"segment_length={b}: the first block end at or after each), {_short(want)}; got {_short(steps)}"
                )
        end = curve[:, :, -1]
        wrong = ~(np.abs(end - regret) <= _tol(regret))  # NaN at the horizon fails too
        if wrong.any():
            p, r = (int(v) for v in np.argwhere(wrong)[0])
            raise InvalidArgumentError(
                f"Report.from_dict: regret_curve_values[{p}][{r}] ends at {float(end[p, r])!r} at step {horizon}, but "
                f"the run's regret is {float(regret[p, r])!r}: the curve's last point is the regret"
            )
    drift_steps, drift = kw["drift_steps"], kw["drift"]
    if drift_steps is not None:
        if (drift_steps % b).any() or drift_steps[-1] >= horizon:
            raise _bad("drift_steps", f"block ends inside the horizon (multiples of segment_length={b} below "
                       f"horizon={horizon})", drift_steps.tolist())
        l1, spread = drift[..., 0], drift[..., 1]
        bad = (spread < -_tol(spread)) | (l1 < spread - _tol(l1))  # NaN (not measured) passes
        if bad.any():
            p, j = (int(v) for v in np.argwhere(bad)[0])
            raise InvalidArgumentError(
                f"Report.from_dict: drift[{p}][{j}] = {drift[p, j].tolist()}: the l1 norm of c_(1:t) - c'_(1:t) is at "
                f"least its max minus its min, which is at least 0"
            )
    _sequential_relations(kw)
    _stated_relations(kw)


def _within_cost_range(kw: dict[str, Any]) -> None:
    """Experts: what costs in [low, high] can give over T steps (R = high − low)."""
    horizon, n = kw["horizon"], kw["n"]
    low, high = kw["cost_range"]
    r = high - low

    def refuse(field: str, values: np.ndarray, limit: Any, what: str) -> None:
        over = np.abs(values) > limit + _tol(limit)  # NaN (not measured) passes
        if over.any():
            where = tuple(int(v) for v in np.argwhere(over)[0])
            raise InvalidArgumentError(
                f"Report.from_dict: {field}{list(where)} = {float(values[where])!r}, but with every cost in "
                f"cost_range [{low:g}, {high:g}] {what} is at most {float(np.broadcast_to(limit, values.shape)[where]):g} "
                f"in absolute value"
            )

    refuse("regret", kw["regret"], horizon * r, f"a regret over horizon={horizon} steps")
    if kw["pseudo_regret"] is not None:
        refuse("pseudo_regret", kw["pseudo_regret"], horizon * r, f"a pseudo-regret over horizon={horizon} steps")
    refuse("constant_regret", kw["constant_regret"], horizon * r,
           f"one expert's total over horizon={horizon} steps minus the best")
    if kw["curve_steps"] is not None:
        refuse("regret_curve_values", kw["regret_curve_values"], kw["curve_steps"] * r, "the regret at step t, t x R,")
    if kw["drift_steps"] is not None:
        t = kw["drift_steps"][None, :]
        refuse("drift (l1)", kw["drift"][..., 0], n * t * r, "||c_(1:t) - c'_(1:t)||_1, n t R,")
        refuse("drift (max - min)", kw["drift"][..., 1], 2 * t * r, "max - min of c_(1:t) - c'_(1:t), 2 t R,")


def _sequential_relations(kw: dict[str, Any]) -> None:
    """A sequential run's interval, decision and p-value are the confidence sequence's for its
    failures after ``pairs`` pairs (evaluate(sequential=True) stops there)."""
    if kw["decision"] is None:
        return
    failures, pairs = int((~kw["identical"]).sum()), kw["pairs"]
    cs = BetaBinomialCS(alpha=kw["alpha"])
    lo, hi = cs.interval(failures, pairs)
    stated = kw["sequential_interval"]
    if not (_close(stated[0], lo) and _close(stated[1], hi)):
        raise InvalidArgumentError(
            f"Report.from_dict: sequential_interval {list(stated)} is not the confidence sequence at alpha={kw['alpha']} "
            f"after {failures} failures in {pairs} pairs, [{lo!r}, {hi!r}]"
        )
    decision = cs.decide(failures, pairs, kw["target"])
    if kw["decision"] != decision:
        raise InvalidArgumentError(
            f"Report.from_dict: decision {kw['decision']!r}, but {failures} failures in {pairs} pairs decide "
            f"{decision!r} against target={kw['target']} at alpha={kw['alpha']}"
        )
    p = kw["sequential_p_value"]
    if p is not None and (decision != "undecided") != (p <= kw["alpha"] * (1 + SUMMARY_RTOL)):
        raise InvalidArgumentError(
            f"Report.from_dict: sequential_p_value {p!r} and decision {kw['decision']!r} disagree: the test decides "
            f"exactly when the p-value reaches alpha={kw['alpha']}"
        )


def _stated_relations(kw: dict[str, Any]) -> None:
    """``regret_bound`` against the bound ``params`` states, and ``provenance``'s configuration
    against the report's own fields."""
    params = kw["params"] or {}
    stated = params.get("regret_bound")
    if isinstance(stated, numbers.Real) and not isinstance(stated, bool) and math.isfinite(stated):
        if kw["regret_bound"] is None or not _close(kw["regret_bound"], float(stated)):
            raise InvalidArgumentError(
                f"Report.from_dict: regret_bound is {kw['regret_bound']!r}, but params state the learner's regret bound "
                f"{stated!r}: the report's is the one its parameters state"
            )
    if kw["regret_bound"] is not None and kw["regret_bound_note"] is not None:
        raise InvalidArgumentError(
            f"Report.from_dict: regret_bound_note says why there is no regret bound, but regret_bound is "
            f"{kw['regret_bound']!r}; got the note {kw['regret_bound_note']!r}"
        )
    provenance = kw["provenance"] or {}
    config = provenance.get("configuration")
    if isinstance(config, Mapping):
        for name in ("learner", "adversary", "n", "horizon"):
            if name in config and config[name] != kw[name]:
                raise InvalidArgumentError(
                    f"Report.from_dict: provenance's configuration has {name}={config[name]!r}, but the report's {name} "
                    f"is {kw[name]!r}"
                )
        if "pairs" in config and isinstance(config["pairs"], numbers.Integral):
            # a sequential run stops at or before the pairs it was given
            ok = config["pairs"] >= kw["pairs"] if kw["decision"] is not None else config["pairs"] == kw["pairs"]
            if not ok:
                raise InvalidArgumentError(
                    f"Report.from_dict: provenance's configuration has pairs={config['pairs']!r}, but the report has "
                    f"{kw['pairs']} pairs" + (" (a sequential run stops at or before them)" if kw["decision"] else "")
                )
    seed = kw["seed"]
    entropy = seed.entropy if isinstance(seed, np.random.SeedSequence) else seed
    key = list(seed.spawn_key) if isinstance(seed, np.random.SeedSequence) else []
    if "seed_entropy" in provenance and (provenance["seed_entropy"] != entropy or provenance.get("seed_spawn_key", key) != key):
        raise InvalidArgumentError(
            f"Report.from_dict: provenance's seed_entropy {provenance['seed_entropy']!r} (spawn key "
            f"{provenance.get('seed_spawn_key')!r}) is not the report's seed {entropy!r} (spawn key {key!r})"
        )


#: The fields :func:`report_fields` reads; every other field of a report's data is a summary of them.
FIELDS = frozenset({
    "learner", "adversary", "n", "horizon", "pairs", "seed", "confidence", "fast_path", "segment_length", "params",
    "regret_bound", "regret_bound_note", "identical", "agreement", "first_divergence", "regret", "action_counts",
    "constant_regret", "pseudo_regret", "disagreement_counts", "drift_steps", "drift", "curve_steps",
    "regret_curve_values", "agreement_curve", "curve_edges", "decision", "target", "alpha", "sequential_interval",
    "sequential_p_value", "provenance", "cost_range",
})
#: What each summary is computed from, for the message that refuses a summary the rows do not give.
SOURCES = {
    "failures": "identical", "rho_hat": "identical, pairs", "rho_ci": "identical, pairs, confidence",
    "rho_ci_kind": "pairs, confidence, alpha", "rho_ci_fixed_n": "identical, pairs, confidence",
    "agreement_mean": "agreement", "first_divergence_median": "first_divergence", "regret_mean": "regret",
    "regret_ci": "regret, confidence", "certified": "params", "claim": "params",
    "pseudo_regret_mean": "pseudo_regret", "pseudo_regret_ci": "pseudo_regret, confidence",
    "learning_gain": "constant_regret - regret", "learning_gain_ci": "constant_regret - regret, confidence",
    "max_step_disagreement": "disagreement_counts, pairs",
    "max_step_disagreement_ci": "disagreement_counts, identical, pairs, confidence",
    "concentration": "drift, drift_steps, params", "pairs_run": "pairs",
    "transition_divergence": "first_divergence, segment_length, pairs",
    "transition_bound": "params, horizon, segment_length", "regret_curve": "regret_curve_values, curve_steps, confidence",
}


def _same(stated: Any, value: Any) -> bool:
    """A stated summary against the recomputed one: floats within :data:`SUMMARY_RTOL` (null for
    NaN, as strict JSON writes it), everything else exactly and of the same type."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, float) and not isinstance(stated, bool):
        if stated is None:
            return math.isnan(value)
        if not isinstance(stated, numbers.Real):
            return False
        return (math.isnan(value) and math.isnan(float(stated))) or _close(float(stated), value)
    if isinstance(value, (list, tuple)):
        return (isinstance(stated, (list, tuple)) and len(stated) == len(value)
                and all(_same(a, b) for a, b in zip(stated, value)))
    if isinstance(value, Mapping):
        return (isinstance(stated, Mapping) and set(stated) == set(value)
                and all(_same(stated[k], value[k]) for k in value))
    return type(stated) is type(value) and stated == value


def check_summaries(report: Any, data: Mapping[str, Any]) -> None:
    """Every summary ``data`` states beside the rows must be what the rows give — what
    :meth:`~replify.Report.to_dict` writes for the report they make: a hand-edited ``rho_hat``,
    ``learning_gain`` or ``regret_curve`` is refused, not believed; so is a field no report has."""
    unknown = sorted(k for k in data if k not in FIELDS and k not in SOURCES)
    if unknown:
        raise InvalidArgumentError(
            f"Report.from_dict: unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}: a report "
            "written by to_dict(per_pair=True) has no such field"
        )
    recomputed = report.to_dict(per_pair=True)
    for name in SOURCES:
        if name not in data:
            continue
        value = recomputed.get(name)
        if not _same(data[name], value):
            raise InvalidArgumentError(
                f"Report.from_dict: {name} is stated as {_short(data[name])} but the per-pair rows give {_short(value)} "
                f"(from {SOURCES[name]})"
            )
