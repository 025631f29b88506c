"""Experiments built on :func:`replify.evaluate` (layer 8): ``sweeps`` and ``results`` (grids of
configurations and their resumable results files), ``stress`` (the search for an adversary that
breaks a replicability claim), ``calibration`` (parameters chosen by measurement), ``audit``
(attacks on each certificate), ``lower_bounds`` (the paper's §7 demonstrations: a package, one
module a demo).

May import: everything below, including ``replify.plots`` for figures. Nothing below imports
an experiment: calibration and stress sit on top of evaluate, never inside the engine.
"""
