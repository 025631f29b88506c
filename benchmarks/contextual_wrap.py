"""The contextual conversion (``replify.wrap`` on a contextual learner) measured: docs/contextual.md,
"Your own contextual learner made replicable" and "Contexts of finite support".

    python benchmarks/contextual_wrap.py [--pairs 20]

A textbook shared-model LinUCB (the class of tests/algorithms/test_contextual_wrap.py) wrapped with
rho=0.1 and nothing else: pseudo-regret over uniform exploration's on linear-gaussian (d = 5, n = 20
fixed unit arms, sigma = 0.1; the instance built from seed 0) at T = 1e6..1e8 (the block-sum path),
and mistakes over constant's on wine (classification-bandit) at T = 1e7..1e10 (the finite-support
path); pairs from seed 1, seconds per row."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "algorithms"))

import replify  # noqa: E402
from test_contextual_wrap import TextbookLinUCB  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=20)
    pairs = ap.parse_args().pairs
    wrapped = replify.wrap(rho=0.1)(TextbookLinUCB)
    for T in (10**6, 10**7, 10**8):
        inst = replify.make_adversary("linear-gaussian", n=20, horizon=T, seed=0, d=5)
        uniform = T * (inst.piece_means[0].mean() - inst.piece_means[0].min())
        t = time.perf_counter()
        r = replify.evaluate(wrapped, inst, n=20, horizon=T, pairs=pairs, seed=1, progress=False)
        print(f"linear-gaussian T={T:.0e}: {r.claim}, rho_hat {r.rho_hat:.2f} {r.rho_ci}, pseudo-regret / uniform "
              f"{r.pseudo_regret_mean / uniform:.3f}, {time.perf_counter() - t:.1f} s")
    for T in (10**7, 10**8, 10**9, 10**10):
        t = time.perf_counter()
        r = replify.evaluate(wrapped, "classification-bandit", n=3, horizon=T, pairs=pairs, seed=1, progress=False)
        print(f"wine T={T:.0e}: {r.claim}, rho_hat {r.rho_hat:.2f} {r.rho_ci}, mistakes / constant's "
              f"{r.regret.mean() / r.constant_regret.mean():.3f}, {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
