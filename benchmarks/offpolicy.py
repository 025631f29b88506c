"""replify.offpolicy's replicable selection, measured: docs/offpolicy.md, "The price" and "Compact logs".

    python benchmarks/offpolicy.py [--logs 20] [--rows 1000000]

Part 1 (the price):
8 linear policies (arm = argmin <x_a, theta_k>) on linear-bernoulli (d = 4, n = 4 arms, contexts on the
sphere, theta = (1, 0.6, -0.3, 0.2)), logged uniformly: the true theta, a perturbation of it (a
near-tie) and six random ones (generator seed 0). For each log (seed 0, 1, ...): the true values, the
replicable choice at rho = 0.1 (R from the log's seed mod 3), whether it is within 0.05 of the best's.

Part 2 (speed): 100 pairs of compact wine logs of --rows rows each (classification-bandit, uniform
logging), each drawn, estimated (IPS, SNIPS, DR of one policy) and selected from among 8 linear
policies (weights from generator seed 0) at rho = 0.1; seconds in all, and rho_hat with its exact interval."""

from __future__ import annotations

import argparse
import time

import numpy as np

from replify.offpolicy import Log, estimate, replicability, select


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=int, default=20)
    ap.add_argument("--rows", type=int, default=10**6)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    d, n = 4, 4
    inst = dict(d=d, contexts="sphere", theta=[1.0, 0.6, -0.3, 0.2])
    thetas = [np.array(inst["theta"]), np.array(inst["theta"]) + 0.05 * rng.normal(size=d)] + \
        [rng.normal(size=d) for _ in range(6)]
    pols = [(lambda th: (lambda ctx: np.argmin(ctx @ th, axis=1)))(th) for th in thetas]
    t, ok, chosen = time.perf_counter(), 0, []
    for s in range(args.logs):
        log = Log.simulate("linear-bernoulli", n=n, rows=args.rows, seed=s, adversary_params=inst)
        truth = np.array([log.true_value(p) for p in pols])
        r = select(log, pols, rho=0.1, seed=s % 3)
        chosen.append(r.chosen)
        ok += bool(truth[r.chosen] <= truth.min() + 0.05)
    print(f"true values {truth.round(3).tolist()}; grid width {r.width:.3f}; certified {r.certified}")
    print(f"within 0.05 of the best in {ok} of {args.logs} logs; chosen {chosen}; {time.perf_counter() - t:.0f} s")
    weights = np.random.default_rng(0).normal(size=(8, 42))
    candidates = [(lambda wk: (lambda ctx: np.argmin(ctx @ wk, axis=1)))(wk) for wk in weights]

    def decide(log, r):
        for name in ("ips", "snips", "dr"):
            estimate(log, candidates[0], name)
        return select(log, candidates, rho=0.1, seed=r)

    t = time.perf_counter()
    m = replicability(lambda s: Log.simulate("classification-bandit", n=3, rows=args.rows, seed=s, compact=True),
                      decide, pairs=100, seed=0)
    print(f"100 pairs of compact wine logs of {args.rows} rows, drawn, estimated and selected from: "
          f"{time.perf_counter() - t:.1f} s; rho_hat {m.rho_hat:.2f} {m.interval}")


if __name__ == "__main__":
    main()
