"""A policy learned from a log, replicably, measured: docs/offpolicy.md, "Learning a policy from a log".

    python benchmarks/offpolicy_learn.py [--logs 20] [--data wine digits]

wine (n = 3, block features, d = 42) and digits (n = 10, block features, d = 650) logged uniformly,
compact logs (exact in law) of 10^6, 10^7 and 10^8 rows: over --logs logs (seeds 0, 1, ...; R from the
same seed), the certified learned policy's true mistakes over uniform's, the same fit unrounded (not
replicable), the importance-weighted classifier's (scikit-learn, not replicable), the seconds each
fit took, and how often two independent logs (seeds 2k and 2k + 1, R shared) gave different
policies."""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import replify.datasets
from replify.errors import SmallSampleWarning
from replify.offpolicy import Log, learn_classifier, learn_policy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=int, default=20)
    ap.add_argument("--data", nargs="+", default=["wine", "digits"], choices=["wine", "digits"])
    args = ap.parse_args()
    warnings.simplefilter("ignore", SmallSampleWarning)
    d = replify.datasets.digits()
    for name, n, params in (("wine", 3, {}), ("digits", 10, {"features": d.features, "labels": d.labels})):
        if name not in args.data:
            continue
        for rows in (10**6, 10**7, 10**8):
            learned, unrounded, classifier, fit_s, clf_s, parted = [], [], [], [], [], 0
            for seed in range(args.logs):  # a loop over independent logs
                log = Log.simulate("classification-bandit", n=n, rows=rows, seed=seed, compact=True,
                                   adversary_params=params)
                uniform = float(log.mean(log.means.mean(axis=1)))
                t = time.perf_counter()
                pol = learn_policy(log, rho=0.1, seed=seed)
                fit_s.append(time.perf_counter() - t)
                t = time.perf_counter()
                clf = learn_classifier(log, seed=seed)
                clf_s.append(time.perf_counter() - t)
                learned.append(pol.true_value / uniform)
                unrounded.append(pol.unrounded_true_value / uniform)
                classifier.append(clf.true_value / uniform)
                if seed % 2 == 1:  # this log and the one before it: two logs of one system, R shared
                    other = Log.simulate("classification-bandit", n=n, rows=rows, seed=seed - 1, compact=True,
                                         adversary_params=params)
                    parted += not np.array_equal(learn_policy(other, rho=0.1, seed=seed).theta, pol.theta)
            print(f"{name:<6} {rows:.0e} rows: certified {np.mean(learned):.3f} x uniform's mistakes "
                  f"(range {np.min(learned):.3f}-{np.max(learned):.3f}), unrounded {np.mean(unrounded):.3f}, "
                  f"classifier {np.mean(classifier):.3f}; fit {np.mean(fit_s):.2f} s (classifier "
                  f"{np.mean(clf_s):.2f} s); pairs parted {parted} of {args.logs // 2}", flush=True)


if __name__ == "__main__":
    main()
