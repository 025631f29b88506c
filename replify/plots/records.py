"""Figures of results rows (a :class:`~replify.SweepResult` or its ``records()``) and of a
calibration's frontier: regret against T, ρ̂ against the block size, both against any swept
parameter, the regret–replicability frontier."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from replify.errors import InvalidArgumentError
from replify.plots.style import (
    MARKERS, axes_for, colour, figure, fraction_axis, legend, log_axis, records_caption, rho_interval_label, save_figure,
    set_title, text_of,
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


def _interval(mean: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[np.ndarray]:
    return [np.maximum(mean - lo, 0), np.maximum(hi - mean, 0)]


def plot_regret_vs_T(records: Any, *, path: str | Path | None = None, ax: Any = None, title: Any = True) -> Any:
    """Mean regret (with its interval) against T on log–log axes (linear where a regret is not
    positive), one line per learner — and per block-size multiplier, for learners with blocks —
    with the fitted slope of log regret on log T and the theorem's bound where known."""
    records = records_of(records, "plot_regret_vs_T", ("learner", "horizon", "regret_mean", "regret_ci_low",
                                                        "regret_ci_high"))
    fig, ax = axes_for(ax, (6.4, 3.8))
    groups = sorted({(r["learner"], r.get("block_multiplier")) for r in records}, key=lambda g: (g[0], g[1] or 0.0))
    multipliers = sorted({g[1] for g in groups if g[1] is not None})
    several = len(multipliers) > 1
    drawn = []
    for learner, mult in groups:
        rows = sorted((r for r in records if (r["learner"], r.get("block_multiplier")) == (learner, mult)),
                      key=lambda r: r["horizon"])
        T = np.array([r["horizon"] for r in rows], dtype=float)
        mean, lo, hi = (np.array([r[k] for r in rows], dtype=float) for k in ("regret_mean", "regret_ci_low",
                                                                              "regret_ci_high"))
        # a multiplier of the theorem's block size means something only for a learner with blocks
        name = learner if mult is None or not several else f"{learner}, B x {mult:g}"
        label = name
        if len(T) >= 2 and np.all(mean > 0):
            label += f"\nslope {np.polyfit(np.log(T), np.log(mean), 1)[0]:.2f}"
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
    ax.set_xlabel("horizon T")
    ax.set_ylabel("regret (measured, 95% CI)" + ("\nlinear: a regret is not positive" if linear else ""))
    set_title(ax, title, records_caption(records, exclude=("horizon",)))
    legend(ax)
    return save_figure(fig, path)


def plot_rho_vs_block_size(records: Any, *, path: str | Path | None = None, ax: Any = None,
                           title: Any = True) -> Any:
    """ρ̂ with its exact interval against the block size, one line per (learner, T), with the
    target ρ."""
    records = records_of(records, "plot_rho_vs_block_size", ("learner", "horizon", "rho_hat", "rho_ci_low",
                                                              "rho_ci_high"))
    fig, ax = axes_for(ax, (6.4, 3.8))
    blocks = []
    # learners whose theorem sets a block size (a sweep gives them a multiplier; constant's one block of T is no curve)
    blocked = [r for r in records if r.get("block_size") and ("block_multiplier" not in r or r["block_multiplier"] is not None)]
    horizons = {r["horizon"] for r in blocked}
    for key in sorted({(r["learner"], r["horizon"]) for r in blocked}):
        rows = sorted((r for r in blocked if (r["learner"], r["horizon"]) == key), key=lambda r: r["block_size"])
        B = np.array([r["block_size"] for r in rows], dtype=float)
        rho, lo, hi = (np.array([r[k] for r in rows], dtype=float) for k in ("rho_hat", "rho_ci_low", "rho_ci_high"))
        c, m = colour(fig, key[0])
        style = {"linestyle": ("-", "--", "-.", ":")[sorted(horizons).index(key[1]) % 4]} if len(horizons) > 1 else {}
        ax.errorbar(B, rho, yerr=_interval(rho, lo, hi), marker=m, color=c,
                    label=key[0] if len(horizons) == 1 else f"{key[0]}, T={key[1]:g}", **style)
        blocks.append(B)
    for target in sorted({r["rho"] for r in records if r.get("rho") is not None}):
        ax.axhline(target, color="grey", linestyle="--", linewidth=0.8, label=f"target rho {target:g}")
    if blocks:
        log_axis(ax, "x", np.concatenate(blocks))
    fraction_axis(ax)
    ax.set_xlabel("block size B")
    ax.set_ylabel(f"rho_hat (measured,\n{rho_interval_label([r.get('rho_ci_kind') for r in records])} CI)")
    set_title(ax, title, records_caption(records))
    legend(ax)
    return save_figure(fig, path)


def plot_sweep(result: Any, *, path: str | Path | None = None, axes: Any = None, title: Any = True) -> Any:
    """Both sweep plots side by side (``axes``: a pair of your axes), one colour per learner in
    both; the configuration they share is said once, over the left panel."""
    if not callable(getattr(result, "records", None)):
        raise InvalidArgumentError(f"plot_sweep takes a SweepResult (from replify.sweep), got {text_of(result)}")
    records = result.records()
    if axes is None:
        fig, (left, right) = figure(1, 2, width=11.5, height=3.8)
    else:
        left, right = axes
        fig = left.figure
    plot_regret_vs_T(records, ax=left, title=title)
    plot_rho_vs_block_size(records, ax=right, title=False)
    return save_figure(fig, path)


def plot_frontier(frontier: Any, *, path: str | Path | None = None, ax: Any = None, title: Any = True) -> Any:
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
            f"{text_of(frontier)}, lacking {', '.join(missing)}"
        )
    fig, ax = axes_for(ax, (7.4, 4.2))
    pts = frontier["points"]
    T, rho = frontier["horizon"], frontier["rho"]
    c, _ = colour(fig, frontier["learner"])

    def draw(points: list, **style: Any) -> None:
        if not points:
            return
        x = np.array([p["regret"] for p in points])
        y = np.array([p["rho_hat"] for p in points])
        ci = np.array([p["rho_ci"] for p in points])
        ax.errorbar(x, y, yerr=[y - ci[:, 0], ci[:, 1] - y], linestyle="none", **{"marker": "o", **style})

    draw([p for p in pts if not (p["certified"] or p["calibrated"])], color=c, alpha=0.45, markersize=4,
         label=f"{frontier['learner']}: grid\nof B and eps")
    draw([p for p in pts if p["certified"]], color=c, marker="s", markersize=8, label="certified point")
    draw([p for p in pts if p["calibrated"]], color="#D55E00", marker="D", markersize=8, label="calibrated point")
    for name in ("constant", "hedge"):
        r = frontier["references"][name]
        rc, rm = colour(fig, name)
        ax.plot([r["regret"]], [r["rho_hat"]], marker=rm, color=rc, linestyle="none", markersize=8,
                label=f"{name} (reference)")
    xs = np.geomspace(max(1.0, min(p["regret"] for p in pts) / 2), max(p["regret"] for p in pts) * 2, 100)
    ax.plot(xs, np.minimum(1.0, np.sqrt(T) / xs), linestyle="--", color="grey",
            label="lower bound's shape\nrho = sqrt(T)/regret\n(constant unknown)")
    ax.axhline(rho, color="#D55E00", linewidth=0.8, linestyle=":", label=f"target rho = {rho:g}")
    log_axis(ax, "x", np.concatenate([xs, [p["regret"] for p in pts]]))
    ax.set_xlabel("regret on iid costs, means 0.3..0.7 (measured)")
    ax.set_ylabel("rho_hat on two-way ties\n(measured, exact 95% CI)")
    fraction_axis(ax)
    set_title(ax, title, f"Regret-replicability frontier: {frontier['learner']}, n={frontier['n']}, T={T}")
    legend(ax)
    return save_figure(fig, path)


def plot_against(
    records: Any, x: str, *, by: str = "learner", path: str | Path | None = None, axes: Any = None,
    logx: bool | None = None, title: Any = True,
) -> Any:
    """Regret (top) and ρ̂ (bottom), each with its interval, against any swept parameter ``x``
    — a configuration field (``horizon``, ``n``, ``rho``, ``block_multiplier``, …) or a learner
    parameter in the rows (``block_size``, ``eps``) — one line per value of ``by``, in one colour
    in both panels. ``records`` is a :class:`~replify.SweepResult` or its ``records()``; ``axes``
    a pair of your axes. ``logx`` defaults to a log axis when the values are positive and span
    more than a factor of 20."""
    rows = records_of(records, "plot_against", ("regret_mean", "regret_ci_low", "regret_ci_high", "rho_hat",
                                                "rho_ci_low", "rho_ci_high"))
    numeric = sorted(k for k, v in rows[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool))
    if x not in numeric:
        raise InvalidArgumentError(f"x must be a numeric field of the rows, one of {', '.join(numeric)}; got {x!r}")
    if by not in rows[0]:
        raise InvalidArgumentError(f"by must be a field of the rows, one of {', '.join(sorted(rows[0]))}; got {by!r}")
    if axes is None:
        fig, (top, bottom) = figure(2, 1, width=6.4, height=5.6, sharex=True)
    else:
        top, bottom = axes
        fig = top.figure
        if fig.get_layout_engine() is None:
            fig.set_layout_engine("constrained")
    xs = np.array([r[x] for r in rows if r.get(x) is not None], dtype=float)
    for group in sorted({str(r[by]) for r in rows}):
        sel = sorted((r for r in rows if str(r[by]) == group and r.get(x) is not None), key=lambda r: r[x])
        v = np.array([r[x] for r in sel], dtype=float)
        c, m = colour(fig, group)
        mean, lo, hi = (np.array([r[k] for r in sel], dtype=float) for k in ("regret_mean", "regret_ci_low",
                                                                             "regret_ci_high"))
        top.errorbar(v, mean, yerr=_interval(mean, lo, hi), marker=m, color=c, label=group)
        rho, rlo, rhi = (np.array([r[k] for r in sel], dtype=float) for k in ("rho_hat", "rho_ci_low", "rho_ci_high"))
        bottom.errorbar(v, rho, yerr=_interval(rho, rlo, rhi), marker=m, color=c)
    for target in sorted({r["rho"] for r in rows if r.get("rho") is not None}):
        bottom.axhline(target, color="grey", linestyle="--", linewidth=0.8)
    wide = xs.size and xs.min() > 0 and xs.max() / xs.min() > 20
    if (logx if logx is not None else wide) and log_axis(top, "x", xs):
        log_axis(bottom, "x", xs)
    top.set_ylabel("regret\n(measured, 95% CI)")
    bottom.set_ylabel(f"rho_hat (measured,\n{rho_interval_label([r.get('rho_ci_kind') for r in rows])} CI)")
    fraction_axis(bottom)
    bottom.set_xlabel(x)
    set_title(top, title, records_caption(rows, exclude=(x,)))
    legend(top)
    return save_figure(fig, path)
