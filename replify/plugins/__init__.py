"""The plugin system (docs/plugins.md), layer 3.

``specs`` (what a plugin registers: :class:`~replify.LearnerSpec`, :class:`~replify.AdversarySpec`,
the learner and adversary protocols), ``registry`` (pluggy's hook specifications, entry-point
loading and the registry), ``factory`` (:func:`~replify.make`, :func:`~replify.make_adversary`,
and how a user's learner becomes something the engine can build per pair).

May import: the ground floor and ``replify.components`` (action sets, the bandit protocol,
distribution sequences). The core never imports a plugin module by name: it asks the registry.
"""

from replify._moved import names_getattr

# the names this package held when it was one module, kept importable (replify._moved)
__getattr__ = names_getattr(__name__)
