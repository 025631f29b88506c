"""Experiments built on :func:`replify.evaluate` (layer 8): ``sweeps`` (a grid of configurations
evaluated, row by row), ``configurations`` (the grid: its learners, adversaries' parameters, each
row's key and seed), ``learner_code`` (what a callable learner is, so that a row is reused only for
the code that wrote it), ``results`` (the resumable results file), ``stress`` (the search for an
adversary that breaks a replicability claim), ``calibration`` (parameters chosen by measurement),
``audit`` (attacks on each certificate), ``lower_bounds`` (the paper's §7 demonstrations: a
package, one module a demo).

May import: everything below, including ``replify.plots`` for figures. Nothing below imports
an experiment: calibration and stress sit on top of evaluate, never inside the engine.
"""
