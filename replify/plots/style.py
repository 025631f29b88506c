"""One figure style for every plot replify draws: what a machine-learning venue expects of a
figure, applied the same way everywhere (docs/data.md, "Figures for papers").

* **Layout.** Constrained layout (matplotlib's layout engine), also on a figure of yours that has
  none; legends outside the data, to the right of their axes, where the layout makes room for
  them — no legend covers a curve, a point or another panel's label.
* **Fonts.** TrueType (Type 42) in PDF and PostScript, text kept as text in SVG: no Type 3 font,
  which several venues reject.
* **Colours.** One colour per learner across every panel of a figure (the first panel to draw a
  learner fixes its colour); the reference rows keep theirs everywhere: ``constant`` grey,
  the non-replicable baselines black.
* **Axes.** Log axes are log axes: :func:`log_axis` sets one only when every value drawn is
  positive (regret can be negative: the axis then stays linear and its label says why), labels
  only the major ticks, and puts majors at 1, 2, 5 × 10^k when an axis spans less than two decades.
* **Titles.** ``title=True`` states the configuration the figure's learners share (adversary —
  or the dataset's name —, T, n, ρ, pairs), ``False`` draws none (a panel of a larger figure), a
  string is used as it is.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
import textwrap
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from replify.checks import check_output_path
from replify.errors import InvalidArgumentError
from replify.files import atomic_writer

#: The rcParams of every figure replify draws and saves.
STYLE: dict[str, Any] = {
    "pdf.fonttype": 42,  # TrueType, not Type 3
    "ps.fonttype": 42,
    "svg.fonttype": "none",  # text as text
    "figure.constrained_layout.use": True,
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.6,
    "lines.markersize": 5,
    "errorbar.capsize": 3,
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
#: Markers by colour index: two learners never differ by colour alone.
MARKERS = "osD^vP*X<>"


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


def figure(nrows: int = 1, ncols: int = 1, *, width: float | None = None, height: float | None = None,
           **subplots: Any) -> tuple[Any, Any]:
    """``(figure, axes)`` in replify's style — constrained layout, room for the legends — for a
    multi-panel figure of replify's plots (each plot's ``ax=`` one of ``axes``): the recipe for a
    paper's figure. ``width`` and ``height`` are in inches (default 5 per column, 3.4 per row)."""
    with styled():
        return pyplot().subplots(nrows, ncols, figsize=(width or 5.0 * ncols, height or 3.4 * nrows), **subplots)


def axes_for(ax: Any, figsize: tuple[float, float]) -> tuple[Any, Any]:
    """``(figure, axes)``: the user's axes and their figure (given constrained layout when it has no
    layout engine, so that legends outside the axes get their room), or a new styled figure."""
    if ax is not None:
        fig = ax.figure
        if fig.get_layout_engine() is None:
            fig.set_layout_engine("constrained")
        return fig, ax
    with styled():
        return pyplot().subplots(figsize=figsize)


def save_figure(fig: Any, path: str | Path | None) -> Any:
    """Save to ``path`` (``.png``, ``.svg`` or ``.pdf``) when given, in :data:`STYLE` (TrueType
    fonts); return the figure. The plot replaces an earlier file at ``path`` only once it is
    written whole: a failure (a full disk) leaves the earlier file as it was
    (:func:`replify.files.atomic_writer`)."""
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


#: Characters per line of a legend entry: longer labels wrap, so that the legend stays narrow.
LEGEND_WIDTH = 28


def wrap_label(text: str, chars: int) -> str:
    """``text`` broken into lines of at most ``chars`` characters (its own line breaks kept)."""
    return "\n".join(line for part in str(text).split("\n")
                     for line in (textwrap.wrap(part, max(4, chars), break_on_hyphens=False) or [""]))


def legend(ax: Any, **kw: Any) -> None:
    """The legend outside the axes, to their right: it never covers a curve or a point (the
    constrained layout makes room for it). Long labels wrap; a legend taller than the figure
    takes more columns."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    labels = [wrap_label(label, LEGEND_WIDTH) for label in labels]
    lines = sum(label.count("\n") + 1 for label in labels) + len(labels) * 0.5  # entries are spaced
    size = pyplot().rcParams["legend.fontsize"]
    size = float(size) if not isinstance(size, str) else 8.0
    room = max(4.0, 0.85 * ax.figure.get_figheight() * 72 / (1.25 * size))
    ncol = max(1, int(np.ceil(lines / room)))
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, ncol=ncol, **kw)


def set_title(ax: Any, title: Any, default: str) -> None:
    """``title=True``: ``default`` (the shared configuration); ``False``: none; a string: itself."""
    if title is True and default:
        ax.set_title(_wrapped(ax, default))
    elif isinstance(title, str) and title:
        ax.set_title(_wrapped(ax, title))
    elif title not in (True, False) and not isinstance(title, str):
        raise InvalidArgumentError(f"title must be True, False or a string; got {title!r}")


def _wrapped(ax: Any, text: str) -> str:
    """``text`` broken into lines no wider than the axes (a title wider than a narrow panel would
    run over its neighbours, or off the figure)."""
    inches = ax.get_position().width * ax.figure.get_figwidth()
    size = float(pyplot().rcParams["axes.titlesize"]) if not isinstance(
        pyplot().rcParams["axes.titlesize"], str) else 10.0
    chars = max(16, int(inches * 72 / (0.6 * size)))
    return "\n".join(textwrap.wrap(text, chars, break_on_hyphens=False)) if len(text) > chars else text


def log_axis(ax: Any, which: str, values: Any) -> bool:
    """Make ``ax``'s ``which`` axis ("x" or "y") logarithmic when every one of ``values`` is
    positive; return whether it did. Only major ticks are labelled; an axis spanning less than two
    decades gets majors at 1, 2, 5 × 10^k so that it has labelled ticks at all."""
    from matplotlib.ticker import LogFormatterSciNotation, LogLocator, NullFormatter

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0 or np.any(v <= 0):
        return False
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    decades = np.log10(v.max() / v.min()) if v.max() > v.min() else 0.0
    subs = (1.0, 2.0, 5.0) if decades < 2 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(LogFormatterSciNotation(labelOnlyBase=False) if decades < 2 else LogFormatterSciNotation())
    axis.set_minor_formatter(NullFormatter())
    return True


def fraction_axis(ax: Any) -> None:
    """A y axis for a fraction (ρ̂, agreement): linear, even on axes used before with a log
    scale, from just below 0 to just above 1."""
    ax.set_yscale("linear")
    ax.set_ylim(-0.03, 1.03)


def markers_for(points: int) -> dict[str, Any]:
    """Markers on a line of few points (a block learner's curve has one per block: a single point
    without a marker would be invisible), every k-th on a long one."""
    return {"markevery": max(1, points // 12)} if points > 24 else {}


def _rho_of(report: Any) -> float | None:
    config = (report.provenance or {}).get("configuration", {})
    rho = config.get("rho")
    return rho if rho is not None else (report.params or {}).get("rho")


def as_list(reports: Any) -> list:
    return list(reports) if isinstance(reports, (list, tuple)) else [reports]


def text_of(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def caption(reports: Any) -> str:
    """The configuration shared by ``reports`` — adversary (the dataset's name for real data),
    T, n, ρ, pairs — as one title line (the learners are in the legend; a field that differs
    between them is left out)."""
    reports = as_list(reports)
    fields = []
    for name, get in (("", adversary_name), ("T=", lambda r: r.horizon), ("n=", lambda r: r.n),
                      ("rho=", _rho_of), ("pairs=", lambda r: r.pairs)):
        values = {get(r) for r in reports}
        if len(values) == 1 and (value := values.pop()) is not None:
            fields.append(f"{name}{value:g}" if isinstance(value, float) else f"{name}{value}")
    if len({r.learner for r in reports}) == 1:
        fields.insert(0, reports[0].learner)
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
    for key, name in (("adversary", "adversary"), ("horizon", "T"), ("n", "n"), ("rho", "rho"), ("pairs", "pairs")):
        values = {str(r.get(key)) for r in rows}
        if key not in exclude and len(values) == 1 and (value := values.pop()) != "None":
            fields.append(f"{name}={value}")
    return ", ".join(fields)


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
