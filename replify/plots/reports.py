"""Figures of reports (:func:`replify.evaluate`'s): agreement over time, regret curves, regret
distributions, the regret–replicability trade-off. A replicable learner is drawn beside its two
reference rows — ``constant`` (replicable, learns nothing) and a non-replicable baseline that
learns (``hedge``; ``ucb1`` for bandit learners) — measured on the very same draws when they are
not among the reports given (``references=False`` draws only what was given)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from replify.base.checks import public
from replify.base.randomness import INTERNAL, child
from replify.components.bandits import is_bandit, reference_learners
from replify.components.contextual import is_contextual
from replify.errors import InvalidArgumentError, ReplifyWarning, warn
from replify.evaluation.evaluate import evaluate
from replify.evaluation.report import Report
from replify.evaluation.stats import t_interval
from replify.plots.fitting import (
    axes_for, finish, fitter, font, fraction_axis, learner_label, log_axis, markers_for, set_labels, text_width,
    wrap_to,
)
from replify.plots.style import (
    COLUMN_WIDTH, NEUTRAL, PAGE_WIDTH, _rho_of, as_list, caption, colour, left_out, math_safe, plot_function,
    rho_hat_text, rho_interval_label, rho_label, text_of,
)


def reports_of(value: Any, where: str) -> list[Report]:
    """``value`` as a non-empty list of reports (one report, or a list of them), or an error
    naming the plot, what it takes and what came — not an AttributeError from inside matplotlib."""
    reports = as_list(value)
    bad = [r for r in reports if not isinstance(r, Report)]
    if not reports or bad:
        raise InvalidArgumentError(
            f"{where} takes a Report (from replify.evaluate) or a non-empty list of them; got "
            f"{text_of(value) if not reports else f'{text_of(bad[0])} ({type(bad[0]).__name__})'}"
        )
    return reports


def replicable(report: Report) -> bool:
    """Whether the report's learner claims replicability (its parameters state a bound or a
    certificate), other than ``constant`` itself."""
    params = report.params or {}
    claims = params.get("replicability_bound") is not None or params.get("certified") is not None
    return claims and report.learner != "constant"


@public
def with_references(reports: list[Report], references: bool, where: str) -> list[Report]:
    """``reports`` and, beside a replicable learner, the reference rows missing among them:
    ``constant`` and a non-replicable baseline (``hedge``, or ``ucb1`` under bandit feedback),
    evaluated on the same adversary, seed and pairs (hence the same draws) as the first replicable
    report. A report read back from JSON cannot be run again, nor one of a single pair (an
    evaluation needs two): it is drawn without them, with a warning saying so. ``references`` is a
    bool (a string such as ``"no"`` is refused, not taken for true)."""
    if not references:
        return reports
    first = next((r for r in reports if replicable(r)), None)
    if first is None:
        return reports
    has_constant = any(r.learner == "constant" for r in reports)
    has_baseline = any(not replicable(r) and r.learner != "constant" for r in reports)
    if has_constant and has_baseline:
        return reports
    if first.action_counts is None:  # vector actions (OLO): constant and hedge are experts learners
        return reports
    source = first.replay_source
    if not isinstance(source, tuple):
        warn(f"{where}: {first.learner!r} is replicable and is drawn without its reference rows (constant and a "
             "non-replicable baseline): its report cannot run them on its draws (it was read back from JSON or "
             "unpickled); pass their reports with it, or references=False", ReplifyWarning)
        return reports
    if first.pairs < 2:
        warn(f"{where}: {first.learner!r} is replicable and is drawn without its reference rows (constant and a "
             f"non-replicable baseline): its report holds {first.pairs} pair and an evaluation needs at least 2; "
             "pass their reports with it, or references=False", ReplifyWarning)
        return reports
    build, seq, root, action_set, *_ = source  # (and the learner's cost domain)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplifyWarning)
        probe = build(child(root, INTERNAL, 0))
    added = []
    for name, missing in zip(reference_learners(is_bandit(probe), is_contextual(probe)), (not has_constant, not has_baseline)):
        if missing:
            added.append(_named_like(evaluate(name, seq, n=first.n, horizon=first.horizon, pairs=first.pairs, seed=root,
                                              actions=action_set, progress=False), first))
    return list(reports) + added


def _coinciding(steps: np.ndarray, mean: np.ndarray, before: list) -> list[str]:
    """The learners among ``before`` (already drawn) whose mean regret curve this one lies on: the
    same steps, every mean within 0.5% of the curves' range (a line drawn over one there hides it)."""
    out = []
    for r, s, m, *_ in before:
        if s.shape == steps.shape and np.array_equal(s, steps) and steps.size > 1:
            scale = max(float(np.ptp(np.concatenate([m, mean]))), 1e-12)
            if np.all(np.abs(m - mean) <= 0.005 * scale):
                out.append(r.learner)
    return out


def _named_like(added: Report, first: Report) -> Report:
    """A reference row run on ``first``'s adversary object, named as ``first`` names it: the same
    adversary and the same adversary_params in its provenance (a data set's name among them, which
    the figure's title says), since it ran on those very draws."""
    provenance = dict(added.provenance or {})
    config = dict(provenance.get("configuration") or {})
    theirs = (first.provenance or {}).get("configuration") or {}
    config.update({k: theirs[k] for k in ("adversary", "adversary_params") if k in theirs})
    provenance["configuration"] = config
    return attrs.evolve(added, adversary=first.adversary, provenance=provenance)


def _curve(report: Report) -> dict[str, Any] | None:
    """A report's mean regret curve, with its 95% t band when it has two pairs or more (an interval
    needs two); NaN at a step some pair was not measured at (left out of the figure, with a
    warning). None when the report has no curve."""
    values, steps = report.regret_curve_values, report.curve_steps
    if values is None or steps is None:
        return None
    values = np.asarray(values, dtype=float)
    if values.shape[0] >= 2 and np.isfinite(values).all():
        return report.regret_curve
    per_pair = values.mean(axis=1)  # (pairs, k)
    mean = per_pair.mean(axis=0)  # NaN wherever a pair is: a mean over the others would be another one
    low = high = None
    if values.shape[0] >= 2:
        low, high = np.full(mean.shape, np.nan), np.full(mean.shape, np.nan)
        for j in np.flatnonzero(np.isfinite(mean)):
            low[j], high[j] = t_interval(per_pair[:, j], report.confidence)
    return {"steps": np.asarray(steps).copy(), "mean": mean, "low": low, "high": high}


@plot_function
@public
def plot_agreement(report: Any, *, path: str | Path | None = None, ax: Any = None, title: Any = True) -> Any:
    """The fraction of (pair, step) on which the two runs of a pair play the same action, over
    time, with the fraction of pairs identical so far (1 − the empirical CDF of the first
    divergence): at T it is 1 − ρ̂, drawn with its interval as a band. Drawn at a column's width
    (docs/data.md, "Figures a paper can print")."""
    report = reports_of(report, "plot_agreement")
    if len(report) != 1 or report[0].agreement_curve is None:
        raise InvalidArgumentError("plot_agreement takes one Report from replify.evaluate, with its agreement curve")
    report = report[0]
    fig, ax = axes_for(ax, (COLUMN_WIDTH, 2.3))
    edges = np.asarray(report.curve_edges, dtype=float)
    mids = (edges[:-1] + edges[1:]) / 2
    agreement = np.asarray(report.agreement_curve, dtype=float)
    finite = np.isfinite(agreement)
    if not finite.all():
        left_out("plot_agreement", [f"{int((~finite).sum())} of the {finite.size} time bins of {report.learner!r}"],
                 "the agreement is NaN (not measured) there")
    c, m = colour(fig, report.learner)
    ax.plot(mids[finite], agreement[finite], color=c, marker=m, label="steps the two runs agree on",
            **markers_for(int(finite.sum())))
    t = np.linspace(1, report.horizon, 400)
    # pairs whose first divergence (0: none) comes after step s, for every s at once
    parted = np.sort(np.where(report.first_divergence == 0, np.inf, report.first_divergence).astype(float))
    still = 1.0 - np.searchsorted(parted, t, side="right") / parted.size
    ax.plot(t, still, color=c, linestyle="--", label="pairs identical so far")
    lo, hi = report.rho_ci
    # 1 - ρ̂ with its interval as a band: the numbers are the axis', the legend stays short
    ax.axhspan(1 - hi, 1 - lo, color="grey", alpha=0.2, linewidth=0)
    ax.axhline(1 - report.rho_hat, color="grey", linewidth=0.8, label=r"$1-\hat{\rho}$ (band: CI)")
    fraction_axis(ax)
    set_labels(ax, ("step $t$", "$t$"), f"measured fraction ({rho_interval_label([report.rho_ci_kind])} CI)")
    return finish(ax, title, caption(report), path)


@plot_function
@public
def plot_regret_curve(reports: Any, *, path: str | Path | None = None, ax: Any = None, log: bool = False,
                      references: bool = True, title: Any = True) -> Any:
    """The mean cumulative regret over time of one report or several (overlaid), each with its
    95% t band (``Report.regret_curve``: measured; a report of a single pair has no interval and is
    drawn without one), a replicable learner beside its reference rows (module docstring).
    ``ax`` draws into a figure of yours. ``log=True``: a log time axis, and a log regret axis when
    every mean drawn is positive — regret can be negative (a learner beating the best fixed action
    in hindsight), and then the regret axis stays linear and says so. Block learners' curves have
    one point per block end: each point is marked. A learner measured only at T (``constant``
    plays one block of T) is drawn as the dashed line of slope regret/T through its measured point
    — its expected regret curve on iid costs, where it loses the same in expectation every step —
    and the legend says so. Steps where a curve is NaN (not measured) are left out with a
    :class:`~replify.errors.PlotDataWarning` naming the learner. Drawn at a column's width
    (docs/data.md, "Figures a paper can print")."""
    reports = with_references(reports_of(reports, "plot_regret_curve"), references, "plot_regret_curve")
    missing = [r.learner for r in reports if r.regret_curve_values is None or r.curve_steps is None]
    if missing:
        raise InvalidArgumentError(
            f"plot_regret_curve needs reports from evaluate() with a regret curve; {', '.join(map(repr, missing))} "
            "has none"
        )
    fig, ax = axes_for(ax, (COLUMN_WIDTH, 2.3))
    drawn, partial, empty = [], [], []
    for r in reports:
        curve = _curve(r)
        steps, mean = np.asarray(curve["steps"], dtype=float), np.asarray(curve["mean"], dtype=float)
        band = curve["low"] is not None
        finite = np.isfinite(mean) & (np.isfinite(curve["low"]) & np.isfinite(curve["high"]) if band else True)
        if not finite.any():
            empty.append(repr(r.learner))
            continue
        if not finite.all():
            partial.append(f"{int((~finite).sum())} of the {finite.size} steps of {r.learner!r}")
        drawn.append((r, steps[finite], mean[finite],
                      np.asarray(curve["low"])[finite] if band else None, np.asarray(curve["high"])[finite] if band
                      else None))
    left_out("plot_regret_curve", empty, "the regret curve is NaN (not measured) at every step")
    left_out("plot_regret_curve", partial, "the regret curve is NaN (not measured) there")
    if not drawn:
        raise InvalidArgumentError("plot_regret_curve: no report has a measured (not NaN) regret curve to draw")
    # a curve of one point (measured at T only) is drawn as a line through it from the first step drawn
    start = min((s[0] for _, s, *_ in drawn if s.size > 1), default=None)
    lines = []
    for j, (r, steps, mean, low, high) in enumerate(drawn):
        c, m = colour(fig, r.learner)
        # its ρ̂ beside each learner when the curve is alone in its figure (in a figure of several
        # panels the others show ρ̂, and the shared legend stays short)
        label = learner_label(r.learner, r.rho_hat if len(fig.axes) == 1 else None)
        # a curve drawn over another one's: the legend says so (its markers are set off along it)
        same = _coinciding(steps, mean, drawn[:j])
        if same:
            label += f" (on {', '.join(same)}'s curve)"
        if steps.size == 1:
            T = float(steps[0])
            t = np.geomspace(min(start or T / 100, T), T, 200) if log else np.linspace(0.0, T, 200)
            ax.plot(t, mean[0] * t / T, color=c, linestyle=(0, (4, 2)), label=label)
            ax.errorbar(steps, mean, yerr=None if low is None else [mean - low, high - mean], color=c, marker=m,
                        linestyle="none")
            lines.append(mean[0] * t / T)
            continue
        ax.plot(steps, mean, color=c, marker=m, label=label, **markers_for(steps.size, j, len(drawn)))
        if low is not None:
            ax.fill_between(steps, low, high, color=c, alpha=0.18, linewidth=0)
        lines.append(mean)
    if any(s.size == 1 for _, s, *_ in drawn):  # the dashed line says what it is
        ax.plot([], [], color=NEUTRAL, linestyle=(0, (4, 2)), label=r"measured at $T$ only, $\propto t$")
    intervals = all(low is not None for *_, low, _ in drawn)
    ylabel = "measured regret" + (" (95% CI)" if intervals else "")
    if log:
        log_axis(ax, "x", np.concatenate([s for _, s, *_ in drawn] + [[start]] if start else [s for _, s, *_ in drawn]))
        means = np.concatenate(lines)
        if log_axis(ax, "y", means):
            ax.set_ylim(bottom=float(np.min(means)) / 2)  # a band reaching below zero is cut at the axis, not the data
        else:
            ylabel += ", linear axis: it goes negative"
    set_labels(ax, ("step $t$", "$t$"), ylabel)
    return finish(ax, title, caption(reports), path)


def _category_labels(ax: Any, names: list[str], rhos: list[float]) -> None:
    """The learners' names under their violins or boxes, each with its ρ̂ on a line of its own,
    fitted to the slots the laid-out axes give them (:func:`_fit_categories`). A word is never
    broken."""
    ax.set_xticks(np.arange(1, len(names) + 1), [math_safe(n) for n in names])
    fitter(ax, "categories", _fit_categories, list(names), [float(h) for h in rhos])


def _fit_categories(ax: Any, names: list[str], rhos: list[float]) -> None:
    """Across, wrapped at spaces, when every word fits its slot; upright otherwise (names wrapped at
    spaces to as few lines as the slot holds); the ρ̂ left out only when even one upright line per
    learner would not fit."""
    positions = np.arange(1, len(names) + 1)
    ticks = ax.get_xticklabels()
    prop = ticks[0].get_fontproperties() if ticks else font(7)
    line = 1.25 * prop.get_size_in_points()
    slot = ax.bbox.width * 72.0 / ax.figure.dpi / (len(names) + 0.2) - line / 2  # a gap between neighbours
    shown = [math_safe(n) for n in names]
    values = [rho_hat_text(h) for h in rhos]
    across = [f"{wrap_to(n, slot, prop)}\n{v}" for n, v in zip(shown, values)]
    if all(text_width(label, prop) <= slot for label in across):
        ax.set_xticks(positions, across, rotation=0)
        return
    # upright: as short as the widest word (or ρ̂) allows, in as many lines as the slot holds
    words = max(text_width(w, prop) for n in shown for w in n.split() or [n])
    for width in (max(words, text_width(values[0], prop)), 2 * words, 1e9):
        upright = [f"{wrap_to(n, width, prop)}\n{v}" for n, v in zip(shown, values)]
        if max(label.count("\n") + 1 for label in upright) * line <= slot:
            break
    else:
        upright = [wrap_to(n, 1e9, prop) for n in shown]
    ax.set_xticks(positions, upright, rotation=90)


@plot_function
@public
def plot_regret_distribution(
    reports: Any, *, kind: str = "violin", path: str | Path | None = None, ax: Any = None, references: bool = True,
    title: Any = True,
) -> Any:
    """The distribution over pairs of each learner's regret (the mean of a pair's two runs), as
    violins (``kind="violin"``) or boxes (``"box"``), one per report, with the mean (a diamond in
    the learner's colour) and the median (a neutral line) marked — where a replicable learner's
    regret lies beside its reference rows (module docstring), not only its average (measured).
    Each learner is named under its violin with its ρ̂; names never overlap (docs/data.md,
    "Figures a paper can print"). Pairs whose regret is NaN are left out with a
    :class:`~replify.errors.PlotDataWarning`."""
    if kind not in ("violin", "box"):
        raise InvalidArgumentError(f"kind must be 'violin' or 'box', got {kind!r}")
    reports = with_references(reports_of(reports, "plot_regret_distribution"), references, "plot_regret_distribution")
    values, kept, lost = [], [], []
    for r in reports:
        v = np.asarray(r.regret, dtype=float).mean(axis=1)
        if not np.isfinite(v).all():
            lost.append(f"{int((~np.isfinite(v)).sum())} of the {v.size} pairs of {r.learner!r}")
        if np.isfinite(v).any():
            values.append(v[np.isfinite(v)])
            kept.append(r)
    left_out("plot_regret_distribution", lost, "the regret is NaN (not measured) there")
    if not kept:
        raise InvalidArgumentError("plot_regret_distribution: no report has a measured (not NaN) regret to draw")
    reports = kept
    fig, ax = axes_for(ax, (min(PAGE_WIDTH, max(COLUMN_WIDTH, 1.3 + 0.6 * len(reports))), 2.5))
    positions = np.arange(1, len(reports) + 1)
    colours = [colour(fig, r.learner)[0] for r in reports]
    if kind == "violin":
        parts = ax.violinplot(values, positions=positions, showextrema=True, showmedians=True)
        for body, c in zip(parts["bodies"], colours):
            body.set_facecolor(c)
            body.set_edgecolor(c)
            body.set_alpha(0.35)
        for key in ("cbars", "cmins", "cmaxes", "cmedians"):  # over every learner: no learner's colour
            if key in parts:
                parts[key].set_color(NEUTRAL)
                parts[key].set_linewidth(0.8 if key != "cmedians" else 1.4)
    else:
        boxes = ax.boxplot(values, positions=positions, showfliers=True, patch_artist=True,
                           medianprops={"color": NEUTRAL, "linewidth": 1.4},
                           flierprops={"markersize": 2.5, "markeredgecolor": NEUTRAL})
        for box, c in zip(boxes["boxes"], colours):
            box.set_facecolor(c)
            box.set_alpha(0.35)
    ax.scatter(positions, [v.mean() for v in values], marker="D", color=colours, edgecolor=NEUTRAL, linewidth=0.5,
               zorder=3)
    # the legend explains the marks once, in neutral colours (each learner's are in its own)
    ax.plot([], [], linestyle="none", marker="D", color="white", markeredgecolor=NEUTRAL, label="mean")
    ax.plot([], [], color=NEUTRAL, linewidth=1.4, label="median")
    _category_labels(ax, [r.learner for r in reports], [r.rho_hat for r in reports])
    ax.set_xlim(0.4, len(reports) + 0.6)
    set_labels(ax, None, "measured regret per pair (mean of its two runs)")
    return finish(ax, title, caption(reports), path)


@plot_function
@public
def plot_tradeoff(reports: Any, *, path: str | Path | None = None, ax: Any = None, references: bool = True,
                  title: Any = True) -> Any:
    """Each report as one point: its regret (95% t interval; none for a report of one pair)
    against its ρ̂ (exact 95% interval), with the target ρ when the reports share one — the
    regret–replicability trade-off of several learners on one adversary (real data included), all
    measured; a replicable learner beside its reference rows (module docstring). A report whose
    regret or ρ̂ is NaN is left out with a :class:`~replify.errors.PlotDataWarning`. Drawn at a
    column's width (docs/data.md, "Figures a paper can print")."""
    reports = with_references(reports_of(reports, "plot_tradeoff"), references, "plot_tradeoff")
    lost = [repr(r.learner) for r in reports if not (np.isfinite(r.regret_mean) and np.isfinite(r.rho_hat))]
    left_out("plot_tradeoff", lost, "the regret or rho_hat is NaN (not measured)")
    reports = [r for r in reports if np.isfinite(r.regret_mean) and np.isfinite(r.rho_hat)]
    if not reports:
        raise InvalidArgumentError("plot_tradeoff: no report has a measured (not NaN) regret and rho_hat to draw")
    fig, ax = axes_for(ax, (COLUMN_WIDTH, 2.3))
    for r in reports:
        lo, hi = r.rho_ci
        c, m = colour(fig, r.learner)
        xerr = None
        if r.pairs >= 2:  # a t interval needs two pairs
            rlo, rhi = r.regret_ci
            xerr = [[max(r.regret_mean - rlo, 0.0)], [max(rhi - r.regret_mean, 0.0)]]
        yerr = [[max(r.rho_hat - lo, 0.0)], [max(hi - r.rho_hat, 0.0)]]
        ax.errorbar([r.regret_mean], [r.rho_hat], xerr=xerr, yerr=yerr, marker=m, markersize=6, fillstyle="none",
                    color=c, label=math_safe(r.learner))
    rhos = {_rho_of(r) for r in reports} - {None}
    if len(rhos) == 1:
        target = float(rhos.pop())
        ax.axhline(target, color="grey", linestyle="--", linewidth=0.8, label=rf"target $\rho={target:g}$")
    fraction_axis(ax)
    set_labels(ax, "measured regret" + (" (95% CI)" if all(r.pairs >= 2 for r in reports) else ""),
               rho_label([r.rho_ci_kind for r in reports]))
    return finish(ax, title, caption(reports), path)
