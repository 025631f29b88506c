"""Linear and contextual bandits: the measurements behind docs/contextual.md. Not a speed benchmark
(benchmarks/bench.py holds the lane form's speed ratio and the 20-pairs-at-1e9 time).

1. The issue's linear instance: linear-gaussian, d = 5, n = 20 fixed arms and θ drawn on the unit
   sphere, noise σ = 0.1. Pseudo-regret over uniform exploration's (exact: T·(mean μ − min μ)) for
   linucb at T = 1e5 and for the certified rep-linear-elimination (ρ = 0.1, told σ = 0.1; and at its
   default σ = 1/2, which holds for any noise of that scale) at T = 1e6 … 1e9.
2. linucb against mabwiser's LinUCB (if importable: pip install mabwiser beside replify, in an
   environment of its own) on the same instance: with one model per arm and a constant context,
   mabwiser's LinUCB and replify's linucb(model="disjoint", beta=alpha) on unit features are one
   algorithm (the same ridge statistics, the same width), so their regrets must agree within their
   intervals. mabwiser maximises rewards: it is given −cost.
3. Real data: the wine classification bandit (replify.datasets.wine, classification-bandit), every
   learner side by side with ρ̂ and mistakes (regret against the best policy, which pays 0).
4. rep-ridge, certified (ρ = 0.1), where it can learn: linear-bernoulli with features on the sphere
   (d = 5, n = 10, T = 1e6), on three instances (θ drawn from seeds 1, 2, 3), 10 pairs each.

Run:  python benchmarks/contextual.py [--pairs 50] [--skip-real] [--only-ridge]
"""

import argparse
import time
import warnings

import numpy as np

import replify
from replify.errors import ReplifyWarning
from replify.evaluation.stats import t_interval

parser = argparse.ArgumentParser()
parser.add_argument("--pairs", type=int, default=50)
parser.add_argument("--skip-real", action="store_true")
parser.add_argument("--mabwiser-steps", type=int, default=10_000)
parser.add_argument("--only-ridge", action="store_true", help="section 4 only")
args = parser.parse_args()
warnings.simplefilter("ignore", ReplifyWarning)


def instance(T):
    return replify.make_adversary("linear-gaussian", n=20, horizon=T, seed=0, d=5)


def uniform_pseudo(seq, T):
    means = seq.piece_means[0]
    return T * (means.mean() - means.min())


def row(label, report, uniform=None, seconds=None):
    lo, hi = report.rho_ci
    p = report.pseudo_regret_mean
    plo, phi = report.pseudo_regret_ci
    ratio = (f" [{plo:.4g}, {phi:.4g}]" if uniform is None
             else f"  {p / uniform:.4f} [{plo / uniform:.4f}, {phi / uniform:.4f}] x uniform")
    took = "" if seconds is None else f"  ({seconds:.1f} s)"
    print(f"  {label:<48} rho_hat {report.rho_hat:.3f} [{lo:.3f}, {hi:.3f}]  pseudo-regret {p:.4g}{ratio}{took}")


def ridge_section():
    print("\n4. rep-ridge rho=0.1 (certified) on linear-bernoulli, features on the sphere, d=5, n=10, T=1e6")
    T = 10**6
    for instance in (1, 2, 3):
        seq = replify.make_adversary("linear-bernoulli", n=10, horizon=T, seed=instance, d=5, contexts="sphere")
        start = time.perf_counter()
        r = replify.evaluate("rep-ridge", seq, n=10, horizon=T, pairs=10, seed=0, rho=0.1, progress=False)
        u = replify.evaluate("constant", seq, n=10, horizon=T, pairs=10, seed=0, progress=False).pseudo_regret_mean
        row(f"instance {instance} (constant: {u:.4g})", r, u, time.perf_counter() - start)


if args.only_ridge:
    ridge_section()
    raise SystemExit

print("1. linear-gaussian, d=5, n=20 fixed unit arms, unit theta, sigma=0.1 (seed 0)")
T = 10**5
seq = instance(T)
u = uniform_pseudo(seq, T)
for label, kw in [("linucb (OFUL radius)", {}), ("linucb beta=1", {"beta": 1.0}), ("linucb beta=0.5", {"beta": 0.5})]:
    start = time.perf_counter()
    r = replify.evaluate("linucb", seq, n=20, horizon=T, pairs=args.pairs, seed=1, progress=False, **kw)
    row(f"{label}, T=1e5", r, u, time.perf_counter() - start)
for T in (10**6, 10**7, 10**8, 10**9):
    seq = instance(T)
    u = uniform_pseudo(seq, T)
    for sigma in (0.1, None):
        kw = {} if sigma is None else {"sigma": sigma}
        start = time.perf_counter()
        r = replify.evaluate("rep-linear-elimination", seq, n=20, horizon=T, pairs=args.pairs, seed=1, rho=0.1,
                             progress=False, **kw)
        label = f"rep-linear-elimination rho=0.1 sigma={sigma or 0.5}, T=1e{int(np.log10(T))}"
        row(label + ("" if r.certified else " NOT certified"), r, u, time.perf_counter() - start)

print("\n2. linucb (model='disjoint', beta=1) against mabwiser's LinUCB(alpha=1), constant context")
try:
    from mabwiser.mab import MAB, LearningPolicy
except ImportError:
    MAB = None
    print("  mabwiser is not installed here: pip install mabwiser (in an environment of its own) to compare")
if MAB is not None:
    T, runs = args.mabwiser_steps, 10
    seq = instance(T)
    ours = replify.evaluate("linucb", seq, n=20, horizon=T, pairs=runs, seed=2, progress=False, model="disjoint",
                            beta=1.0)
    regrets = []
    for k in range(runs):
        rng = np.random.default_rng(100 + k)
        _, costs, means = seq.sample_contexts(rng, 0, T)
        mab = MAB(arms=list(range(20)), learning_policy=LearningPolicy.LinUCB(alpha=1.0, l2_lambda=1.0), seed=k)
        mab.fit(decisions=[0], rewards=[0.0], contexts=[[0.0]])  # an empty start: a zero context adds nothing
        paid = 0.0
        for t in range(T):
            a = int(mab.predict([[1.0]]))
            paid += means[t, a]
            mab.partial_fit([a], [-costs[t, a]], [[1.0]])
        regrets.append(paid - T * means[0].min())
    mlo, mhi = t_interval(np.array(regrets))
    olo, ohi = ours.pseudo_regret_ci
    print(f"  replify linucb: pseudo-regret {ours.pseudo_regret_mean:.1f} [{olo:.1f}, {ohi:.1f}] ({2 * runs} runs)")
    print(f"  mabwiser LinUCB: pseudo-regret {np.mean(regrets):.1f} [{mlo:.1f}, {mhi:.1f}] ({runs} runs, T={T})")
    print(f"  the intervals {'overlap' if max(olo, mlo) <= min(ohi, mhi) else 'DO NOT overlap'}")

if not args.skip_real:
    print("\n3. wine as a contextual bandit (classification-bandit, n=3 classes, T=1e4): mistakes per run")
    T = 10**4
    for label, name, kw, features in [
        ("constant", "constant", {}, "blocks"),
        ("linucb beta=0.5", "linucb", {"beta": 0.5}, "blocks"),
        ("linucb disjoint beta=0.5", "linucb", {"beta": 0.5, "model": "disjoint"}, "same"),
        ("lin-ts", "lin-ts", {}, "blocks"),
        ("lin-eps-greedy", "lin-eps-greedy", {}, "blocks"),
        ("rep-ridge rho=0.1 (certified)", "rep-ridge", {"rho": 0.1}, "blocks"),
        ("rep-ridge rho=0.1 grid_scale=0.001 (measured)", "rep-ridge", {"rho": 0.1, "grid_scale": 0.001}, "blocks"),
    ]:
        start = time.perf_counter()
        r = replify.evaluate(name, "classification-bandit", n=3, horizon=T, pairs=args.pairs, seed=3, progress=False,
                             adversary_params={"features_as": features}, **kw)
        row(label, r, None, time.perf_counter() - start)

ridge_section()
