"""replify.offpolicy's replicable selection, measured: docs/offpolicy.md, "The price" and "Compact logs".

    python benchmarks/offpolicy.py [--logs 20] [--rows 1000000]

Part 1 (the price):
8 linear policies (arm = argmin <x_a, theta_k>) on linear-bernoulli (d = 4, n = 4 arms, contexts on the
sphere, theta = (1, 0.6, -0.3, 0.2)), logged uniformly. Two candidate sets: "spread", the true theta,
a perturbation of it (a near-tie) and six random ones (generator seed 0); "crowded", theta moved
along one random direction by t = 0, 0.2, 0.6, 0.8, 1, 1.5, 2 (values 0.290, 0.293, 0.327, 0.357,
0.390, 0.460, 0.503: the third within 0.05 of the best, the fourth 0.067 above it) and one random.
For --logs logs of --rows rows, then 5 x --logs logs of --rows / 10 rows (seeds 0, 1, ...; R
independent, one per log): the replicable choice at rho = 0.1 and how often it is within 0.05 of the
best's true value — counted with the drawn R, and averaged exactly over R on each log's estimates (the
grid's offset and the candidates' order exactly, the width's ladder by quadrature over its offset);
"min_rows" gives the same average at the width replify uses where the logs' least size is declared
(min_rows=rows: no ladder, the width c_K s / rho exactly).

Part 2 (speed): 100 pairs of compact wine logs of --rows rows each (classification-bandit, uniform
logging), each drawn, estimated (IPS, SNIPS, DR of one policy) and selected from among 8 linear
policies (weights from generator seed 0) at rho = 0.1; seconds in all, and rho_hat with its exact interval."""

from __future__ import annotations

import argparse
import time

import numpy as np

from replify.offpolicy import Log, estimate, replicability, select


def good_over_r(estimates: np.ndarray, width: float, truth: np.ndarray, slack: float = 0.05) -> float:
    """Exactly, over R (the grid's offset and the order of the candidates), the probability that
    the choice on these estimates is within ``slack`` of the best's true value: the least cell's
    upper edge is uniform on (m, m + width], m the least estimate, and the choice uniform among the
    candidates below it (replify/offpolicy/select.py)."""
    m = estimates.min()
    cuts = np.unique(np.clip(np.r_[m, estimates, m + width], m, m + width))
    good = truth <= truth.min() + slack
    total = 0.0
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        below = estimates < (lo + hi) / 2
        total += (hi - lo) / width * good[below].sum() / below.sum()
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=int, default=20)
    ap.add_argument("--rows", type=int, default=10**6)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    d, n = 4, 4
    theta = np.array([1.0, 0.6, -0.3, 0.2])
    inst = dict(d=d, contexts="sphere", theta=theta.tolist())
    along = rng.normal(size=d)
    sets = {"spread": [theta, theta + 0.05 * along] + [rng.normal(size=d) for _ in range(6)],
            "crowded": [theta + t * along for t in (0.0, 0.2, 0.6, 0.8, 1.0, 1.5, 2.0)] + [rng.normal(size=d)]}
    for rows, logs in ((args.rows, args.logs), (args.rows // 10, 5 * args.logs)):
        t, ok, width = time.perf_counter(), {k: 0 for k in sets}, {}
        exact, declared = {k: 0.0 for k in sets}, {k: 0.0 for k in sets}
        for s in range(logs):
            log = Log.simulate("linear-bernoulli", n=n, rows=rows, seed=s, adversary_params=inst)
            for name, thetas in sets.items():
                pols = [(lambda th: (lambda ctx: np.argmin(ctx @ th, axis=1)))(th) for th in thetas]
                truth = np.array([log.true_value(p) for p in pols])
                r = select(log, pols, rho=0.1, seed=10_000 + s)  # R independent of the log, one per log
                width[name] = (truth.round(3).tolist(), r.width, r.certified)
                ok[name] += bool(truth[r.chosen] <= truth.min() + 0.05)
                raw = r.factor * r.s / r.rho_bound  # the ladder's width is raw * 2^(x/2), x uniform on [0, 1)
                exact[name] += np.mean([good_over_r(r.estimates, raw * 2 ** (x / 2), truth)
                                        for x in (np.arange(16) + 0.5) / 16]) / logs
                declared[name] += good_over_r(r.estimates, raw, truth) / logs
        for name in sets:
            print(f"{rows} rows, {name}: true values {width[name][0]}; grid width {width[name][1]:.3f}; certified "
                  f"{width[name][2]}; within 0.05 of the best in {ok[name]} of {logs} logs (over R, exactly: "
                  f"{exact[name]:.1%}; with min_rows declared: {declared[name]:.1%})")
        print(f"  ({time.perf_counter() - t:.0f} s)")
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
          f"{time.perf_counter() - t:.1f} s; rho_hat {m.rho_hat:.2f} [{m.rho_ci[0]:.3f}, {m.rho_ci[1]:.3f}]")


if __name__ == "__main__":
    main()
