"""One figure style for every plot replify draws: what a machine-learning venue expects of a
figure, applied the same way everywhere (docs/data.md, "Figures a paper can print").

* **Sizes.** A figure is drawn at the size it is printed: one column of a two-column venue
  (:data:`COLUMN_WIDTH`, 3.25 in) by default, a page (:data:`PAGE_WIDTH`, 6.75 in) for several
  panels; every font is at least :data:`MIN_FONT_SIZE` (7 pt) at that size, so that the figure is
  never scaled down into the column.
* **Layout.** Constrained layout (matplotlib's layout engine), also on a figure of yours that has
  none. The learners share one legend below the panels (a figure legend, where the layout makes
  room for it): it never covers a curve, a point or another panel's label. Titles, axis labels,
  legend entries and category labels are wrapped at spaces to the room they have once the figure
  is laid out (a word is never broken), and category labels turn upright when even a word does not
  fit across.
* **Text.** Mathematics as mathematics: ρ̂, ρ, T, n, B and t in mathtext, ρ̂ always with three
  decimals (:func:`rho_hat_text`).
* **Fonts.** TrueType (Type 42) in PDF and PostScript, text kept as text in SVG: no Type 3 font,
  which several venues reject.
* **Colours.** One colour per learner across every panel of a figure (the first panel to draw a
  learner fixes its colour); the reference rows keep theirs everywhere: ``constant`` grey,
  the non-replicable baselines black; summaries drawn over several learners (medians) neutral.
* **Axes.** Log axes are log axes: :func:`log_axis` sets one only when every value drawn is
  positive (regret can be negative: the axis then stays linear and its label says why), labels
  only the major ticks, and puts majors at 1, 2, 5 × 10^k when an axis spans less than two decades
  and has room for them. A fraction's axis (ρ̂, agreement) leaves room for the markers at 0 and 1.
* **Titles.** ``title=True`` states the configuration the figure's learners share (adversary —
  or the dataset's name —, T, n, ρ, pairs), ``False`` draws none (a panel of a larger figure), a
  string is used as it is.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import re
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from replify.base.checks import check_output_path
from replify.base.files import atomic_writer
from replify.errors import InvalidArgumentError, PlotDataWarning, warn

#: Inches: one column of a two-column venue, and its full page width (the widths a figure is printed at).
COLUMN_WIDTH = 3.25
PAGE_WIDTH = 6.75
#: Points: the smallest font of every figure replify draws, at the size it is printed.
MIN_FONT_SIZE = 7.0

#: The rcParams of every figure replify draws and saves.
STYLE: dict[str, Any] = {
    "pdf.fonttype": 42,  # TrueType, not Type 3
    "ps.fonttype": 42,
    "svg.fonttype": "none",  # text as text
    "figure.constrained_layout.use": True,
    "figure.dpi": 100,
    "savefig.dpi": 300,
    # sizes in points at the printed size: none below MIN_FONT_SIZE
    "font.size": 8,
    "axes.titlesize": 8.5,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.frameon": False,
    "legend.handlelength": 1.8,
    "legend.columnspacing": 1.4,
    "axes.titlepad": 4.0,
    "axes.labelpad": 2.5,
    "axes.linewidth": 0.6,
    "xtick.major.size": 2.5,
    "ytick.major.size": 2.5,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.minor.size": 1.5,
    "ytick.minor.size": 1.5,
    "xtick.major.pad": 2.0,
    "ytick.major.pad": 2.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.2,
    "lines.markersize": 3.5,
    "errorbar.capsize": 2,
    "figure.constrained_layout.h_pad": 0.03,
    "figure.constrained_layout.w_pad": 0.03,
}

#: The settings replify makes for every figure (not only while it draws): TrueType fonts.
FONT_TYPES = ("pdf.fonttype", "ps.fonttype")

#: The file formats every plot saves to, by the path's suffix (PDF is what papers print).
PLOT_SUFFIXES = (".png", ".svg", ".pdf")

#: Colours of the learners, in the order a figure meets them (Okabe–Ito: distinguishable in
#: colour-blind vision and in greyscale print), and the reference rows' fixed ones.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#882255", "#117733",
           "#332288")
REFERENCE_COLOURS = {"constant": "#7f7f7f", "hedge": "#000000", "ucb1": "#000000", "thompson": "#444444",
                     "exp3": "#222222"}
#: The colour of what summarises several learners at once (medians, extrema): no learner's.
NEUTRAL = "#333333"
#: Markers by colour index: two learners never differ by colour alone.
MARKERS = "osD^vP*X<>"

#: ρ̂ in mathtext, and the one format of its value everywhere (legends, category labels).
RHO_HAT = r"$\hat{\rho}$"


def rho_hat_text(value: float) -> str:
    """``ρ̂ = 0.123`` in mathtext: the one way every figure prints a measured ρ̂."""
    return rf"$\hat{{\rho}}={float(value):.3f}$"


def math_safe(text: Any) -> str:
    """``text`` (a name a user gave) safe to print beside replify's mathtext: its dollar signs are
    escaped unless they pair up (then they are the user's own mathematics)."""
    text = str(text)
    return text.replace("$", r"\$") if len(re.findall(r"(?<!\\)\$", text)) % 2 else text


def left_out(where: str, what: Sequence[str], why: str) -> None:
    """Warn (:class:`~replify.errors.PlotDataWarning`) that ``what`` (learners, results rows,
    steps) is left out of the figure, and ``why`` (a NaN where a number is drawn): a blank line or a
    missing point without a word would pass for data."""
    if what:
        warn(f"{where}: {'; '.join(what)} left out of the figure: {why}", PlotDataWarning)


def require_matplotlib(what: str) -> None:
    """Refuse ``what`` (an option asking for a figure) before any work when matplotlib is missing:
    a long run must not end in that refusal."""
    if importlib.util.find_spec("matplotlib") is None:
        raise InvalidArgumentError(f"{what} needs matplotlib, which is not installed: pip install 'replify[plot]'")


def pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend, or a clear error without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise InvalidArgumentError("plots need matplotlib: pip install 'replify[plot]'") from None
    # TrueType fonts whoever saves the figure (fig.savefig of the user's own included): the one
    # global setting replify makes, and the one every venue that rejects Type 3 fonts asks for.
    for key in FONT_TYPES:
        plt.rcParams[key] = STYLE[key]
    return plt


@contextlib.contextmanager
def styled() -> Iterator[None]:
    """:data:`STYLE` in force for what is drawn or saved inside (the user's own settings outside)."""
    plt = pyplot()
    with plt.rc_context(STYLE):
        yield


def plot_function(func: Callable[..., Any]) -> Callable[..., Any]:
    """A plot of replify's: drawn in :data:`STYLE` when it makes its own figure (the texts it
    creates take their sizes when they are created), in your settings when it draws into your
    axes (``ax=`` or ``axes=``)."""

    @functools.wraps(func)
    def draw(*args: Any, **kwargs: Any) -> Any:
        _check_axes(func.__name__, kwargs)
        given = kwargs.get("ax") if kwargs.get("ax") is not None else kwargs.get("axes")
        if given is not None and not hasattr(given, "figure"):  # a pair of axes
            given = next(iter(np.ravel(np.asarray(given, dtype=object))), None)
        # a figure made by figure() is replify's too: drawn in its style, as the figure itself is
        own = given is None or bool(getattr(_root(getattr(given, "figure", None)), "_replify_styled", False))
        with styled() if own else contextlib.nullcontext():
            return func(*args, **kwargs)

    return draw


def _check_axes(owner: str, kwargs: dict[str, Any]) -> None:
    """``ax=`` one matplotlib Axes, ``axes=`` a pair of them, refused otherwise before anything is
    drawn (a string or a figure would fail deep inside matplotlib)."""
    ax, axes = kwargs.get("ax"), kwargs.get("axes")
    if ax is None and axes is None:
        return
    pyplot()  # matplotlib, or the error naming the extra that brings it
    from matplotlib.axes import Axes

    if ax is not None and not isinstance(ax, Axes):
        raise InvalidArgumentError(
            f"{owner}: ax must be a matplotlib Axes (one of the axes of replify.plots.figure() or plt.subplots()), "
            f"or None for a figure of its own; got {_shown(ax)}"
        )
    if axes is not None:
        flat = list(np.ravel(np.asarray(axes, dtype=object))) if isinstance(axes, (list, tuple, np.ndarray)) else None
        if flat is None or len(flat) != 2 or not all(isinstance(a, Axes) for a in flat):
            raise InvalidArgumentError(
                f"{owner}: axes must be a pair of matplotlib Axes (the axes of replify.plots.figure(2, 1) or "
                f"plt.subplots(2)), or None for a figure of its own; got {_shown(axes)}"
            )


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{text if len(text) <= 80 else text[:77] + '...'} ({type(value).__name__})"


def constrained(fig: Any) -> bool:
    """Whether ``fig`` is laid out by constrained layout (which makes room for a figure legend)."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    return isinstance(_root(fig).get_layout_engine(), ConstrainedLayoutEngine)


def _root(fig: Any) -> Any:
    """The figure itself of a subfigure (a figure is its own)."""
    return getattr(fig, "figure", fig) or fig


def save_figure(fig: Any, path: str | Path | None) -> Any:
    """Save to ``path`` (``.png``, ``.svg`` or ``.pdf``) when given, in :data:`STYLE` (TrueType
    fonts); return the figure. The plot replaces an earlier file at ``path`` only once it is
    written whole: a failure (a full disk) leaves the earlier file as it was
    (:func:`replify.base.files.atomic_writer`)."""
    if path is not None:
        p = check_output_path(path, what="plot path", suffixes=PLOT_SUFFIXES)
        with styled(), atomic_writer(p, what="plot") as fh:  # matplotlib needs the format: a file object has no suffix
            fig.savefig(fh, format=p.suffix.lower()[1:])
    return fig


def colour(fig: Any, learner: str) -> tuple[str, str]:
    """``(colour, marker)`` of ``learner`` in ``fig``: the same in every panel of the figure."""
    table = fig.__dict__.setdefault("_replify_colours", {})
    if learner not in table:
        base = learner.split(" (")[0]
        if base in REFERENCE_COLOURS:
            table[learner] = (REFERENCE_COLOURS[base], "s" if base == "constant" else "^")
        else:
            k = sum(1 for name in table if name.split(" (")[0] not in REFERENCE_COLOURS)
            table[learner] = (PALETTE[k % len(PALETTE)], MARKERS[k % len(MARKERS)])
    return table[learner]


# -- captions --------------------------------------------------------------------------------
def _rho_of(report: Any) -> float | None:
    config = (report.provenance or {}).get("configuration", {})
    rho = config.get("rho")
    return rho if rho is not None else (report.params or {}).get("rho")


def as_list(reports: Any) -> list:
    return list(reports) if isinstance(reports, (list, tuple)) else [reports]


def text_of(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _field(name: str, value: Any, math: bool) -> str:
    value = f"{value:g}" if isinstance(value, float) else f"{value}"
    return f"${name}={value}$" if math else f"{name}={math_safe(value)}"


def caption(reports: Any) -> str:
    """The configuration shared by ``reports`` — adversary (the dataset's name for real data),
    T, n, ρ, pairs — as one title line (the learners are in the legend; a field that differs
    between them is left out)."""
    reports = as_list(reports)
    fields = []
    for name, get, math in (("", adversary_name, False), ("T", lambda r: r.horizon, True),
                            ("n", lambda r: r.n, True), (r"\rho", _rho_of, True), ("pairs", lambda r: r.pairs, False)):
        values = {get(r) for r in reports}
        if len(values) == 1 and (value := values.pop()) is not None:
            fields.append(_field(name, value, math) if name else math_safe(value))
    if len({r.learner for r in reports}) == 1:
        fields.insert(0, math_safe(reports[0].learner))
    return ", ".join(fields)


def adversary_name(report: Any) -> str:
    """What to call a report's adversary: the dataset's name when it resamples a dataset that has
    one (``adversary_params={"name": ...}``, as :meth:`replify.datasets.Dataset.bootstrap` gives),
    else the adversary's own name."""
    config = (report.provenance or {}).get("configuration", {})
    name = (config.get("adversary_params") or {}).get("name")
    return f"{name} (resampled)" if isinstance(name, str) and name else report.adversary


def records_caption(rows: Sequence[dict[str, Any]], exclude: Sequence[str] = ()) -> str:
    """The configuration fields that all results ``rows`` share (adversary, T, n, ρ, pairs), as
    one title line; a field that varies (or is drawn on an axis: ``exclude``) is left out."""
    fields = []
    for key, name, math in (("adversary", "", False), ("horizon", "T", True), ("n", "n", True),
                            ("rho", r"\rho", True), ("pairs", "pairs", False)):
        values = {str(r.get(key)) for r in rows}
        if key not in exclude and len(values) == 1 and (value := values.pop()) != "None":
            fields.append(_field(name, value, math) if name else math_safe(value))
    return ", ".join(fields)


def rho_label(kinds: Sequence[str | None]) -> str:
    """The label of a ρ̂ axis: measured, and with which interval (:func:`rho_interval_label`)."""
    return f"measured {RHO_HAT} ({rho_interval_label(kinds)} CI)"


def rho_interval_label(kinds: Sequence[str | None]) -> str:
    """A short name for the intervals on ρ̂ drawn together (``Report.rho_ci_kind`` of each; None,
    a record written before reports said, is the fixed-n exact interval): "exact 95%",
    "anytime-valid 95%" after sequential runs, or both names when a figure mixes them."""
    names = []
    for kind in kinds:
        level = re.search(r"\d+(?:\.\d+)?%", kind or "")
        name = ("anytime-valid " if (kind or "").startswith("anytime-valid") else "exact ") + (
            level.group(0) if level else "95%")
        if name not in names:
            names.append(name)
    return " / ".join(names) if names else "exact 95%"
