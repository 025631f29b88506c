"""Figures for papers (docs/data.md, "Figures for papers"): every plot takes ``ax=`` (or
``axes=``) to draw into a figure of yours, ``path=`` to save PNG, SVG or PDF, ``title=`` (``True``:
the configuration the learners share; ``False``: none; a string), and returns its figure.

* :mod:`replify.plots.style` — the one figure style (constrained layout, legends outside the
  data, TrueType fonts, one colour per learner across a figure's panels, log axes only for
  positive values) and :func:`figure`, the multi-panel recipe;
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
from replify.plots.style import (
    PLOT_SUFFIXES, STYLE, caption, colour, figure, legend, log_axis, pyplot, records_caption, require_matplotlib,
    rho_interval_label, save_figure, set_title, styled,
)

__all__ = [
    "PLOT_SUFFIXES", "STYLE", "caption", "colour", "figure", "legend", "log_axis", "plot_against", "plot_agreement",
    "plot_frontier", "plot_regret_curve", "plot_regret_distribution", "plot_regret_vs_T", "plot_rho_vs_block_size",
    "plot_sweep", "plot_tradeoff", "pyplot", "records_caption", "records_of", "reports_of", "require_matplotlib",
    "rho_interval_label", "save_figure", "set_title", "styled", "with_references",
]
