"""Figures of results rows (a :class:`~replify.SweepResult` or its ``records()``) and of a
calibration's frontier: regret against T, ρ̂ against the block size, both against any swept
parameter, the regret–replicability frontier. A row whose drawn numbers are NaN is left out with a
:class:`~replify.errors.PlotDataWarning` naming it (a line with a gap would hide it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from replify.base.checks import public
from replify.errors import InvalidArgumentError
from replify.plots.fitting import axes_for, figure, finish, fraction_axis, log_axis, set_labels
from replify.plots.style import (
    COLUMN_WIDTH, MARKERS, PAGE_WIDTH, RHO_HAT, colour, left_out, math_safe, plot_function, records_caption,
    rho_label, save_figure, text_of,
)


def records_of(value: Any, where: str, keys: Sequence[str]) -> list[dict[str, Any]]:
    """Results rows (a :class:`~replify.SweepResult` or its ``records()``), each a dict holding
    ``keys``, or an error naming the plot and the first row or key that is not."""
    rows = value.records() if callable(getattr(value, "records", None)) else value
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
        raise InvalidArgumentError(
            f"{where} takes a SweepResult or its records() (a list of dicts); got {text_of(value)} ({type(value).__name__})"
        )
    if not rows:
        raise InvalidArgumentError(f"{where} needs at least one results row; got none")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InvalidArgumentError(f"{where}: records[{i}] must be a dict (a results row), got {text_of(row)}")
        missing = [k for k in keys if k not in row]
        if missing:
            raise InvalidArgumentError(
                f"{where}: records[{i}] lacks {', '.join(missing)} (rows from SweepResult.records() have them)"
            )
    return list(rows)


#: How each swept field is named on an axis: mathematics as mathematics.
AXIS_NAMES = {"horizon": ("horizon $T$", "$T$"), "n": ("experts $n$", "$n$"), "rho": r"$\rho$",
              "block_size": ("block size $B$", "$B$"), "block_multiplier": ("block size $B$ / the theorem's", "$B$ / thm."),
              "eps": r"$\varepsilon$", "pairs": "pairs"}


def number(value: Any) -> str:
    """A value as a label prints it: a whole number in full (T = 1000000, not 1e+06), else its
    shortest form."""
    v = float(value)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:g}"


def row_name(row: Mapping[str, Any]) -> str:
    """A results row as a warning names it: its learner and the configuration fields it has."""
    fields = [f"{k}={row[k]:g}" if isinstance(row[k], float) else f"{k}={row[k]}"
              for k in ("adversary", "horizon", "n", "rho", "block_multiplier") if row.get(k) is not None]
    return f"{row.get('learner', '?')} ({', '.join(fields)})" if fields else str(row.get("learner", "?"))


def finite_rows(rows: Sequence[Mapping[str, Any]], keys: Sequence[str], where: str) -> list[Mapping[str, Any]]:
    """The rows whose ``keys`` are all numbers (not NaN, not missing); the others are left out
    with a :class:`~replify.errors.PlotDataWarning` naming them. None left: an error."""
    def finite(row: Mapping[str, Any]) -> bool:
        try:
            return all(row.get(k) is not None and np.isfinite(float(row[k])) for k in keys)
        except (TypeError, ValueError):
            return False

    kept = [r for r in rows if finite(r)]
    lost = [row_name(r) for r in rows if not finite(r)]
    left_out(where, lost, f"{' or '.join(keys)} is NaN (not measured)")
    if not kept:
        raise InvalidArgumentError(f"{where}: no results row has {', '.join(keys)} measured (not NaN); got "
                                   f"{len(rows)} row(s) with NaN")
    return kept


def _interval(mean: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[np.ndarray]:
    return [np.maximum(mean - lo, 0), np.maximum(hi - mean, 0)]


REGRET_KEYS = ("regret_mean", "regret_ci_low", "regret_ci_high")
RHO_KEYS = ("rho_hat", "rho_ci_low", "rho_ci_high")


@plot_function
@public
def plot_regret_vs_T(records: Any, *, path: str | Path | None = None, ax: Any = None, title: Any = True) -> Any:
    """Mean regret (with its interval) against T on log–log axes (linear where a regret is not
    positive), one line per learner — and per block-size multiplier, for learners with blocks —
    with the fitted slope of log regret on log T and the theorem's bound where known. Drawn at a
    column's width (docs/data.md, "Figures a paper can print")."""
    records = records_of(records, "plot_regret_vs_T", ("learner", "horizon") + REGRET_KEYS)
    records = finite_rows(records, ("horizon",) + REGRET_KEYS, "plot_regret_vs_T")
    fig, ax = axes_for(ax, (COLUMN_WIDTH, 2.4))
    groups = sorted({(r["learner"], r.get("block_multiplier")) for r in records}, key=lambda g: (g[0], g[1] or 0.0))
    multipliers = sorted({g[1] for g in groups if g[1] is not None})
    several = len(multipliers) > 1
    drawn = []
    for learner, mult in groups:
        rows = sorted((r for r in records if (r["learner"], r.get("block_multiplier")) == (learner, mult)),
                      key=lambda r: r["horizon"])
        T = np.array([r["horizon"] for r in rows], dtype=float)
        mean, lo, hi = (np.array([r[k] for r in rows], dtype=float) for k in REGRET_KEYS)
        # a multiplier of the theorem's block size means something only for a learner with blocks
        name = math_safe(learner) if mult is None or not several else rf"{math_safe(learner)}, $B\times{mult:g}$"
        label = name
        if len(T) >= 2 and np.all(mean > 0):
            label += f", slope {np.polyfit(np.log(T), np.log(mean), 1)[0]:.2f}"
        # one colour per learner (in every panel); its block-size multipliers differ by line and marker
        c, m = colour(fig, learner)
        k = multipliers.index(mult) if several and mult is not None else None
        style = {} if k is None else {"linestyle": ("-", "--", "-.", ":")[k % 4], "marker": MARKERS[k % len(MARKERS)]}
        ax.errorbar(T, mean, yerr=_interval(mean, lo, hi), **{"marker": m, "color": c, **style}, label=label)
        drawn.append(mean)
        bound = [r.get("regret_bound") for r in rows]
        if all(b is not None for b in bound) and (k is None or k == len(multipliers) - 1):
            ax.plot(T, bound, linestyle=(0, (1, 2)), linewidth=1.0, color=c, label=f"{name}: bound (certified)")
            drawn.append(np.asarray(bound, dtype=float))
    log_axis(ax, "x", [r["horizon"] for r in records])
    linear = not log_axis(ax, "y", np.concatenate(drawn))
    set_labels(ax, AXIS_NAMES["horizon"],
               "measured regret (95% CI" + ("; linear axis: a regret is not positive)" if linear else ")"))
    return finish(ax, title, records_caption(records, exclude=("horizon",)), path)


def _blocked(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rows of learners whose theorem sets a block size (a sweep gives them a multiplier;
    ``constant``'s one block of T is no curve)."""
    return [r for r in records
            if r.get("block_size") and ("block_multiplier" not in r or r["block_multiplier"] is not None)]


def varies_block_size(records: Sequence[Mapping[str, Any]]) -> bool:
    """Whether some learner with blocks is measured at two block sizes or more at one T (what a
    figure of ρ̂ against the block size needs)."""
    sizes: dict[tuple[Any, Any], set] = {}
    for r in _blocked(records):
        sizes.setdefault((r["learner"], r["horizon"]), set()).add(r["block_size"])
    return any(len(s) > 1 for s in sizes.values())


def _rho_panel(ax: Any, records: Sequence[Mapping[str, Any]], x: str, per: str | None) -> None:
    """ρ̂ with its interval against ``x``, one line per learner (and per value of ``per``, in
    line styles), the target ρ dashed — the right panel of :func:`plot_sweep`, and
    :func:`plot_rho_vs_block_size`."""
    fig = ax.figure
    values = sorted({r[per] for r in records}) if per else [None]
    xs = []
    for key in sorted({(r["learner"], r[per] if per else None) for r in records}, key=lambda k: (k[0], k[1] or 0)):
        rows = sorted((r for r in records if (r["learner"], r[per] if per else None) == key), key=lambda r: r[x])
        v = np.array([r[x] for r in rows], dtype=float)
        rho, lo, hi = (np.array([r[k] for r in rows], dtype=float) for k in RHO_KEYS)
        c, m = colour(fig, key[0])
        style = {"linestyle": ("-", "--", "-.", ":")[values.index(key[1]) % 4]} if len(values) > 1 else {}
        name = "T" if per == "horizon" else per
        label = math_safe(key[0]) if len(values) == 1 else f"{math_safe(key[0])}, ${name}={number(key[1])}$"
        ax.errorbar(v, rho, yerr=_interval(rho, lo, hi), marker=m, color=c, label=label, **style)
        xs.append(v)
    for target in sorted({r["rho"] for r in records if r.get("rho") is not None}):
        ax.axhline(target, color="grey", linestyle="--", linewidth=0.8, label=rf"target $\rho={target:g}$")
    log_axis(ax, "x", np.concatenate(xs))
    fraction_axis(ax)
    set_labels(ax, AXIS_NAMES.get(x, x), rho_label([r.get("rho_ci_kind") for r in records]))


@plot_function
@public
def plot_rho_vs_block_size(records: Any, *, path: str | Path | None = None, ax: Any = None,
                           title: Any = True) -> Any:
    """ρ̂ with its exact interval against the block size, one line per (learner, T), with the
    target ρ. It needs a learner with blocks measured at two block sizes or more at one T (a sweep
    with ``block_multipliers=[...]``), and refuses rows without (a sweep over horizons alone:
    :func:`plot_against` ``(records, "horizon")`` draws ρ̂ against T). Drawn at a column's width
    (docs/data.md, "Figures a paper can print")."""
    records = records_of(records, "plot_rho_vs_block_size", ("learner", "horizon") + RHO_KEYS)
    if not varies_block_size(records):
        learners = sorted({str(r["learner"]) for r in _blocked(records)})
        have = (f"{', '.join(learners)} at one block size per T" if learners else
                "no learner with blocks (none has a block_size and a block_multiplier)")
        raise InvalidArgumentError(
            "plot_rho_vs_block_size draws rho_hat against the block size, so it needs a learner with blocks measured "
            "at two block sizes or more at one T (a sweep with block_multipliers=[...], e.g. [0.3, 1.0]); these rows "
            f"have {have}. plot_against(records, 'horizon') draws rho_hat against T"
        )
    rows = finite_rows(_blocked(records), ("block_size",) + RHO_KEYS, "plot_rho_vs_block_size")
    fig, ax = axes_for(ax, (COLUMN_WIDTH, 2.4))
    _rho_panel(ax, rows, "block_size", "horizon" if len({r["horizon"] for r in rows}) > 1 else None)
    return finish(ax, title, records_caption(records), path)


@plot_function
@public
def plot_sweep(result: Any, *, path: str | Path | None = None, axes: Any = None, title: Any = True) -> Any:
    """Both sweep plots side by side (``axes``: a pair of your axes), one colour per learner in
    both, at a page's width: regret against T, and ρ̂ against the block size — or against T when
    the sweep varies no block size (a sweep over horizons alone). The configuration they share is
    said once, over the figure (docs/data.md, "Figures a paper can print")."""
    if not callable(getattr(result, "records", None)):
        raise InvalidArgumentError(f"plot_sweep takes a SweepResult (from replify.sweep), got {text_of(result)}")
    records = result.records()
    if axes is None:
        fig, (left, right) = figure(1, 2, width=PAGE_WIDTH)
    else:
        left, right = axes
        fig = left.figure
    plot_regret_vs_T(records, ax=left, title=title)
    if varies_block_size(records):
        plot_rho_vs_block_size(records, ax=right, title=False)
    else:
        rows = records_of(records, "plot_sweep", ("learner", "horizon") + RHO_KEYS)
        rows = finite_rows(rows, ("horizon",) + RHO_KEYS, "plot_sweep")
        _rho_panel(right, rows, "horizon", None)
        finish(right, False, "", None)
    return save_figure(fig, path)


@plot_function
@public
def plot_frontier(frontier: Any, *, path: str | Path | None = None, ax: Any = None, title: Any = True) -> Any:
    """The regret–replicability frontier of a calibration (:meth:`replify.Calibration.frontier`):
    measured ρ̂ on two-way ties (exact 95% intervals) against measured regret, for every candidate
    of the grid, with the certified point, the calibrated point, ``constant`` and ``hedge``, the
    target ρ and the shape of the Ω(√T/ρ) lower bound (ρ = √T/regret; its constant is unknown,
    drawn as 1). Drawn at a column's width (docs/data.md, "Figures a paper can print")."""
    missing = ["points", "horizon", "rho", "references"]
    if isinstance(frontier, Mapping):
        missing = [k for k in missing if k not in frontier]
    if missing:
        raise InvalidArgumentError(
            f"plot_frontier takes Calibration.frontier()'s dict (points, horizon, rho, references); got "
            f"{text_of(frontier)}, lacking {', '.join(missing)}"
        )
    def measured(p: Mapping[str, Any]) -> bool:
        return bool(np.isfinite([p["regret"], p["rho_hat"], *p["rho_ci"]]).all())

    pts = [p for p in frontier["points"] if measured(p)]
    left_out("plot_frontier", [f"the point B={p.get('block_size', '?')}, eps={p.get('eps', '?')}"
                               for p in frontier["points"] if not measured(p)], "its regret or rho_hat is NaN")
    if not pts:
        raise InvalidArgumentError("plot_frontier: the frontier has no point with a measured (not NaN) regret and "
                                   "rho_hat to draw")
    fig, ax = axes_for(ax, (COLUMN_WIDTH, 2.6))
    T, rho = frontier["horizon"], frontier["rho"]
    c, _ = colour(fig, frontier["learner"])

    def draw(points: list, **style: Any) -> None:
        if not points:
            return
        x = np.array([p["regret"] for p in points])
        y = np.array([p["rho_hat"] for p in points])
        ci = np.array([p["rho_ci"] for p in points])
        ax.errorbar(x, y, yerr=[np.maximum(y - ci[:, 0], 0), np.maximum(ci[:, 1] - y, 0)], linestyle="none",
                    **{"marker": "o", **style})

    draw([p for p in pts if not (p["certified"] or p["calibrated"])], color=c, alpha=0.45, markersize=3,
         label=rf"{math_safe(frontier['learner'])}: grid of $B$, $\varepsilon$")
    draw([p for p in pts if p["certified"]], color=c, marker="s", markersize=6, label="certified point")
    draw([p for p in pts if p["calibrated"]], color="#D55E00", marker="D", markersize=6, label="calibrated point")
    for name in ("constant", "hedge"):
        r = frontier["references"][name]
        rc, rm = colour(fig, name)
        ax.plot([r["regret"]], [r["rho_hat"]], marker=rm, color=rc, linestyle="none", markersize=6, label=name)
    xs = np.geomspace(max(1.0, min(p["regret"] for p in pts) / 2), max(p["regret"] for p in pts) * 2, 100)
    ax.plot(xs, np.minimum(1.0, np.sqrt(T) / xs), linestyle="--", color="grey",
            label=r"lower bound $\rho\propto\sqrt{T}/\mathrm{regret}$")
    ax.axhline(rho, color="#D55E00", linewidth=0.8, linestyle=":", label=rf"target $\rho={rho:g}$")
    log_axis(ax, "x", np.concatenate([xs, [p["regret"] for p in pts]]))
    fraction_axis(ax)
    set_labels(ax, ("measured regret on iid costs (means 0.3..0.7)", "regret"),
               (f"measured {RHO_HAT} on two-way ties (exact 95% CI)", RHO_HAT))
    return finish(ax, title, rf"Regret-replicability frontier: {math_safe(frontier['learner'])}, $n={frontier['n']}$, "
                             rf"$T={T}$", path)


@plot_function
@public
def plot_against(
    records: Any, x: str, *, by: str = "learner", path: str | Path | None = None, axes: Any = None,
    logx: bool | None = None, title: Any = True,
) -> Any:
    """Regret (top) and ρ̂ (bottom), each with its interval, against any swept parameter ``x``
    — a configuration field (``horizon``, ``n``, ``rho``, ``block_multiplier``, …) or a learner
    parameter in the rows (``block_size``, ``eps``) — one line per value of ``by``, in one colour
    in both panels. ``records`` is a :class:`~replify.SweepResult` or its ``records()``; ``axes``
    a pair of your axes. ``logx`` defaults to a log axis when the values are positive and span
    more than a factor of 20. Drawn at a column's width (docs/data.md, "Figures a paper can print")."""
    rows = records_of(records, "plot_against", REGRET_KEYS + RHO_KEYS)
    numeric = sorted(k for k, v in rows[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool))
    if x not in numeric:
        raise InvalidArgumentError(f"x must be a numeric field of the rows, one of {', '.join(numeric)}; got {x!r}")
    if by not in rows[0]:
        raise InvalidArgumentError(f"by must be a field of the rows, one of {', '.join(sorted(rows[0]))}; got {by!r}")
    if axes is None:
        fig, (top, bottom) = figure(2, 1, width=COLUMN_WIDTH, sharex=True)
    else:
        top, bottom = axes
        fig = top.figure
        axes_for(top, (0, 0))  # constrained layout on a figure of yours without a layout engine
    rows = [r for r in rows if r.get(x) is not None]
    regret_rows = finite_rows(rows, (x,) + REGRET_KEYS, "plot_against")
    rho_rows = finite_rows(rows, (x,) + RHO_KEYS, "plot_against")
    xs = np.array([r[x] for r in rows], dtype=float)
    for group in sorted({str(r[by]) for r in rows}):
        c, m = colour(fig, group)
        sel = sorted((r for r in regret_rows if str(r[by]) == group), key=lambda r: r[x])
        v = np.array([r[x] for r in sel], dtype=float)
        mean, lo, hi = (np.array([r[k] for r in sel], dtype=float) for k in REGRET_KEYS)
        top.errorbar(v, mean, yerr=_interval(mean, lo, hi), marker=m, color=c, label=math_safe(group))
        sel = sorted((r for r in rho_rows if str(r[by]) == group), key=lambda r: r[x])
        v = np.array([r[x] for r in sel], dtype=float)
        rho, rlo, rhi = (np.array([r[k] for r in sel], dtype=float) for k in RHO_KEYS)
        bottom.errorbar(v, rho, yerr=_interval(rho, rlo, rhi), marker=m, color=c, label=math_safe(group))
    for target in sorted({r["rho"] for r in rows if r.get("rho") is not None}):
        bottom.axhline(target, color="grey", linestyle="--", linewidth=0.8, label=rf"target $\rho={target:g}$")
    wide = xs.size and xs.min() > 0 and xs.max() / xs.min() > 20
    if (logx if logx is not None else wide) and log_axis(top, "x", xs):
        log_axis(bottom, "x", xs)
    set_labels(top, None, "measured regret (95% CI)")
    fraction_axis(bottom)
    set_labels(bottom, AXIS_NAMES.get(x, x), rho_label([r.get("rho_ci_kind") for r in rows]))
    finish(bottom, False, "", None)
    return finish(top, title, records_caption(rows, exclude=(x,)), path)
