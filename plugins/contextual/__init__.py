"""The built-in contextual and linear bandit learners (docs/contextual.md): LinUCB, linear Thompson
sampling and ε-greedy on a ridge estimate (the non-replicable baselines, played in lanes), and the
replicable ``rep-linear-elimination`` (a linear bandit over a finite action set) and ``rep-ridge``
(contexts that change), one module per family.

Each registers through the ``"replify"`` entry-point group exactly as a third-party plugin would
(docs/plugins.md). May import: replify's public API (``import replify``) and its building blocks
(``replify.components``, ``replify.guarantees``, ``replify.base.checks``); the core never imports them.
"""
