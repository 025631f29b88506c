"""The estimators beyond IPS, SNIPS, DM and DR (replify.offpolicy.estimators): each equal to its
published formula to 1e-10, written here afresh from the papers (and the Open Bandit Pipeline's
definitions), their λ tuned as documented, and the cost model cross-fitted on other folds only."""

from __future__ import annotations

import math

import numpy as np
import pytest

from replify.errors import InvalidArgumentError, SmallSampleWarning
from replify.offpolicy import Log, estimate
from replify.offpolicy.estimators import cost_model, ridge_model, tuning_candidates


@pytest.fixture(autouse=True)
def quiet():
    """Small random logs: the normal interval's small-sample warning is beside the point here."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)
        yield


def random_log(seed=0, rows=400, n=4, d=3):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, d))
    mu = rng.dirichlet(np.ones(n) * 0.7, size=rows) * 0.9 + 0.1 / n  # every arm at least 0.025
    a = np.array([rng.choice(n, p=p) for p in mu])
    c = rng.random(rows) + 0.3 * a
    return Log.from_arrays(contexts=x, actions=a, costs=c, propensities=mu[np.arange(rows), a], n=n, distribution=mu)


def target(x):
    scores = np.stack([x[:, 0], -x[:, 0], x[:, 1], 0.2 * np.ones(len(x))], axis=1)
    e = np.exp(2 * scores)
    return e / e.sum(axis=1, keepdims=True)


def model(x):
    return np.stack([0.5 + 0.1 * x[:, 0], 0.8 - 0.05 * x[:, 1], 1.1 + 0.0 * x[:, 2], 1.4 + 0.02 * x[:, 0]], axis=1)


def parts(log):
    rows = np.arange(log.rows)
    pi = target(log.contexts)
    w = pi[rows, log.actions] / log.propensities
    q = model(log.contexts)
    return w, log.costs, (pi * q).sum(axis=1), q[rows, log.actions]


@pytest.mark.parametrize("lam", [0.5, 2.0, 5.0, math.inf])
def test_each_estimator_is_its_published_formula(lam):
    log = random_log()
    w, c, dm, qa = parts(log)
    expected = {
        # Kallus & Uehara (2019): the DM term plus the self-normalised correction
        "sndr": dm.mean() + (w * (c - qa)).sum() / w.sum(),
        # Wang, Agarwal & Dudík (2017): the correction where w <= lam (the Open Bandit Pipeline's indicator)
        "switch-dr": (dm + (w <= lam) * w * (c - qa)).mean(),
        # Su, Dimakopoulou, Krishnamurthy & Dudík (2020): w shrunk to lam w/(w^2 + lam)
        "dros": (dm + (w if math.isinf(lam) else lam * w / (w * w + lam)) * (c - qa)).mean(),
    }
    for name, value in expected.items():
        got = estimate(log, target, name, model=model, **({} if name == "sndr" else {"lam": lam}))
        assert abs(got.value - value) <= 1e-10 and not got.tuned, name
        assert got.lam == (None if name == "sndr" else lam)
    for sg in (0.0, 0.1, 0.5, 1.0):  # Metelli, Russo & Restelli (2021): w/(1 - lam + lam w), lam in [0, 1]
        got = estimate(log, target, "sg-ips", lam=sg)
        assert abs(got.value - (w / (1 - sg + sg * w) * c).mean()) <= 1e-10
    assert abs(estimate(log, target, "sg-ips", lam=0.0).value - estimate(log, target, "ips").value) <= 1e-12
    assert abs(estimate(log, target, "dros", model=model, lam=0.0).value - dm.mean()) <= 1e-12  # DM at lam = 0
    # IPS, SNIPS, DM and DR unchanged
    assert abs(estimate(log, target, "dr", model=model).value - (dm + w * (c - qa)).mean()) <= 1e-10
    assert abs(estimate(log, target, "snips").value - (w * c).sum() / w.sum()) <= 1e-10


def test_a_policy_that_never_plays_a_logged_arm_is_handled_at_the_limits():
    # w = 0 on rows where the target never plays the logged arm: lam = 0 in dros and lam = 1 in sg-ips
    # are 0/0 there in the literal formula; their limits (0) are taken, not NaN
    log = random_log(seed=1)
    greedy = lambda x: np.zeros(len(x), dtype=np.int64)  # noqa: E731
    assert np.isfinite(estimate(log, greedy, "dros", model=model, lam=0.0).value)
    w = (log.actions == 0) / log.propensities
    assert abs(estimate(log, greedy, "sg-ips", lam=1.0).value - ((w > 0) * log.costs).mean()) <= 1e-12


def test_lam_is_tuned_as_documented():
    # the least estimated mean squared error: variance/N + (|E[(w - w_hat)(c - q)]| + Bernstein terms)^2, delta 0.05
    log = random_log(seed=2)
    w, c, dm, qa = parts(log)
    n, big_l = log.rows, math.log(2 / 0.05)
    spread = math.sqrt(2 * (w * w).mean() * big_l / n) + 2 * w.max() * big_l / (3 * n)

    def mse(name, lam):
        if name == "switch-dr":
            wh = np.where(w <= lam, w, 0.0)
        elif name == "dros":
            wh = w if math.isinf(lam) else lam * w / (w * w + lam)
        else:
            wh = w / (1 - lam + lam * w)
        base, err = (dm, c - qa) if name != "sg-ips" else (0.0, c)
        terms = base + wh * err
        return terms.var() / n + (abs(((w - wh) * err).mean()) + spread) ** 2

    for name in ("switch-dr", "dros", "sg-ips"):
        got = estimate(log, target, name, model=model if name != "sg-ips" else None)
        best = min(tuning_candidates(name, w), key=lambda lam: mse(name, lam))
        assert got.tuned and got.lam == best and "lam tuned on the log" in got.kind, name


def test_cross_fitting_predicts_each_row_from_the_other_folds():
    log = random_log(seed=3, rows=300)
    rows = np.arange(log.rows)
    pi = target(log.contexts)
    w = pi[rows, log.actions] / log.propensities
    fold = np.empty(log.rows, dtype=np.int64)
    fold[np.random.default_rng(np.random.SeedSequence(7)).permutation(log.rows)] = rows % 5
    q = np.empty((log.rows, log.n))
    for k in range(5):
        keep = fold != k
        part = Log.from_arrays(contexts=log.contexts[keep], actions=log.actions[keep], costs=log.costs[keep],
                               propensities=log.propensities[keep], n=log.n)
        q[fold == k] = ridge_model(part)(log.contexts[fold == k])
    dm, qa = (pi * q).sum(axis=1), q[rows, log.actions]
    got = estimate(log, target, "dr", folds=5, seed=7)
    assert got.folds == 5 and abs(got.value - (dm + w * (log.costs - qa)).mean()) <= 1e-10
    assert abs(estimate(log, target, "dm", folds=5, seed=7).value - dm.mean()) <= 1e-10
    # a row's own cost never reaches its prediction: a huge cost on one row moves every other fold's model only
    costs = log.costs.copy()
    costs[0] = 1e6
    loud = Log.from_arrays(contexts=log.contexts, actions=log.actions, costs=costs, propensities=log.propensities,
                           n=log.n)
    assert np.allclose(cost_model(loud, None, 5, 7)[0], cost_model(log, None, 5, 7)[0])
    assert not np.allclose(cost_model(loud, None, None, None)[0], cost_model(log, None, None, None)[0])


@pytest.mark.parametrize("kwargs, match", [
    ({"estimator": "ips", "lam": 1.0}, "lam applies to"),
    ({"estimator": "sg-ips", "lam": 1.5}, r"must be in \[0, 1\]"),
    ({"estimator": "dros", "lam": -1.0}, "lam must be a number >= 0"),
    ({"estimator": "ips", "folds": 3, "seed": 0}, "folds cross-fit the cost model of"),
    ({"estimator": "dr", "folds": 3}, "folds need a seed"),
    ({"estimator": "dr", "seed": 3}, "give folds= too"),
    ({"estimator": "dr", "folds": 1, "seed": 0}, "folds must be an integer >= 2"),
    ({"estimator": "dr", "folds": 3, "seed": 0, "model": model}, "a model= given is used as it is"),
])
def test_what_an_estimator_does_not_take_is_refused_by_name(kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        estimate(random_log(rows=50), target, **kwargs)


def declared_log(seed=4, rows=600):
    """A log whose logging policy's least probability is declared (0.025), costs in [0, 1.9]."""
    base = random_log(seed=seed, rows=rows)
    return Log.from_arrays(contexts=base.contexts, actions=base.actions, costs=base.costs, propensities=base.propensities,
                           n=base.n, distribution=base.distribution, min_propensity=0.025, cost_range=(0.0, 1.9))


def test_the_bernstein_interval_is_maurer_and_pontils_bound_within_the_cost_range():
    log = declared_log()
    w, c, _, _ = parts(log)
    terms = w * c
    n, big_l = log.rows, math.log(4 / 0.05)
    width = 1.9 / 0.025 * (target(log.contexts).max())  # the terms' range: [0, W * 1.9], W = max pi / p_min
    half = math.sqrt(2 * terms.var(ddof=1) * big_l / n) + 7 * width * big_l / (3 * (n - 1))
    got = estimate(log, target, "ips", interval="bernstein")
    assert got.interval_kind == "bernstein" and "finite-sample" in got.kind and got.caveat is None
    assert np.allclose(got.interval, (max(terms.mean() - half, 0.0), min(terms.mean() + half, 1.9)), rtol=0, atol=1e-12)
    dr = estimate(log, target, "dr", model=model, interval="bernstein")
    assert dr.interval_kind == "bernstein" and dr.interval[0] <= dr.value <= dr.interval[1]
    # without a declared least propensity the range is measured on the log, and the estimate says so
    assert "declare min_propensity" in estimate(random_log(seed=4, rows=600), target, "ips", interval="bernstein").caveat


@pytest.mark.parametrize("estimator, kwargs", [("snips", {}), ("dr", {}), ("dros", {"model": model}),
                                               ("ips", {"clip": 5.0})])
def test_the_bernstein_interval_is_refused_where_its_terms_do_not_qualify(estimator, kwargs):
    with pytest.raises(InvalidArgumentError, match="interval='bernstein' needs terms whose mean is the policy's value"):
        estimate(declared_log(), target, estimator, interval="bernstein", **kwargs)


def test_the_bootstrap_resamples_the_rows_from_its_seed():
    log = declared_log(rows=3000)
    for name in ("ips", "snips", "sndr", "dros"):
        one = estimate(log, target, name, interval="bootstrap", seed=5)
        assert one.interval == estimate(log, target, name, interval="bootstrap", seed=5).interval
        assert one.interval != estimate(log, target, name, interval="bootstrap", seed=6).interval
        normal = estimate(log, target, name)
        # 3 000 rows: the percentile interval is close to the normal one (both asymptotic); measured within
        # 12% of its width at each end on this log
        tol = 0.2 * (normal.interval[1] - normal.interval[0])
        assert abs(one.interval[0] - normal.interval[0]) <= tol and abs(one.interval[1] - normal.interval[1]) <= tol, name
        assert one.interval_kind == "bootstrap" and "bootstrap" in one.kind
    with pytest.raises(InvalidArgumentError, match="give seed="):
        estimate(log, target, "ips", interval="bootstrap")
    with pytest.raises(InvalidArgumentError, match="interval must be one of"):
        estimate(log, target, "ips", interval="t")


def test_the_bootstrap_of_a_compact_log_draws_its_interactions():
    log = Log.simulate("classification-bandit", n=3, rows=10**6, seed=1, compact=True)
    first = lambda x: np.zeros(len(x), dtype=np.int64)  # noqa: E731
    got = estimate(log, first, "snips", interval="bootstrap", seed=1)
    normal = estimate(log, first, "snips")
    assert got.interval[0] < got.value < got.interval[1]
    assert abs((got.interval[1] - got.interval[0]) / (normal.interval[1] - normal.interval[0]) - 1) < 0.15


def test_a_policy_given_as_its_action_distribution_is_the_policy():
    log = declared_log()
    pi = target(log.contexts)
    arms = np.argmax(pi, axis=1)
    for name in ("ips", "snips", "dr", "sndr", "dros"):
        assert estimate(log, pi, name).value == estimate(log, target, name).value
        assert estimate(log, arms, name).value == estimate(log, lambda x: np.argmax(target(x), axis=1), name).value
    with pytest.raises(InvalidArgumentError, match="one row per row of the log"):
        estimate(log, pi[:10], "ips")


def test_compare_is_every_estimate_once_per_candidate():
    from replify.offpolicy import compare

    log = declared_log()
    calls = []

    def counted(x):
        calls.append(len(x))
        return target(x)

    table = compare(log, {"target": counted, "greedy": lambda x: np.argmax(target(x), axis=1)},
                    ["ips", "snips", "dr", "dros"], interval="bernstein")
    assert len(calls) == 1  # each candidate's policy is called once, on the whole log
    for row, policy in zip(table.estimates, (target, lambda x: np.argmax(target(x), axis=1))):
        for e in row:
            # Bernstein's interval where the estimator takes it, the normal one elsewhere, said per record
            expected = estimate(log, policy, e.estimator, interval="bernstein" if e.estimator == "ips" else "normal")
            assert (e.value, e.interval, e.interval_kind) == (expected.value, expected.interval, expected.interval_kind)
    records = table.records()
    assert len(records) == 8 and records[0]["candidate"] == "target" and records[0]["interval"] == "bernstein"
    text = str(table)
    assert "2 candidates x 4 estimators" in text and "greedy" in text and "finite-sample" in text
    frame = table.to_pandas()  # the test extra installs pandas
    assert list(frame.columns)[:3] == ["candidate", "estimator", "value"] and len(frame) == 8
    with pytest.raises(InvalidArgumentError, match="not among"):
        compare(log, [target], ["ipw"])


def test_compare_plots_at_a_column_width(tmp_path):
    from replify.offpolicy import compare
    from replify.plots.style import COLUMN_WIDTH

    log = Log.simulate("classification-bandit", n=3, rows=2000, seed=1, adversary_params={"features_as": "same"})
    table = compare(log, {"alcohol": lambda x: np.where(x[:, 0, 1] > 0, 0, 1),
                          "cultivar 0": lambda x: np.zeros(len(x), dtype=np.int64)})
    fig = table.plot(path=tmp_path / "table.png")
    assert (tmp_path / "table.png").stat().st_size > 0
    assert abs(fig.get_size_inches()[0] - COLUMN_WIDTH) < 1e-9
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["alcohol", "cultivar 0"]
