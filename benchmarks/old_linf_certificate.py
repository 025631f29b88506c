"""The paper's original l-infinity certificate (the l1 radius of lemma:concentration_in_ell_1_norm applied to
costs in [-1, 1]^n) against the adversarial audit: it prints 0.1; this measures rho-hat. Run: python benchmarks/old_linf_certificate.py"""
import math, replify
from replify.experiments.audit import HistoryHash
T, rho, B, pairs = 20_000, 0.1, 1_000, 1000
for n in [64, 256, 1024]:
    m_old = (math.sqrt(2 * math.log(4 * T / rho) / n) + 2) * math.sqrt(n * T)
    gamma_old = math.exp(-((m_old / math.sqrt(n * T) - 2) ** 2) * n / 2)
    eps_old = (rho / (T // B - 1) / 2 - gamma_old) / m_old
    r = replify.evaluate(lambda s: replify.wrap(HistoryHash, n=n, horizon=T, rho=rho, seed=s, norm="linf", block_size=B, eps=eps_old),
                         "random-signs", n=n, horizon=T, pairs=pairs, seed=1)
    print(n, "old eps", eps_old, "new eps", replify.certified_eps(horizon=T, n=n, rho=rho, block_size=B, norm="linf"), "old printed 0.1 -> rho_hat", r.rho_hat, r.rho_ci)
