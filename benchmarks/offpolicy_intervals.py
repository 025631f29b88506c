"""Coverage of the off-policy intervals: docs/offpolicy.md, "Intervals you can stake a decision on".

    python benchmarks/offpolicy_intervals.py [--logs 1000] [--bootstrap-logs 200]

On three instances — wine (features_as="same") logged uniformly (smallest propensity 1/3); wine
logged epsilon-greedily on a rule that disagrees with the target, smallest propensity 0.005; digits
(10 arms) logged epsilon-greedily, smallest propensity 0.02 — the fraction of independent logs
(compact: exact in law) whose 95% interval for the target rule's IPS estimate covers its true value,
at 200, 10^3, 10^4 and 10^5 rows: the finite-sample (empirical Bernstein) interval, the normal one
beside it, and the bootstrap on fewer logs (it resamples each log 2 000 times)."""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import replify.datasets
from replify.errors import SmallSampleWarning
from replify.offpolicy import Log, epsilon_greedy, estimate


def wine_rule(x):
    return np.where(x[:, 0, 1] > 0, 0, 1)  # high alcohol: cultivar 0, else 1 (features_as="same": (1, z))


def wine_other(x):
    s = np.zeros((x.shape[0], 3))
    s[np.arange(x.shape[0]), np.where(x[:, 0, 1] > 0, 2, 0)] = -1.0  # the logger prefers another cultivar
    return s


def digits_rule(x):
    return np.argmax(x[:, 0, 1:11], axis=1)  # the arm of the largest of the first ten pixels' columns


def digits_other(x):
    return x[:, 0, 1:11]  # the logger prefers the arm of the least


def instances():
    d = replify.datasets.digits()
    return [
        ("wine, uniform logging (p_min 1/3)", "classification-bandit", 3, {"features_as": "same"}, "uniform", wine_rule),
        ("wine, epsilon-greedy (p_min 0.005)", "classification-bandit", 3, {"features_as": "same"},
         epsilon_greedy(wine_other, 0.015, 3), wine_rule),
        ("digits, epsilon-greedy (p_min 0.02)", "classification-bandit", 10,
         {"features_as": "same", "features": d.features, "labels": d.labels}, epsilon_greedy(digits_other, 0.2, 10),
         digits_rule),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=int, default=1000)
    ap.add_argument("--bootstrap-logs", type=int, default=200)
    args = ap.parse_args()
    warnings.simplefilter("ignore", SmallSampleWarning)  # the normal interval's caveat: its coverage is measured here
    for label, adversary, n, params, logging, rule in instances():
        for rows in (200, 10**3, 10**4, 10**5):
            t = time.perf_counter()
            covered = {"bernstein": 0, "normal": 0, "bootstrap": 0}
            widths = {"bernstein": [], "normal": []}
            for seed in range(args.logs):  # a loop over independent logs
                log = Log.simulate(adversary, n=n, rows=rows, seed=seed, logging=logging, adversary_params=params,
                                   compact=True)
                for how in ("bernstein", "normal") + (("bootstrap",) if seed < args.bootstrap_logs else ()):
                    e = estimate(log, rule, "ips", interval=how, seed=seed if how == "bootstrap" else None)
                    covered[how] += bool(e.covers)
                    if how in widths:
                        widths[how].append(e.interval[1] - e.interval[0])
            print(f"{label:<38} {rows:>7} rows: bernstein {covered['bernstein'] / args.logs:.3f} "
                  f"(width {np.mean(widths['bernstein']):.3g}), normal {covered['normal'] / args.logs:.3f} "
                  f"(width {np.mean(widths['normal']):.3g}), bootstrap {covered['bootstrap'] / args.bootstrap_logs:.3f} "
                  f"({args.bootstrap_logs} logs); {time.perf_counter() - t:.0f} s", flush=True)


if __name__ == "__main__":
    main()
