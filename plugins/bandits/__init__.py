"""The built-in bandit-feedback learners: UCB1, Thompson sampling, Exp3, blocked-bandit and the
replicable elimination / explore-then-commit learners, one module per algorithm.

Each registers through the ``"replify"`` entry-point group exactly as a third-party plugin would
(docs/plugins.md). May import: replify's public API (``import replify``) and its building blocks
(``replify.components``, ``replify.guarantees``, ``replify.base.checks``); the core never imports them.
"""
