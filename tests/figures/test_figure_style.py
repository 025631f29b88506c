"""Figures a paper can print as they are: every plot function, alone and in a multi-panel figure
(a row of three, a 2 x 2 grid) at a column's and a page's width (3.25 and 6.75 in), in replify's
figure() and in the user's own plt.subplots, in PNG, SVG and PDF, has no two visible texts
overlapping and no text outside the figure (matplotlib gives every drawn text's window extent),
every font at least 7 pt at the figure's size, mathematics as mathtext, legends clear of the
panels, markers at a fraction's edges whole and category labels unbroken; embeds no Type 3 font,
draws a replicable learner beside its reference rows (constant as a curve), keeps one colour per
learner across panels, and uses log axes only for positive values."""

import contextlib
import io
import itertools
import json
import pickle
import re
import sys
import warnings

import numpy as np
import pytest

import replify
from replify.errors import ReplifyWarning

from conftest import TEMP_DIR

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
from matplotlib.text import Text  # noqa: E402

from replify import plots  # noqa: E402
from replify.experiments.lower_bounds import Demo  # noqa: E402

# png (Agg, at the figure's dpi) and pdf (72 dpi, vector); svg, the other vector back end, placed every text of
# the three-panel figure within 1.5 pt of pdf, and each save costs 0.3-0.6 s of the suite
FORMATS = ("png", "pdf")
SPREAD = {"means": [0.3, 0.45, 0.55, 0.7]}


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplifyWarning)
        return fn()


@pytest.fixture(scope="module")
def reports():
    kw = dict(n=4, horizon=2000, pairs=10, seed=0, adversary_params=SPREAD)
    return {
        "ftplb-star": quiet(lambda: replify.evaluate("ftplb-star", "iid-bernoulli", rho=0.1, block_size=200, **kw)),
        "constant": replify.evaluate("constant", "iid-bernoulli", **kw),
        "hedge": replify.evaluate("hedge", "iid-bernoulli", **kw),
    }


@pytest.fixture(scope="module")
def sweep():
    return quiet(lambda: replify.sweep(
        learners=["ftplb-star", "hedge"], adversaries=["iid-bernoulli"], horizons=[500, 2000], ns=[4], rhos=[0.1],
        block_multipliers=[0.03, 0.1], pairs=4, seed=0, adversary_params={"iid-bernoulli": SPREAD}))


FRONTIER = {
    "learner": "ftplb-star", "n": 4, "horizon": 2000, "rho": 0.1,
    "points": [{"regret": r, "rho_hat": h, "rho_ci": [max(0, h - 0.1), min(1, h + 0.1)], "certified": c, "calibrated": k}
               for r, h, c, k in ((300, 0.02, True, False), (120, 0.06, False, True), (80, 0.4, False, False),
                                  (60, 0.8, False, False))],
    "references": {"constant": {"regret": 400.0, "rho_hat": 0.0}, "hedge": {"regret": 30.0, "rho_hat": 1.0}},
}


def drawn_texts(fig, fmt):
    """Every text drawn when ``fig`` is saved as ``fmt``, with its extent, and the canvas size."""
    recorded, original = {}, Text.draw

    def draw(self, renderer):
        original(self, renderer)
        if self.get_visible() and self.get_text().strip():  # a text drawn twice (a layout pass) counts once
            recorded[id(self)] = (self, self.get_window_extent(renderer), renderer)

    Text.draw = draw
    try:
        fig.savefig(io.BytesIO(), format=fmt)
    finally:
        Text.draw = original
    return list(recorded.values())


def check_layout(fig, label, formats=FORMATS):
    """No two visible texts overlap (1 pt of slack for touching boxes), none leaves the figure;
    the texts drawn (in the last format)."""
    for fmt in formats:
        texts = drawn_texts(fig, fmt)
        assert texts, f"{label}: nothing drawn in {fmt}"
        width, height = texts[0][2].get_canvas_width_height()
        for text, box, _ in texts:
            assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1, \
                f"{label} ({fmt}): {text.get_text()!r} leaves the figure: {box.bounds} in {width}x{height}"
        for (a, ba, _), (b, bb, _) in itertools.combinations(texts, 2):
            inner = [type(x).from_extents(x.x0 + 1, x.y0 + 1, x.x1 - 1, x.y1 - 1) for x in (ba, bb)]
            assert not inner[0].overlaps(inner[1]), \
                f"{label} ({fmt}): {a.get_text()!r} overlaps {b.get_text()!r} ({ba.bounds} and {bb.bounds})"
    return texts


def check_fonts(fig, label):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="pdf")
    data = buffer.getvalue()
    assert b"/Type3" not in data, f"{label}: the PDF embeds a Type 3 font"
    assert b"/TrueType" in data or b"/CIDFontType2" in data, f"{label}: no TrueType font in the PDF"


def alone(reports, sweep):
    """Every plot function on its own figure."""
    r = reports
    return {
        "agreement": lambda: plots.plot_agreement(r["ftplb-star"]),
        "regret_curve": lambda: plots.plot_regret_curve([r["ftplb-star"]]),
        "regret_curve_log": lambda: plots.plot_regret_curve([r["ftplb-star"], r["constant"], r["hedge"]], log=True),
        "regret_distribution": lambda: plots.plot_regret_distribution([r["ftplb-star"], r["constant"], r["hedge"]]),
        "regret_distribution_box": lambda: plots.plot_regret_distribution([r["hedge"]], kind="box"),
        "tradeoff": lambda: plots.plot_tradeoff([r["ftplb-star"]]),
        "regret_vs_T": lambda: plots.plot_regret_vs_T(sweep),
        "rho_vs_block_size": lambda: plots.plot_rho_vs_block_size(sweep),
        "sweep": lambda: plots.plot_sweep(sweep),
        "against": lambda: plots.plot_against(sweep, "horizon"),
        "frontier": lambda: plots.plot_frontier(FRONTIER),
    }


# two plots in the default tier (a curve with its legend, and the sweep's panels), every one in the full tier
@pytest.mark.parametrize("name", [pytest.param(name, marks=[] if name in ("regret_curve", "sweep") else [pytest.mark.slow])
                                  for name in alone({"ftplb-star": 0, "constant": 0, "hedge": 0}, None)])
def test_every_plot_alone_has_no_overlapping_text_and_no_type3_font(name, reports, sweep):
    # at replify's own size, a column's width: legible in print as it is (check_paper_figure)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*collapsed to zero")  # the layout gave up: panels of no size
        fig = quiet(alone(reports, sweep)[name])
        check_paper_figure(fig, name, texts=check_layout(fig, name))
    assert fig.get_figwidth() == plots.COLUMN_WIDTH or name in ("sweep", "regret_distribution"), fig.get_figwidth()
    check_fonts(fig, name)
    plots.pyplot().close(fig)


@pytest.mark.slow  # the three-panel figure, in the default tier: test_coinciding_curves.py draws it
def test_the_papers_three_panels_in_one_figure(reports, sweep):
    # the guide's recipe: regret curves, the regret distribution and the trade-off side by side
    fig, (left, middle, right) = plots.figure(1, 3)
    three = [reports["ftplb-star"], reports["constant"], reports["hedge"]]
    plots.plot_regret_curve(three, ax=left, log=True)
    plots.plot_regret_distribution(three, ax=middle, title=False)
    plots.plot_tradeoff(three, ax=right, title=False)
    check_layout(fig, "three panels")
    check_fonts(fig, "three panels")
    # one colour per learner across the panels: the legend of each panel agrees
    seen = {}
    for ax in (left, right):
        for handle, label in zip(*ax.get_legend_handles_labels()):
            colour = handle.get_color() if hasattr(handle, "get_color") else handle.lines[0].get_color()
            name = label.split("\n")[0]
            assert seen.setdefault(name, colour) == colour, (name, seen[name], colour)
    assert {"ftplb-star", "constant", "hedge"} <= set(seen)
    # the configuration said once, over the whole figure (not as a tall title over a narrow panel)
    assert not any(ax.get_title() for ax in (left, middle, right))
    assert fig._suptitle.get_text().startswith("iid-bernoulli, $T=2000$, $n=4$")
    # a figure still pickles (matplotlib's figures do): its layout and its fitters are plain objects
    again = pickle.loads(pickle.dumps(fig))
    again.savefig(io.BytesIO(), format="png")
    # the same plots in a figure of the user's own, without a layout engine: given constrained layout
    plt = plots.pyplot()
    fig2, axes = plt.subplots(2, 2, figsize=(11, 7))
    plots.plot_agreement(reports["ftplb-star"], ax=axes[0, 0])
    plots.plot_frontier(FRONTIER, ax=axes[0, 1])
    plots.plot_sweep(sweep, axes=(axes[1, 0], axes[1, 1]))
    check_layout(fig2, "user's 2x2 figure")
    plt.close(fig)
    plt.close(fig2)


def test_a_replicable_learner_is_drawn_beside_its_reference_rows(reports):
    fig = plots.plot_regret_curve([reports["ftplb-star"]])
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels[:3] == ["ftplb-star ($\\hat{\\rho}=0.200$)", "constant ($\\hat{\\rho}=0.000$)",
                          "hedge ($\\hat{\\rho}=1.000$)"]
    # measured on the very same draws as the report's own reference rows
    added = plots.with_references([reports["ftplb-star"]], True, "test")
    assert np.array_equal(added[1].regret, reports["constant"].regret)
    assert np.array_equal(added[2].regret, reports["hedge"].regret)
    bandit = quiet(lambda: replify.evaluate("rep-elimination", "bernoulli-arms", n=3, horizon=600, pairs=4, seed=1,
                                            rho=0.2))
    assert [r.learner for r in plots.with_references([bandit], True, "test")] == ["rep-elimination", "constant", "ucb1"]
    assert [r.learner for r in plots.with_references([bandit], False, "test")] == ["rep-elimination"]
    back = replify.Report.from_dict(json.loads(json.dumps(reports["ftplb-star"].to_dict(per_pair=True))))
    with pytest.warns(ReplifyWarning, match="drawn without its reference rows"):
        assert len(plots.with_references([back], True, "test")) == 1
    plots.pyplot().close("all")


def test_log_axes_are_log_axes_and_negative_regret_stays_linear():
    plt = plots.pyplot()
    fig, ax = plt.subplots()
    assert plots.log_axis(ax, "y", [3e3, 4e3, 6e3]) and ax.get_yscale() == "log"
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels(minor=True) if t.get_visible() and t.get_text()]
    assert labels == []  # no minor labels to collide ("3x10^3 4x10^3 6x10^3")
    assert not plots.log_axis(ax, "x", [-5.0, 10.0, 100.0]) and ax.get_xscale() == "linear"
    plt.close(fig)


def test_labels_and_titles(reports, sweep):
    fig = plots.plot_regret_vs_T(sweep)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert not any(label.startswith("hedge, B x") for label in labels), labels  # hedge has no blocks
    assert any(label.startswith("ftplb-star, $B\\times0.03$") for label in labels), labels
    fig = plots.plot_agreement(reports["ftplb-star"], title=False)
    assert fig.axes[0].get_title() == ""
    fig = plots.plot_agreement(reports["ftplb-star"], title="my title")
    assert fig.axes[0].get_title() == "my title"
    data = np.random.default_rng(0).random((400, 3))
    real = quiet(lambda: replify.evaluate("hedge", "local-bootstrap", n=3, horizon=400, pairs=2, seed=0,
                                          adversary_params={"costs": data, "window": 5, "name": "electricity"}))
    assert plots.caption(real).startswith("hedge, electricity (resampled)")
    with pytest.raises(replify.errors.InvalidArgumentError, match="title must be True, False or a string; got 3"):
        plots.plot_agreement(reports["ftplb-star"], title=3)
    plots.pyplot().close("all")


def demo_command(name):
    """The command the demo tests of tests/experiments run (the same marker: one shared run)."""
    return pytest.mark.early_subprocess(
        [sys.executable, "-m", "replify.cli", "demo", name, "--quick", "--json", "d.json", "--plot", "d.png"],
        cwd=TEMP_DIR, timeout=600,
    )


@pytest.mark.parametrize("name", [pytest.param(name, marks=demo_command(name))
                                  for name in ("coin", "phases", "lazy-leader", "bandit-coin", "adversarial-bandit")])
@pytest.mark.slow
def test_every_demo_figure_has_no_overlapping_text_and_no_type3_font(name, early_subprocess):
    assert early_subprocess.returncode == 0, early_subprocess.stderr
    demo = Demo.from_dict(json.loads((early_subprocess.cwd / "d.json").read_text()))
    fig = demo.plot()
    check_layout(fig, f"demo {name}")
    check_fonts(fig, f"demo {name}")
    plots.pyplot().close(fig)


ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


@pytest.mark.early_subprocess([sys.executable, ROOT / "examples" / "make_figures.py", "--quick", "--out", "quick-figures"],
                              cwd=TEMP_DIR, timeout=600)
@pytest.mark.slow
def test_every_documentation_figure_comes_from_one_script(early_subprocess, tmp_path):
    # the script the documentation's figures come from runs (small sizes here), writing every one of them
    out = early_subprocess
    assert out.returncode == 0, out.stderr
    root = ROOT
    sys.path.insert(0, str(root / "examples"))
    try:
        from make_figures import FIGURES
    finally:
        sys.path.remove(str(root / "examples"))
    folder = out.cwd / "quick-figures"
    for name in FIGURES:
        assert (folder / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    # every figure in docs/ is one the script writes, and every one the script writes is shown in the docs
    shown = {p.name for p in (root / "docs").glob("*.png")}
    assert shown == set(FIGURES), shown ^ set(FIGURES)
    pages = "".join(p.read_text() for p in (root / "docs").glob("*.md"))
    assert all(f"({name})" in pages for name in FIGURES), [n for n in FIGURES if f"({n})" not in pages]


@pytest.mark.slow
def test_many_learners_with_long_labels_stay_apart():
    # labels a user gives can be long, and a figure may hold many learners: legends wrap and take
    # columns, tick labels wrap to their slot — still no overlap, nothing off the figure
    names = ["hedge", "ftpl", "ewa", "constant", "boa", "ml-poly", "split-commit", "ftplb-star"]
    many = [quiet(lambda: replify.evaluate(name, "iid-bernoulli", n=3, horizon=600, pairs=4, seed=0,
                                           label=f"{name} with a rather long descriptive label number {i}",
                                           **({"rho": 0.1} if name in ("split-commit", "ftplb-star") else {})))
            for i, name in enumerate(names)]
    for label, draw in (("curve", lambda: plots.plot_regret_curve(many, log=True)),
                        ("distribution", lambda: plots.plot_regret_distribution(many)),
                        ("tradeoff", lambda: plots.plot_tradeoff(many))):
        fig = quiet(draw)
        check_layout(fig, f"many learners: {label}")
        plots.pyplot().close(fig)


# -- a paper's widths -------------------------------------------------------------------------
# A figure is printed at the size it is drawn: a column of a two-column venue (3.25 in) or its
# page (6.75 in); alone, in a row of three panels and in a 2 x 2 grid; in replify's figure() or in
# a figure the user laid out with plt.subplots (matplotlib's own settings: 10 pt fonts).
WIDTHS = (plots.COLUMN_WIDTH, plots.PAGE_WIDTH)
SHAPES = {"alone": (1, 1), "1x3": (1, 3), "2x2": (2, 2)}
#: Heights of the figures a user lays out, by width (replify's figure() takes its default height);
#: 13 in: a figure as wide as a screen, printed into a page.
USER_HEIGHTS = {"alone": {6.75: 3.0}, "1x3": {3.25: 2.6, 6.75: 2.8, 13: 3.6}, "2x2": {3.25: 4.6, 6.75: 5.0}}


def panels(reports, sweep):
    """What each panel of a figure draws: one plot into one axes (``title``: the first panel's)."""
    r = reports
    three = [r["ftplb-star"], r["constant"], r["hedge"]]
    return {
        "agreement": lambda ax, title: plots.plot_agreement(r["ftplb-star"], ax=ax, title=title),
        "regret_curve": lambda ax, title: plots.plot_regret_curve([r["ftplb-star"]], ax=ax, title=title),
        "regret_curve_log": lambda ax, title: plots.plot_regret_curve(three, ax=ax, log=True, title=title),
        "regret_distribution": lambda ax, title: plots.plot_regret_distribution(three, ax=ax, title=title),
        "regret_distribution_box": lambda ax, title: plots.plot_regret_distribution(three, kind="box", ax=ax,
                                                                                    title=title),
        "tradeoff": lambda ax, title: plots.plot_tradeoff([r["ftplb-star"]], ax=ax, title=title),
        "regret_vs_T": lambda ax, title: plots.plot_regret_vs_T(sweep, ax=ax, title=title),
        "rho_vs_block_size": lambda ax, title: plots.plot_rho_vs_block_size(sweep, ax=ax, title=title),
        "frontier": lambda ax, title: plots.plot_frontier(FRONTIER, ax=ax, title=title),
        # the two-panel plots take two axes
        "sweep": lambda axes, title: plots.plot_sweep(sweep, axes=axes, title=title),
        "against": lambda axes, title: plots.plot_against(sweep, "horizon", axes=axes, title=title),
    }


#: The figures drawn at each width: every plot alone, and every plot in a row of three and in a
#: 2 x 2 grid beside others (a two-panel plot takes two neighbouring axes).
FIGURES = {
    **{f"alone: {name}": ("alone", [name]) for name in list(alone({"ftplb-star": 0, "constant": 0, "hedge": 0}, None))
       if name not in ("sweep", "against")},
    "1x3: the paper's recipe": ("1x3", ["regret_curve_log", "regret_distribution", "tradeoff"]),
    "1x3: agreement, block size, frontier": ("1x3", ["agreement", "rho_vs_block_size", "frontier"]),
    "1x3: regret against T, boxes, one curve": ("1x3", ["regret_vs_T", "regret_distribution_box", "regret_curve"]),
    "1x3: sweep and trade-off": ("1x3", ["sweep", "tradeoff"]),
    "1x3: against and distribution": ("1x3", ["against", "regret_distribution"]),
    "2x2: four plots": ("2x2", ["agreement", "frontier", "regret_curve_log", "regret_distribution"]),
    "2x2: four more": ("2x2", ["tradeoff", "rho_vs_block_size", "regret_vs_T", "regret_distribution_box"]),
    "2x2: sweep over against": ("2x2", ["sweep", "against"]),
}


def draw_figure(kind, width, maker, reports, sweep):
    """The figure ``FIGURES[kind]`` at ``width`` inches, made by replify's figure() or laid out by
    the user with plt.subplots — in matplotlib's own settings (10 pt fonts) at a page's width, in
    replify's (plots.styled(): 7-8 pt) at a column's, where 10 pt type leaves three panels no room
    — every panel drawn through ax=/axes=."""
    shape, names = FIGURES[kind]
    column = width == plots.COLUMN_WIDTH
    with plots.styled() if maker == "user" and column else contextlib.nullcontext():
        fig, axes = (plots.figure(*SHAPES[shape], width=width) if maker == "figure" else plots.pyplot().subplots(
            *SHAPES[shape], figsize=(width, USER_HEIGHTS[shape][width])))
        free = list(np.ravel(axes))
        draw = panels(reports, sweep)
        for i, name in enumerate(names):
            if name in ("sweep", "against"):
                draw[name]((free.pop(0), free.pop(0)), i == 0)
            else:
                draw[name](free.pop(0), i == 0)
    assert not free, kind
    return fig


def check_paper_figure(fig, label, texts=None):
    """Legible in print: no two texts overlap and none leaves the figure (unless ``texts``, the
    drawn texts, say check_layout has just checked it), every font at least 7 pt at the figure's
    own size (the size it is printed at), ρ̂ written as mathematics, every legend clear of every
    panel's data, every marker of a fraction's axis drawn whole, category labels whole words."""
    texts = texts or check_layout(fig, label, formats=("png",))
    for text, _, _ in texts:
        assert text.get_fontsize() >= plots.MIN_FONT_SIZE == 7, \
            f"{label}: {text.get_text()!r} prints at {text.get_fontsize():.1f} pt"
        assert not re.search(r"(?<!\\)\brho", text.get_text()), \
            f"{label}: {text.get_text()!r} writes rho as a word, not as mathematics"
    renderer = fig.canvas.get_renderer()
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    for legend in legends:
        for ax in fig.axes:
            assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer)), \
                f"{label}: a legend covers a panel"
    for ax in fig.axes:
        if tuple(ax.get_ylim()) and ax.get_ylim()[0] < 0 < 1 < ax.get_ylim()[1] < 1.5:  # a fraction's axis
            box = ax.get_window_extent(renderer)
            for line in ax.lines:
                marker = line.get_marker()
                if marker in (None, "None", "", " ") or not line.get_clip_on() or not len(line.get_xydata()):
                    continue
                radius = line.get_markersize() / 2 * fig.dpi / 72
                xy = ax.transData.transform(line.get_xydata())
                y = xy[:, 1][np.isfinite(xy[:, 1])]
                assert (y - radius >= box.y0 - 0.5).all() and (y + radius <= box.y1 + 0.5).all(), \
                    f"{label}: a marker at the edge of the fraction's axis is clipped"
        for tick in ax.get_xticklabels():
            words = tick.get_text().replace("\n", " ").split()
            assert all(w != "-" and not w.endswith("-") for w in words), f"{label}: {tick.get_text()!r} breaks a word"


#: (figure, width, who laid it out): every plot alone at a page's width in the user's axes (at a
#: column's, replify's own size: the test above), every multi-panel figure in replify's figure() at
#: a column's width and in the user's at a page's; the paper's recipe also the other way round, at
#: 5.5 in (where constrained layout collapsed, legends over the panels), and in a user's figure as
#: wide as a screen.
CASES = ([(kind, plots.PAGE_WIDTH, "user") for kind in FIGURES if kind.startswith("alone")]
         + [(kind, width, maker) for kind in FIGURES if not kind.startswith("alone")
            for width, maker in ((plots.COLUMN_WIDTH, "figure"), (plots.PAGE_WIDTH, "user"))]
         + [("1x3: the paper's recipe", width, maker) for width, maker in (
             (plots.PAGE_WIDTH, "figure"), (5.5, "figure"), (plots.COLUMN_WIDTH, "user"), (13, "user"))])


# the default tier prints the plots alone (the 1x3 figure: test_the_papers_three_panels_in_one_figure); the full
# tier every composite figure at every width
@pytest.mark.parametrize("kind, width, maker", [
    pytest.param(*case, marks=[] if case[0].startswith("alone") else [pytest.mark.slow]) for case in CASES])
def test_every_plot_prints_legibly_at_a_papers_widths(kind, width, maker, reports, sweep):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplifyWarning)
        warnings.filterwarnings("error", message=".*collapsed to zero")  # the layout gave up: panels of no size
        fig = draw_figure(kind, width, maker, reports, sweep)
        check_paper_figure(fig, f"{kind}, {width} in, {maker}")
    plots.pyplot().close(fig)


def test_references_are_curves_medians_neutral_targets_with_their_value(reports):
    three = [reports["ftplb-star"], reports["constant"], reports["hedge"]]
    ax = plots.plot_regret_curve(three).axes[0]
    # constant plays one block of T: measured at T only, drawn as a line over the horizon, not a lone marker
    grey = [line for line in ax.lines if line.get_label().startswith("constant")]
    assert len(grey) == 1 and len(grey[0].get_xdata()) > 2
    assert grey[0].get_xdata()[0] < 0.05 * 2000 and grey[0].get_xdata()[-1] == 2000
    assert np.isclose(grey[0].get_ydata()[-1], reports["constant"].regret_mean)
    assert any("measured at $T$ only" in label for label in ax.get_legend_handles_labels()[1])
    # the medians (and extrema) summarise every learner: no learner's colour
    ax = plots.plot_regret_distribution(three).axes[0]
    learners = {plots.colour(ax.figure, r.learner)[0] for r in three}
    for collection in ax.collections:
        if collection.get_segments() if hasattr(collection, "get_segments") else False:
            for colour in collection.get_colors():
                assert matplotlib.colors.to_hex(colour) not in learners - {"#7f7f7f", "#000000"}
    assert matplotlib.colors.to_hex(ax.collections[-1].get_edgecolors()[0]) == plots.style.NEUTRAL
    box = plots.plot_regret_distribution(three, kind="box").axes[0]
    medians = [line for line in box.lines if line.get_color() == plots.style.NEUTRAL and line.get_linewidth() == 1.4]
    assert len(medians) >= 3
    # the target rho says its value; rho-hat is mathematics, one format everywhere
    labels = plots.plot_tradeoff(three).axes[0].get_legend_handles_labels()[1]
    assert "target $\\rho=0.1$" in labels
    fig = plots.plot_regret_distribution(three)
    fig.draw_without_rendering()
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert all(t.endswith(plots.rho_hat_text(r.rho_hat)) for t, r in zip(ticks, three)), ticks
    assert plots.rho_hat_text(0.2) == "$\\hat{\\rho}=0.200$"
    plots.pyplot().close("all")


def test_category_labels_never_break_a_word():
    # the names of the issue: "ftplb-star" broke into "ftplb-" / "star", "hedge" ran into "constant"
    narrow = [quiet(lambda: replify.evaluate(name, "iid-bernoulli", n=3, horizon=300, pairs=3, seed=0,
                                             **({"rho": 0.1} if name in ("split-commit", "ftplb-star") else {})))
              for name in ("ftplb-star", "split-commit", "hedge", "constant")]
    plt = plots.pyplot()
    # the user's figure of the issue, one at a page's width (matplotlib's 10 pt), one at a column's (7-8 pt)
    for size, settings in (((13, 3.6), contextlib.nullcontext), ((6.75, 2.6), contextlib.nullcontext),
                           ((3.25, 2.4), plots.styled)):
        with settings():
            fig, axes = plt.subplots(1, 3, figsize=size)
            plots.plot_regret_distribution(narrow, ax=axes[1], title=False)
            plots.plot_tradeoff(narrow, ax=axes[2], title=False)
            plots.plot_regret_curve(narrow, ax=axes[0])
        check_layout(fig, f"distribution in {size}", formats=("png",))
        for tick, r in zip(axes[1].get_xticklabels(), narrow):  # the name whole, then its rho-hat if there is room
            text = tick.get_text().replace("\n", " ")
            assert text == r.learner or text.startswith((r.learner + " ", r.learner + ", ")), (size, tick.get_text())
        plt.close(fig)


@pytest.mark.slow  # a documentation figure's script: the plots' own legibility is the default tier's
def test_the_price_of_a_certificate_figure_prints_legibly_at_a_columns_width():
    # docs/price.png (examples/make_figures.py) at its quick sizes: no overlap, nothing off the figure, every
    # font at least 7 pt at the printed size (3.25 in)
    import types

    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from make_figures import price_of_certificate
    finally:
        sys.path.remove(str(ROOT / "examples"))
    calibrated = types.SimpleNamespace(horizon=2_000, regret=300.0, constant_regret=400.0)
    fig = price_of_certificate(None, calibration=calibrated, quick=True)
    assert fig.get_figwidth() == pytest.approx(plots.COLUMN_WIDTH)
    check_layout(fig, "price of a certificate")
    check_fonts(fig, "price of a certificate")
    plots.pyplot().close(fig)


def test_the_offpolicy_figure_is_legible_at_a_papers_width():
    # docs/offpolicy.png: the legend took 31% of the figure's height in a 10-point font beside 7-point
    # axes (drawn outside replify's style), the intervals hid behind large markers and a marker at
    # rho_hat = 0 was clipped. Now: one font, a legend under a quarter of the height, the true values
    # drawn over the markers, and the disagreement markers never clipped.
    import matplotlib
    from matplotlib.collections import LineCollection

    matplotlib.use("Agg")
    from replify.offpolicy.demo import wine_demo

    fig = wine_demo(quick=True).plot()
    fig.canvas.draw()
    left, right = fig.axes[:2]
    legend = fig.legends[0]
    assert legend.get_texts()[0].get_fontsize() <= left.get_xticklabels()[0].get_fontsize()
    assert legend.get_window_extent().height / fig.bbox.height < 0.25
    truth = [c for c in left.collections if isinstance(c, LineCollection) and c.get_label() == "true value"]
    assert truth and truth[0].get_zorder() > max(line.get_zorder() for line in left.lines)
    assert all(line.get_markersize() <= 4 for line in left.lines if line.get_marker() not in (None, "None", "", "_"))
    markers = [line for line in right.lines if line.get_marker() not in (None, "None", "")]
    assert markers and not any(line.get_clip_on() for line in markers) and right.get_ylim()[0] < 0
