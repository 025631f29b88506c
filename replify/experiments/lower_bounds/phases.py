"""The phases demo (``replify demo phases``): FTPLB* on the coin-phases adversary as n grows,
beside the adversarial lower bound's shape √(T log n)/ρ."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from replify.base.checks import public
from replify.errors import BlockSizeWarning
from replify.evaluation.evaluate import evaluate
from replify.guarantees.theory import certified_eps
from replify.plots import colour, figure, figure_legend, log_axis, save_figure, set_title
from replify.base.progress import ProgressArg, reporter
from replify.experiments.lower_bounds.demo import PLOTS, Demo, _closing


@public
def phases_demo(*, quick: bool = False, seed: int = 0, progress: ProgressArg = None) -> Demo:
    """n = 2, 4, …, 64: FTPLB* on the coin-phases adversary (m = log2 n phases of T/m steps, each
    coin at τ = 1/(ρ√(T/m))), beside √(T log n)/ρ, the adversarial lower bound's shape, and the
    reference rows ``constant`` and ``hedge``."""
    T = 8_000 if quick else 64_000
    ns = [2, 4, 8] if quick else [2, 4, 8, 16, 32, 64]
    pairs = 20 if quick else 100
    rho = 0.1
    rows = []
    bar = reporter(progress, "demo phases")
    with warnings.catch_warnings(), _closing(bar):
        warnings.simplefilter("ignore", BlockSizeWarning)
        for n in ns:
            m = int(round(math.log2(n)))
            L = T // m
            tau = min(0.24, 1.0 / (rho * math.sqrt(L)))
            B = max(1, L // 4)  # blocks inside phases
            eps = certified_eps("ftplb-star", horizon=T, n=n, rho=rho, block_size=B)
            report = evaluate("ftplb-star", "coin-phases", n=n, horizon=T, pairs=pairs, seed=seed, rho=rho,
                              block_size=B, eps=eps, adversary_params={"tau": tau})
            # the reference rows: constant (replicable, never learns) and hedge (learns, not replicable;
            # per step, so fewer pairs)
            const = evaluate("constant", "coin-phases", n=n, horizon=T, pairs=pairs, seed=seed, adversary_params={"tau": tau})
            hedge = evaluate("hedge", "coin-phases", n=n, horizon=T, pairs=max(2, pairs // 5), seed=seed,
                             adversary_params={"tau": tau})
            ref = math.sqrt(T * math.log(n)) / rho
            rows.append({"n": n, "phases": m, "tau": tau, "regret": report.regret_mean, "sqrt(T ln n)/rho": ref,
                         "regret/reference": report.regret_mean / ref, "rho_hat": report.rho_hat,
                         "rho_ci": list(report.rho_ci), "constant regret": const.regret_mean,
                         "hedge regret": hedge.regret_mean, "hedge rho_hat": hedge.rho_hat})
            if bar is not None:
                bar(len(rows), len(ns))
    return Demo("phases", rows, {"T": T, "rho": rho, "pairs": pairs, "seed": seed, "learner": "ftplb-star"}, _plot_phases)


def _plot_phases(demo: Demo, path: Any) -> Any:
    fig, ax = figure()
    ns = [r["n"] for r in demo.rows]
    regret = [r["regret"] for r in demo.rows]
    ref = np.array([r["sqrt(T ln n)/rho"] for r in demo.rows])
    c, m = colour(fig, "ftplb-star")
    ax.plot(ns, regret, marker=m, color=c, label=r"FTPLB* on coin-phases (certified $\rho$)")
    for name, key, text in (("constant", "constant regret", "constant (replicable, never learns)"),
                            ("hedge", "hedge regret", "hedge (learns, not replicable)")):
        rc, rm = colour(fig, name)
        ax.plot(ns, [r[key] for r in demo.rows], marker=rm, linestyle=":", color=rc, label=text)
    ax.plot(ns, ref * regret[0] / ref[0], linestyle="--", color="grey",
            label=r"$\sqrt{T \ln n}/\rho$, scaled to the first point")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    log_axis(ax, "y", regret + [r["constant regret"] for r in demo.rows] + [r["hedge regret"] for r in demo.rows])
    ax.set_xlabel("experts $n$")
    ax.set_ylabel("regret (measured)")
    set_title(ax, True, f"Adversarial lower bound, $T$={demo.settings['T']}, $\\rho$={demo.settings['rho']}")
    figure_legend(ax)
    return save_figure(fig, path)


PLOTS["phases"] = _plot_phases
