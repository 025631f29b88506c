"""The lazy-leader demo (``replify demo lazy-leader``): paper §3.1's "FLL is not replicable",
the runs of a pair switching leaders at different steps."""

from __future__ import annotations

from typing import Any

import numpy as np

from replify.base.checks import public
from replify.evaluation.evaluate import evaluate
from replify.guarantees.theory import certified_eps
from replify.components.actions import Simplex
from replify.plots import colour, figure, figure_legend, log_axis, save_figure
from replify.plots.style import rho_hat_text
from replify.plugins.factory import make, make_adversary
from replify.base.progress import ProgressArg, reporter
from replify.base.randomness import DATA, INTERNAL, child, seed_sequence
from replify.experiments.lower_bounds.demo import PLOTS, Demo, _closing


def _switch(actions: np.ndarray) -> int | None:
    """The first step (1-based) at which the action differs from the first one, or None."""
    moved = np.flatnonzero(actions != actions[0])
    return int(moved[0]) + 1 if moved.size else None


@public
def lazy_leader_demo(*, quick: bool = False, seed: int = 0, progress: ProgressArg = None) -> Demo:
    """Paper §3.1: on the lazy-leader trap, FTPL and FLL switch leaders at different steps on S
    and S' (not replicable); FLLB, with blocks and the ε its proof certifies, plays identical
    action sequences."""
    T = 2_000 if quick else 10_000
    pairs = 60 if quick else 200
    rho = 0.1
    B = T // 4
    algorithms = {
        "ftpl": dict(actions=Simplex(2), eps=1.0),
        "fll": dict(eps=1.0),
        "fllb": dict(rho=rho, block_size=B, eps=certified_eps("fllb", horizon=T, n=2, rho=rho, block_size=B)),
        "constant": {},  # the replicable reference that never learns
    }
    seq = make_adversary("lazy-leader-trap", n=2, horizon=T, seed=seed)
    root = seed_sequence(seed)
    rows, traces = [], {}
    bar = reporter(progress, "demo lazy-leader")
    with _closing(bar):
        for name, kw in algorithms.items():
            report = evaluate(name, "lazy-leader-trap", n=2, horizon=T, pairs=pairs, seed=seed, **kw)
            if bar is not None:
                bar(len(rows) + 1, len(algorithms))
            runs = []
            for side in (0, 1):  # pair 0, replayed to show its two action sequences
                learner = make(name, n=2, horizon=T, seed=child(root, INTERNAL, 0), **kw)
                runs.append(learner.run(seq.sample(np.random.default_rng(child(root, DATA, 0, side)))))
            traces[name] = [r.tolist() for r in runs]
            rows.append({"algorithm": name, "switch on S": _switch(runs[0]), "switch on S'": _switch(runs[1]),
                         "identical": bool(np.array_equal(*runs)), "rho_hat": report.rho_hat, "rho_ci": list(report.rho_ci),
                         "regret": report.regret_mean})
    return Demo("lazy-leader", rows, {"T": T, "pairs": pairs, "rho": rho, "block_size": B, "seed": seed, "traces": traces},
                _plot_lazy)


def _plot_lazy(demo: Demo, path: Any) -> Any:
    traces = demo.settings["traces"]
    fig, axes = figure(len(traces), 1, sharex=True)
    for ax, (name, (s, s2)) in zip(axes, traces.items()):
        t = np.arange(1, len(s) + 1)
        c, _ = colour(fig, name)
        ax.step(t, s, where="post", color=c, label="on S")
        ax.step(t, np.asarray(s2) + 0.04, where="post", color=c, label="on S'", linestyle="--", alpha=0.7)
        row = next(r for r in demo.rows if r["algorithm"] == name)
        ax.set_ylabel("action")
        ax.set_yticks([0, 1])
        ax.set_title(f"{name}: {rho_hat_text(row['rho_hat'])}", loc="left")
        figure_legend(ax)
    log_axis(axes[-1], "x", [1, len(next(iter(traces.values()))[0])])  # the switch comes early: show the first steps
    axes[-1].set_xlabel("step $t$ (action 1: the one the day-1 bonus favours)")
    fig.suptitle("FLL is not replicable:\nthe runs switch at different steps")
    return save_figure(fig, path)


PLOTS["lazy-leader"] = _plot_lazy
