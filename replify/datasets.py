"""Real cost matrices for audits on real data; nothing is downloaded. Three series ship with
replify itself, in ``replify/data`` (copied from river and pmdarima under their BSD-3-Clause and
MIT licences, and FiveThirtyEight's CC BY 4.0 for the polls; ``replify/data/LICENSES.md`` gives
each file's origin, licence and notices): :func:`sp500`, :func:`polls` and :func:`electricity`.
The NYSE series of :func:`nyse`, whose terms are unclear, is not shipped: it is read from the
installed ``universal-portfolios`` package (``pip install 'replify[nyse]'``, a heavy install of its
own). ``pip install 'replify[data]'`` installs scipy, which :func:`electricity`'s smoothing uses.

Each loader returns a :class:`Dataset`: costs in [0, 1], an array of shape (T, n) (one column per expert), the
experts' names, and where the numbers come from, under which licence, and how they were turned
into costs. Audit a learner on one with the ``local-bootstrap`` adversary, which resamples the
matrix's rows in a window around each step (two independent resamplings are the two draws of a
pair)::

    data = replify.datasets.electricity()
    replify.evaluate("ftplb-star", "local-bootstrap", n=data.n, horizon=data.horizon, pairs=200,
                     seed=0, rho=0.1, adversary_params=data.bootstrap(window=48))

:func:`wine` and :func:`digits` are classification data sets (:class:`Labelled`) for contextual bandits: the
``classification-bandit`` adversary shows a row's features and charges 1 for a wrong label.

Every normalisation is an affine map fixed by the whole matrix (its minimum and maximum), so the
ranking of the experts at each step is the data's own; none clips.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import io
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from replify.base.checks import check_int, check_real, public
from replify.errors import InvalidArgumentError, MissingExtraError


@attrs.frozen(kw_only=True, eq=False)
class Dataset:
    """A real cost matrix ``costs`` (T, n) in [0, 1], its ``experts`` (n names), ``steps``
    (T labels: dates or indices), and its ``source``, ``licence`` and ``normalisation``."""

    name: str
    costs: np.ndarray = attrs.field(repr=False)
    experts: tuple[str, ...]
    steps: tuple[str, ...] = attrs.field(repr=False)
    source: str = attrs.field(repr=False)
    licence: str = attrs.field(repr=False)
    normalisation: str = attrs.field(repr=False)

    @property
    def n(self) -> int:
        return int(self.costs.shape[1])

    @property
    def horizon(self) -> int:
        return int(self.costs.shape[0])

    def bootstrap(self, window: int = 50) -> dict[str, Any]:
        """``adversary_params`` for the ``local-bootstrap`` adversary around these costs: step t
        draws a row uniformly from rows t − window … t + window; ``name`` is the dataset's, which
        figures show instead of "local-bootstrap"."""
        return {"costs": self.costs, "window": check_int("window", window, minimum=0), "name": self.name}

    def __repr__(self) -> str:
        return f"Dataset({self.name!r}, T={self.horizon}, n={self.n}, experts={list(self.experts)!r})"


def _package_dir(package: str) -> Path:
    """Where ``package`` is installed (without importing it), or a clear error naming the extra."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError(
            f"this dataset ships inside the {package!r} package, which is not installed: pip install 'replify[nyse]'"
        )
    return Path(list(spec.submodule_search_locations)[0])


# the data files shipped with replify (LICENSES.md there says where each comes from and under
# which licence), installed with the package beside this module
_DATA = Path(__file__).resolve().parent / "data"


def _shipped(name: str) -> Path:
    """The data file ``name`` shipped with replify in ``replify/data``."""
    return _DATA / name


def _unit(values: np.ndarray) -> np.ndarray:
    """The affine map of ``values`` onto [0, 1] fixed by their minimum and maximum (read-only)."""
    low, high = float(values.min()), float(values.max())
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        raise InvalidArgumentError(f"cannot normalise a matrix with minimum {low} and maximum {high}")
    # in [0, 1] without clipping: fl(x - low) is in [0, fl(high - low)] (rounding is monotone)
    out = (values - low) / (high - low)
    out.flags.writeable = False
    return out


@contextlib.contextmanager
def _text(path: Path) -> Iterator[io.TextIOBase]:
    """``path`` opened as text, gunzipped if it ends in ``.gz``."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        yield fh


def _header(path: Path) -> list[str]:
    with _text(path) as fh:
        return fh.readline().strip().split(",")


def _table(path: Path, columns: list[int]) -> np.ndarray:
    with _text(path) as fh:
        return np.loadtxt(fh, delimiter=",", skiprows=1, usecols=columns, ndmin=2)


@public
def nyse(period: str = "o") -> Dataset:
    """The NYSE daily price relatives of Cover's universal-portfolio papers, as shipped in
    ``universal-portfolios``: ``period="o"`` the original set (36 stocks, 5 651 trading days,
    1962–1984; Cover 1991, "Universal portfolios"), ``"n"`` its continuation (1985–2010). Read
    from the installed package (``pip install 'replify[nyse]'``): its terms are unclear, so replify
    does not ship it. Experts are the assets; the cost of asset j on day t is −log r_t(j) (r the
    price relative: a loss of wealth costs more), mapped affinely onto [0, 1] by its minimum and
    maximum over the whole matrix."""
    if period not in ("o", "n"):
        raise InvalidArgumentError(f"period must be 'o' (1962-1984) or 'n' (1985-2010), got {period!r}")
    path = _package_dir("universal") / "data" / f"nyse_{period}.csv"
    names = _header(path)
    relatives = _table(path, list(range(len(names))))
    return Dataset(
        name=f"nyse-{period}", costs=_unit(-np.log(relatives)), experts=tuple(names),
        steps=tuple(str(t) for t in range(1, relatives.shape[0] + 1)),
        source=f"universal-portfolios (PyPI), universal/data/nyse_{period}.csv: NYSE daily price relatives (Cover 1991)",
        licence="not shipped with replify: read from the installed universal-portfolios, which is under the Feedback "
        "MIT License (FMIT: the MIT terms plus 'Person obtaining a copy must return feedback to the authors'); "
        "the price relatives are the research data set of Cover (1991) and Borodin, El-Yaniv & Gogan (2004), "
        "distributed with it without a licence of their own",
        normalisation="cost = (-log r - m) / (M - m), m and M the minimum and maximum of -log r over the matrix",
    )


@public
def sp500() -> Dataset:
    """Daily returns of ten S&P 500 stocks (AAPL, AMZN, IBM, INTC, JNJ, JPM, KO, MSFT, WMT, XOM;
    1 257 trading days from 2013-02-11), shipped with replify (``replify/data/sp500.csv.gz``, a copy
    of ``river/datasets/sp500.csv.gz`` from river 0.26.1).
    Experts are the stocks; the cost of stock j on day t is its negated return in percent, mapped
    affinely onto [0, 1] by the minimum and maximum over the matrix."""
    path = _shipped("sp500.csv.gz")
    names = _header(path)
    stocks = [i for i, name in enumerate(names) if name not in ("date", "next_day_return")]
    returns = _table(path, stocks)
    with _text(path) as fh:
        dates = tuple(line.split(",", 1)[0] for line in fh.read().splitlines()[1:])
    return Dataset(
        name="sp500", costs=_unit(-returns), experts=tuple(names[i] for i in stocks), steps=dates,
        source="shipped with replify (replify/data/sp500.csv.gz), taken from river 0.26.1 (PyPI), "
        "river/datasets/sp500.csv.gz: daily percent returns of ten S&P 500 stocks, computed by river from the "
        "Kaggle data set 'S&P 500 stock data'",
        licence="BSD-3-Clause, river's licence, under which replify redistributes the file (notice in "
        "replify/data/LICENSES.md)",
        normalisation="cost = (-return - m) / (M - m), m and M the minimum and maximum of -return over the matrix",
    )


@public
def polls() -> Dataset:
    """Donald Trump's approval rating as five pollsters measured it (Gallup, Ipsos, Morning
    Consult, Rasmussen, YouGov; 1 001 days from 2017), against FiveThirtyEight's aggregate, shipped
    with replify (``replify/data/trump_approval.csv.gz``, a copy of the file of
    ``river.datasets.TrumpApproval`` from river 0.26.1). Experts are the pollsters; the cost
    of pollster j on day t is |poll − aggregate|, divided by the largest such error in the data."""
    path = _shipped("trump_approval.csv.gz")
    names = _header(path)
    table = _table(path, list(range(len(names))))
    target = table[:, names.index("five_thirty_eight")]
    pollsters = [i for i, name in enumerate(names) if name not in ("ordinal_date", "five_thirty_eight")]
    error = np.abs(table[:, pollsters] - target[:, None])
    costs = error / error.max()
    costs.flags.writeable = False
    return Dataset(
        name="polls", costs=costs, experts=tuple(names[i] for i in pollsters),
        steps=tuple(str(int(d)) for d in table[:, names.index("ordinal_date")]),
        source="shipped with replify (replify/data/trump_approval.csv.gz), taken from river 0.26.1 (PyPI), "
        "river/datasets/trump_approval.csv.gz: FiveThirtyEight's Trump approval ratings "
        "(https://projects.fivethirtyeight.com/trump-approval-ratings/), reshaped by river",
        licence="the polling data: 'Trump approval ratings' by FiveThirtyEight, CC BY 4.0 "
        "(https://creativecommons.org/licenses/by/4.0/); river's file: BSD-3-Clause (notices in "
        "replify/data/LICENSES.md)",
        normalisation="cost = |poll - aggregate| / max over the matrix of that error",
    )


#: The smoothing constants of the exponential-smoothing experts of :func:`electricity`.
SMOOTHING = (0.1, 0.3, 0.5, 0.7, 0.9)
WEEK, DAY = 336, 48  # half-hours


def smoothed(y: np.ndarray, alpha: float) -> np.ndarray:
    """Simple exponential smoothing ℓₜ = α yₜ + (1 − α) ℓₜ₋₁, ℓ₀ = y₀ (a linear recursion,
    run by scipy's ``lfilter`` rather than a Python loop over the steps); 0 < α ≤ 1."""
    try:
        from scipy.signal import lfilter
    except ImportError:
        raise MissingExtraError(
            "exponential smoothing runs on scipy, which is not installed: pip install 'replify[data]'"
        ) from None

    alpha = check_real("alpha", alpha)
    if not 0.0 < alpha <= 1.0:
        raise InvalidArgumentError(f"alpha must lie in (0, 1], got {alpha}")

    level, _ = lfilter([alpha], [1.0, alpha - 1.0], y, zi=[(1.0 - alpha) * y[0]])
    return level


@public
def electricity() -> Dataset:
    """Half-hourly electricity demand in England and Wales, 5 June – 27 August 2000 (4 032 half
    hours; Taylor 2003, "Short-term electricity demand forecasting using double seasonal
    exponential smoothing"), shipped with replify (``replify/data/taylor.csv.gz``, the series of
    ``pmdarima.datasets.load_taylor`` from pmdarima 2.1.1, originally R's ``forecast::taylor``), with a
    bank of nine one-step-ahead forecasters as experts: the last value, the same half hour
    yesterday and a week ago, the mean of the same half hour over the last seven days, and simple
    exponential smoothing with α ∈ {0.1, 0.3, 0.5, 0.7, 0.9}. The first week is their warm-up:
    T = 3 696 steps. The cost of forecaster j at step t is |forecast − demand|, divided by the
    largest such error in the data."""
    y = np.ascontiguousarray(_table(_shipped("taylor.csv.gz"), [0])[:, 0])
    t = np.arange(WEEK, y.size)  # the steps forecast (0-based), each from the values before it
    forecasts = {
        "last value": y[t - 1],
        "same half hour yesterday": y[t - DAY],
        "same half hour last week": y[t - WEEK],
        "mean of the same half hour, last 7 days": np.mean([y[t - DAY * k] for k in range(1, 8)], axis=0),
    }
    for alpha in SMOOTHING:
        forecasts[f"exponential smoothing, alpha={alpha}"] = smoothed(y, alpha)[t - 1]
    error = np.abs(np.stack(list(forecasts.values()), axis=1) - y[t, None])
    costs = error / error.max()
    costs.flags.writeable = False
    return Dataset(
        name="electricity", costs=costs, experts=tuple(forecasts), steps=tuple(str(int(s) + 1) for s in t),
        source="shipped with replify (replify/data/taylor.csv.gz), taken from pmdarima 2.1.1 (PyPI), "
        "pmdarima.datasets.load_taylor: half-hourly demand in England and Wales, MW (Taylor 2003); originally R's "
        "forecast::taylor, provided by James W. Taylor",
        licence="MIT, pmdarima's licence, under which replify redistributes the series (notice in "
        "replify/data/LICENSES.md); the series carries no licence of its own from its provider",
        normalisation="cost = |forecast - demand| / max over the matrix of that error",
    )


#: Every loader, by name.
LOADERS = {"nyse": nyse, "sp500": sp500, "polls": polls, "electricity": electricity}


@attrs.frozen(kw_only=True, eq=False)
class Labelled:
    """A classification data set: ``features`` (N, d), each column standardised (mean 0, standard
    deviation 1: an affine map fixed by the whole column), integer ``labels`` (N,) in 0..k−1, the
    ``classes``' names, and where the numbers come from and under which licence. The
    ``classification-bandit`` adversary turns it into a contextual bandit (docs/contextual.md)."""

    name: str
    features: np.ndarray = attrs.field(repr=False)
    labels: np.ndarray = attrs.field(repr=False)
    classes: tuple[str, ...]
    source: str = attrs.field(repr=False)
    licence: str = attrs.field(repr=False)

    def bandit(self) -> dict[str, Any]:
        """``adversary_params`` for the ``classification-bandit`` adversary on these data."""
        return {"features": self.features, "labels": self.labels, "name": self.name}

    def __repr__(self) -> str:
        return f"Labelled({self.name!r}, N={self.labels.size}, d={self.features.shape[1]}, classes={list(self.classes)!r})"


@public
def wine() -> Labelled:
    """The UCI "Wine" data (Aeberhard & Forina 1991): 178 wines of three cultivars, 13 chemical
    measurements each, shipped with replify (``replify/data/wine.csv.gz``, scikit-learn 1.9.1's copy;
    CC BY 4.0, replify/data/LICENSES.md). Columns standardised; labels 0, 1, 2."""
    path = _shipped("wine.csv.gz")
    with _text(path) as fh:
        header = fh.readline().strip().split(",")
        table = np.loadtxt(fh, delimiter=",", ndmin=2)
    x, y = table[:, :-1], table[:, -1].astype(np.int64)
    features = (x - x.mean(axis=0)) / x.std(axis=0)
    features.flags.writeable = False
    y.flags.writeable = False
    return Labelled(
        name="wine", features=features, labels=y, classes=tuple(header[2:]),
        source="shipped with replify (replify/data/wine.csv.gz), taken from scikit-learn 1.9.1 (PyPI), "
        "sklearn/datasets/data/wine_data.csv: the UCI Machine Learning Repository's Wine data (Aeberhard & Forina 1991)",
        licence="the data CC BY 4.0 (UCI, https://doi.org/10.24432/C5PC7J); scikit-learn's file BSD-3-Clause "
        "(notices in replify/data/LICENSES.md)",
    )


def digits() -> Labelled:
    """The UCI "Optical Recognition of Handwritten Digits" data (Alpaydin & Kaynak 1998), as
    scikit-learn ships its test set: 1 797 handwritten digits, each an 8 × 8 image of pixel counts 0–16
    (64 features), labels 0–9; shipped with replify (``replify/data/digits.csv.gz``, scikit-learn
    1.9.1's copy; CC BY 4.0, replify/data/LICENSES.md). Columns standardised; a column that is 0 in
    every image stays 0."""
    path = _shipped("digits.csv.gz")
    with _text(path) as fh:
        table = np.loadtxt(fh, delimiter=",", ndmin=2)
    x, y = table[:, :-1], table[:, -1].astype(np.int64)
    sd = x.std(axis=0)
    features = (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    features.flags.writeable = False
    y.flags.writeable = False
    return Labelled(
        name="digits", features=features, labels=y, classes=tuple(str(k) for k in range(10)),
        source="shipped with replify (replify/data/digits.csv.gz), taken from scikit-learn 1.9.1 (PyPI), "
        "sklearn/datasets/data/digits.csv.gz: the UCI Machine Learning Repository's Optical Recognition of "
        "Handwritten Digits data (Alpaydin & Kaynak 1998), its test set",
        licence="the data CC BY 4.0 (UCI, https://doi.org/10.24432/C50P49); scikit-learn's file BSD-3-Clause "
        "(notices in replify/data/LICENSES.md)",
    )

