"""Figures a paper can print as they are: every plot function, alone and in a multi-panel figure,
in PNG, SVG and PDF, has no two visible texts overlapping and no text outside the figure
(matplotlib gives every drawn text's window extent), embeds no Type 3 font, draws a replicable
learner beside its reference rows, keeps one colour per learner across panels, and uses log axes
only for positive values."""

import io
import itertools
import json
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

FORMATS = ("png", "svg", "pdf")
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
        block_multipliers=[0.3, 1.0], pairs=4, seed=0, adversary_params={"iid-bernoulli": SPREAD}))


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


def check_layout(fig, label):
    """No two visible texts overlap (1 pt of slack for touching boxes), none leaves the figure."""
    for fmt in FORMATS:
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


@pytest.mark.parametrize("name", list(alone({"ftplb-star": 0, "constant": 0, "hedge": 0}, None)))
def test_every_plot_alone_has_no_overlapping_text_and_no_type3_font(name, reports, sweep):
    fig = quiet(alone(reports, sweep)[name])
    check_layout(fig, name)
    check_fonts(fig, name)
    plots.pyplot().close(fig)


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
    assert sum(bool(ax.get_title()) for ax in (left, middle, right)) == 1  # the configuration said once
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
    labels = [label.split("\n")[0] for label in fig.axes[0].get_legend_handles_labels()[1]]
    assert labels == ["ftplb-star", "constant", "hedge"]
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
    assert any(label.startswith("ftplb-star, B x 0.3") for label in labels), labels
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
                                  for name in ("coin", "phases", "lazy-leader", "bandit-coin")])
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
