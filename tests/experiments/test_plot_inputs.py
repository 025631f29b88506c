"""Every plot function refuses what it cannot draw with an error that names the plot, what it takes
and what came (it raised AttributeError, KeyError or TypeError from inside the drawing code)."""

import pytest

import replify
from replify import plots
from replify.errors import InvalidArgumentError

pytest.importorskip("matplotlib")

REPORT_PLOTS = ["plot_agreement", "plot_regret_curve", "plot_regret_distribution", "plot_tradeoff"]
RECORD_PLOTS = ["plot_regret_vs_T", "plot_rho_vs_block_size"]


@pytest.fixture(scope="module")
def report():
    return replify.evaluate("hedge", "iid-bernoulli", n=2, horizon=30, pairs=2, seed=0)


@pytest.mark.parametrize("name", REPORT_PLOTS)
@pytest.mark.parametrize("bad", [None, [], "a report", [1], [{}], {"rho_hat": 0.1}])
def test_report_plots_refuse_what_is_not_a_report(name, bad):
    with pytest.raises(InvalidArgumentError, match=rf"{name} takes a Report"):
        getattr(plots, name)(bad)


@pytest.mark.parametrize("name", RECORD_PLOTS + ["plot_against"])
@pytest.mark.parametrize("bad, message", [
    (None, "takes a SweepResult or its records"),
    ("rows", "takes a SweepResult or its records"),
    ([], "needs at least one results row"),
    ([1], r"records\[0\] must be a dict"),
    ([{}], r"records\[0\] lacks"),
])
def test_record_plots_refuse_what_is_not_a_results_row(name, bad, message, report):
    extra = {"x": "horizon"} if name == "plot_against" else {}
    with pytest.raises(InvalidArgumentError, match=message):
        getattr(plots, name)(bad, **extra)


def test_sweep_and_frontier_plots_say_what_they_take(report):
    with pytest.raises(InvalidArgumentError, match="plot_sweep takes a SweepResult"):
        plots.plot_sweep([report])
    with pytest.raises(InvalidArgumentError, match=r"plot_frontier takes Calibration.frontier\(\)'s dict.*lacking points"):
        plots.plot_frontier({"horizon": 10})
    with pytest.raises(InvalidArgumentError, match="plot_frontier takes"):
        plots.plot_frontier([report])
    assert plots.plot_agreement(report) is not None
