"""Audit replicability on real data: half-hourly electricity demand in England and Wales
(Taylor 2003) with a bank of nine forecasters as experts (``replify.datasets.electricity``, from
the ``data`` extra), resampled by the ``local-bootstrap`` adversary (each step draws a row
within a day of it; the two runs of a pair see two independent resamplings).

FTPLB* at the theorem's parameters (certified: its guarantee is a proof) and at calibrated ones
(tested on the stress suite at this T and n: measured) beside ``hedge`` and ``ewa`` (not
replicable) and ``constant`` (replicable, learns nothing). Every number is measured on this
adversary, with its interval.

    python examples/real_data_audit.py            # about a minute on 2 cores; writes docs/real_data.png
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import attrs

import replify
from replify.datasets import electricity
from replify.plots import plot_tradeoff

DOCS = Path(__file__).resolve().parents[1] / "docs"


def audit(*, horizon: int | None = None, pairs: int = 200, rho: float = 0.1, window: int = 48, seed: int = 0,
          knobs: dict | None = None) -> list:
    """The reports of every learner on the local bootstrap of the electricity experts' costs
    (their first ``horizon`` steps when given). The calibrated knobs are ``knobs`` when given
    (an earlier ``replify calibrate`` run's), else :func:`replify.calibrate` finds them here."""
    data = electricity()
    if horizon is not None:  # the first horizon steps: the same dataset, shorter
        data = attrs.evolve(data, costs=data.costs[:horizon], steps=data.steps[:horizon])
    T, n = data.costs.shape
    # the dataset's name goes with its costs: figures say "electricity", not "local-bootstrap"
    kw = dict(n=n, horizon=T, pairs=pairs, seed=seed, adversary_params=data.bootstrap(window=window))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", replify.errors.BlockSizeWarning)  # at this T the theorem's B is large
        certified = replify.evaluate("ftplb-star", "local-bootstrap", rho=rho, label="ftplb-star (certified)", **kw)
    if knobs is None:
        knobs = replify.calibrate("ftplb-star", n=n, horizon=T, rho=rho, seed=seed).knobs
    with warnings.catch_warnings():  # calibrated knobs are measured, not certified: the report says so too
        warnings.simplefilter("ignore", replify.errors.ReplicabilityWarning)
        calibrated = replify.evaluate("ftplb-star", "local-bootstrap", rho=rho, label="ftplb-star (calibrated)",
                                      **knobs, **kw)
    return [
        certified,
        calibrated,
        replify.evaluate("constant", "local-bootstrap", rho=rho, **kw),
        replify.evaluate("hedge", "local-bootstrap", **kw),
        replify.evaluate("ewa", "local-bootstrap", **kw),
    ]


def table(reports: list) -> str:
    lines = [f"{'learner':26s} {'rho_hat [exact 95%]':>22s} {'regret [95% t]':>26s}"]
    for r in reports:
        lo, hi = r.rho_ci
        rlo, rhi = r.regret_ci
        lines.append(f"{r.learner:26s} {r.rho_hat:6.3f} [{lo:5.3f}, {hi:5.3f}] {r.regret_mean:9.1f} [{rlo:7.1f}, {rhi:7.1f}]")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=200)
    p.add_argument("--horizon", type=int, default=None, help="only the first T steps of the data")
    p.add_argument("--out", type=Path, default=DOCS / "real_data.png")
    args = p.parse_args(argv)
    reports = audit(horizon=args.horizon, pairs=args.pairs)
    print(table(reports))
    plot_tradeoff(reports, path=args.out)
    print(f"figure: {args.out}")
    return reports


if __name__ == "__main__":
    main()
