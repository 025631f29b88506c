"""What the certificates cost in regret: every certified full-information learner at its defaults
(replify.make(name, n=10, horizon=T, rho=0.1)), pseudo-regret divided by constant's on the same
draws (its mean over pairs, with the ratio's 95% interval from the two t intervals' ends), on the
README's spread (iid Bernoulli, means 0.3..0.7) and on instances with means drawn at random in
[0.25, 0.75]. Not a speed benchmark: the measurement behind docs/claims.md, "The price of a
certificate". Every learner must report certified=True (the run stops otherwise).

Run:  python benchmarks/certified_learners.py [--pairs 200] [--random 3]
"""

import argparse
import time
import warnings

import numpy as np

import replify
from replify.errors import ReplifyWarning

parser = argparse.ArgumentParser()
parser.add_argument("--pairs", type=int, default=200)
parser.add_argument("--random", type=int, default=3, help="random instances at T = 1e6")
parser.add_argument("--horizons", type=float, nargs="*", default=[1e5, 1e6, 1e7])
args = parser.parse_args()
n, rho = 10, 0.1
LEARNERS = ("perturbed-commit", "race-hedge", "split-commit", "ftplb-star", "iid-experts", "fllb")


def ratio(name, T, means, seed):
    kw = dict(n=n, horizon=T, pairs=args.pairs, seed=seed, adversary_params={"means": means})
    base = replify.evaluate("constant", "iid-bernoulli", **kw)
    r = replify.evaluate(name, "iid-bernoulli", rho=rho, **kw)
    assert r.certified, f"{name} at T={T} is not certified"
    lo, hi = r.pseudo_regret_ci
    blo, bhi = base.pseudo_regret_ci
    return r.pseudo_regret_mean / base.pseudo_regret_mean, (lo / bhi, hi / blo), r.rho_hat


print(f"n={n}, rho={rho}, {args.pairs} pairs; pseudo-regret / constant's on the same draws (95% interval); rho_hat")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ReplifyWarning)
    spread = np.linspace(0.3, 0.7, n)
    for T in (int(t) for t in args.horizons):
        for name in LEARNERS:
            if name == "fllb":
                continue  # an OLO learner: on experts its certificate needs the simplex's action set
            start = time.perf_counter()
            x, (lo, hi), rho_hat = ratio(name, T, spread, 0)
            print(f"spread  T={T:<9} {name:<13} {x:.3f} [{lo:.3f}, {hi:.3f}]  rho_hat={rho_hat:.3f}  "
                  f"({time.perf_counter() - start:.1f} s)")
    rng = np.random.default_rng(2026)
    for k in range(args.random):
        means = rng.uniform(0.25, 0.75, n)
        for name in ("perturbed-commit", "race-hedge", "split-commit", "ftplb-star", "iid-experts"):
            x, (lo, hi), rho_hat = ratio(name, 10**6, means, k + 1)
            print(f"random{k} T=1000000   {name:<13} {x:.3f} [{lo:.3f}, {hi:.3f}]  rho_hat={rho_hat:.3f}")
