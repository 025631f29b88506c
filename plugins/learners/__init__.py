"""The built-in full-information learners: the paper's algorithms (FLLB, FTPLB, FTPLB*, the
iid-replicable experts algorithm, split-commit), the baselines (Hedge, FTPL/FLL, constant) and
the aggregation rules (EWA, ML-Poly, BOA), one module per algorithm.

Each registers through the ``"replify"`` entry-point group exactly as a third-party plugin would
(docs/plugins.md). May import: replify's public API (``import replify``) and its building blocks
(``replify.components``, ``replify.guarantees``, ``replify.base.checks``); the core never imports them.
"""
