"""Curves that coincide all stay visible (their markers set off along the shared line, and the
legend saying which lies on which), and a figure's title keeps the data set's name when the
figure adds the reference rows itself."""

import warnings

import numpy as np
import pytest

import replify
from replify.errors import ReplifyWarning

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from replify import plots  # noqa: E402
from replify.experiments.lower_bounds import BANDIT_REFERENCES, BANDIT_REPLICABLE, Demo, _plot_bandit_coin  # noqa: E402


def legend_texts(fig):
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    return [" ".join(t.get_text().split()) for legend in legends for t in legend.get_texts()]  # unwrapped


def test_coinciding_regret_curves_keep_every_learners_markers_and_say_so():
    kw = dict(n=3, horizon=400, pairs=2, seed=0, progress=False)
    mine = replify.evaluate("hedge", "iid-bernoulli", label="my hedge", **kw)
    theirs = replify.evaluate("hedge", "iid-bernoulli", label="hedge", **kw)  # the same learner: the same curve
    other = replify.evaluate("ftpl", "iid-bernoulli", **kw)
    fig = plots.plot_regret_curve([mine, theirs, other], references=False)
    lines = [line for line in fig.axes[0].lines if line.get_label() and not line.get_label().startswith("_")]
    starts = [line.get_markevery()[0] for line in lines]
    assert len(set(starts)) == 3  # three lines, three sets of marker positions: none hidden under another
    assert all(line.get_markevery()[1] == lines[0].get_markevery()[1] for line in lines)
    texts = legend_texts(fig)
    assert any(t.startswith("hedge") and "on my hedge's curve" in t for t in texts), texts
    assert not any("ftpl" in t and "curve)" in t for t in texts)  # ftpl's curve is its own


def test_the_three_panel_figure_keeps_the_data_sets_name_when_it_adds_the_references():
    polls = replify.datasets.polls()
    kw = dict(n=polls.n, horizon=polls.horizon, pairs=2, seed=0, adversary_params=polls.bootstrap(window=10),
              progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplifyWarning)
        certified = replify.evaluate("ftplb-star", "local-bootstrap", rho=0.1, **kw)
        fig, (left, middle, right) = plots.figure(1, 3)
        plots.plot_regret_curve([certified], ax=left)  # constant and hedge added by the figure, on the same draws
        plots.plot_regret_distribution([certified], kind="box", ax=middle, title=False)
        plots.plot_tradeoff([certified], ax=right, title=False)
    fig.canvas.draw()
    assert fig._suptitle.get_text().startswith("polls (resampled)")
    assert {"constant", "hedge"} <= {t.split(" ")[0] for t in legend_texts(fig)}


def test_the_bandit_coin_references_that_share_a_point_all_show():
    rows = [{"algorithm": label, "knob": knob, "scale": s, "rho_hat": r, "worst regret": g}
            for label, knob in BANDIT_REPLICABLE.items() for s, r, g in ((1.0, 0.05, 400.0), (0.01, 0.6, 90.0))]
    # ucb1 and exp3 at the very same point, under thompson's
    at = {"constant": (0.0, 500.0), "ucb1": (1.0, 40.0), "thompson": (1.0, 41.0), "exp3": (1.0, 40.0)}
    rows += [{"algorithm": label, "knob": "-", "scale": "-", "rho_hat": at[label][0], "worst regret": at[label][1]}
             for label in BANDIT_REFERENCES]
    demo = Demo("bandit-coin", rows, {"T": 20_000, "pairs per sign": 20, "rho": 0.1}, _plot_bandit_coin)
    fig = demo.plot()
    points = [c for c in fig.axes[0].collections if c.get_label() and "(reference)" in c.get_label()]
    assert len(points) == 4
    sizes = [float(c.get_sizes()[0]) for c in points]
    assert sizes == sorted(sizes, reverse=True)  # each drawn inside the one before
    assert all(len(c.get_facecolors()) == 0 or c.get_facecolors()[0][3] == 0 for c in points)  # hollow
    assert [c.get_zorder() for c in points] == sorted(c.get_zorder() for c in points)
    labels = [c.get_label() for c in points]
    assert "exp3 (reference), at ucb1 and thompson's point" in labels, labels
