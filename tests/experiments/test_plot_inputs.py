"""Every plot function refuses what it cannot draw with an error that names the plot, what it takes
and what came (it raised AttributeError, KeyError or TypeError from inside the drawing code), and
says what it leaves out (rows with NaN drew blank lines without a word)."""

import warnings

import attrs
import numpy as np
import pytest

import replify
from replify import plots
from replify.errors import ArgumentTypeError, InvalidArgumentError, ReplifyWarning, PlotDataWarning

pytest.importorskip("matplotlib")

REPORT_PLOTS = ["plot_agreement", "plot_regret_curve", "plot_regret_distribution", "plot_tradeoff"]
RECORD_PLOTS = ["plot_regret_vs_T", "plot_rho_vs_block_size"]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plots.pyplot().close("all")


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


@pytest.mark.parametrize("name", ["plot_regret_curve", "plot_regret_distribution", "plot_tradeoff"])
@pytest.mark.parametrize("bad", ["no", "False", 0, None])
def test_references_must_be_a_bool(name, bad, report):
    # a string is true in Python: references="no" drew the reference rows it meant to leave out
    with pytest.raises(ArgumentTypeError, match=rf'argument "references" \(\w+ is not an instance of bool\) in {name}'):
        getattr(plots, name)(report, references=bad)
    assert getattr(plots, name)(report, references=False) is not None


@pytest.fixture(scope="module")
def horizons():
    # a sweep over horizons alone: no learner is measured at two block sizes for one T
    return replify.sweep(learners=["constant", "hedge"], adversaries=["iid-bernoulli"], horizons=[200, 800], ns=[2],
                         rhos=[0.2], pairs=2, seed=0)


def test_rho_against_the_block_size_needs_two_block_sizes(horizons):
    with pytest.raises(InvalidArgumentError, match=r"plot_rho_vs_block_size draws rho_hat against the block size, so "
                                                   r"it needs a learner with blocks measured at two block sizes.*"
                                                   r"these rows have no learner with blocks.*plot_against\(records, "
                                                   r"'horizon'\)"):
        plots.plot_rho_vs_block_size(horizons)
    # the sweep's figure draws rho_hat against T instead of an empty panel
    fig = plots.plot_sweep(horizons)
    right = fig.axes[1]
    assert right.get_xlabel().startswith("horizon") and len(right.containers) == 2  # constant and hedge


def test_rows_with_nan_are_left_out_with_a_warning_naming_them(horizons):
    rows = [dict(r) for r in horizons.records()]
    rows[1]["regret_mean"] = float("nan")  # constant at T=800
    with pytest.warns(PlotDataWarning, match=r"plot_regret_vs_T: constant \(adversary=iid-bernoulli, "
                                                r"horizon=800.*left out of the figure: .*NaN"):
        fig = plots.plot_regret_vs_T(rows)
    lines = [c.lines[0] for c in fig.axes[0].containers]
    assert sorted(len(line.get_xdata()) for line in lines) == [1, 2]  # constant's one row left, no gap
    with pytest.warns(PlotDataWarning, match=r"plot_against: constant .*horizon=800"):
        plots.plot_against(rows, "horizon")
    for row in rows:
        row["rho_hat"] = float("nan")
    with pytest.raises(InvalidArgumentError, match=r"plot_against: no results row has horizon, rho_hat.* measured"), \
            pytest.warns(PlotDataWarning):
        plots.plot_against(rows, "horizon")


def test_reports_with_nan_are_left_out_with_a_warning_naming_them(report):
    blank = attrs.evolve(report, learner="blank", regret_curve_values=np.full_like(report.regret_curve_values, np.nan))
    with pytest.warns(PlotDataWarning, match=r"plot_regret_curve: 'blank' left out of the figure: the regret curve "
                                                r"is NaN"):
        fig = plots.plot_regret_curve([report, blank])
    assert [label.split(" (")[0] for label in fig.axes[0].get_legend_handles_labels()[1]] == ["hedge"]
    holes = report.regret_curve_values.copy()
    holes[:, :, 3:7] = np.nan
    with pytest.warns(PlotDataWarning, match=r"4 of the 30 steps of 'hedge' left out"):
        fig = plots.plot_regret_curve(attrs.evolve(report, regret_curve_values=holes))
    assert np.isfinite(fig.axes[0].lines[0].get_ydata()).all()  # one line over the steps measured, no gap
    lost = attrs.evolve(report, learner="lost", regret=np.full_like(report.regret, np.nan))
    with pytest.warns(PlotDataWarning, match=r"plot_tradeoff: 'lost' left out"):
        plots.plot_tradeoff([report, lost])
    with pytest.warns(PlotDataWarning, match=r"2 of the 2 pairs of 'lost' left out"):
        plots.plot_regret_distribution([report, lost])


def test_a_report_of_one_pair_is_drawn_without_an_interval(report):
    # an interval needs two pairs: the old message was "values must hold at least 2 numbers for a t interval"
    one = attrs.evolve(report, pairs=1, identical=report.identical[:1], agreement=report.agreement[:1],
                       first_divergence=report.first_divergence[:1], regret=report.regret[:1],
                       regret_curve_values=report.regret_curve_values[:1])
    ax = plots.plot_regret_curve(one).axes[0]
    assert not ax.collections  # no band
    assert np.allclose(ax.lines[0].get_ydata(), report.regret_curve_values[0].mean(axis=0))
    assert ax.get_ylabel() == "measured regret"  # no "95% CI": there is none
    assert plots.plot_tradeoff(one).axes[0].get_xlabel() == "measured regret"
    replicable = quiet_evaluate()
    one = attrs.evolve(replicable, pairs=1, identical=replicable.identical[:1], agreement=replicable.agreement[:1],
                       first_divergence=replicable.first_divergence[:1], regret=replicable.regret[:1],
                       regret_curve_values=replicable.regret_curve_values[:1])
    with pytest.warns(ReplifyWarning, match="drawn without its reference rows.*holds 1 pair and an evaluation needs "
                                            "at least 2"):
        plots.plot_regret_curve(one)


def quiet_evaluate():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplifyWarning)
        return replify.evaluate("ftplb-star", "iid-bernoulli", n=2, horizon=60, pairs=2, seed=0, rho=0.2, block_size=6)
