"""Same decision on a fresh log: docs/offpolicy.md, "The same decision on a fresh log", and its figure
docs/offpolicy_fresh.png (examples/make_figures.py draws it too).

    python benchmarks/offpolicy_fresh.py [--pairs 1000] [--figure docs/offpolicy_fresh.png]

One system — wine as a log (classification-bandit, block features, uniform logging) — and eight
candidate policies (replify.offpolicy.demo.fresh_candidates: the greedy policy of the ridge limit of
wine's costs, five near-ties and two random rules). For --pairs pairs of independent compact logs
(exact in law) at each size from 10^3 to 10^6 rows, the naive choice (the least IPS estimate) and the
certified one (select, rho = 0.1, R shared by the pair): how often the pair's two logs choose
differently, and what the choice costs, its true value less the best candidate's."""

from __future__ import annotations

import argparse
import time

from replify.offpolicy.demo import fresh_logs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--figure", default="docs/offpolicy_fresh.png")
    args = ap.parse_args()
    t = time.perf_counter()
    result = fresh_logs(pairs=args.pairs)
    for k in result.differ:
        for rows, differ, cost in zip(result.sizes, result.differ[k], result.cost[k]):
            print(f"{rows:>8} rows, {k:<30}: two logs choose differently in {differ:.3f} of {args.pairs} pairs; the "
                  f"choice costs {cost:.4f} over the best")
    result.plot(args.figure)
    print(f"figure: {args.figure} ({time.perf_counter() - t:.0f} s)")


if __name__ == "__main__":
    main()
