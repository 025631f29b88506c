"""Every candidate policy by every estimator in one call (docs/offpolicy.md, "Every candidate by
every estimator"): :func:`compare` returns a :class:`Comparison` — a table of the estimates with
their intervals, as text, as records, as a pandas DataFrame where pandas is installed, and as a
figure legible at a paper's column width.

Each candidate's action distribution on the log is computed once and handed to every estimator as
an array (a callable would be called again by each), so a table of K candidates by E estimators
costs K policy calls. Every number in it is what :func:`replify.offpolicy.estimate` gives for that
pair, with the same options: measured, not certified (the certified decisions are
:func:`~replify.offpolicy.select` and :func:`~replify.offpolicy.replicable_value`).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import attrs
import numpy as np

from replify.errors import InvalidArgumentError
from replify.offpolicy.estimators import ESTIMATORS, MODELLED, Estimate, bernstein_applies, estimate
from replify.offpolicy.log import Log, policy_probabilities
from replify.plots.fitting import axes_for, finish, set_labels
from replify.plots.style import COLUMN_WIDTH, colour, styled

#: The estimators a comparison shows by default: every one with an interval (the direct method has none)
DEFAULT_ESTIMATORS = ("ips", "snips", "dr", "sndr", "switch-dr", "dros", "sg-ips")

#: The columns of :meth:`Comparison.records` and of its DataFrame
COLUMNS = ("candidate", "estimator", "value", "lower", "upper", "interval", "lam", "true_value", "covers", "caveat")


@attrs.frozen
class Comparison:
    """The estimates of ``candidates`` (names) by ``estimators`` on a log (``log``: its name,
    ``rows``): ``estimates[i][j]`` is candidate i by estimator j, an :class:`Estimate`."""

    log: str
    rows: int
    candidates: tuple[str, ...]
    estimators: tuple[str, ...]
    estimates: tuple[tuple[Estimate, ...], ...]
    #: the certified choice among the candidates made in the same pass, where one was asked for
    #: (:func:`replify.offpolicy.compare_stream`'s ``choose``)
    choice: Any = None

    def records(self) -> list[dict[str, Any]]:
        """One dict per candidate and estimator, with the keys of :data:`COLUMNS`."""
        out = []
        for name, row in zip(self.candidates, self.estimates):
            for e in row:
                lo, hi = e.interval if e.interval is not None else (None, None)
                out.append({"candidate": name, "estimator": e.estimator, "value": e.value, "lower": lo, "upper": hi,
                            "interval": e.interval_kind, "lam": e.lam, "true_value": e.true_value, "covers": e.covers,
                            "caveat": e.caveat})
        return out

    def to_pandas(self) -> Any:
        """The records as a pandas DataFrame (``pip install pandas``)."""
        try:
            import pandas as pd  # optional: the table is plain records without it
        except ImportError:
            raise InvalidArgumentError("Comparison.to_pandas() needs pandas, which is not installed: pip install pandas "
                                       "(records() gives the same table as dicts)") from None
        return pd.DataFrame(self.records(), columns=list(COLUMNS))

    def __str__(self) -> str:
        width = max(len("candidate"), *(len(c) for c in self.candidates))
        head = f"{'candidate':<{width}}  {'estimator':<11} {'value':>9}  {'interval':<25} {'true':>9}"
        lines = [f"{self.log}: {self.rows} rows, {len(self.candidates)} candidates x {len(self.estimators)} estimators",
                 head]
        for r in self.records():
            iv = "none" if r["lower"] is None else f"[{r['lower']:.5g}, {r['upper']:.5g}]"
            label = r["estimator"] if r["lam"] is None else f"{r['estimator']} {r['lam']:g}"
            truth = "" if r["true_value"] is None else f"{r['true_value']:.5g}"
            lines.append(f"{r['candidate']:<{width}}  {label:<11} {r['value']:>9.5g}  {iv:<25} {truth:>9}")
        kinds = sorted({e.kind for row in self.estimates for e in row})
        lines += [f"({k})" for k in kinds]
        return "\n".join(lines)

    def plot(self, *, ax: Any = None, path: Any = None, title: Any = True) -> Any:
        """Each candidate's estimates side by side with their intervals (one colour and marker per
        estimator), its true value where the log knows it (a black cross); a column wide, every font
        at least 7 pt (replify's figure style)."""
        fig, ax = axes_for(ax, (COLUMN_WIDTH, 0.45 * len(self.candidates) * max(1.0, len(self.estimators) / 4) + 1.0))
        k = len(self.estimators)
        with styled():
            for j, name in enumerate(self.estimators):  # a loop over the estimators: one series each
                c, marker = colour(fig, name)
                y = np.arange(len(self.candidates)) + (j - (k - 1) / 2) * 0.7 / max(k, 1)
                v = np.array([row[j].value for row in self.estimates])
                lo = np.array([row[j].interval[0] if row[j].interval else math.nan for row in self.estimates])
                hi = np.array([row[j].interval[1] if row[j].interval else math.nan for row in self.estimates])
                ax.errorbar(v, y, xerr=np.vstack([v - lo, hi - v]), fmt=marker, color=c, ms=3.5, lw=0.9,
                            capsize=1.5, label=name)
            truth = [row[0].true_value for row in self.estimates]
            if all(t is not None for t in truth):
                ax.plot(truth, np.arange(len(self.candidates)), "x", color="black", ms=5, label="true value")
            ax.set_yticks(np.arange(len(self.candidates)), list(self.candidates))
            ax.invert_yaxis()
            set_labels(ax, xlabel="expected cost")
        return finish(ax, title, f"{self.log}, {self.rows:,} rows", path)


def compare(log: Log, policies: Mapping[str, Any] | Sequence[Any], estimators: Sequence[str] = DEFAULT_ESTIMATORS, *,
            interval: str = "normal", confidence: Any = 0.95, model: Callable[[np.ndarray], Any] | None = None,
            folds: Any = None, seed: Any = None) -> Comparison:
    """Every policy of ``policies`` (a mapping of names to policies, or a sequence: named by position)
    estimated by every one of ``estimators`` on ``log`` (module docstring), each with its interval
    (``interval``: ``"normal"``, ``"bootstrap"`` or ``"bernstein"``, where the estimator takes it:
    elsewhere the normal one, and the record says which). ``model``, ``folds`` and ``seed`` go to the
    estimators with a cost model (``seed`` to the bootstrap too)."""
    if not isinstance(log, Log):
        raise InvalidArgumentError(f"log must be a replify.offpolicy.Log; got {type(log).__name__}")
    named = list(policies.items()) if isinstance(policies, Mapping) else [(str(i), p) for i, p in enumerate(policies)]
    if not named:
        raise InvalidArgumentError("policies: expected at least one policy to compare; got none")
    if isinstance(estimators, str) or not estimators:
        raise InvalidArgumentError(f"estimators must be a non-empty sequence of names from {ESTIMATORS}; got {estimators!r}")
    unknown = [e for e in estimators if e not in ESTIMATORS]
    if unknown:
        raise InvalidArgumentError(f"estimators: {unknown} are not among {ESTIMATORS}")
    table = []
    for name, policy in named:  # a loop over the candidates: each policy called once, on the whole log
        try:
            pi = policy_probabilities(policy, log)
        except InvalidArgumentError as exc:  # named by the candidate; the policy's own error kept as the cause
            raise InvalidArgumentError(f"candidate {name!r}: {exc}") from exc.__cause__
        row = []
        for e in estimators:  # a loop over the estimators
            how = interval if interval == "normal" or _takes(e, interval, model) else "normal"
            kw: dict[str, Any] = {"interval": how, "confidence": confidence}
            if e in MODELLED:
                kw.update(model=model, folds=folds, seed=seed if folds is not None or how == "bootstrap" else None)
            elif how == "bootstrap":
                kw["seed"] = seed
            row.append(estimate(log, pi, e, **kw))
        table.append(tuple(row))
    return Comparison(log=log.name, rows=log.rows, candidates=tuple(n for n, _ in named), estimators=tuple(estimators),
                      estimates=tuple(table))


def _takes(estimator: str, interval: str, model: Any) -> bool:
    """Whether ``estimator`` gives ``interval`` (the bootstrap: every one with an interval; Bernstein's:
    IPS, and DR with a model fitted elsewhere)."""
    if interval == "bootstrap":
        return estimator != "dm"
    return bernstein_applies(estimator, model)
