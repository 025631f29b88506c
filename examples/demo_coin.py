"""The coin lower bound (paper §7, thm:lower_bound_n=2_vanilla_replicability_experts), by hand.

Run:  python examples/demo_coin.py [--quick]

The proof embeds a coin of bias 1/2 ± tau into two experts: c_t = (coin_t, 1 - coin_t). A learner
with low regret must play the cheaper expert most of the time, so the majority of its actions
tells the coin's bias. A rho-replicable learner would then decide the coin replicably — and the
coin lemma says that needs tau >~ 1/(rho sqrt(T)). So at tau = 1/(rho sqrt(T)) a replicable
learner cannot tell the better expert, and pays regret ~ tau T = sqrt(T)/rho.
"""

import math
import sys

import replify
from replify.lower_bounds import coin_reduction

QUICK = "--quick" in sys.argv
T = 4_000 if QUICK else 40_000
PAIRS = 30 if QUICK else 150

for rho in ([0.1, 0.3] if QUICK else [0.05, 0.1, 0.2, 0.4]):
    tau = min(0.24, 1 / (rho * math.sqrt(T)))  # where the lower bound binds (its constant taken as 1)
    # FTPLB* with 8 blocks and the largest eps its replicability proof certifies at that block size.
    B = T // 8
    eps = replify.certified_eps("ftplb-star", horizon=T, n=2, rho=rho, block_size=B)
    red = coin_reduction("ftplb-star", horizon=T, pairs=PAIRS, seed=0, tau=tau, rho=rho, block_size=B, eps=eps)
    print(
        f"rho={rho:<5} tau={tau:.4f}  regret {red.regret_mean:8.1f} vs sqrt(T)/rho {math.sqrt(T) / rho:8.1f}  "
        f"rho_hat {red.rho_hat:.3f} {tuple(round(x, 3) for x in red.rho_ci)}  decoder success {red.success_rate:.2f}"
    )

# For contrast: a learner that is not replicable (Hedge) has small regret on the same coin, and
# its actions decode the bias almost surely — which is exactly why it cannot be replicable.
red = coin_reduction("hedge", horizon=T, pairs=PAIRS, seed=0, tau=min(0.24, 1 / (0.1 * math.sqrt(T))))
print(f"hedge (not replicable): regret {red.regret_mean:.1f}, rho_hat {red.rho_hat:.2f}, decoder success {red.success_rate:.2f}")
