"""Every plot: every format, into the user's axes, the configuration in its title, the legend
clear of the data."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import replify  # noqa: E402
from replify import plots  # noqa: E402
from replify.errors import InvalidArgumentError  # noqa: E402

MAGIC = {".png": b"\x89PNG", ".pdf": b"%PDF", ".svg": b"<?xml"}


@pytest.fixture(scope="module")
def reports():
    kw = dict(n=3, horizon=1500, pairs=12, seed=0, adversary_params={"means": [0.3, 0.5, 0.7]})
    # B = 150 with the default eps certifies only rho <= 0.73: the report says so, and so does its warning
    with pytest.warns(replify.errors.ReplicabilityWarning, match="certify only rho"):
        wrapped = replify.evaluate("ftplb-star", "iid-bernoulli", rho=0.1, block_size=150, **kw)
    return [wrapped,
            replify.evaluate("constant", "iid-bernoulli", rho=0.1, **kw), replify.evaluate("hedge", "iid-bernoulli", **kw)]


@pytest.fixture(scope="module")
def result():
    return replify.sweep(learners=["constant", "hedge"], adversaries=["iid-bernoulli"], horizons=[300, 3000, 30000],
                         ns=[3], rhos=[0.2], pairs=8, seed=0)


@pytest.fixture(scope="module")
def rows(result):
    return result.records()


def draw(name, reports, result, **kw):
    rows = result.records()
    if name == "agreement":
        return plots.plot_agreement(reports[0], **kw)
    if name == "regret_curve":
        return plots.plot_regret_curve(reports, **kw)
    if name == "violin":
        return plots.plot_regret_distribution(reports, **kw)
    if name == "box":
        return plots.plot_regret_distribution(reports, kind="box", **kw)
    if name == "tradeoff":
        return plots.plot_tradeoff(reports, **kw)
    if name == "against":
        axes = kw.pop("ax", None)
        return plots.plot_against(rows, "horizon", axes=None if axes is None else (axes, axes), **kw)
    if name == "sweep":
        axes = kw.pop("ax", None)
        return plots.plot_sweep(result, axes=None if axes is None else (axes, axes), **kw)
    if name == "regret_vs_T":
        return plots.plot_regret_vs_T(rows, **kw)
    raise AssertionError(name)


NAMES = ["agreement", "regret_curve", "violin", "box", "tradeoff", "against", "regret_vs_T", "sweep"]


@pytest.mark.filterwarnings("ignore::replify.errors.ReplicabilityWarning")
# every plot as a PNG in the default tier (every format: test_sweep_cli_plots.py's test_plots_save_png_svg_and_pdf); as PDF and SVG in the full
@pytest.mark.parametrize("suffix", [pytest.param(s, marks=[] if s == ".png" else [pytest.mark.slow]) for s in sorted(MAGIC)])
@pytest.mark.parametrize("name", NAMES)
def test_every_plot_saves_every_format(name, suffix, reports, result, tmp_path):
    path = tmp_path / f"plot{suffix}"
    draw(name, reports, result, path=path)
    assert path.read_bytes()[:5].startswith(MAGIC[suffix])
    plt.close("all")


@pytest.mark.parametrize("name", NAMES)
def test_every_plot_draws_into_the_users_axes_states_its_configuration_and_keeps_its_legend_clear(name, reports, result):
    mine, ax = plt.subplots()
    fig = draw(name, reports, result, ax=ax)
    assert fig is mine
    title = " ".join(a.get_title() for a in fig.axes)
    assert "iid-bernoulli" in title and "n=3" in title and "pairs=" in title
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = list(fig.legends) + [a.get_legend() for a in fig.axes if a.get_legend() is not None]
    assert legends
    for legend in legends:  # below the panels: it covers no curve, point or band
        for a in fig.axes:
            assert not legend.get_window_extent(renderer).overlaps(a.get_window_extent(renderer))
    plt.close("all")


def test_the_caption_names_what_the_reports_share(reports):
    assert plots.caption(reports[0]) == r"ftplb-star, iid-bernoulli, $T=1500$, $n=3$, $\rho=0.1$, pairs=12"
    assert plots.caption(reports) == "iid-bernoulli, $T=1500$, $n=3$, pairs=12"  # hedge has no rho


def test_the_distribution_plot_shows_every_pairs_regret(reports):
    fig = plots.plot_regret_distribution(reports, kind="box")
    means = fig.axes[0].collections[-1].get_offsets()[:, 1]
    assert np.allclose(means, [r.regret.mean() for r in reports])
    plt.close("all")


def test_plot_against_refuses_what_is_not_a_numeric_field(rows):
    with pytest.raises(InvalidArgumentError, match=r"x must be a numeric field.*got 'colour'"):
        plots.plot_against(rows, "colour")
    with pytest.raises(InvalidArgumentError, match=r"kind must be 'violin' or 'box'"):
        plots.plot_regret_distribution([], kind="bars")


def test_plot_against_uses_a_log_axis_for_a_wide_range(rows):
    fig = plots.plot_against(rows, "horizon")
    assert fig.axes[0].get_xscale() == "log"  # 300 .. 30 000
    fig = plots.plot_against(rows, "horizon", logx=False)
    assert fig.axes[0].get_xscale() == "linear"
    plt.close("all")
