"""The coin lower bound (paper §7, thm:lower_bound_n=2_vanilla_replicability_experts), by hand.

Run:  python examples/demo_coin.py [--quick]

The proof embeds a coin of bias 1/2 ± tau into two experts: c_t = (coin_t, 1 - coin_t). A learner
with low regret plays the cheaper expert most of the time, so the majority of its actions tells
the coin's bias (the decoder). A rho-replicable learner that decodes would decide the coin
replicably, and the coin lemma says that needs tau >~ 1/(rho sqrt(T)). So on some tau every
rho-replicable learner pays regret >~ min(sqrt(T)/rho, T/64).

This script measures that frontier for FTPLB* at parameters that certify rho: its worst regret over
a grid of tau, and whether it decodes the coin at all (its decoder's success at the largest tau).
Beside it, the two reference rows: constant (replicable, never learns) and hedge (learns, not
replicable). `replify demo coin` runs the same with more learners and plots it.
"""

import math
import sys

import numpy as np

import replify
from replify.experiments.lower_bounds import coin_reduction

QUICK = "--quick" in sys.argv
T = 4_000 if QUICK else 200_000
PAIRS = 20 if QUICK else 40
TAUS = np.geomspace(0.5 / math.sqrt(T), 0.24, 4 if QUICK else 6)


def frontier(learner, **kw):
    """Worst regret over the tau grid, the decoder's success at the largest tau, the largest rho_hat."""
    runs = [coin_reduction(learner, horizon=T, pairs=PAIRS, seed=0, tau=float(tau), **kw) for tau in TAUS]
    return max(r.regret_mean for r in runs), runs[-1].success_rate, max(r.rho_hat for r in runs)


print(f"T={T}, {PAIRS} pairs per sign and tau, taus {np.round(TAUS, 4).tolist()}")
for rho in ([0.1, 0.3] if QUICK else [0.05, 0.1, 0.2, 0.4]):
    B = T // 8  # 8 blocks, and the largest eps FTPLB*'s replicability proof certifies at that block size
    eps = replify.certified_eps("ftplb-star", horizon=T, n=2, rho=rho, block_size=B)
    worst, success, rho_hat = frontier("ftplb-star", rho=rho, block_size=B, eps=eps)
    print(f"ftplb-star  certified rho={rho:<5} worst regret {worst:9.1f}  min(sqrt(T)/rho, T/64) "
          f"{min(math.sqrt(T) / rho, T / 64):8.1f}  decoder success {success:.2f}  max rho_hat {rho_hat:.3f}")
for name in ("constant", "hedge"):
    worst, success, rho_hat = frontier(name)
    print(f"{name:<10} (reference)        worst regret {worst:9.1f}  decoder success {success:.2f}  max rho_hat {rho_hat:.3f}")
