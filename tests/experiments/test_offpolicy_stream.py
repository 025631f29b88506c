"""Logs larger than memory (replify.offpolicy.stream): every estimate read in chunks from a Parquet
file or a folder of them, on this machine or on Dask, equal to the in-memory one."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from replify.errors import InvalidArgumentError, SmallSampleWarning
from replify.offpolicy import Log, estimate
from replify.offpolicy.stream import compare_dask, compare_stream, parquet_chunks

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

ESTIMATORS = ["ips", "snips", "dr", "sndr", "dm", "switch-dr", "dros", "sg-ips"]
LAMS = {"switch-dr": 2.0, "dros": 2.0, "sg-ips": 0.1}
POLICIES = {"alcohol": lambda x: np.where(x[:, 1] > 0, 0, 1), "first": lambda x: np.zeros(len(x), dtype=int),
            "never 0": lambda x: np.where(x[:, 1] > 0, 1, 2)}  # the last plays arms a chunk may not log


def model(x):
    return np.tile([0.3, 0.6, 0.7], (len(x), 1)) + 0.01 * x[:, :3]


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)  # the caveats are compared, not shown
        yield


def write(tmp_path, rows=20_000, files=1):
    log = Log.simulate("classification-bandit", n=3, rows=rows, seed=1, adversary_params={"features_as": "same"})
    z = log.contexts[:, 0]
    table = pa.table({"action": log.actions, "cost": log.costs, "propensity": log.propensities,
                      **{f"x{j}": z[:, j] for j in range(z.shape[1])}})
    if files == 1:
        pq.write_table(table, tmp_path / "log.parquet")
        return tmp_path / "log.parquet"
    (tmp_path / "log").mkdir()
    cut = np.linspace(0, rows, files + 1).astype(int)
    for k in range(files):
        pq.write_table(table.slice(cut[k], cut[k + 1] - cut[k]), tmp_path / "log" / f"part-{k}.parquet")
    return tmp_path / "log"


def same_as_in_memory(table, flat, interval):
    for name, row in zip(table.candidates, table.estimates):
        for got in row:
            e = got.estimator
            kw = {"model": model} if e in ("dm", "dr", "sndr", "switch-dr", "dros") else {}
            if e in LAMS:
                kw["lam"] = LAMS[e]
            m = estimate(flat, POLICIES[name], e, interval=interval if e in ("ips", "dr") else "normal", **kw)
            assert abs(m.value - got.value) <= 1e-12 and abs(m.standard_error - got.standard_error) <= 1e-12, (name, e)
            assert (m.interval is None) == (got.interval is None), (name, e)
            if m.interval is not None:
                assert max(abs(a - b) for a, b in zip(m.interval, got.interval)) <= 1e-12, (name, e)
            assert (m.interval_kind, m.caveat, m.rows, m.true_value) == (got.interval_kind, got.caveat, got.rows,
                                                                        got.true_value), (name, e)
            assert m.ess == pytest.approx(got.ess, rel=1e-12)


@pytest.mark.parametrize("files, interval", [(1, "normal"), (3, "bernstein")])
def test_a_parquet_log_read_in_chunks_gives_the_in_memory_estimates(tmp_path, files, interval):
    path = write(tmp_path, files=files)
    keep = dict(n=3, min_propensity=1 / 3, cost_range=(0.0, 1.0))
    flat = Log.from_parquet(path, **keep) if files == 1 else None
    if flat is None:  # the folder's files, whole, in memory
        parts = [Log.from_parquet(f, **keep) for f in sorted(path.glob("*.parquet"))]
        flat = Log.from_arrays(contexts=np.concatenate([p.contexts for p in parts]),
                               actions=np.concatenate([p.actions for p in parts]),
                               costs=np.concatenate([p.costs for p in parts]),
                               propensities=np.concatenate([p.propensities for p in parts]), name=path.name, **keep)
    chunks = list(parquet_chunks(path, rows=3000, **keep))
    assert sum(c.rows for c in chunks) == 20_000 and max(c.rows for c in chunks) <= 3000
    table = compare_stream(iter(chunks), POLICIES, ESTIMATORS, model=model, lam=LAMS, interval=interval)
    same_as_in_memory(table, flat, interval)
    on_dask = compare_dask(path, POLICIES, ESTIMATORS, n=3, rows=3000, model=model, lam=LAMS, interval=interval,
                           min_propensity=1 / 3, cost_range=(0.0, 1.0))
    same_as_in_memory(on_dask, flat, interval)


def test_a_simulated_log_in_chunks_keeps_its_true_values_and_a_compact_one_its_counts():
    log = Log.simulate("classification-bandit", n=3, rows=9000, seed=2, adversary_params={"features_as": "same"})
    chunks = [log._subset(np.arange(k, min(k + 2000, log.stored)), None) for k in range(0, log.stored, 2000)]
    pols = {"alcohol": lambda x: np.where(x[:, 0, 1] > 0, 0, 1), "first": lambda x: np.zeros(len(x), dtype=int)}
    table = compare_stream(chunks, pols, ["ips", "snips"])
    for name, row in zip(table.candidates, table.estimates):
        for got in row:
            m = estimate(log, pols[name], got.estimator)
            assert abs(m.value - got.value) <= 1e-12 and abs(m.true_value - got.true_value) <= 1e-12
    compact = Log.simulate("classification-bandit", n=3, rows=10**6, seed=2, compact=True)
    halves = [compact._subset(np.arange(0, 200), compact.weights[:200]),
              compact._subset(np.arange(200, compact.stored), compact.weights[200:])]
    table = compare_stream(halves, {"first": lambda x: np.zeros(len(x), dtype=int)}, ["ips", "snips"])
    m = estimate(compact, lambda x: np.zeros(len(x), dtype=int), "snips")
    assert table.rows == 10**6 and abs(table.estimates[0][1].value - m.value) <= 1e-12


@pytest.mark.parametrize("kwargs, match", [
    ({"estimators": ["dr"]}, "needs a cost model"),
    ({"estimators": ["dros"], "model": model}, "give lam="),
    ({"estimators": ["ips"], "interval": "bootstrap"}, "resamples the whole log"),
    ({"estimators": ["ipw"]}, "non-empty sequence of names"),
])
def test_what_one_pass_cannot_do_is_refused_by_name(tmp_path, kwargs, match):
    path = write(tmp_path, rows=500)
    with pytest.raises(InvalidArgumentError, match=match):
        compare_stream(parquet_chunks(path, rows=200, n=3), POLICIES, **kwargs)


def test_a_policy_array_and_chunks_of_other_logs_are_refused(tmp_path):
    path = write(tmp_path, rows=500)
    with pytest.raises(InvalidArgumentError, match="as a function of the contexts"):
        compare_stream(parquet_chunks(path, rows=200, n=3), {"arr": np.zeros(500, dtype=int)})
    one = next(parquet_chunks(path, rows=200, n=3))
    other = next(parquet_chunks(path, rows=200, n=3, cost_range=(0.0, 1.0)))
    with pytest.raises(InvalidArgumentError, match="disagree on the arms, the cost range"):
        compare_stream([one, other], POLICIES)


@pytest.mark.parametrize("kw", [{}, {"variance": "overlap"}, {"incumbent": "logging"},
                                {"incumbent": "p2", "min_rows": 20_000}])
def test_the_certified_choice_in_one_pass_is_the_in_memory_choice(kw):
    from replify.offpolicy import select
    from replify.offpolicy.stream import select_stream

    log = Log.simulate("classification-bandit", n=3, rows=30_000, seed=3)  # declares its cost range (0, 1)
    chunks = [log._subset(np.arange(k, min(k + 7000, log.stored)), None) for k in range(0, log.stored, 7000)]
    weights = np.random.default_rng(0).normal(size=(6, 42))
    pols = {f"p{k}": (lambda w: (lambda x: np.argmin(x @ w, axis=1)))(weights[k]) for k in range(6)}
    for seed in range(4):
        a, b = select(log, pols, rho=0.1, seed=seed, **kw), select_stream(chunks, pols, rho=0.1, seed=seed, **kw)
        assert (a.chosen, a.name, a.width, a.certificate, a.caveat, a.tied) == (b.chosen, b.name, b.width, b.certificate,
                                                                               b.caveat, b.tied)
        assert np.array_equal(a.cells, b.cells) and np.allclose(a.estimates, b.estimates, rtol=0, atol=1e-12)
        assert np.allclose(a.true_values, b.true_values, rtol=0, atol=1e-12)


def test_a_choice_in_one_pass_needs_the_costs_range_first(tmp_path):
    from replify.offpolicy.stream import select_stream

    path = write(tmp_path, rows=500)
    with pytest.raises(InvalidArgumentError, match="needs the costs' range before the pass"):
        select_stream(parquet_chunks(path, rows=200, n=3), POLICIES, rho=0.1, seed=0)
    got = select_stream(parquet_chunks(path, rows=200, n=3), POLICIES, rho=0.1, seed=0, cost_bound=(0.0, 1.0),
                        min_propensity=1 / 3)
    assert got.certified and got.rows == 500
    with pytest.raises(InvalidArgumentError, match=r"row \d+ of log.parquet costs 1.0, outside it"):
        select_stream(parquet_chunks(path, rows=200, n=3), POLICIES, rho=0.1, seed=0, cost_bound=(0.0, 0.5))


def test_every_estimate_and_the_choice_in_the_same_pass():
    from replify.offpolicy import select

    log = Log.simulate("classification-bandit", n=3, rows=20_000, seed=4, adversary_params={"features_as": "same"})
    chunks = [log._subset(np.arange(k, min(k + 6000, log.stored)), None) for k in range(0, log.stored, 6000)]
    pols = {"alcohol": lambda x: np.where(x[:, 0, 1] > 0, 0, 1), "first": lambda x: np.zeros(len(x), dtype=int),
            "last": lambda x: np.full(len(x), 2)}
    table = compare_stream(chunks, pols, ["ips", "snips"], choose={"rho": 0.1, "seed": 3})
    memory = select(log, pols, rho=0.1, seed=3)
    assert (table.choice.name, table.choice.width, table.choice.certificate) == (memory.name, memory.width,
                                                                                 memory.certificate)
    assert compare_stream(chunks, pols, ["ips"]).choice is None


@pytest.mark.parametrize("kw", [{}, {"variance": "overlap"}, {"min_rows": 20_000}])
def test_the_replicable_value_in_one_pass_is_the_in_memory_value(kw):
    from replify.offpolicy import replicable_value
    from replify.offpolicy.stream import value_stream

    log = Log.simulate("classification-bandit", n=3, rows=30_000, seed=5)
    chunks = [log._subset(np.arange(k, min(k + 8000, log.stored)), None) for k in range(0, log.stored, 8000)]
    policy = lambda x: np.argmin(x @ np.random.default_rng(1).normal(size=42), axis=1)  # noqa: E731
    for seed in range(4):
        a, b = replicable_value(log, policy, rho=0.1, seed=seed, **kw), value_stream(chunks, policy, rho=0.1, seed=seed, **kw)
        assert (a.value, a.cells, a.width, a.certificate, a.caveat) == (b.value, b.cells, b.width, b.certificate, b.caveat)
        assert abs(a.estimates - b.estimates) <= 1e-12 and abs(a.true_values - b.true_values) <= 1e-12


@pytest.mark.slow
def test_a_dask_cluster_of_worker_processes_gives_the_same_estimates(tmp_path):
    # the workers are other processes: the policies, the model and the sums travel pickled (the policies
    # as lambdas, which Dask's cloudpickle sends by value), and the result is the in-memory one
    distributed = pytest.importorskip("dask.distributed")
    path = write(tmp_path, rows=6000, files=3)
    pols = {"alcohol": lambda x: np.where(x[:, 1] > 0, 0, 1), "first": lambda x: np.zeros(len(x), dtype=int)}
    keep = dict(n=3, min_propensity=1 / 3, cost_range=(0.0, 1.0))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_dask = compare_dask(path, pols, ["ips", "snips", "dr"], client=client, rows=1000,
                               model=lambda x: np.full((len(x), 3), 0.5), **keep)
    here = compare_stream(parquet_chunks(path, rows=1000, **keep), pols, ["ips", "snips", "dr"],
                          model=lambda x: np.full((len(x), 3), 0.5))
    for a, b in zip(here.estimates, on_dask.estimates):
        for x, y in zip(a, b):
            assert abs(x.value - y.value) <= 1e-12 and max(abs(u - v) for u, v in zip(x.interval, y.interval)) <= 1e-12
