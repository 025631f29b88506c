"""The bandit coin demo (``replify demo bandit-coin``): the coin lower bound under bandit
feedback, regret against ρ̂ for the replicable bandit learners beside the non-replicable ones."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from replify.base.checks import public
from replify.plots import colour, figure, figure_legend, log_axis, save_figure, set_title
from replify.plots.style import RHO_HAT
from replify.base.progress import ProgressArg, reporter
from replify.experiments.lower_bounds.demo import PLOTS, Demo, _closing, _ticker
from replify.experiments.lower_bounds.coin import _coin_cells


#: The bandit coin demo's learners: the replicable ones (iid-certified at width_scale 1, measured
#: below it), then the reference rows: ``constant`` and the non-replicable bandit baselines.
BANDIT_REPLICABLE = {"rep-elimination": "width_scale", "rep-etc": "width_scale", "rep-gap-elimination": "pull_scale"}
BANDIT_REFERENCES = ("constant", "ucb1", "thompson", "exp3")


@public
def bandit_coin_demo(*, quick: bool = False, seed: int = 0, progress: ProgressArg = None) -> Demo:
    """The coin lower bound under bandit feedback: regret against ρ for the replicable
    bandit learners, beside ``constant`` and the non-replicable UCB1, Thompson sampling and Exp3.

    The instance is the coin of ``thm:lower_bound_n=2_vanilla_replicability_experts``: two arms
    with mean costs ½ ∓ τ. Seeing only the played arm's cost makes learning harder, never easier, so
    the full-information bound (regret ≳ min(√T/ρ, T/64) on some τ) binds bandit learners too. Each
    replicable learner runs at ρ = 0.1 over a grid of its ``scale`` — ``width_scale`` for
    ``rep-elimination`` and ``rep-etc``, ``pull_scale`` for ``rep-gap-elimination`` (1: the schedule
    its iid bound certifies; below 1, finer grids or shorter phases whose ρ is only measured); a row
    gives its worst regret over the grid of τ, the largest ρ̂ over that grid with its exact interval,
    and its decoder's success at the largest τ. Every (learner, scale, τ) cell is in
    ``settings["grid"]``.
    """
    # the baselines play their lanes together (about 0.2-0.8 us a step): about 20 s in all on 2 cores
    T = 1_000 if quick else 20_000
    pairs = 8 if quick else 20
    taus = np.geomspace(0.5 / math.sqrt(T), 0.24, 3 if quick else 5).tolist()
    scales = [1.0, 0.01] if quick else [1.0, 0.1, 0.03, 0.01, 0.003, 0.001]
    rho = 0.1
    grid, rows = [], []
    runs = [(label, s) for label in BANDIT_REPLICABLE for s in scales] + [(label, None) for label in BANDIT_REFERENCES]
    bar = reporter(progress, "demo bandit-coin")
    tick = _ticker(bar, len(runs) * len(taus))
    with _closing(bar):
        for label, scale in runs:
            knob = BANDIT_REPLICABLE.get(label, "-")
            kw = {} if scale is None else {"rho": rho, knob: scale}
            cells, summary = _coin_cells(label, kw, cell={"algorithm": label, "knob": knob, "scale": scale}, taus=taus,
                                         T=T, pairs=pairs, seed=seed, tick=tick)
            grid += cells
            claim = ("certified (iid)" if scale == 1.0 else "measured") if scale is not None else (
                "none" if label != "constant" else "0 (any)")
            rows.append({"algorithm": label, "knob": knob, "scale": "-" if scale is None else scale, "rho claim": claim,
                         **summary})
    settings = {"T": T, "pairs per sign": pairs, "rho": rho, "scales": scales, "taus": taus, "seed": seed,
                "grid": grid}
    return Demo("bandit-coin", rows, settings, _plot_bandit_coin)


def _plot_bandit_coin(demo: Demo, path: Any) -> Any:
    T = demo.settings["T"]
    fig, ax = figure()
    regrets = []
    for k, label in enumerate(BANDIT_REPLICABLE):
        rows = [r for r in demo.rows if r["algorithm"] == label]
        if not rows:
            continue
        c, m = colour(fig, label)
        # at n = 2 the two elimination rules play alike: the second is dashed and hollow, so that both show
        ax.plot([r["rho_hat"] for r in rows], [r["worst regret"] for r in rows], marker=m, color=c,
                linestyle=("-", "--")[k % 2], fillstyle=("full", "none")[k % 2], markersize=(5, 9)[k % 2],
                label=f"{label}, {rows[0]['knob']} {rows[0]['scale']:g} ... {rows[-1]['scale']:g}")
        regrets += [r["worst regret"] for r in rows]
    # the references: hollow, each smaller than the one before and drawn over it, so that points
    # that coincide (the non-replicable ones all at rho_hat = 1, ucb1's and exp3's regrets alike)
    # all stay in sight, one inside the other; the legend says which share a point
    seen: list[tuple[str, float, float]] = []
    for k, (label, marker) in enumerate(zip(BANDIT_REFERENCES, ("s", "^", "v", "D"))):
        row = next(r for r in demo.rows if r["algorithm"] == label)
        x, y = float(row["rho_hat"]), float(row["worst regret"])
        same = [other for other, ox, oy in seen if abs(ox - x) <= 0.02 and abs(oy - y) <= 0.05 * max(abs(oy), abs(y), 1e-12)]
        ax.scatter([x], [y], marker=marker, s=(90, 60, 34, 14)[k % 4], facecolors="none",
                   edgecolors=colour(fig, label)[0], linewidths=1.3, zorder=3 + k,
                   label=f"{label} (reference)" + (f", at {' and '.join(same)}'s point" if same else ""))
        seen.append((label, x, y))
        regrets.append(row["worst regret"])
    rhos = np.geomspace(0.02, 1.0, 50)
    bound = np.minimum(math.sqrt(T) / rhos, T / 64)
    ax.plot(rhos, bound, linestyle="--", color="grey", label=r"$\min(\sqrt{T}/\rho,\ T/64)$: the bound's shape, constant unknown")
    ax.set_xlabel(f"largest {RHO_HAT} over $\\tau$ (measured)")
    ax.set_ylabel(r"worst regret over $\tau$ (measured)")
    log_axis(ax, "y", regrets + bound.tolist())
    set_title(ax, True, f"Bandit coin, $n$=2, $T$={T}, {demo.settings['pairs per sign']} pairs per sign and $\\tau$ "
              f"(nominal $\\rho$={demo.settings['rho']}); at $n$=2 rep-elimination and rep-etc play alike")
    figure_legend(ax)
    return save_figure(fig, path)


PLOTS["bandit-coin"] = _plot_bandit_coin
