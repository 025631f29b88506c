"""Regenerate every figure of the documentation (docs/*.png) from one script, in replify's figure
style (replify.plots: constrained layout, legends outside the data, TrueType fonts).

Run:  python examples/make_figures.py             # the documentation's figures, about 4 minutes on 2 cores
      python examples/make_figures.py --quick --out DIR   # every figure at small sizes, a minute

The tests run the quick form and check that every figure it writes has no overlapping text and no
Type 3 font. Needs the plot extra: pip install -e '.[plot]'.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

import replify
from replify.experiments.lower_bounds import DEMOS
from replify.plots import colour, figure, figure_legend, log_axis, plot_frontier, plot_sweep, plot_tradeoff, save_figure
from replify.plots import set_title
from replify.plots.fitting import set_labels

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_data_audit import audit  # noqa: E402
from replify.offpolicy import Log, compare  # noqa: E402
from replify.offpolicy.demo import fresh_logs, wine_demo  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs"
#: every figure the documentation shows, by file name
FIGURES = ("demo-coin.png", "demo-phases.png", "demo-lazy-leader.png", "demo-bandit-coin.png", "demo-adversarial-bandit.png",
           "sweep.png", "frontier.png", "real_data.png", "price.png", "offpolicy.png", "compare.png",
           "offpolicy_fresh.png")
#: The certified full-information learners whose best is drawn in price.png (each at its defaults).
CERTIFIED = ("perturbed-commit", "split-commit", "iid-experts", "ftplb-star")


#: The certified learner that also has an adversarial regret bound (FTPLB*'s guarantees), drawn on its own.
BOUNDED = "race-hedge"


def price_of_certificate(path: Path | None, *, calibration, quick: bool):
    """docs/price.png: pseudo-regret over constant's on the same draws against T (n = 10, rho = 0.1,
    the README's spread): the best certified learner at its defaults, the certified learner with an
    adversarial regret bound too (race-hedge), FTPLB* calibrated (measured, not certified: the given
    calibration, and in full at 10^4 and 10^6 too), Hedge (not replicable; up to 10^6, where it steps every
    run) and the shape sqrt(T)/rho of the lower bound over constant's 0.2 T, its constant unknown. Drawn
    at a column's width; returns the figure (saved at ``path`` when given)."""
    n, rho = 10, 0.1
    horizons = [2_000, 8_000] if quick else [10**4, 10**5, 10**6, 10**7, 10**8]
    pairs = 4 if quick else 50
    means = {"means": list(np.linspace(0.3, 0.7, n))}
    best, bounded, hedge = [], [], []
    for T in horizons:
        kw = dict(n=n, horizon=T, pairs=pairs, seed=0, adversary_params=means)
        base = replify.evaluate("constant", "iid-bernoulli", **kw).pseudo_regret_mean
        ratios = {name: replify.evaluate(name, "iid-bernoulli", rho=rho, **kw).pseudo_regret_mean / base
                  for name in CERTIFIED + (BOUNDED,)}
        best.append(min(ratios.values()))
        bounded.append(ratios[BOUNDED])
        if T <= 10**6:
            hedge.append((T, replify.evaluate("hedge", "iid-bernoulli", **kw).pseudo_regret_mean / base))
    calibrations = [calibration] + ([] if quick else [
        replify.calibrate("ftplb-star", n=n, horizon=T, rho=rho, seed=0, progress=False) for T in (10**4, 10**6)])
    calibrated = sorted((c.horizon, c.regret / c.constant_regret) for c in calibrations)
    fig, ax = figure()
    Ts = np.array(horizons, dtype=float)
    c, m = colour(fig, "best certified")
    ax.plot(Ts, best, marker=m, color=c, label="best certified (" + ", ".join(CERTIFIED + (BOUNDED,)) + r"; $\rho$=0.1)")
    c, m = colour(fig, BOUNDED)
    ax.plot(Ts, bounded, marker=m, color=c, label=f"{BOUNDED}: certified, and an adversarial regret bound")
    c, m = colour(fig, "ftplb-star, calibrated")
    ax.plot([t for t, _ in calibrated], [r for _, r in calibrated], marker=m, color=c,
            label="FTPLB*, calibrated (measured, not certified)")
    c, m = colour(fig, "hedge")
    ax.plot([t for t, _ in hedge], [r for _, r in hedge], marker=m, color=c, label="hedge (not replicable)")
    ax.plot(Ts, np.minimum(1.0, 5.0 / (rho * np.sqrt(Ts))), linestyle="--", color="grey",
            label=r"$\sqrt{T}/\rho$ over constant's $0.2\,T$ (the lower bound's shape, constant unknown)")
    log_axis(ax, "x", Ts)
    log_axis(ax, "y", best + bounded + [r for _, r in hedge] + [r for _, r in calibrated])
    set_labels(ax, "horizon $T$", ["pseudo-regret / constant's (measured)", "regret / constant's"])
    set_title(ax, True, r"The price of a certificate: $n$=10, $\rho$=0.1")
    figure_legend(ax)
    return save_figure(fig, path)


def offpolicy_figure(path: Path | None, *, quick: bool):
    """docs/offpolicy.png: the off-policy demo's figure (``replify demo offpolicy``,
    replify.offpolicy.demo) — left, four policies' estimated costs on one wine log of 10^5 rows by
    IPS, SNIPS and DR with their 95% intervals beside each policy's true value; right, how often two
    independent logs of 10^6 rows disagree on the replicable choice and the replicable value,
    against the certificate's rho, over 400 pairs with exact 95% intervals."""
    return wine_demo(quick=quick, pairs=None if quick else 400, progress=False).plot(path)


def compare_figure(path: Path | None, *, quick: bool):
    """docs/compare.png: two policies on a wine log of 10^4 rows by every estimator with an interval,
    beside their true values (replify.offpolicy.compare)."""
    log = Log.simulate("classification-bandit", n=3, rows=2_000 if quick else 10_000, seed=1,
                       adversary_params={"features_as": "same"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", replify.errors.SmallSampleWarning)
        table = compare(log, {"alcohol rule": lambda x: np.where(x[:, 0, 1] > 0, 0, 1),
                              "cultivar 0": lambda x: np.zeros(len(x), dtype=int)})
    return table.plot(path=path)


def fresh_figure(path: Path | None, *, quick: bool):
    """docs/offpolicy_fresh.png: the same decision on a fresh log, naive and certified, over 1 000 pairs
    of independent wine logs at each size from 10^3 to 10^6 rows (benchmarks/offpolicy_fresh.py
    prints its numbers)."""
    return fresh_logs(pairs=10 if quick else 1000, sizes=(10**3, 10**4) if quick else (10**3, 10**4, 10**5, 10**6)).plot(path)


def main(argv: list[str] | None = None) -> list[Path]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (checks the figures, not their numbers)")
    p.add_argument("--out", type=Path, default=DOCS, help="the folder the figures go to (default: docs/)")
    args = p.parse_args(argv)
    out, quick = args.out, args.quick
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, demo in DEMOS.items():  # the lower-bound demos (about a minute in all in full)
        written.append(demo(quick=quick, seed=0, progress=False).plot(out / f"demo-{name}.png") and out / f"demo-{name}.png")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", replify.errors.BlockSizeWarning)
        horizons = [2_000, 8_000] if quick else [10**4, 10**5, 10**6]
        # FTPLB* at fractions of its theorem's block size, beside its two reference rows
        result = replify.sweep(
            learners=["ftplb-star", "constant", "hedge"], adversaries=["iid-bernoulli"], horizons=horizons, ns=[10],
            rhos=[0.1],
            block_multipliers=[0.03, 0.1, 0.3], pairs=4 if quick else 100, seed=0, progress=False,
            adversary_params={"iid-bernoulli": {"means": list(np.linspace(0.3, 0.7, 10))}},
        )
    plot_sweep(result, path=out / "sweep.png")
    # the calibration of FTPLB* at n = 10, T = 10^5, rho = 0.1 and its frontier (the same as
    # `replify calibrate ftplb-star -n 10 -T 100000 --rho 0.1 --plot docs/frontier.png`)
    T = 2_000 if quick else 10**5
    calibration = replify.calibrate("ftplb-star", n=10, horizon=T, rho=0.1, seed=0, progress=False,
                                    **({"budget": 2_000, "regret_pairs": 4, "refine_pairs": 8, "test_pairs": 200,
                                        "block_fractions": [0.25], "multipliers": [1.0, 3.0]} if quick else {}))
    plot_frontier(calibration.frontier(seed=0, pairs=20 if quick else 100), path=out / "frontier.png")
    # real data: FTPLB* certified and calibrated beside constant, hedge and ewa on the electricity series
    reports = audit(horizon=500 if quick else None, pairs=10 if quick else 200,
                    knobs=calibration.knobs if quick else None)
    plot_tradeoff(reports, path=out / "real_data.png")
    price_of_certificate(out / "price.png", calibration=calibration, quick=quick)
    offpolicy_figure(out / "offpolicy.png", quick=quick)
    compare_figure(out / "compare.png", quick=quick)
    fresh_figure(out / "offpolicy_fresh.png", quick=quick)
    written = [out / name for name in FIGURES]
    print("wrote", ", ".join(str(p) for p in written))
    return written


if __name__ == "__main__":
    main()
