"""Audit every certificate replify prints at the sizes the guide reports: measured rho-hat (exact 95%
interval) against the printed bound, with the adversarial internal learner and adversaries of
replify.experiments.audit. Not a speed benchmark: a measurement for the closing notes and docs/certificates.md.

Run:  python benchmarks/certificates.py [--pairs 1000] [--quick]
"""

import argparse
import time
import warnings

from replify.experiments.audit import audit_certificates
from replify.errors import BlockSizeWarning

parser = argparse.ArgumentParser()
parser.add_argument("--pairs", type=int, default=1000)
parser.add_argument("--quick", action="store_true")
args = parser.parse_args()
ns = [2, 64] if args.quick else [2, 64, 256, 1024]
T, B, rho = 20_000, 1_000, 0.1
print(f"T={T}, B={B}, rho={rho}, pairs={args.pairs}; eps = certified_eps(...) for each case")
print(f"{'case':<12}{'n':>6}  {'adversary':<14}{'bound':>7}  {'rho_hat':>8}  {'95% CI':<18}{'p-value':>10}  refuted")
for n in ns:
    start = time.perf_counter()
    for a in audit_certificates(["wrap-linf", "wrap-l1", "fllb", "ftplb-star"], n=n, horizon=T, rho=rho, block_size=B,
                                pairs=args.pairs, seed=1):
        lo, hi = a.rho_ci
        print(f"{a.case:<12}{n:>6}  {a.adversary:<14}{a.bound:>7.3f}  {a.rho_hat:>8.4f}  [{lo:.4f}, {hi:.4f}]  "
              f"{a.p_value:>10.3g}  {a.refuted()}")
    print(f"{'':<12}{'':>6}  ({time.perf_counter() - start:.1f} s)")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", BlockSizeWarning)
    (a,) = audit_certificates(["iid-experts"], n=10, horizon=5_000, rho=rho, block_size=1, pairs=args.pairs // 2, seed=1)
lo, hi = a.rho_ci
print(f"{a.case:<12}{10:>6}  {a.adversary:<14}{a.bound:>7.3f}  {a.rho_hat:>8.4f}  [{lo:.4f}, {hi:.4f}]  {a.p_value:>10.3g}  "
      f"{a.refuted()}  (T=5000, theorem parameters)")
