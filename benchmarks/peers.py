"""Peers' contextual learners (river, mabwiser) beside replify's, measured inside replify on the same
instances: docs/contextual.md, "Peers' policies inside replify".

    python benchmarks/peers.py [--horizon 1000] [--pairs 10]

Instances: ``linear-gaussian`` (d = 5, n = 20 fixed unit arms, sigma = 0.1; the instance built from
seed 0) and ``classification-bandit`` (wine, n = 3; ``features_as="same"``, every arm shown the
row, for the one-model-per-arm learners). Pairs from seed 1. Prints pseudo-regret (linear) or
mistakes (wine), rho_hat with its exact 95% interval, and microseconds per step (wall time over
every step of every run: machine-dependent)."""

from __future__ import annotations

import argparse
import functools
import time

import replify
from replify_plugins.peers import MabwiserPolicy, RiverPolicy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=int, default=1000)
    ap.add_argument("--pairs", type=int, default=10)
    args = ap.parse_args()
    T, pairs = args.horizon, args.pairs
    linear = replify.make_adversary("linear-gaussian", n=20, horizon=T, seed=0, d=5)
    learners = [
        ("river LinUCBDisjoint (alpha=1)", RiverPolicy, {}),
        ("mabwiser LinUCB (alpha=1)", functools.partial(MabwiserPolicy, alpha=1.0), {}),
        ("replify linucb, disjoint, beta=1", "linucb", {"model": "disjoint", "beta": 1.0}),
        ("replify linucb, shared, beta=1", "linucb", {"beta": 1.0}),
        ("replify rep-ridge, rho=0.1", "rep-ridge", {"rho": 0.1}),
        ("replify.wrap(river LinUCBDisjoint), rho=0.1", replify.wrap(rho=0.1)(RiverPolicy), {}),
    ]
    print(f"T={T}, {pairs} pairs, seed 1")
    print(f"{'learner':<46} {'instance':<16} {'regret':>10} {'rho_hat [95%]':>22} {'us/step':>9}")
    for label, learner, kw in learners:
        for name, adversary, n, params in (("linear-gaussian", linear, 20, {}),
                                           ("wine", "classification-bandit", 3, {"features_as": "same"})):
            if label.endswith("shared, beta=1") and name == "wine":
                params = {}  # the shared model reads the block features e_a (x) (1, z)
            if "rep-ridge" in label and name != "wine":
                continue  # costs in [0, 1] only (linear-gaussian's are any real)
            t = time.perf_counter()
            r = replify.evaluate(learner, adversary, n=n, horizon=T, pairs=pairs, seed=1, progress=False,
                                 adversary_params=params, **kw)
            us = (time.perf_counter() - t) / (2 * pairs * T) * 1e6
            lo, hi = r.rho_ci
            print(f"{label:<46} {name:<16} {r.pseudo_regret_mean:>10.1f} {r.rho_hat:>6.2f} [{lo:.2f}, {hi:.2f}]"
                  f"{'':>4} {us:>9.1f}  {r.claim}")


if __name__ == "__main__":
    main()
