"""Reading a report back from data (:meth:`replify.Report.from_dict`): every field checked, and
the fields checked against each other, before a number is believed.

A report read from a file is only as trustworthy as the file. A hand-edited or damaged report
must not come back as measured numbers: ``pairs`` must be the number of per-pair rows, a pair is
identical exactly when its first divergence is 0 and its agreement 1, regrets are finite, and any
summary the file states beside the rows (``failures``, ``rho_hat``, ``regret_mean``, ``certified``,
``claim``) must be what the rows give. Each refusal is an
:class:`~replify.errors.InvalidArgumentError` that names the field, what was expected and what
came.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping

import numpy as np

from replify.errors import InvalidArgumentError

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
    return kw


def check_summaries(report: Any, data: Mapping[str, Any]) -> None:
    """Every summary ``data`` states beside the rows must be what the rows give: a hand-edited
    ``rho_hat`` or ``failures`` is refused, not believed."""
    exact = {"failures": report.failures, "certified": report.certified, "claim": report.claim}
    for name, value in exact.items():
        if name in data and data[name] != value or name in data and type(data[name]) is not type(value):
            raise InvalidArgumentError(
                f"Report.from_dict: {name} is stated as {data[name]!r} but the per-pair rows give {value!r}"
            )
    floats = {"rho_hat": report.rho_hat, "regret_mean": report.regret_mean,
              "agreement_mean": report.agreement_mean}
    for name, value in floats.items():
        if name in data:
            stated = data[name]
            if isinstance(stated, bool) or not isinstance(stated, numbers.Real) or not _close(float(stated), value):
                raise InvalidArgumentError(
                    f"Report.from_dict: {name} is stated as {stated!r} but the per-pair rows give {value!r}"
                )
