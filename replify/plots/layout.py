"""The layout every figure replify draws into is laid out with: constrained layout, then
replify's texts fitted to the room it gave them (docs/data.md, "Figures a paper can print").
matplotlib is an optional dependency, so the engine's class is made on first use
(:func:`fitted_layout_engine`), when a plot is drawn."""

from __future__ import annotations

import functools
from typing import Any


def layout_state(fig: Any) -> list:
    """What the fitters change — texts, their turn, ticks, limits — to tell when they are done."""
    state: list = [fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else None]
    for a in fig.get_axes():
        state.append((a.title.get_text(), a.xaxis.label.get_text(), a.yaxis.label.get_text(), a.get_ylim(),
                      tuple(a.get_xticks()), tuple(a.get_yticks()),
                      tuple((t.get_text(), t.get_rotation()) for t in a.get_xticklabels())))
    return state


@functools.cache
def fitted_layout_engine() -> type:
    """``FittedLayout``, a subclass of matplotlib's constrained layout engine (made once, when the
    first figure is laid out)."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine  # optional dependency: only when drawing

    class FittedLayout(ConstrainedLayoutEngine):
        """Constrained layout, then every text replify drew fitted to the room that layout gave it
        (titles and axis labels to their axes, category labels to their slots, ticks thinned where
        their labels would touch, a fraction's axis padded for its markers: the fitters that
        :func:`replify.plots.style.fitter` registered), laid out again until the fitting changes
        nothing. The texts are fitted each time the figure is drawn or saved, to the panels as they
        are then — a panel drawn later into the same figure (which takes room from the others)
        included — and a figure is laid out once or twice, not once per panel drawn."""

        def execute(self, fig: Any) -> Any:
            fitters = fig.__dict__.get("_replify_fitters") or {}
            result = super().execute(fig)
            for _ in range(3):  # a wrapped text moves the layout a little: again until nothing changes
                before = layout_state(fig)
                for ax, fit in list(fitters.values()):
                    if ax in ax.figure.axes:  # an axes removed since it was drawn is no longer fitted
                        fit()
                if layout_state(fig) == before:
                    break
                result = super().execute(fig)
            return result

    FittedLayout.__qualname__ = "FittedLayout"  # pickled by this module's name (figures pickle)
    return FittedLayout


def __getattr__(name: str) -> Any:
    """``replify.plots.layout.FittedLayout`` (what a pickled figure names) made on first use."""
    if name == "FittedLayout":
        return fitted_layout_engine()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
