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
expected and what came. This module reads each field and checks the summaries; the relations
between the fields are checked in :mod:`replify.evaluation.reportrelations`.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping

import numpy as np

from replify.errors import InvalidArgumentError
# SUMMARY_RTOL lived here: it imports from here still
from replify.evaluation.reportrelations import SUMMARY_RTOL, _bad, _close, _short, check_relations

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
    check_relations(kw)
    return kw



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
