"""Texts fitted to a figure at the size it is printed (docs/data.md, "Figures a paper can print"):
:func:`figure` and the axes a plot draws into, fonts measured and texts wrapped at spaces, titles and
axis labels fitted to the room the layout leaves (:class:`replify.plots.layout.FittedLayout` runs
the fitters registered here), the one legend below the panels, log and fraction axes. The style
itself — sizes, rcParams, colours, captions — is :mod:`replify.plots.style`."""

from __future__ import annotations

import contextlib
import functools
import re
import textwrap
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from replify.errors import InvalidArgumentError
from replify.plots.layout import fitted_layout_engine
from replify.plots.style import (
    COLUMN_WIDTH, PAGE_WIDTH, _root, constrained, math_safe, pyplot, rho_hat_text, save_figure, styled,
)

def figure(nrows: int = 1, ncols: int = 1, *, width: float | None = None, height: float | None = None,
           **subplots: Any) -> tuple[Any, Any]:
    """``(figure, axes)`` in replify's style — constrained layout, room for the legend below the
    panels — for a multi-panel figure of replify's plots (each plot's ``ax=`` one of ``axes``): the
    recipe for a paper's figure. ``width`` and ``height`` are in inches, the size the figure is
    printed at: by default a column (:data:`COLUMN_WIDTH`) for one column of panels, a page
    (:data:`PAGE_WIDTH`) for more, and 2 in a row plus the height of the legend below the panels
    (a ``height`` given is kept as it is)."""
    with styled():
        size = (width or (COLUMN_WIDTH if ncols == 1 else PAGE_WIDTH), height or 2.0 * nrows + 0.5)
        fig, axes = pyplot().subplots(nrows, ncols, figsize=size, **subplots)
    fitted_layout(fig)
    fig._replify_styled = True
    if height is None:  # no height asked for: the legend below the panels adds its own
        fig._replify_base_height = 2.0 * nrows + 0.25
    return fig, axes


def axes_for(ax: Any, figsize: tuple[float, float]) -> tuple[Any, Any]:
    """``(figure, axes)``: the user's axes and their figure (given constrained layout when it has no
    layout engine, so that the legend below the panels gets its room), or a new styled figure of
    ``figsize`` inches (the printed size; its legend below adds its own height)."""
    if ax is not None:
        fitted_layout(ax.figure)
        return ax.figure, ax
    with styled():
        fig, ax = pyplot().subplots(figsize=figsize)
    fitted_layout(fig)
    fig._replify_styled = True
    fig._replify_base_height = figsize[1]  # and the legend below it, however tall it is
    return fig, ax


# -- text: measured, and wrapped at spaces --------------------------------------------------------
def font(size: Any) -> Any:
    """The font of a text of ``size`` (points, or a name like "small") in the settings in force."""
    from matplotlib.font_manager import FontProperties

    return FontProperties(size=size)


@functools.lru_cache(maxsize=4096)
def _extent(line: str, prop: Any) -> tuple[float, float]:
    from matplotlib.backends.backend_agg import RendererAgg

    renderer = RendererAgg(1, 1, 72)  # 72 dpi: pixels are points
    if len(re.findall(r"(?<!\\)\$", line)) >= 2:  # as matplotlib decides: pairs of unescaped dollars
        with contextlib.suppress(ValueError):  # not mathtext after all: measured as plain text
            w, h, _ = renderer.get_text_width_height_descent(line, prop, ismath=True)
            return float(w), float(h)
    w, h, _ = renderer.get_text_width_height_descent(line.replace(r"\$", "$"), prop, ismath=False)
    return float(w), float(h)


def text_width(text: str, prop: Any) -> float:
    """Points: the width of ``text``'s widest line in font ``prop`` (mathtext measured as drawn)."""
    return max((_extent(line, prop)[0] for line in str(text).split("\n") if line), default=0.0)


def _words(line: str) -> list[str]:
    """The words of ``line``: runs without a space, a mathtext span (``$...$``) kept whole."""
    return re.findall(r"(?:\$[^$]*\$|[^\s$]|\$)+", line)


def wrap_to(text: str, width: float, prop: Any) -> str:
    """``text`` broken at spaces into lines at most ``width`` points wide in font ``prop`` (its own
    line breaks kept). A word is never broken: one wider than ``width`` has a line of its own."""
    lines = []
    for part in str(text).split("\n"):
        line = ""
        for word in _words(part):
            candidate = f"{line} {word}" if line else word
            if line and text_width(candidate, prop) > width:
                lines.append(line)
                line = word
            else:
                line = candidate
        lines.append(line)
    return "\n".join(lines)


#: Characters per line of a legend entry beside its axes (:func:`legend`): longer labels wrap.
LEGEND_WIDTH = 28


def wrap_label(text: str, chars: int) -> str:
    """``text`` broken at spaces into lines of at most ``chars`` characters (its own line breaks
    kept; a longer word keeps a line of its own, never broken)."""
    return "\n".join(line for part in str(text).split("\n")
                     for line in (textwrap.wrap(part, max(4, chars), break_on_hyphens=False,
                                                break_long_words=False) or [""]))


# -- fitting texts to the room the layout leaves ----------------------------------------------
def _points(fig: Any, pixels: float) -> float:
    return float(pixels) * 72.0 / float(fig.dpi)


def fitter(ax: Any, kind: str, fit: Callable[..., None], *args: Any) -> None:
    """Register ``fit(ax, *args)`` (which wraps or turns ``ax``'s texts to the room they have) to run
    each time the figure is laid out (:class:`replify.plots.layout.FittedLayout`); one per
    ``(ax, kind)``, the latest kept. ``fit`` is a module's function and ``args`` plain values, so
    that the figure still pickles."""
    fig = _root(ax.figure)
    fig.__dict__.setdefault("_replify_fitters", {})[(id(ax), kind)] = (ax, functools.partial(fit, ax, *args))
    fitted_layout(fig)


def fitted_layout(fig: Any) -> None:
    """Lay ``fig`` out with :func:`replify.plots.layout.fitted_layout_engine`'s engine (constrained layout that
    fits replify's texts): a figure without a layout engine gets it, one with constrained layout
    keeps its settings (pads, compression); another engine (tight layout) is left as it is, and the
    texts unfitted."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine  # optional dependency: only when drawing

    FittedLayout = fitted_layout_engine()
    root = _root(fig)
    engine = root.get_layout_engine()
    if engine is None:
        root.set_layout_engine(FittedLayout())
    elif type(engine) is ConstrainedLayoutEngine:
        root.set_layout_engine(FittedLayout(**engine.get(), compress=bool(getattr(engine, "_compress", False))))


def fit_texts(fig: Any) -> None:
    """Lay ``fig`` out now, fitting replify's texts to the room they have (as drawing or saving it
    does): for reading the texts as they will be printed."""
    _root(fig).draw_without_rendering()


def set_labels(ax: Any, xlabel: str | Sequence[str] | None = None, ylabel: str | Sequence[str] | None = None) -> None:
    """Axis labels fitted to their axes once the figure is laid out: the x label to the axes'
    width, the y label to their height (a label longer than its axes would run into the next
    panel's), wrapped at spaces into two lines at most. Where even two lines are too long (a
    narrow panel) the label is said shorter: without "measured " first, then without its
    parenthesis ("measured regret (95% CI)", "regret (95% CI)", "regret"), then in the shorter
    forms given after it (a sequence: ``("block size $B$", "$B$")``)."""
    for key, label, setter in (("_replify_xlabel", xlabel, ax.set_xlabel), ("_replify_ylabel", ylabel, ax.set_ylabel)):
        if label is not None:
            forms = [label] if isinstance(label, str) else list(label)
            setter(forms[0])
            ax.__dict__[key] = forms

    fitter(ax, "labels", _fit_labels)
    fitter(ax, "ticks", _fit_ticks)


def _fit_labels(ax: Any) -> None:
    fig = ax.figure
    for key, text, room in (("_replify_xlabel", ax.xaxis.label, ax.bbox.width),
                            ("_replify_ylabel", ax.yaxis.label, ax.bbox.height)):
        raw = ax.__dict__.get(key)
        if raw is not None:
            text.set_text(_fitted_label(raw, _points(fig, room), text.get_fontproperties()))


def _fitted_label(label: Sequence[str], room: float, prop: Any) -> str:
    """The longest form of ``label`` (its first, shortened as :func:`set_labels` says, then the
    others) that fits ``room`` points in two lines wrapped at spaces, or its shortest form."""
    forms = [label[0]]
    for shorter in (lambda s: re.sub(r"^measured ", "", s), lambda s: re.sub(r"\s*\([^()]*\)", "", s).strip()):
        short = shorter(forms[-1])
        if short and short not in forms:
            forms.append(short)
    forms += [form for form in label[1:] if form not in forms]
    for form in forms:
        wrapped = wrap_to(form, room, prop)
        if wrapped.count("\n") < 2 and text_width(wrapped, prop) <= room:
            return wrapped
    return wrap_to(forms[-1], room, prop)


def set_title(ax: Any, title: Any, default: str) -> None:
    """``title=True``: ``default`` (the shared configuration); ``False``: none; a string: itself.
    Wrapped at spaces to the room it has once the figure is laid out (a title wider than a narrow
    panel would run over its neighbours, or off the figure). In a figure of several panels the
    shared configuration is said once, over the whole figure (a one-line figure title rather than
    a tall title over one narrow panel) — unless the figure has a title already that says
    something else (then over its own panel); a string stays over its own panel."""
    if title not in (True, False) and not isinstance(title, str):
        raise InvalidArgumentError(f"title must be True, False or a string; got {title!r}")
    text = default if title is True else title if isinstance(title, str) else ""
    if not text:
        return
    fig = ax.figure
    if title is True and len(fig.axes) > 1:
        said = fig.__dict__.get("_replify_suptitle")
        if said == text:
            return  # the configuration, said once
        if said is None and getattr(fig, "_suptitle", None) is None:
            fig.suptitle(text, fontsize=ax.title.get_fontsize())
            fig.__dict__["_replify_suptitle"] = text
            fitter(fig.axes[0], "figure title", _fit_figure_title, text)
            return
    ax.set_title(_wrapped(ax, text))
    ax.__dict__["_replify_title"] = text
    fitter(ax, "title", _fit_title)


def _fit_title(ax: Any) -> None:
    ax.title.set_text(wrap_to(ax.__dict__["_replify_title"], _points(ax.figure, ax.bbox.width),
                              ax.title.get_fontproperties()))


def _fit_figure_title(ax: Any, text: str) -> None:
    fig = ax.figure
    if getattr(fig, "_suptitle", None) is not None:
        fig._suptitle.set_text(wrap_to(text, _points(fig, fig.bbox.width) - 4.0, fig._suptitle.get_fontproperties()))


def _wrapped(ax: Any, text: str) -> str:
    """``text`` wrapped to an estimate of the axes' width before any layout (fitted exactly by
    :func:`fit_texts`)."""
    inches = ax.get_position().width * ax.figure.get_figwidth()
    return wrap_to(text, max(40.0, inches * 72.0), ax.title.get_fontproperties())


def _fit_ticks(ax: Any) -> None:
    """Fewer ticks on a linear axis whose tick labels would touch once the figure is laid out (a
    narrow panel): matplotlib's own choice of nice numbers, with fewer bins until they are apart."""
    from matplotlib.ticker import AutoLocator, MaxNLocator

    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() != "linear" or not isinstance(axis.get_major_locator(), (AutoLocator, MaxNLocator)):
            continue  # log axes fit their own ticks; categories are placed by their plot
        axis.set_major_locator(AutoLocator())
        for bins in (5, 4, 3, 2, 1):
            if not _crowded(ax, axis):
                break
            axis.set_major_locator(MaxNLocator(nbins=bins, steps=[1, 2, 2.5, 5, 10], min_n_ticks=min(bins, 2)))


# -- the legend ------------------------------------------------------------------------------
#: A learner's legend entry may end with its ρ̂ (``name (ρ̂=…)``): the learner is the entry's key.
_RHO_SUFFIX = re.compile(r" \(\$\\hat\{\\rho\}=[^$]*\$\)$")


def learner_label(name: str, rho_hat: float | None = None) -> str:
    """A learner's legend entry: its name, with its measured ρ̂ when given."""
    name = math_safe(name)
    return name if rho_hat is None else f"{name} ({rho_hat_text(rho_hat)})"


def _key(label: str) -> str:
    return _RHO_SUFFIX.sub("", label)


#: The figure legend's spacing (in font sizes): compact, without a frame — it sits apart from the
#: panels, below them, and every point it saves is the panels'.
LEGEND_GEOMETRY = {"handlelength": 1.8, "handletextpad": 0.5, "columnspacing": 1.2, "labelspacing": 0.3,
                   "borderpad": 0.2, "borderaxespad": 0.2, "frameon": False}


def _legend_columns(labels: Sequence[str], prop: Any, width: float) -> tuple[int, list[str], float]:
    """``(ncol, labels wrapped, height in points)``: the columns and the wrapping (at spaces) that
    make the lowest legend no wider than ``width`` points, in font ``prop`` — matplotlib's legend
    geometry: the entries fill the columns in order (``np.array_split``), each column as wide as
    its widest entry."""
    g = LEGEND_GEOMETRY
    size = prop.get_size_in_points()
    handle = (g["handlelength"] + g["handletextpad"]) * size
    spacing = g["columnspacing"] * size
    room = width - 2 * (g["borderpad"] + g["borderaxespad"]) * size - size
    best = None
    for ncol in range(len(labels), 0, -1):
        columns = np.array_split(np.arange(len(labels)), ncol)
        column = (room - (ncol - 1) * spacing) / ncol - handle  # an even share: where a long label wraps
        wrapped = [wrap_to(label, max(column, 3 * size), prop) for label in labels]
        widths = [max(text_width(wrapped[i], prop) for i in part) + handle for part in columns if len(part)]
        if ncol > 1 and sum(widths) + (ncol - 1) * spacing > room:
            continue  # too wide: fewer columns
        lines = [1.2 * (label.count("\n") + 1) + g["labelspacing"] for label in wrapped]
        height = max(sum(lines[i] for i in part) for part in columns if len(part))
        if best is None or height < best[0] - 1e-9:
            best = (height, ncol, wrapped)
    return best[1], best[2], (best[0] + 2 * (g["borderpad"] + g["borderaxespad"])) * size


def _in_drawing_order(ax: Any) -> list[tuple[Any, str]]:
    """``ax``'s legend entries in the order they were drawn (matplotlib lists error bars after
    every line; an error bar counts where its line is)."""
    children = {id(c): i for i, c in enumerate(ax.get_children())}

    def order(entry: tuple[Any, str]) -> int:
        handle = entry[0]
        first = next(iter(handle), None) if isinstance(handle, tuple) else handle
        return children.get(id(first), len(children))

    return sorted(zip(*ax.get_legend_handles_labels()), key=order)


def figure_legend(ax: Any) -> None:
    """One legend for the figure, below its panels ("outside lower center": constrained layout
    makes room for it), holding every entry of every panel replify drew into the figure once —
    a learner once, in its one colour, with the first panel's label. It is built again each time
    a panel is drawn, its columns and wrapping fitted to the figure's width. A figure laid out by
    another engine (no room for a figure legend) gets the legend beside its axes instead."""
    from matplotlib import rcParams

    fig = ax.figure
    if not constrained(fig):
        legend(ax)
        return
    panels = fig.__dict__.setdefault("_replify_panels", [])
    if not any(p is ax for p in panels):
        panels.append(ax)
    entries: dict[str, tuple[Any, str]] = {}
    for a in fig.axes:
        if any(p is a for p in panels):
            for handle, label in _in_drawing_order(a):
                entries.setdefault(_key(label), (handle, label))
    for old in [leg for leg in fig.legends if getattr(leg, "_replify", False)]:
        old.remove()
    if not entries:
        return
    handles = [h for h, _ in entries.values()]
    prop = font(rcParams["legend.fontsize"])
    ncol, labels, height = _legend_columns([label for _, label in entries.values()], prop,
                                           _points(fig, fig.bbox.width))
    leg = fig.legend(handles, labels, loc="outside lower center", ncol=ncol, **LEGEND_GEOMETRY)
    leg._replify = True
    base = fig.__dict__.get("_replify_base_height")
    if base is not None:  # a figure replify made at its own size grows to hold its legend, panels kept whole
        fig.set_figheight(base + height / 72.0)


def legend(ax: Any, **kw: Any) -> None:
    """The legend outside the axes, to their right: it never covers a curve or a point (the
    constrained layout makes room for it). Long labels wrap at spaces; a legend taller than the
    figure takes more columns. (replify's own plots share one legend below the panels:
    :func:`figure_legend`.)"""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    # in a figure replify made, in its style (the legend is made after the figure, outside styled())
    with styled() if getattr(_root(ax.figure), "_replify_styled", False) else contextlib.nullcontext():
        labels = [wrap_label(label, LEGEND_WIDTH) for label in labels]
        lines = sum(label.count("\n") + 1 for label in labels) + len(labels) * 0.5  # entries are spaced
        size = font(pyplot().rcParams["legend.fontsize"]).get_size_in_points()
        room = max(4.0, 0.85 * ax.figure.get_figheight() * 72 / (1.25 * size))
        ncol = max(1, int(np.ceil(lines / room)))
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, ncol=ncol, **kw)


def finish(ax: Any, title: Any, default: str, path: str | Path | None) -> Any:
    """The end of every plot: its title, the figure's legend below the panels, the layout that fits
    every text to the laid-out figure when it is drawn (:func:`fitted_layout`), and the file when
    ``path`` is given."""
    set_title(ax, title, default)
    figure_legend(ax)
    fitted_layout(ax.figure)
    return save_figure(ax.figure, path)


# -- axes ------------------------------------------------------------------------------------
def log_axis(ax: Any, which: str, values: Any) -> bool:
    """Make ``ax``'s ``which`` axis ("x" or "y") logarithmic when every one of ``values`` is
    positive; return whether it did. Only major ticks are labelled; an axis spanning less than two
    decades gets majors at 1, 2, 5 × 10^k so that it has labelled ticks at all — when it has room
    for them (fitted once the figure is laid out: otherwise 1 and 3 × 10^k, or fewer powers of 10)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0 or np.any(v <= 0):
        return False
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    decades = float(np.log10(v.max() / v.min())) if v.max() > v.min() else 0.0
    _log_ticks(ax, which, (1.0, 2.0, 5.0) if decades < 2 else (1.0,))
    fitter(ax, f"log-{which}", _fit_log_ticks, which, decades)
    return True


def _log_ticks(ax: Any, which: str, subs: tuple[float, ...], most: Any = "auto") -> None:
    from matplotlib.ticker import LogFormatterSciNotation, LogLocator, NullFormatter

    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=most))
    axis.set_major_formatter(LogFormatterSciNotation(labelOnlyBase=False) if subs != (1.0,)
                             else LogFormatterSciNotation())
    axis.set_minor_formatter(NullFormatter())


def _fit_log_ticks(ax: Any, which: str, decades: float) -> None:
    """Fewer labelled majors where their labels would touch (a narrow or short panel)."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    for subs in ((1.0, 2.0, 5.0), (1.0, 3.0)) if decades < 2 else ():
        _log_ticks(ax, which, subs)
        if not _crowded(ax, axis):
            return
    for most in ("auto", 6, 4, 3, 2):
        _log_ticks(ax, which, (1.0,), most)
        if not _crowded(ax, axis):
            return


def _crowded(ax: Any, axis: Any) -> bool:
    """Whether two of ``axis``'s major tick labels (as its locator and formatter would print them)
    come closer than half a font size."""
    lo, hi = sorted(axis.get_view_interval())
    locs = [x for x in axis.get_major_locator()() if lo <= x <= hi]
    if len(locs) < 2:
        return False
    labels = axis.get_major_formatter().format_ticks(locs)
    prop = axis.get_ticklabels()[0].get_fontproperties() if axis.get_ticklabels() else font(7)
    size = prop.get_size_in_points()
    horizontal = axis is ax.xaxis
    pixels = [ax.transData.transform((x, 1) if horizontal else (1, x))[0 if horizontal else 1] for x in locs]
    extent = [text_width(t, prop) if horizontal else _extent(t, prop)[1] for t in labels]
    for i in range(len(locs) - 1):
        gap = _points(ax.figure, abs(pixels[i + 1] - pixels[i])) - (extent[i] + extent[i + 1]) / 2
        if labels[i] and labels[i + 1] and gap < size / 2:
            return True
    return False


def fraction_axis(ax: Any) -> None:
    """A y axis for a fraction (ρ̂, agreement): linear, even on axes used before with a log
    scale, from just below 0 to just above 1 — far enough that a marker at 0 or at 1 (a
    non-replicable learner's ρ̂ = 1) is drawn whole, not cut by the axes (fitted to the axes'
    height once the figure is laid out)."""
    ax.set_yscale("linear")
    ax.set_ylim(-0.04, 1.04)
    fitter(ax, "fraction", _fit_fraction)


def _fit_fraction(ax: Any) -> None:
    sizes = [line.get_markersize() for line in ax.lines if line.get_marker() not in (None, "None", "", " ")]
    radius = max(sizes, default=0.0) / 2 + 1.0  # points, with the marker's edge
    height = max(_points(ax.figure, ax.bbox.height), 1.0)
    pad = min(0.25, max(0.04, radius / height))
    ax.set_ylim(-pad, 1 + pad)


def markers_for(points: int, index: int = 0, count: int = 1) -> dict[str, Any]:
    """Markers on a line of few points (a block learner's curve has one per block: a single point
    without a marker would be invisible), every k-th on a long one. The ``index``-th of ``count``
    lines in one axes starts its markers ``index/count`` of the way to the next, so that lines that
    coincide keep every learner's markers in sight, side by side."""
    if points <= 24:
        return {}
    every = max(1, points // 12)
    return {"markevery": ((index * every) // max(1, count), every)}
