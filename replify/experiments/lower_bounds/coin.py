"""The coin demo (``replify demo coin``): the coin lower bound as a regret frontier over ρ, and
one learner's row of a coin demo (:func:`_coin_cells`, which the bandit coin demo shares)."""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np

from replify.base.checks import public
from replify.errors import BlockSizeWarning
from replify.guarantees.theory import certified_eps
from replify.plots import colour, figure, figure_legend, log_axis, save_figure
from replify.plots.style import rho_hat_text
from replify.base.progress import ProgressArg, reporter
from replify.wrapper import wrap
from replify.experiments.lower_bounds.demo import PLOTS, Demo, _closing, _ticker
from replify.experiments.lower_bounds.reduction import coin_reduction


#: The coin demo's learners: the ρ-replicable ones (certified for ρ at the parameters used), then
#: the two reference rows every replicable learner is shown beside (docs/claims.md).
COIN_REPLICABLE = ("ftplb-star", "split-commit", "wrapped hedge")
COIN_REFERENCES = ("constant", "hedge")


def _coin_learner(label: str, *, T: int, rho: float, B: int) -> tuple[Any, dict[str, Any]]:
    """The learner and its keyword arguments for :func:`coin_reduction`, at parameters that
    certify ρ (the reference rows take none)."""
    if label == "ftplb-star":
        return "ftplb-star", dict(rho=rho, block_size=B, eps=certified_eps("ftplb-star", horizon=T, n=2, rho=rho, block_size=B))
    if label == "split-commit":
        return "split-commit", dict(rho=rho)
    if label == "wrapped hedge":
        eps = certified_eps(horizon=T, n=2, rho=rho, block_size=B, norm="linf")
        return (lambda s: wrap("hedge", n=2, horizon=T, rho=rho, seed=s, block_size=B, eps=eps)), {}
    return label, {}



def _coin_cells(learner: Any, kw: dict[str, Any], *, cell: dict[str, Any], taus: list[float], T: int, pairs: int,
                seed: int, tick: Callable[[], None]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One learner's row of a coin demo: a cell per τ (``cell`` names the learner), and the row's
    summary — the worst regret over τ (the frontier point) and where, the decoder's success at the
    largest τ, and the largest ρ̂ with its interval."""
    cells = []
    for tau in taus:
        red = coin_reduction(learner, horizon=T, pairs=pairs, seed=seed, tau=tau, **kw)
        tick()
        cells.append({**cell, "tau": tau, "regret": red.regret_mean, "decoder success": red.success_rate,
                      "rho_hat": red.rho_hat, "rho_ci": list(red.rho_ci)})
    worst, worst_rho = max(cells, key=lambda c: c["regret"]), max(cells, key=lambda c: c["rho_hat"])
    return cells, {"worst regret": worst["regret"], "at tau": worst["tau"],
                   f"decoder success at tau={taus[-1]:g}": cells[-1]["decoder success"],
                   "rho_hat": worst_rho["rho_hat"], "rho_ci": worst_rho["rho_ci"]}


@public
def coin_demo(*, quick: bool = False, seed: int = 0, progress: ProgressArg = None) -> Demo:
    """The coin lower bound (``thm:lower_bound_n=2_vanilla_replicability_experts``) as a frontier.

    The theorem: a ρ-replicable learner whose actions decode the coin's bias ½ ± τ must pay regret
    ≳ min(√T/ρ, T/64) on some τ. For each ρ, each replicable learner runs — at parameters that
    *certify* ρ — on coins over a grid of τ from 0.5/√T to 0.24; a row gives its worst regret over
    the grid (the frontier point), the τ where it occurs, its decoder's success at the largest τ
    (does it learn?) and the largest ρ̂ measured. ``constant`` (replicable, never learns) and
    ``hedge`` (learns, not replicable) are the reference rows. The grid of every (learner, ρ, τ)
    is in ``settings["grid"]``.
    """
    # T large enough that the certified learners decode the coin at the largest tau (FTPLB* 0.7-1.0,
    # split-commit 1.0 at T = 200 000); smaller, they are replicable only because they do not learn.
    T = 4_000 if quick else 200_000
    pairs = 20 if quick else 40
    rhos = [0.1, 0.3] if quick else [0.05, 0.1, 0.2, 0.4]
    taus = np.geomspace(0.5 / math.sqrt(T), 0.24, 4 if quick else 6).tolist()
    B = T // 8
    grid, rows = [], []
    bar = reporter(progress, "demo coin")
    total = (len(COIN_REPLICABLE) * len(rhos) + len(COIN_REFERENCES)) * len(taus)
    tick = _ticker(bar, total)
    with warnings.catch_warnings(), _closing(bar):
        warnings.simplefilter("ignore", BlockSizeWarning)
        for label in COIN_REPLICABLE + COIN_REFERENCES:
            for rho in (rhos if label in COIN_REPLICABLE else [None]):
                learner, kw = _coin_learner(label, T=T, rho=rho if rho is not None else 0.0, B=B) if rho else (label, {})
                cells, summary = _coin_cells(learner, kw, cell={"algorithm": label, "rho": rho}, taus=taus, T=T,
                                             pairs=pairs, seed=seed, tick=tick)
                grid += cells
                ref = math.sqrt(T) / rho if rho else None
                rows.append({
                    "algorithm": label, "certified rho": rho if rho else ("0 (any)" if label == "constant" else "none"),
                    **summary, "sqrt(T)/rho": ref,
                    "worst/(sqrt(T)/rho)": None if ref is None else summary["worst regret"] / ref,
                })
    settings = {"T": T, "pairs per sign": pairs, "rhos": rhos, "taus": taus, "block_size": B, "seed": seed,
                "grid": grid}
    return Demo("coin", rows, settings, _plot_coin)


def _plot_coin(demo: Demo, path: Any) -> Any:
    T = demo.settings["T"]
    fig, (left, right) = figure(1, 2)
    rhos = np.array(demo.settings["rhos"])
    for row_label in COIN_REPLICABLE:
        rows = [r for r in demo.rows if r["algorithm"] == row_label]
        c, m = colour(fig, row_label)
        left.plot([r["certified rho"] for r in rows], [r["worst regret"] for r in rows], marker=m, color=c,
                  label=f"{row_label} (certified $\\rho$)")
    for ref_label, style in (("constant", ":"), ("hedge", "-.")):
        row = next(r for r in demo.rows if r["algorithm"] == ref_label)
        left.axhline(row["worst regret"], linestyle=style, color=colour(fig, ref_label)[0], linewidth=1,
                     label=f"{ref_label} (reference, {rho_hat_text(row['rho_hat'])})")
    left.plot(rhos, np.minimum(math.sqrt(T) / rhos, T / 64), linestyle="--", color="grey",
              label=r"$\min(\sqrt{T}/\rho,\ T/64)$: the bound's shape, constant unknown")
    log_axis(left, "x", rhos)
    log_axis(left, "y", [r["worst regret"] for r in demo.rows] + [T / 64])
    left.set_xlabel(r"certified $\rho$")
    left.set_ylabel(r"worst regret over $\tau$ (measured)")
    left.set_title(r"Regret frontier: worst case over $\tau$")
    figure_legend(left)
    mid = sorted(rhos)[len(rhos) // 2 - 1] if len(rhos) > 1 else rhos[0]
    for label in COIN_REPLICABLE + COIN_REFERENCES:
        cells = [cell for cell in demo.settings["grid"] if cell["algorithm"] == label and cell["rho"] in (mid, None)]
        c, m = colour(fig, label)
        right.plot([cell["tau"] for cell in cells], [cell["decoder success"] for cell in cells], marker=m, color=c,
                   label=label + ("" if label in COIN_REFERENCES else f" ($\\rho$={mid:g})"))
    right.axhline(0.5, color="grey", linewidth=1, linestyle="--", label="chance")
    log_axis(right, "x", [cell["tau"] for cell in demo.settings["grid"]])
    right.set_ylim(0, 1.05)
    right.set_xlabel(r"coin bias $\tau$")
    right.set_ylabel("decoder success (measured)")
    right.set_title("Do they learn? Decoding the coin")
    figure_legend(right)
    fig.suptitle(f"Coin lower bound: $n$=2, $T$={T}, {demo.settings['pairs per sign']} pairs per sign and $\\tau$")
    return save_figure(fig, path)


PLOTS["coin"] = _plot_coin
