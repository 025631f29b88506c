"""Figures for papers (docs/data.md, "Figures a paper can print"): every plot takes ``ax=`` (or
``axes=``) to draw into a figure of yours, ``path=`` to save PNG, SVG or PDF, ``title=`` (``True``:
the configuration the learners share; ``False``: none; a string), and returns its figure.

* :mod:`replify.plots.style` — the one figure style (drawn at the printed size: a column,
  :data:`COLUMN_WIDTH`, or a page, :data:`PAGE_WIDTH`, every font at least 7 pt; constrained
  layout, one legend below the panels, texts wrapped at spaces to their room, mathematics as
  mathtext, TrueType fonts, one colour per learner across a figure's panels, log axes only for
  positive values), its sizes, colours and captions;
* :mod:`replify.plots.fitting` — :func:`figure`, the multi-panel recipe, and the texts fitted to the
  figure as printed (fonts measured, labels wrapped at spaces, the legend below the panels, log and
  fraction axes), which :mod:`replify.plots.layout` (constrained layout, then the fitters) runs;
* :mod:`replify.plots.reports` — figures of reports, a replicable learner always beside its
  reference rows (``constant`` and a non-replicable baseline);
* :mod:`replify.plots.records` — figures of sweeps' results rows and calibration frontiers.

It may import the evaluation layer (reports, and ``evaluate`` for the reference rows); the
experiments (demos, sweeps) import it.
"""

from replify.plots.records import (
    plot_against, plot_frontier, plot_regret_vs_T, plot_rho_vs_block_size, plot_sweep, records_of,
)
from replify.plots.reports import (
    plot_agreement, plot_regret_curve, plot_regret_distribution, plot_tradeoff, reports_of, with_references,
)
from replify.plots.fitting import figure, figure_legend, fit_texts, legend, log_axis, set_title
from replify.plots.style import (
    COLUMN_WIDTH, MIN_FONT_SIZE, PAGE_WIDTH, PLOT_SUFFIXES, STYLE, caption, colour, pyplot, records_caption,
    require_matplotlib, rho_hat_text, rho_interval_label, save_figure, styled,
)

__all__ = [
    "COLUMN_WIDTH", "MIN_FONT_SIZE", "PAGE_WIDTH", "PLOT_SUFFIXES", "STYLE", "caption", "colour", "figure",
    "figure_legend", "fit_texts", "legend", "log_axis", "plot_against", "plot_agreement", "plot_frontier",
    "plot_regret_curve", "plot_regret_distribution", "plot_regret_vs_T", "plot_rho_vs_block_size", "plot_sweep",
    "plot_tradeoff", "pyplot", "records_caption", "records_of", "reports_of", "require_matplotlib", "rho_hat_text",
    "rho_interval_label", "save_figure", "set_title", "styled", "with_references",
]
