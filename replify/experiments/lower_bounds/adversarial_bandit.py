"""The adversarial bandit demo (``replify demo adversarial-bandit``): an iid certificate against
a law that changes at each phase (:func:`threshold_range_attack`), beside a certificate for any
oblivious adversary."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from replify.base.checks import public
from replify.errors import ReplifyWarning
from replify.evaluation.evaluate import evaluate
from replify.evaluation.stats import binomial_upper_tail
from replify.plots import colour, figure, figure_legend, save_figure, set_title
from replify.plots.style import RHO_HAT
from replify.plugins.factory import make
from replify.base.progress import ProgressArg, reporter
from replify.experiments.lower_bounds.demo import PLOTS, Demo, _closing, _ticker


#: The adversarial bandit demo's learners and the guarantee each prints its bound under.
ADVERSARIAL_BANDITS = {"rep-gap-elimination": "iid only", "perturbed-bandit": "any oblivious adversary",
                       "constant": "rho = 0 (never switches)"}


def threshold_range_attack(*, horizon: int, rho: float = 0.1, depth: float = 2.0) -> dict[str, Any]:
    """The ``switching-bernoulli`` parameters of a two-arm adversary aimed at ``rep-gap-elimination``'s
    iid certificate: in each of its phases (both arms active, round robin: phase p ends at step
    2·N_p) arm 1's gap sits ``depth`` standard deviations of the phase's gap estimate above the bottom
    of that phase's threshold range, so every phase charges it and it survives to be charged again —
    the gap moves, which the charge-once argument (iid costs) rules out."""
    p = make("rep-gap-elimination", n=2, horizon=horizon, rho=rho, seed=0).params
    fresh = np.diff(np.concatenate([[0], p.pulls]))
    gaps = [lo + depth * math.sqrt(0.5 / f) for lo, f in zip(p.lows, fresh)]
    return {"means": [[0.5 - g / 2, 0.5 + g / 2] for g in gaps], "switch_at": [2 * x for x in p.pulls][:len(gaps) - 1]}


@public
def adversarial_bandit_demo(*, quick: bool = False, seed: int = 0, progress: ProgressArg = None) -> Demo:
    """Replicability under bandit feedback against an adversary whose law changes: the iid-certified
    ``rep-gap-elimination`` beside ``perturbed-bandit`` (certified against any oblivious adversary)
    and ``constant``, on :func:`threshold_range_attack` (two arms, T = 10⁸, 500 pairs on block sums; about
    50 s on 2 cores).
    Each row: the printed bound and what it assumes, ρ̂ with its exact interval, whether the
    measured failures refute the printed bound (P(Bin(pairs, bound) ≥ failures) < 1e-6), and the
    pseudo-regret. The iid bound is refuted here; the adversarial one holds (docs/bandits.md)."""
    T = 10**6 if quick else 10**8
    pairs = 60 if quick else 500
    rho = 0.1
    attack = threshold_range_attack(horizon=T, rho=rho)
    rows = []
    bar = reporter(progress, "demo adversarial-bandit")
    tick = _ticker(bar, len(ADVERSARIAL_BANDITS))
    with _closing(bar):
        for name, guarantee in ADVERSARIAL_BANDITS.items():
            with warnings.catch_warnings():
                # the demo's point: an iid certificate on a law that changes (its table says "iid only")
                warnings.filterwarnings("ignore", message=".*not known to be iid", category=ReplifyWarning)
                report = evaluate(name, "switching-bernoulli", n=2, horizon=T, pairs=pairs, seed=seed,
                                  adversary_params=attack, **({} if name == "constant" else {"rho": rho}), progress=False)
            tick()
            params = report.params or {}
            bound = 0.0 if name == "constant" else float(params.get("replicability_bound", params.get("rho_bound")))
            tail = binomial_upper_tail(report.failures, report.pairs, bound) if bound > 0 else float(report.failures == 0)
            rows.append({"algorithm": name, "printed bound": bound, "bound assumes": guarantee,
                         "rho_hat": report.rho_hat, "rho_ci": list(report.rho_ci),
                         "refuted at 1e-6": bool(tail < 1e-6), "pseudo-regret": report.pseudo_regret_mean})
    settings = {"T": T, "n": 2, "pairs": pairs, "rho": rho, "seed": seed, "adversary": "switching-bernoulli",
                "means": attack["means"], "switch_at": attack["switch_at"]}
    return Demo("adversarial-bandit", rows, settings, _plot_adversarial_bandit)


def _plot_adversarial_bandit(demo: Demo, path: Any) -> Any:
    fig, ax = figure()
    for k, row in enumerate(demo.rows):
        c, m = colour(fig, row["algorithm"])
        lo, hi = row["rho_ci"]
        ax.errorbar([k], [row["rho_hat"]], yerr=[[row["rho_hat"] - lo], [hi - row["rho_hat"]]], marker=m, color=c,
                    capsize=3, linestyle="none", label=f"{row['algorithm']}: {RHO_HAT} (measured)")
        ax.plot([k - 0.3, k + 0.3], [row["printed bound"]] * 2, color=c, linestyle="--",
                label=f"printed bound ({row['bound assumes']})")
    ax.set_xticks(range(len(demo.rows)))
    ax.set_xticklabels([r["algorithm"] for r in demo.rows])
    ax.set_ylabel(f"{RHO_HAT}, exact 95% interval")
    set_title(ax, True, f"A law that changes at each phase: $n$=2, $T$=$10^{{{round(math.log10(demo.settings['T']))}}}$, "
              f"{demo.settings['pairs']} pairs")
    figure_legend(ax)
    return save_figure(fig, path)


PLOTS["adversarial-bandit"] = _plot_adversarial_bandit
