"""A log larger than memory, measured: docs/offpolicy.md, "Logs larger than memory".

    python benchmarks/offpolicy_stream.py [--rows 100000000] [--folder /tmp/replify-log] [--skip-dask]

Writes (once) a partitioned Parquet log of --rows rows in 10 files — 10 arms, 10 features (float32),
a softmax logging policy whose propensities are recorded, Bernoulli costs of a linear model — then
estimates 8 linear policies by every estimator (a linear cost model given, lam fixed: switch-dr 20,
dros 20, sg-ips 0.1) and makes the certified choice among them (rho = 0.1) in one pass over chunks of
250 000 rows, printing the time and the process's peak memory; then the same on a Dask local cluster
(2 worker processes), and the largest difference between the two passes' values and interval ends."""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np

from replify.offpolicy.stream import compare_dask, compare_stream, parquet_chunks

ARMS, FEATURES = 10, 10
COST_W = np.random.default_rng(0).normal(size=(FEATURES, ARMS)) / np.sqrt(FEATURES)
LOG_W = np.random.default_rng(1).normal(size=(FEATURES, ARMS))
POLICY_W = np.random.default_rng(2).normal(size=(8, FEATURES, ARMS))
ESTIMATORS = ["ips", "snips", "dm", "dr", "sndr", "switch-dr", "dros", "sg-ips"]
LAMS = {"switch-dr": 20.0, "dros": 20.0, "sg-ips": 0.1}


def model(x):
    """The cost model: the costs' own linear means, clipped to [0, 1] (given, not fitted on the log)."""
    return np.clip(0.5 + 0.25 * (x @ COST_W), 0.0, 1.0)


def make_policy(k):
    def policy(x):
        return np.argmin(x @ POLICY_W[k], axis=1)
    return policy


def write(folder: Path, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(3)
    per_file, group = rows // 10, min(10**6, rows // 10)
    for f in range(10):  # a loop over the files, each written in row groups
        with pq.ParquetWriter(folder / f"part-{f}.parquet", schema=None or _schema(pa)) as out:
            for _ in range(per_file // group):
                x = rng.normal(size=(group, FEATURES)).astype(np.float32)
                s = x @ LOG_W
                p = np.exp(s - s.max(axis=1, keepdims=True))
                p = 0.9 * p / p.sum(axis=1, keepdims=True) + 0.1 / ARMS  # every propensity at least 0.01
                a = (p.cumsum(axis=1) < rng.random((group, 1))).sum(axis=1).clip(0, ARMS - 1)
                mean = model(x.astype(np.float64))[np.arange(group), a]
                cost = (rng.random(group) < mean).astype(np.float64)
                cols = {"action": a.astype(np.int64), "cost": cost, "propensity": p[np.arange(group), a]}
                cols.update({f"x{j}": x[:, j] for j in range(FEATURES)})
                out.write_table(pa.table(cols, schema=_schema(pa)))


def _schema(pa):
    return pa.schema([("action", pa.int64()), ("cost", pa.float64()), ("propensity", pa.float64())]
                     + [(f"x{j}", pa.float32()) for j in range(FEATURES)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10**8)
    ap.add_argument("--folder", default="/tmp/replify-log")
    ap.add_argument("--skip-dask", action="store_true")
    args = ap.parse_args()
    folder = Path(args.folder) / f"rows-{args.rows}"
    if not folder.exists():
        t = time.perf_counter()
        write(folder, args.rows)
        print(f"wrote {args.rows:,} rows in 10 files to {folder} ({time.perf_counter() - t:.0f} s)", flush=True)
    pols = {f"policy {k}": make_policy(k) for k in range(8)}
    keep = dict(n=ARMS, min_propensity=0.01, cost_range=(0.0, 1.0))
    t = time.perf_counter()
    table = compare_stream(parquet_chunks(folder, rows=250_000, **keep), pols, ESTIMATORS, model=model, lam=LAMS,
                           choose={"rho": 0.1, "seed": 0})
    seconds = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    print(f"one pass over {table.rows:,} rows: 8 policies x {len(ESTIMATORS)} estimators and the certified choice in "
          f"{seconds:.0f} s, peak memory {peak:.2f} GiB", flush=True)
    print(table)
    print(f"the certified choice: {table.choice.name} (grid width {table.choice.width:.3g}; {table.choice.certificate})")
    if args.skip_dask:
        return
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster, Client(cluster) as client:
        t = time.perf_counter()
        on_dask = compare_dask(folder, pols, ESTIMATORS, client=client, rows=250_000, model=model, lam=LAMS, **keep)
        seconds = time.perf_counter() - t
    diff = max(max(abs(a.value - b.value), *(abs(u - v) for u, v in zip(a.interval or (0, 0), b.interval or (0, 0))))
               for ra, rb in zip(table.estimates, on_dask.estimates) for a, b in zip(ra, rb))
    print(f"on a Dask local cluster (2 worker processes): {seconds:.0f} s; largest difference from the single pass "
          f"{diff:.2g}")


if __name__ == "__main__":
    main()
