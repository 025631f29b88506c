"""The built-in oblivious adversaries: iid and switching Bernoulli costs, Gaussian arms, point
masses, mixtures, the bootstrap of real data, the paper's coin embeddings and lazy-leader trap,
random signs and the stress suite.

Each registers through the ``"replify"`` entry-point group exactly as a third-party plugin would
(docs/plugins.md). May import: replify's public API (``import replify``) and its building blocks
(``replify.components``, ``replify.guarantees``, ``replify.base.checks``); the core never imports them.
"""
