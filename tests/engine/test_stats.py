import numpy as np
import pytest
from scipy import stats as sps

from replify.evaluation.stats import clopper_pearson, t_interval, t_quantile


@pytest.mark.parametrize("k,n", [(0, 1), (1, 1), (0, 10), (3, 10), (10, 10), (0, 200), (7, 200), (199, 200), (123, 5000)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_clopper_pearson_matches_scipy(k, n, confidence):
    ref = sps.binomtest(k, n).proportion_ci(confidence, method="exact")
    lo, hi = clopper_pearson(k, n, confidence)
    assert lo == pytest.approx(ref.low, rel=1e-8, abs=1e-14)
    assert hi == pytest.approx(ref.high, rel=1e-8, abs=1e-14)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 30, 199, 2000])
@pytest.mark.parametrize("q", [0.75, 0.95, 0.975, 0.995])
def test_t_quantile_matches_scipy(df, q):
    assert t_quantile(q, df) == pytest.approx(sps.t.ppf(q, df), rel=1e-9)


def test_t_interval_matches_scipy():
    x = np.random.default_rng(1).normal(3.0, 2.0, size=37)
    lo, hi = t_interval(x, 0.95)
    ref = sps.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=sps.sem(x))
    assert (lo, hi) == pytest.approx(ref, rel=1e-9)


def test_bad_inputs_raise():
    with pytest.raises(ValueError):
        clopper_pearson(5, 3)
    with pytest.raises(ValueError):
        t_interval(np.array([1.0]))
