"""Plots of evaluation results (matplotlib, an optional extra: ``pip install 'replify[plot]'``).

Every function draws on a new figure — or, given ``ax=``, into the user's own axes — saves it
when ``path`` is given (the suffix picks the format: ``.png``, ``.svg`` or ``.pdf``), states the
configuration in its title (learner, adversary, T, n, ρ, pairs), keeps legends outside the data
and returns the figure. Every number drawn is measured, with its interval (docs/claims.md)."""

from __future__ import annotations

import importlib.util
import itertools
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from replify.checks import check_output_path
from replify.errors import InvalidArgumentError
from replify.evaluation.report import Report
from replify.files import atomic_writer


def require_matplotlib(what: str) -> None:
    """Refuse ``what`` (an option asking for a figure) before any work when matplotlib is missing:
    a long run must not end in that refusal."""
    if importlib.util.find_spec("matplotlib") is None:
        raise InvalidArgumentError(f"{what} needs matplotlib, which is not installed: pip install 'replify[plot]'")


def pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend, or a clear error without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise InvalidArgumentError("plots need matplotlib: pip install 'replify[plot]'") from None
    return plt


#: The file formats every plot saves to, by the path's suffix (PDF is what papers print).
PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def save_figure(fig: Any, path: str | Path | None) -> Any:
    """Save to ``path`` (``.png``, ``.svg`` or ``.pdf``) when given; return the figure. The plot
    replaces an earlier file at ``path`` only once it is written whole: a failure (a full disk)
    leaves the earlier file as it was (:func:`replify.files.atomic_writer`)."""
    if path is not None:
        p = check_output_path(path, what="plot path", suffixes=PLOT_SUFFIXES)
        with atomic_writer(p, what="plot") as fh:  # matplotlib needs the format: a file object has no suffix
            fig.savefig(fh, format=p.suffix.lower()[1:], dpi=120, bbox_inches="tight")
    return fig


def _rho_of(report: Any) -> float | None:
    config = (report.provenance or {}).get("configuration", {})
    rho = config.get("rho")
    return rho if rho is not None else (report.params or {}).get("rho")


def caption(reports: Any) -> str:
    """The configuration shared by ``reports`` — adversary, T, n, ρ, pairs — as one title line
    (the learners are in the legend; a field that differs between them is left out)."""
    reports = _as_list(reports)
    fields = []
    for name, get in (("", lambda r: r.adversary), ("T=", lambda r: r.horizon), ("n=", lambda r: r.n),
                      ("rho=", _rho_of), ("pairs=", lambda r: r.pairs)):
        values = {get(r) for r in reports}
        if len(values) == 1 and (value := values.pop()) is not None:
            fields.append(f"{name}{value:g}" if isinstance(value, float) else f"{name}{value}")
    if len({r.learner for r in reports}) == 1:
        fields.insert(0, reports[0].learner)
    return ", ".join(fields)


def records_caption(rows: Sequence[dict[str, Any]], exclude: Sequence[str] = ()) -> str:
    """The configuration fields that all results ``rows`` share (adversary, T, n, ρ, pairs), as
    one title line; a field that varies (or is drawn on an axis: ``exclude``) is left out."""
    fields = []
    for key, name in (("adversary", "adversary"), ("horizon", "T"), ("n", "n"), ("rho", "rho"), ("pairs", "pairs")):
        values = {str(r.get(key)) for r in rows}
        if key not in exclude and len(values) == 1 and (value := values.pop()) != "None":
            fields.append(f"{name}={value}")
    return ", ".join(fields)


def _as_list(reports: Any) -> list:
    return list(reports) if isinstance(reports, (list, tuple)) else [reports]


def _text(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _reports(value: Any, where: str) -> list[Report]:
    """``value`` as a non-empty list of reports (one report, or a list of them), or an error
    naming the plot, what it takes and what came — not an AttributeError from inside matplotlib."""
    reports = _as_list(value)
    bad = [r for r in reports if not isinstance(r, Report)]
    if not reports or bad:
        raise InvalidArgumentError(
            f"{where} takes a Report (from replify.evaluate) or a non-empty list of them; got "
            f"{_text(value) if not reports else f'{_text(bad[0])} ({type(bad[0]).__name__})'}"
        )
    return reports


def _records(value: Any, where: str, keys: Sequence[str]) -> list[dict[str, Any]]:
    """Results rows (a :class:`~replify.SweepResult` or its ``records()``), each a dict holding
    ``keys``, or an error naming the plot and the first row or key that is not."""
    rows = value.records() if callable(getattr(value, "records", None)) else value
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
        raise InvalidArgumentError(
            f"{where} takes a SweepResult or its records() (a list of dicts); got {_text(value)} ({type(value).__name__})"
        )
    if not rows:
        raise InvalidArgumentError(f"{where} needs at least one results row; got none")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InvalidArgumentError(f"{where}: records[{i}] must be a dict (a results row), got {_text(row)}")
        missing = [k for k in keys if k not in row]
        if missing:
            raise InvalidArgumentError(
                f"{where}: records[{i}] lacks {', '.join(missing)} (rows from SweepResult.records() have them)"
            )
    return list(rows)


def _axes(ax: Any, figsize: tuple[float, float]) -> tuple[Any, Any]:
    """``(figure, axes)``: the user's axes and their figure, or a new figure."""
    if ax is not None:
        return ax.figure, ax
    return pyplot().subplots(figsize=figsize)


def _legend(ax: Any) -> None:
    """The legend outside the axes, to their right: it never covers a curve or a point."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def plot_agreement(report: Any, *, path: str | Path | None = None, ax: Any = None) -> Any:
    """The fraction of (pair, step) on which the two runs of a pair play the same action, over
    time, with the fraction of pairs identical so far (1 − the empirical CDF of the first
    divergence): at T it is 1 − ρ̂."""
    report = _reports(report, "plot_agreement")
    if len(report) != 1 or report[0].agreement_curve is None:
        raise InvalidArgumentError("plot_agreement takes one Report from replify.evaluate, with its agreement curve")
    report = report[0]
    fig, ax = _axes(ax, (6.4, 3.6))
    edges = np.asarray(report.curve_edges)
    mids = (edges[:-1] + edges[1:]) / 2
    ax.plot(mids, report.agreement_curve, label="steps on which the two runs agree")
    t = np.linspace(1, report.horizon, 400)
    first = np.asarray(report.first_divergence)
    still = [(np.where(first == 0, np.inf, first) > s).mean() for s in t]
    ax.plot(t, still, label="pairs identical so far", linestyle="--")
    lo, hi = report.rho_ci
    ax.axhline(1 - report.rho_hat, color="grey", linewidth=0.8)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("step t")
    ax.set_ylabel("fraction")
    ax.set_title(f"{caption(report)}\nrho_hat = {report.rho_hat:.3f} [{lo:.3f}, {hi:.3f}] "
                 f"(measured, {rho_interval_label([report.rho_ci_kind])})", fontsize=9)
    _legend(ax)
    return save_figure(fig, path)


def plot_regret_vs_T(records: Any, *, path: str | Path | None = None, ax: Any = None) -> Any:
    """Mean regret (with its interval) against T on log–log axes, one line per learner and
    block-size multiplier, with the fitted slope of log regret on log T and the theorem's bound
    where known."""
    records = _records(records, "plot_regret_vs_T", ("learner", "horizon", "regret_mean", "regret_ci_low",
                                                      "regret_ci_high"))
    fig, ax = _axes(ax, (6.4, 4.2))
    groups = sorted({(r["learner"], r.get("block_multiplier") or 1.0) for r in records})
    for learner, mult in groups:
        rows = sorted(
            (r for r in records if (r["learner"], r.get("block_multiplier") or 1.0) == (learner, mult)),
            key=lambda r: r["horizon"],
        )
        T = np.array([r["horizon"] for r in rows], dtype=float)
        mean = np.array([r["regret_mean"] for r in rows])
        lo = np.array([r["regret_ci_low"] for r in rows])
        hi = np.array([r["regret_ci_high"] for r in rows])
        label = learner if len({g[1] for g in groups}) == 1 else f"{learner}, B x {mult:g}"
        if len(T) >= 2 and np.all(mean > 0):
            slope = np.polyfit(np.log(T), np.log(mean), 1)[0]
            label += f" (slope {slope:.2f})"
        line = ax.errorbar(T, mean, yerr=[np.maximum(mean - lo, 0), np.maximum(hi - mean, 0)], marker="o", capsize=3, label=label)
        bound = [r.get("regret_bound") for r in rows]
        if all(b is not None for b in bound):
            ax.plot(T, bound, linestyle=":", color=line[0].get_color(), label=f"{label.split(' (')[0]} bound")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("horizon T")
    ax.set_ylabel("regret")
    ax.set_title(records_caption(records, exclude=("horizon",)), fontsize=10)
    _legend(ax)
    return save_figure(fig, path)


def plot_rho_vs_block_size(records: Any, *, path: str | Path | None = None, ax: Any = None) -> Any:
    """ρ̂ with its exact interval against the block size, one line per (learner, T), with the
    target ρ."""
    records = _records(records, "plot_rho_vs_block_size", ("learner", "horizon", "rho_hat", "rho_ci_low", "rho_ci_high"))
    fig, ax = _axes(ax, (6.4, 4.2))
    for key in sorted({(r["learner"], r["horizon"]) for r in records if r.get("block_size")}):
        rows = sorted((r for r in records if (r["learner"], r["horizon"]) == key and r.get("block_size")), key=lambda r: r["block_size"])
        B = np.array([r["block_size"] for r in rows], dtype=float)
        rho = np.array([r["rho_hat"] for r in rows])
        lo = np.array([r["rho_ci_low"] for r in rows])
        hi = np.array([r["rho_ci_high"] for r in rows])
        ax.errorbar(B, rho, yerr=[rho - lo, hi - rho], marker="o", capsize=3, label=f"{key[0]}, T={key[1]}")
    targets = sorted({r["rho"] for r in records if r.get("rho") is not None})
    for target in targets:
        ax.axhline(target, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("block size B")
    ax.set_ylabel(f"rho_hat ({rho_interval_label([r.get('rho_ci_kind') for r in records])} interval)")
    ax.set_title(records_caption(records), fontsize=10)
    _legend(ax)
    return save_figure(fig, path)


def plot_sweep(result: Any, *, path: str | Path | None = None, axes: Any = None) -> Any:
    """Both sweep plots side by side (``axes``: a pair of your axes)."""
    if not callable(getattr(result, "records", None)):
        raise InvalidArgumentError(f"plot_sweep takes a SweepResult (from replify.sweep), got {_text(result)}")
    records = result.records()
    if axes is None:
        fig, (left, right) = pyplot().subplots(1, 2, figsize=(13, 4.2), gridspec_kw={"wspace": 0.7})
    else:
        left, right = axes
        fig = left.figure
    plot_regret_vs_T(records, ax=left)
    plot_rho_vs_block_size(records, ax=right)
    return save_figure(fig, path)


def plot_frontier(frontier: Any, *, path: str | Path | None = None, ax: Any = None) -> Any:
    """The regret–replicability frontier of a calibration (:meth:`replify.Calibration.frontier`):
    measured ρ̂ on two-way ties (exact 95% intervals) against measured regret, for every candidate
    of the grid, with the certified point, the calibrated point, ``constant`` and ``hedge``, the
    target ρ and the shape of the Ω(√T/ρ) lower bound (ρ = √T/regret; its constant is unknown,
    drawn as 1)."""
    missing = ["points", "horizon", "rho", "references"]
    if isinstance(frontier, Mapping):
        missing = [k for k in missing if k not in frontier]
    if missing:
        raise InvalidArgumentError(
            f"plot_frontier takes Calibration.frontier()'s dict (points, horizon, rho, references); got "
            f"{_text(frontier)}, lacking {', '.join(missing)}"
        )
    fig, ax = _axes(ax, (6.8, 4.6))
    pts = frontier["points"]
    T, rho = frontier["horizon"], frontier["rho"]

    def draw(points: list, **style: Any) -> None:
        if not points:
            return
        x = np.array([p["regret"] for p in points])
        y = np.array([p["rho_hat"] for p in points])
        ci = np.array([p["rho_ci"] for p in points])
        ax.errorbar(x, y, yerr=[y - ci[:, 0], ci[:, 1] - y], fmt="o", capsize=2, **style)

    draw([p for p in pts if not (p["certified"] or p["calibrated"])], color="tab:blue", alpha=0.45, markersize=4,
         label=f"{frontier['learner']}: grid of B and eps (measured)")
    draw([p for p in pts if p["certified"]], color="tab:green", markersize=8, label="certified point")
    draw([p for p in pts if p["calibrated"]], color="tab:red", markersize=9, label="calibrated point")
    for name, marker in (("constant", "s"), ("hedge", "^")):
        r = frontier["references"][name]
        ax.plot([r["regret"]], [r["rho_hat"]], marker=marker, color="black", linestyle="none", markersize=8,
                label=f"{name} (reference)")
    xs = np.geomspace(max(1.0, min(p["regret"] for p in pts) / 2), max(p["regret"] for p in pts) * 2, 100)
    ax.plot(xs, np.minimum(1.0, np.sqrt(T) / xs), linestyle="--", color="grey",
            label="lower bound shape rho = sqrt(T)/regret (constant unknown)")
    ax.axhline(rho, color="tab:red", linewidth=0.8, linestyle=":", label=f"target rho = {rho:g}")
    ax.set_xscale("log")
    ax.set_xlabel("regret on iid costs, means 0.3..0.7 (measured)")
    ax.set_ylabel("rho_hat on two-way ties (measured, 95% CI)")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title(f"Regret-replicability frontier: {frontier['learner']}, n={frontier['n']}, T={T}", fontsize=10)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    return save_figure(fig, path)


def plot_regret_curve(reports: Any, *, path: str | Path | None = None, ax: Any = None, log: bool = False) -> Any:
    """The mean cumulative regret over time of one report or several (overlaid, e.g. a replicable
    learner beside ``constant`` and ``hedge`` on the same adversary), each with its 95% t band
    (``Report.regret_curve``: measured). ``ax`` draws into a figure of yours; ``log`` uses log–log
    axes. The title states the configuration (adversary, T, n, ρ, pairs)."""
    reports = _reports(reports, "plot_regret_curve")
    if any(r.regret_curve is None for r in reports):
        raise InvalidArgumentError("plot_regret_curve needs reports from evaluate() with a regret curve")
    fig, ax = _axes(ax, (6.4, 3.6))
    for r in reports:
        c = r.regret_curve
        line, = ax.plot(c["steps"], c["mean"], label=f"{r.learner} (rho_hat {r.rho_hat:.3f})")
        ax.fill_between(c["steps"], c["low"], c["high"], color=line.get_color(), alpha=0.2, linewidth=0)
    if log:
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=1.0)
    ax.set_xlabel("step t")
    ax.set_ylabel("mean cumulative regret (measured, 95% CI)")
    ax.set_title(caption(reports), fontsize=10)
    _legend(ax)
    return save_figure(fig, path)


def plot_regret_distribution(
    reports: Any, *, kind: str = "violin", path: str | Path | None = None, ax: Any = None
) -> Any:
    """The distribution over pairs of each learner's regret (the mean of a pair's two runs), as
    violins (``kind="violin"``) or boxes (``"box"``), one per report, with the mean marked —
    where a replicable learner's regret lies beside ``constant``'s and a baseline's, not only
    its average (measured)."""
    if kind not in ("violin", "box"):
        raise InvalidArgumentError(f"kind must be 'violin' or 'box', got {kind!r}")
    reports = _reports(reports, "plot_regret_distribution")
    fig, ax = _axes(ax, (1.6 + 1.1 * len(reports), 3.8))
    values = [np.asarray(r.regret, dtype=float).mean(axis=1) for r in reports]
    positions = np.arange(1, len(reports) + 1)
    if kind == "violin":
        ax.violinplot(values, positions=positions, showextrema=True, showmedians=True)
    else:
        ax.boxplot(values, positions=positions, showfliers=True)
    ax.scatter(positions, [v.mean() for v in values], marker="D", color="black", zorder=3, label="mean")
    ax.set_xticks(positions, [f"{r.learner}\nrho_hat {r.rho_hat:.2f}" for r in reports], fontsize=8)
    ax.set_ylabel("regret per pair (mean of its two runs)")
    ax.set_title(caption(reports), fontsize=10)
    _legend(ax)
    return save_figure(fig, path)


def plot_against(
    records: Any, x: str, *, by: str = "learner", path: str | Path | None = None, axes: Any = None,
    logx: bool | None = None,
) -> Any:
    """Regret (top) and ρ̂ (bottom), each with its interval, against any swept parameter ``x``
    — a configuration field (``horizon``, ``n``, ``rho``, ``block_multiplier``, …) or a learner
    parameter in the rows (``block_size``, ``eps``) — one line per value of ``by``. ``records``
    is a :class:`~replify.SweepResult` or its ``records()``; ``axes`` a pair of your axes.
    ``logx`` defaults to a log axis when the values span more than a factor of 20."""
    rows = _records(records, "plot_against", ("regret_mean", "regret_ci_low", "regret_ci_high", "rho_hat",
                                              "rho_ci_low", "rho_ci_high"))
    numeric = sorted(k for k, v in rows[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool))
    if x not in numeric:
        raise InvalidArgumentError(f"x must be a numeric field of the rows, one of {', '.join(numeric)}; got {x!r}")
    if by not in rows[0]:
        raise InvalidArgumentError(f"by must be a field of the rows, one of {', '.join(sorted(rows[0]))}; got {by!r}")
    plt = pyplot()
    if axes is None:
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 6.0), sharex=True)
    else:
        top, bottom = axes
        fig = top.figure
    xs = np.array([r[x] for r in rows if r.get(x) is not None], dtype=float)
    for group in sorted({str(r[by]) for r in rows}):
        sel = sorted((r for r in rows if str(r[by]) == group and r.get(x) is not None), key=lambda r: r[x])
        v = np.array([r[x] for r in sel], dtype=float)
        mean, lo, hi = (np.array([r[k] for r in sel]) for k in ("regret_mean", "regret_ci_low", "regret_ci_high"))
        line = top.errorbar(v, mean, yerr=[np.maximum(mean - lo, 0), np.maximum(hi - mean, 0)], marker="o", capsize=3, label=group)
        rho, rlo, rhi = (np.array([r[k] for r in sel]) for k in ("rho_hat", "rho_ci_low", "rho_ci_high"))
        bottom.errorbar(v, rho, yerr=[rho - rlo, rhi - rho], marker="o", capsize=3, color=line[0].get_color(), label=group)
    for target in sorted({r["rho"] for r in rows if r.get("rho") is not None}):
        bottom.axhline(target, color="grey", linestyle="--", linewidth=0.8)
    if logx if logx is not None else (xs.size and xs.min() > 0 and xs.max() / xs.min() > 20):
        top.set_xscale("log")
        bottom.set_xscale("log")
    top.set_ylabel("regret (measured, 95% CI)")
    bottom.set_ylabel(f"rho_hat ({rho_interval_label([r.get('rho_ci_kind') for r in rows])} CI)")
    bottom.set_xlabel(x)
    top.set_title(records_caption(rows, exclude=(x,)), fontsize=10)
    _legend(top)
    return save_figure(fig, path)


def rho_interval_label(kinds: Sequence[str | None]) -> str:
    """A short name for the intervals on ρ̂ drawn together (``Report.rho_ci_kind`` of each; None,
    a record written before reports said, is the fixed-n exact interval): "exact 95%",
    "anytime-valid 95%" after sequential runs, or both names when a figure mixes them."""
    names = []
    for kind in kinds:
        level = re.search(r"\d+(?:\.\d+)?%", kind or "")
        name = ("anytime-valid " if (kind or "").startswith("anytime-valid") else "exact ") + (
            level.group(0) if level else "95%")
        if name not in names:
            names.append(name)
    return " / ".join(names) if names else "exact 95%"


def plot_tradeoff(reports: Any, *, path: str | Path | None = None, ax: Any = None) -> Any:
    """Each report as one point: its regret (95% t interval) against its ρ̂ (exact 95%
    interval), with the target ρ when the reports share one — the regret–replicability trade-off
    of several learners on one adversary (real data included), all measured."""
    reports = _reports(reports, "plot_tradeoff")
    fig, ax = _axes(ax, (6.4, 4.2))
    for r, marker in zip(reports, itertools.cycle("osD^vP*X")):  # distinct markers: coinciding points stay visible
        lo, hi = r.rho_ci
        rlo, rhi = r.regret_ci
        ax.errorbar([r.regret_mean], [r.rho_hat], xerr=[[r.regret_mean - rlo], [rhi - r.regret_mean]],
                    yerr=[[r.rho_hat - lo], [hi - r.rho_hat]], marker=marker, markersize=8, fillstyle="none",
                    capsize=3, label=r.learner)
    rhos = {_rho_of(r) for r in reports} - {None}
    if len(rhos) == 1:
        ax.axhline(rhos.pop(), color="grey", linestyle="--", linewidth=0.8, label="target rho")
    ax.set_xlabel("regret (measured, 95% CI)")
    ax.set_ylabel(f"rho_hat ({rho_interval_label([r.rho_ci_kind for r in reports])} CI)")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title(caption(reports), fontsize=10)
    _legend(ax)
    return save_figure(fig, path)
