"""The real-data loaders, on the real data shipped with replify (and nyse's, read from
universal-portfolios): shapes, ranges, no NaN, and a value read from the source file or documented
by the package it was taken from; every shipped file is named, with its licence, in LICENSES.md."""

import gzip
import importlib.util
import math
import re
from pathlib import Path

import numpy as np
import pytest

import replify
from replify import datasets
from replify.errors import MissingExtraError


def check_matrix(data, T, n):
    assert data.costs.shape == (T, n) == (data.horizon, data.n)
    assert len(data.experts) == n and len(data.steps) == T
    assert np.isfinite(data.costs).all() and data.costs.min() >= 0.0 and data.costs.max() <= 1.0
    assert not data.costs.flags.writeable
    assert data.source and data.licence and data.normalisation


def test_nyse_is_coverss_36_stocks_and_the_cost_is_minus_log_return():
    data = datasets.nyse()
    check_matrix(data, 5651, 36)
    assert data.experts[:3] == ("A", "B", "C")
    # the cost is affine in -log r: differences between experts on a day are ratios of log returns
    # known from the file's first two rows (A: 1.01515 then 1.0303061895; B: 1.02765 then 1.069125954)
    c = data.costs
    ratio = (c[0, 0] - c[0, 1]) / (c[1, 0] - c[1, 1])
    expected = (math.log(1.02765) - math.log(1.01515)) / (math.log(1.069125954) - math.log(1.0303061895))
    assert ratio == pytest.approx(expected, rel=1e-9)
    assert datasets.nyse("n").n > 0
    with pytest.raises(replify.errors.InvalidArgumentError, match="period must be 'o'"):
        datasets.nyse("x")


def test_sp500_is_ten_stocks_from_2013():
    data = datasets.sp500()
    check_matrix(data, 1257, 10)
    assert data.experts == ("AAPL", "AMZN", "IBM", "INTC", "JNJ", "JPM", "KO", "MSFT", "WMT", "XOM")
    assert data.steps[0] == "2013-02-11"
    # first two rows of returns (percent): AAPL 1.042235, -2.506658; AMZN -1.809506, 0.579293
    c = data.costs
    assert (c[0, 0] - c[0, 1]) / (c[1, 0] - c[1, 1]) == pytest.approx((-1.809506 - 1.042235) / (0.579293 + 2.506658), rel=1e-9)


def test_polls_are_five_pollsters_against_fivethirtyeight():
    data = datasets.polls()
    check_matrix(data, 1001, 5)
    assert data.experts == ("gallup", "ipsos", "morning_consult", "rasmussen", "you_gov")
    # day 1: aggregate 43.75505; gallup 43.843213, ipsos 46.19925042857143
    c = data.costs
    assert c[0, 0] / c[0, 1] == pytest.approx(abs(43.843213 - 43.75505) / abs(46.19925042857143 - 43.75505), rel=1e-9)
    assert c.max() == 1.0


DATA = Path(datasets.__file__).resolve().parent / "data"


def taylor():
    with gzip.open(DATA / "taylor.csv.gz", "rt") as fh:
        assert fh.readline() == "demand_mw\n"
        return np.loadtxt(fh, ndmin=1)


def test_electricity_is_taylors_series_with_a_bank_of_forecasters():
    y = taylor()
    assert y.shape == (4032,)
    # the first ten values, as pmdarima's load_taylor documents them
    assert y[:10].tolist() == [22262.0, 21756.0, 22247.0, 22759.0, 22549.0, 22313.0, 22128.0, 21860.0, 21751.0, 21336.0]
    data = datasets.electricity()
    check_matrix(data, 4032 - 336, 9)
    c = data.costs
    # step 337: "same half hour last week" forecasts y_1 = 22262, "last value" forecasts y_336
    assert c[0, 2] / c[0, 0] == pytest.approx(abs(22262.0 - y[336]) / abs(y[335] - y[336]), rel=1e-9)
    # exponential smoothing with alpha = 0.9 against its recursion run by hand over the first steps
    level = y[0]
    for t in range(1, 336):
        level = 0.9 * y[t] + 0.1 * level
    scale = abs(y[335] - y[336]) / c[0, 0]
    assert abs(level - y[336]) / scale == pytest.approx(c[0, 8], rel=1e-9)


def test_a_missing_package_names_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "universal" else real(name, *a))
    with pytest.raises(MissingExtraError, match=r"'universal' package, which is not installed: pip install 'replify\[nyse\]'"):
        datasets.nyse()
    assert datasets.sp500().n == 10  # the shipped series need no package


def test_smoothing_without_scipy_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "scipy.signal", None)  # import fails
    with pytest.raises(MissingExtraError, match=r"scipy, which is not installed: pip install 'replify\[data\]'"):
        datasets.electricity()


def shipped_in_licenses():
    """LICENSES.md's table of shipped files: {file: licence}."""
    rows = re.findall(r"^\| `([^`]+)` \|[^|]*\|[^|]*\|[^|]*\|([^|]*)\|$", (DATA / "LICENSES.md").read_text(), re.M)
    return {name: licence.strip() for name, licence in rows}


def test_every_shipped_file_is_named_in_licenses_with_a_licence():
    named = shipped_in_licenses()
    assert set(named) == {"sp500.csv.gz", "trump_approval.csv.gz", "taylor.csv.gz", "wine.csv.gz",
                          "digits.csv.gz"}
    for name, licence in named.items():
        assert (DATA / name).is_file(), name
        assert re.search(r"BSD-3-Clause|MIT|CC BY 4\.0", licence), (name, licence)
        assert f"## `{name}`" in (DATA / "LICENSES.md").read_text()  # its origin and notices
    files = {p.name for p in DATA.iterdir() if p.is_file()} - {"__init__.py", "LICENSES.md"}
    assert files == set(named)  # nothing ships without a licence
    for name in named:
        assert (DATA / name).stat().st_size < 100_000


@pytest.mark.skipif(importlib.util.find_spec("river") is None, reason="river not installed")
def test_the_river_files_are_copies_of_rivers():
    river = Path(importlib.util.find_spec("river").submodule_search_locations[0]) / "datasets"
    for name in ("sp500.csv.gz", "trump_approval.csv.gz"):
        with gzip.open(river / name, "rb") as theirs, gzip.open(DATA / name, "rb") as ours:
            assert theirs.read() == ours.read()


@pytest.mark.skipif(importlib.util.find_spec("pmdarima") is None, reason="pmdarima not installed")
def test_the_taylor_file_is_pmdarimas_series():
    from pmdarima.datasets import load_taylor

    assert np.array_equal(taylor(), load_taylor())


def test_a_dataset_feeds_the_local_bootstrap():
    data = datasets.polls()
    report = replify.evaluate("hedge", "local-bootstrap", n=data.n, horizon=data.horizon, pairs=4, seed=0,
                              adversary_params=data.bootstrap(window=10))
    assert report.regret.shape == (4, 2)
    assert repr(data) == f"Dataset('polls', T=1001, n=5, experts={list(data.experts)!r})"


def test_the_real_data_example_runs_and_draws_its_figure(tmp_path):
    # examples/real_data_audit.py at a small size: the first 600 steps, 20 pairs, and the knobs that
    # `replify calibrate ftplb-star -n 9 -T 600 --rho 0.1` finds (calibrate itself is tested in
    # test_calibration.py; here it would cost half a minute)
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    from real_data_audit import audit, table

    from replify.plots import plot_tradeoff

    reports = audit(horizon=600, pairs=20, knobs={"block_size": 300, "eps": 0.0108})
    assert [r.learner for r in reports] == ["ftplb-star (certified)", "ftplb-star (calibrated)", "constant", "hedge", "ewa"]
    assert all(r.horizon == 600 and r.n == 9 for r in reports)
    assert reports[3].rho_hat == 1.0  # hedge parts on independent resamplings
    assert "constant" in table(reports)
    plot_tradeoff(reports, path=tmp_path / "audit.pdf")
    assert (tmp_path / "audit.pdf").read_bytes()[:4] == b"%PDF"
