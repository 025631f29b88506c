"""Same decision on a fresh log: docs/offpolicy.md, "The same decision on a fresh log", and its figure
docs/offpolicy_fresh.png.

    python benchmarks/offpolicy_fresh.py [--pairs 1000]

One system — wine as a log (classification-bandit, block features, uniform logging) — and eight
candidate policies: the greedy policy of the ridge limit of wine's costs, five perturbations of it
(weights moved by 1%, 2%, 5%, 10% and 20% of their norm along random directions: near-ties) and two
random rules. For --pairs pairs of independent compact logs (exact in law) at each size from 10^3 to
10^6 rows, the naive choice (the least IPS estimate) and the certified one (select, rho = 0.1, R
shared by the pair and drawn afresh for each pair): how often the pair's two logs choose differently,
and what the choice costs, its true value less the best candidate's, averaged over both logs."""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import replify
from replify.components.rounded_ridge import population_estimate
from replify.errors import SmallSampleWarning
from replify.offpolicy import Log, estimate, select
from replify.plots import PAGE_WIDTH, colour, figure, save_figure


def candidates() -> list:
    seq = replify.make_adversary("classification-bandit", n=3, horizon=10, seed=0)
    best = population_estimate(seq, center=0.5)[0]
    rng = np.random.default_rng(0)
    weights = [best]
    for eps in (0.01, 0.02, 0.05, 0.1, 0.2):
        step = rng.normal(size=best.size)
        weights.append(best + eps * np.linalg.norm(best) * step / np.linalg.norm(step))
    weights += [rng.normal(size=best.size) * np.linalg.norm(best) for _ in range(2)]
    return [(lambda w: (lambda x: np.argmin(x @ w, axis=1)))(w) for w in weights]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--figure", default="docs/offpolicy_fresh.png")
    args = ap.parse_args()
    warnings.simplefilter("ignore", SmallSampleWarning)  # the naive choice reads point estimates only
    pols = candidates()
    sizes = (10**3, 10**4, 10**5, 10**6)
    result = {k: {"differ": [], "regret": []} for k in ("naive (least IPS)", "certified (select, rho = 0.1)")}
    for rows in sizes:
        t = time.perf_counter()
        differ = {k: 0 for k in result}
        regret = {k: 0.0 for k in result}
        for p in range(args.pairs):  # a loop over pairs of independent logs
            picks = {k: [] for k in result}
            for side in (0, 1):
                log = Log.simulate("classification-bandit", n=3, rows=rows, seed=2 * p + side, compact=True)
                truth = np.array([log.true_value(pol) for pol in pols])
                ips = np.array([estimate(log, pol, "ips").value for pol in pols])
                naive = int(np.argmin(ips))
                chosen = select(log, pols, rho=0.1, seed=10**6 + p).chosen  # R shared by the pair
                for k, c in zip(result, (naive, chosen)):
                    picks[k].append(c)
                    regret[k] += (truth[c] - truth.min()) / (2 * args.pairs)
            for k in result:
                differ[k] += picks[k][0] != picks[k][1]
        for k in result:
            result[k]["differ"].append(differ[k] / args.pairs)
            result[k]["regret"].append(regret[k])
            print(f"{rows:>8} rows, {k:<30}: two logs choose differently in {differ[k] / args.pairs:.3f} of "
                  f"{args.pairs} pairs; the choice costs {regret[k]:.4f} over the best", flush=True)
        print(f"  ({time.perf_counter() - t:.0f} s)")
    fig, (left, right) = figure(1, 2, width=PAGE_WIDTH)
    for k, r in result.items():
        c, marker = colour(fig, k)
        left.plot(sizes, r["differ"], marker=marker, color=c, label=k)
        right.plot(sizes, r["regret"], marker=marker, color=c, label=k)
    left.axhline(0.1, color="grey", lw=0.8, ls="--", label="the certificate's rho")
    for ax, label in ((left, "pairs of logs choosing differently"), (right, "true cost over the best's")):
        ax.set_xscale("log")
        ax.set_xlabel("rows in each log")
        ax.set_ylabel(label)
    left.legend(loc="upper right", fontsize=7)
    save_figure(fig, args.figure)
    print(f"figure: {args.figure}")


if __name__ == "__main__":
    main()
