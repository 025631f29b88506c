"""What an adversarial certificate costs under bandit feedback: perturbed-bandit at its defaults
(replify.make("perturbed-bandit", n=10, horizon=T, rho=0.1)), and with switches=S (the schedule of least
regret bound against comparators that switch S times: 1, the instance's own 3, and an overestimate, 10), on
switching-bernoulli with four pieces whose best arm changes (the means 0.3..0.7 rotated by three arms a piece), pseudo-regret
over uniform exploration's on the same draws (constant: one arm drawn at random, which is uniform
exploration in expectation), with the ratio's interval from the two t intervals' ends; beside it
the full-information perturbed-commit on the same instance and Exp3 (not replicable) where it
runs in reasonable time. Not a speed benchmark: the measurement behind docs/bandits.md, "Against
any oblivious adversary".

The last line: the default and switches=1 on stationary (iid) costs, the README's spread, at T = 1e9.

Run:  python benchmarks/adversarial_bandits.py [--pairs 20] [--horizons 1e5 1e6 ... 1e10]
"""

import argparse
import time
import warnings

import numpy as np

import replify
from replify.errors import ReplifyWarning

parser = argparse.ArgumentParser()
parser.add_argument("--pairs", type=int, default=20)
parser.add_argument("--horizons", type=float, nargs="*", default=[1e5, 1e6, 1e7, 1e8, 1e9, 1e10])
parser.add_argument("--exp3-up-to", type=float, default=1e6, help="Exp3 steps every run: skipped above this T")
args = parser.parse_args()
n = 10
means = [np.roll(np.linspace(0.3, 0.7, n), 3 * p).tolist() for p in range(4)]

with warnings.catch_warnings():
    warnings.simplefilter("ignore", ReplifyWarning)
    for T in (int(t) for t in args.horizons):
        kw = dict(n=n, horizon=T, pairs=args.pairs, seed=0,
                  adversary_params={"means": means, "switch_at": [T // 4, T // 2, 3 * T // 4]})
        start = time.perf_counter()
        uniform = replify.evaluate("constant", "switching-bernoulli", **kw)
        blo, bhi = uniform.pseudo_regret_ci
        row = [f"T={T:<12} uniform R/T={uniform.pseudo_regret_mean / T:.4f}"]
        for name, extra in (("perturbed-bandit", {}), ("perturbed-bandit", {"switches": 1}),
                            ("perturbed-bandit", {"switches": 3}), ("perturbed-bandit", {"switches": 10}),
                            ("perturbed-commit", {})):
            r = replify.evaluate(name, "switching-bernoulli", rho=0.1, learner_params=extra, **kw)
            assert r.certified, f"{name} at T={T} is not certified"
            lo, hi = r.pseudo_regret_ci
            label = name + "".join(f" {k}={v}" for k, v in extra.items())
            row.append(f"{label} {r.pseudo_regret_mean / uniform.pseudo_regret_mean:.3f} [{lo / bhi:.3f}, {hi / blo:.3f}] "
                       f"rho_hat={r.rho_hat:.2f}")
        if T <= args.exp3_up_to:
            r = replify.evaluate("exp3", "switching-bernoulli", **kw)
            row.append(f"exp3 {r.pseudo_regret_mean / uniform.pseudo_regret_mean:.3f}")
        bound = replify.learners()["exp3"].regret_bound_for(horizon=T, n=n, params={})[0]
        row.append(f"exp3's regret bound {bound / uniform.pseudo_regret_mean:.4f}")
        print(" | ".join(row) + f"  ({time.perf_counter() - start:.1f} s)", flush=True)
    # what restarts cost on stationary costs: the README's spread, iid
    T = 10**9
    kw = dict(n=n, horizon=T, pairs=args.pairs, seed=0, adversary_params={"means": np.linspace(0.3, 0.7, n)})
    uniform = replify.evaluate("constant", "iid-bernoulli", **kw)
    row = [f"iid spread T={T}"]
    for extra in ({}, {"switches": 1}):
        r = replify.evaluate("perturbed-bandit", "iid-bernoulli", rho=0.1, learner_params=extra, **kw)
        row.append(f"perturbed-bandit {extra or 'defaults'} {r.pseudo_regret_mean / uniform.pseudo_regret_mean:.3f}")
    print(" | ".join(row))
