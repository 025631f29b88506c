"""The relations between a report's fields that the engine's outcomes obey, checked when a report
is read back (:meth:`replify.Report.from_dict`; :mod:`replify.evaluation.reportdata` lists them and
reads each field first): agreement against the first divergence and the segments, the
disagreement counts and the agreement curve against the pairs' agreement, the action counts, the
regrets within the cost range, a sequential run's interval and decision, and the bound and
provenance a report states. Each refusal is an :class:`~replify.errors.InvalidArgumentError` that
names the fields, what was expected and what came.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping

import numpy as np

from replify.errors import InvalidArgumentError
from replify.evaluation.sequential import BetaBinomialCS


#: Relative tolerance for a stated float summary against the one recomputed from the rows (the
#: JSON round trip is exact; a mean over pairs may be summed in another order).
SUMMARY_RTOL = 1e-9


def _bad(field: str, expected: str, got: Any) -> InvalidArgumentError:
    text = repr(got)
    if len(text) > 80:
        text = text[:77] + "..."
    return InvalidArgumentError(f"Report.from_dict: {field} must be {expected}, got {text}")



def _close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= SUMMARY_RTOL * max(1.0, abs(a), abs(b))



def _short(value: Any) -> str:
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) <= 80 else text[:77] + "..."


def _tol(scale: Any) -> Any:
    """Float slack for a relation between sums of magnitude ``scale``: the engine adds in
    another order than a check does."""
    return SUMMARY_RTOL * np.maximum(1.0, np.abs(scale))



def check_relations(kw: dict[str, Any]) -> None:
    """Every relation between the fields that the engine's outcomes obey (:mod:`replify.evaluation.reportdata`
    lists them)."""
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

