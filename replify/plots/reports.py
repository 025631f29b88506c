"""Figures of reports (:func:`replify.evaluate`'s): agreement over time, regret curves, regret
distributions, the regret–replicability trade-off. A replicable learner is drawn beside its two
reference rows — ``constant`` (replicable, learns nothing) and a non-replicable baseline that
learns (``hedge``; ``ucb1`` for bandit learners) — measured on the very same draws when they are
not among the reports given (``references=False`` draws only what was given)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from replify.components.bandits import is_bandit, reference_learners
from replify.errors import InvalidArgumentError, ReplifyWarning, warn
from replify.evaluation.evaluate import evaluate
from replify.evaluation.report import Report
from replify.plots.style import (
    as_list, axes_for, caption, colour, fraction_axis, legend, log_axis, markers_for, rho_interval_label, save_figure,
    set_title, text_of, wrap_label, _rho_of,
)
from replify.randomness import INTERNAL, child


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


def with_references(reports: list[Report], references: bool, where: str) -> list[Report]:
    """``reports`` and, beside a replicable learner, the reference rows missing among them:
    ``constant`` and a non-replicable baseline (``hedge``, or ``ucb1`` under bandit feedback),
    evaluated on the same adversary, seed and pairs (hence the same draws) as the first replicable
    report. A report read back from JSON cannot be run again: it is drawn without them, with a
    warning saying so."""
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
    build, seq, root, action_set = source
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplifyWarning)
        bandit = is_bandit(build(child(root, INTERNAL, 0)))
    added = []
    for name, missing in zip(reference_learners(bandit), (not has_constant, not has_baseline)):
        if missing:
            added.append(evaluate(name, seq, n=first.n, horizon=first.horizon, pairs=first.pairs, seed=root,
                                  actions=action_set, progress=False))
    return list(reports) + added


def plot_agreement(report: Any, *, path: str | Path | None = None, ax: Any = None, title: Any = True) -> Any:
    """The fraction of (pair, step) on which the two runs of a pair play the same action, over
    time, with the fraction of pairs identical so far (1 − the empirical CDF of the first
    divergence): at T it is 1 − ρ̂."""
    report = reports_of(report, "plot_agreement")
    if len(report) != 1 or report[0].agreement_curve is None:
        raise InvalidArgumentError("plot_agreement takes one Report from replify.evaluate, with its agreement curve")
    report = report[0]
    fig, ax = axes_for(ax, (6.4, 3.4))
    edges = np.asarray(report.curve_edges)
    mids = (edges[:-1] + edges[1:]) / 2
    c, m = colour(fig, report.learner)
    ax.plot(mids, report.agreement_curve, color=c, marker=m, label="steps on which\nthe two runs agree",
            **markers_for(mids.size))
    t = np.linspace(1, report.horizon, 400)
    # pairs whose first divergence (0: none) comes after step s, for every s at once
    parted = np.sort(np.where(report.first_divergence == 0, np.inf, report.first_divergence).astype(float))
    still = 1.0 - np.searchsorted(parted, t, side="right") / parted.size
    ax.plot(t, still, color=c, linestyle="--", label="pairs identical\nso far")
    lo, hi = report.rho_ci
    ax.axhline(1 - report.rho_hat, color="grey", linewidth=0.8, label=f"1 - rho_hat\n[{1 - hi:.3f}, {1 - lo:.3f}]")
    fraction_axis(ax)
    ax.set_xlabel("step t")
    ax.set_ylabel(f"fraction (measured,\n{rho_interval_label([report.rho_ci_kind])} CI)")
    set_title(ax, title, caption(report))
    legend(ax)
    return save_figure(fig, path)


def plot_regret_curve(reports: Any, *, path: str | Path | None = None, ax: Any = None, log: bool = False,
                      references: bool = True, title: Any = True) -> Any:
    """The mean cumulative regret over time of one report or several (overlaid), each with its
    95% t band (``Report.regret_curve``: measured), a replicable learner beside its reference rows
    (module docstring). ``ax`` draws into a figure of yours. ``log=True``: a log time axis, and a
    log regret axis when every mean drawn is positive — regret can be negative (a learner beating
    the best fixed action in hindsight), and then the regret axis stays linear and says so.
    Block learners' curves have one point per block end: each point is marked."""
    reports = with_references(reports_of(reports, "plot_regret_curve"), references, "plot_regret_curve")
    if any(r.regret_curve is None for r in reports):
        raise InvalidArgumentError("plot_regret_curve needs reports from evaluate() with a regret curve")
    fig, ax = axes_for(ax, (6.4, 3.4))
    curves = [r.regret_curve for r in reports]
    for r, curve in zip(reports, curves):
        c, m = colour(fig, r.learner)
        steps = np.asarray(curve["steps"], dtype=float)
        ax.plot(steps, curve["mean"], color=c, marker=m, label=f"{r.learner}\nrho_hat {r.rho_hat:.3f}",
                **markers_for(steps.size))
        ax.fill_between(steps, curve["low"], curve["high"], color=c, alpha=0.18, linewidth=0)
    ylabel = "mean cumulative regret\n(measured, 95% CI)"
    if log:
        log_axis(ax, "x", np.concatenate([np.asarray(c["steps"], dtype=float) for c in curves]))
        means = np.concatenate([np.asarray(c["mean"], dtype=float) for c in curves])
        if log_axis(ax, "y", means):
            low = min(float(np.min(c["mean"])) for c in curves)
            ax.set_ylim(bottom=low / 2)  # a band reaching below zero is cut at the axis, not the data
        else:
            ylabel += "\nlinear: regret goes negative"
    ax.set_xlabel("step t")
    ax.set_ylabel(ylabel)
    set_title(ax, title, caption(reports))
    legend(ax)
    return save_figure(fig, path)


def plot_regret_distribution(
    reports: Any, *, kind: str = "violin", path: str | Path | None = None, ax: Any = None, references: bool = True,
    title: Any = True,
) -> Any:
    """The distribution over pairs of each learner's regret (the mean of a pair's two runs), as
    violins (``kind="violin"``) or boxes (``"box"``), one per report, with the mean marked —
    where a replicable learner's regret lies beside its reference rows (module docstring), not
    only its average (measured)."""
    if kind not in ("violin", "box"):
        raise InvalidArgumentError(f"kind must be 'violin' or 'box', got {kind!r}")
    reports = with_references(reports_of(reports, "plot_regret_distribution"), references, "plot_regret_distribution")
    fig, ax = axes_for(ax, (1.8 + 1.1 * len(reports), 3.6))
    values = [np.asarray(r.regret, dtype=float).mean(axis=1) for r in reports]
    positions = np.arange(1, len(reports) + 1)
    colours = [colour(fig, r.learner)[0] for r in reports]
    if kind == "violin":
        parts = ax.violinplot(values, positions=positions, showextrema=True, showmedians=True)
        for body, c in zip(parts["bodies"], colours):
            body.set_facecolor(c)
            body.set_alpha(0.35)
    else:
        boxes = ax.boxplot(values, positions=positions, showfliers=True, patch_artist=True)
        for box, c in zip(boxes["boxes"], colours):
            box.set_facecolor(c)
            box.set_alpha(0.35)
    ax.scatter(positions, [v.mean() for v in values], marker="D", color=colours, zorder=3, label="mean")
    # each tick label as wide as its slot: long learner names wrap instead of running into the next
    slot = ax.get_position().width * fig.get_figwidth() * 72 / len(reports)
    chars = max(6, int(slot / (0.6 * 8)) - 1)
    ax.set_xticks(positions, [wrap_label(f"{r.learner}\nrho_hat {r.rho_hat:.2f}", chars) for r in reports])
    ax.set_xlim(0.4, len(reports) + 0.6)
    ax.set_ylabel("regret per pair\n(mean of its two runs)")
    set_title(ax, title, caption(reports))
    legend(ax)
    return save_figure(fig, path)


def plot_tradeoff(reports: Any, *, path: str | Path | None = None, ax: Any = None, references: bool = True,
                  title: Any = True) -> Any:
    """Each report as one point: its regret (95% t interval) against its ρ̂ (exact 95%
    interval), with the target ρ when the reports share one — the regret–replicability trade-off
    of several learners on one adversary (real data included), all measured; a replicable
    learner beside its reference rows (module docstring)."""
    reports = with_references(reports_of(reports, "plot_tradeoff"), references, "plot_tradeoff")
    fig, ax = axes_for(ax, (6.4, 3.8))
    for r in reports:
        lo, hi = r.rho_ci
        rlo, rhi = r.regret_ci
        c, m = colour(fig, r.learner)
        ax.errorbar([r.regret_mean], [r.rho_hat], xerr=[[r.regret_mean - rlo], [rhi - r.regret_mean]],
                    yerr=[[r.rho_hat - lo], [hi - r.rho_hat]], marker=m, markersize=8, fillstyle="none", color=c,
                    label=r.learner)
    rhos = {_rho_of(r) for r in reports} - {None}
    if len(rhos) == 1:
        ax.axhline(rhos.pop(), color="grey", linestyle="--", linewidth=0.8, label="target rho")
    ax.set_xlabel("regret (measured, 95% CI)")
    ax.set_ylabel(f"rho_hat (measured,\n{rho_interval_label([r.rho_ci_kind for r in reports])} CI)")
    fraction_axis(ax)
    set_title(ax, title, caption(reports))
    legend(ax)
    return save_figure(fig, path)
