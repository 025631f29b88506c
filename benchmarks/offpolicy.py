"""replify.offpolicy's replicable selection, measured: docs/offpolicy.md, "The price".

    python benchmarks/offpolicy.py [--logs 20] [--rows 1000000]

8 linear policies (arm = argmin <x_a, theta_k>) on linear-bernoulli (d = 4, n = 4 arms, contexts on the
sphere, theta = (1, 0.6, -0.3, 0.2)), logged uniformly: the true theta, a perturbation of it (a
near-tie) and six random ones (generator seed 0). For each log (seed 0, 1, ...): the true values, the
replicable choice at rho = 0.1 (R from the log's seed mod 3), whether it is within 0.05 of the best's."""

from __future__ import annotations

import argparse
import time

import numpy as np

from replify.offpolicy import Log, select


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


if __name__ == "__main__":
    main()
