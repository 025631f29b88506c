"""The adversarial lower bound with n = 2^m experts (paper §7, thm:lower_bound_vanilla_replicability_experts).

Run:  python examples/demo_phases.py [--quick]

The adversary plays m = log2(n) phases of T/m steps. In each phase a coin decides between the two
halves of the experts still alive; the losing half is out (it costs 1 from then on) and the next
phase plays the same game inside the winning half. Each phase costs a replicable learner about
sqrt(T/m)/rho, so m phases cost about sqrt(T m)/rho = sqrt(T log n)/rho. Every choice of the
adversary (the m signs) is made from its own random stream before any cost is drawn: it is oblivious.
"""

import math
import sys

import replify

QUICK = "--quick" in sys.argv
T, rho = (8_000 if QUICK else 64_000), 0.1
for n in ([2, 4, 8] if QUICK else [2, 4, 8, 16, 32, 64]):
    m = int(math.log2(n))
    tau = min(0.24, 1 / (rho * math.sqrt(T / m)))  # each phase's coin, at the bound's tau for T/m steps
    B = max(1, T // m // 4)  # four blocks per phase
    eps = replify.certified_eps("ftplb-star", horizon=T, n=n, rho=rho, block_size=B)
    report = replify.evaluate("ftplb-star", "coin-phases", n=n, horizon=T, pairs=20 if QUICK else 100, seed=0,
                              rho=rho, block_size=B, eps=eps, adversary_params={"tau": tau})
    ref = math.sqrt(T * math.log(n)) / rho
    print(f"n={n:<3} regret {report.regret_mean:9.1f}  sqrt(T ln n)/rho {ref:8.1f}  ratio {report.regret_mean / ref:.2f}  "
          f"rho_hat {report.rho_hat:.3f}")
