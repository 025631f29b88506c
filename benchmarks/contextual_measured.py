"""The rounded ridge's measured variance, centre and schedule, and the horizon planner, measured:
docs/contextual.md, "The measured variance, the centre and the schedule" and "How long a horizon".

    python benchmarks/contextual_measured.py [--pairs 20] [--skip-wrapped]

Mistakes over ``constant``'s (20 pairs from seed 1, rho = 0.1, the finite-support path), with the
plan of :func:`replify.planned_cost` beside each: rep-ridge on wine (n = 3, block features, d = 42)
and digits (n = 10, d = 650) in its declared form and in the measured form with 4 phases and 5%
exploration; the horizon :func:`replify.horizon_for` plans for digits at 0.8, checked by a run; and
the contextual conversion around a textbook LinUCB on wine (about 2 minutes a row)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "algorithms"))

import replify  # noqa: E402
import replify.datasets  # noqa: E402
from replify.components.rounded_ridge import ridge_parameters, support_of  # noqa: E402
from replify.conversions.contextual import conversion_parameters  # noqa: E402
from test_contextual_wrap import TextbookLinUCB  # noqa: E402

MEASURED = {"variance": "measured", "phases": 4, "explore": 0.05}


def constant_cost(seq) -> float:
    _, c, w = support_of(seq)
    return float(w @ c.mean(axis=1))  # the best policy makes no mistake


def row(label, learner, seq, n, horizon, pairs, planned, adversary_params, **kw):
    t = time.perf_counter()
    r = replify.evaluate(learner, "classification-bandit", n=n, horizon=horizon, pairs=pairs, seed=1, progress=False,
                         adversary_params=adversary_params, **kw)
    print(f"{label:<44} T={horizon:.2e}: {r.claim}, rho_hat {r.rho_hat:.2f}, mistakes / constant's "
          f"{r.regret.mean() / r.constant_regret.mean():.3f} (planned {planned:.3f}), {time.perf_counter() - t:.1f} s",
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--skip-wrapped", action="store_true")
    args = ap.parse_args()
    digits = replify.datasets.digits()
    data = {"wine": (3, {}), "digits": (10, {"features": digits.features, "labels": digits.labels})}
    for name, (n, params) in data.items():
        seq = replify.make_adversary("classification-bandit", n=n, horizon=10, seed=0, **params)
        constant = constant_cost(seq)
        horizons = (10**9, 10**10) if name == "wine" else (10**10, 10**12, 10**13)
        for form, schedule in (("declared", {}), ("measured, 4 phases, 5%", MEASURED)):
            for horizon in horizons:
                planned = replify.planned_cost(seq, ridge_parameters(horizon=horizon, n=n, rho=0.1, **schedule)) / constant
                row(f"rep-ridge {name} {form}", "rep-ridge", seq, n, horizon, args.pairs, planned, params, rho=0.1, **schedule)
        if name == "digits":
            t = time.perf_counter()
            plan = replify.horizon_for(seq, target=0.8 * constant, rho=0.1)
            print(f"horizon_for(digits, 0.8 x constant's): T = {plan.horizon:.3e}, planned {plan.cost / constant:.3f} "
                  f"({time.perf_counter() - t:.0f} s)")
            row("rep-ridge digits declared, at the plan", "rep-ridge", seq, n, plan.horizon, args.pairs,
                plan.cost / constant, params, rho=0.1)
    if args.skip_wrapped:
        return
    seq = replify.make_adversary("classification-bandit", n=3, horizon=10, seed=0)
    for horizon, phases in ((10**9, 4), (10**10, 4), (10**10, 5)):
        options = {"variance": "measured", "cost_center": 0.5, "cost_scale": 0.5, "phases": phases, "explore_share": 0.05}
        wrapped = replify.wrap(rho=0.1, **options)(TextbookLinUCB)
        schedule = conversion_parameters(horizon=horizon, n=3, rho=0.1, cost_center=0.5, cost_scale=0.5,
                                         variance="measured", phases=phases, explore=0.05)
        planned = replify.planned_cost(seq, schedule) / constant_cost(seq)
        row(f"wrap(LinUCB) wine measured, {phases} phases, 5%", wrapped, seq, 3, horizon, args.pairs, planned, {})


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
