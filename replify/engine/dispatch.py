"""The pairs of an evaluation split over workers: here, in local processes (joblib) or on a Dask
cluster. Every pair has its own child seeds, so the outcomes are the same whichever way the pairs
are split (the docs promise identical reports)."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from replify.components.bandit_lanes import offers_lanes
from replify.engine.outcomes import Outcomes
from replify.engine.run import simulate
from replify.errors import InvalidArgumentError, ReplifyWarning
from replify.base.randomness import INTERNAL, child

def dispatch(
    build: Any, seq: Any, *, pair_ids: range, n_jobs: int, backend: str, scheduler: str | None,
    progress: Callable[[int, int], None] | None, **kw: Any,
) -> Outcomes:
    """Run the pairs here, in local processes (joblib) or on a Dask cluster. Every pair has its
    own child seeds, so the outcomes are the same whichever way the pairs are split."""
    if backend == "processes" and scheduler is not None:
        raise InvalidArgumentError("scheduler applies only to backend='dask'")
    pairs = len(pair_ids)
    if backend == "processes" and n_jobs == 1:
        return simulate(build, seq, pair_ids=pair_ids, progress=progress, **kw)
    # Four splits a worker balance the load; learners that play in lanes gain from large groups
    # (one numpy operation a step across a group), so each worker takes one split of them.
    with warnings.catch_warnings():  # the caller has shown what building the learner warns of
        warnings.simplefilter("ignore", ReplifyWarning)
        per_worker = 1 if offers_lanes(build(child(kw["root"], INTERNAL, pair_ids[0]))) else 4
    splits = [list(part) for part in np.array_split(np.asarray(pair_ids), min(pairs, per_worker * n_jobs)) if part.size]
    if backend == "processes":
        try:
            from joblib import Parallel, delayed
        except ImportError:  # pragma: no cover - the message is the point
            raise InvalidArgumentError("n_jobs > 1 needs joblib: pip install 'replify[parallel]'") from None
        parts, done = [], 0
        for ids, part in zip(splits, Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(simulate)(build, seq, pair_ids=ids, **kw) for ids in splits
        )):
            parts.append(part)
            done += len(ids)
            if progress is not None:
                progress(done, pairs)
    else:
        parts = dask_map(build, seq, splits, scheduler=scheduler, n_workers=n_jobs, **kw)
    return Outcomes.concatenate(parts)


def dask_map(build: Any, seq: Any, splits: list, *, scheduler: str | None, n_workers: int, **kw: Any) -> list:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - the message is the point
        raise InvalidArgumentError("backend='dask' needs dask.distributed: pip install 'replify[dask]'") from None
    cluster = None
    if scheduler is None:  # a local cluster for this call, closed afterwards
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster if cluster is not None else scheduler)
    try:
        futures = [client.submit(simulate, build, seq, pair_ids=ids, pure=False, **kw) for ids in splits]
        return client.gather(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
