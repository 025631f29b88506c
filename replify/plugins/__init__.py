"""The plugin system (docs/plugins.md), layer 3.

``specs`` (what a plugin registers: :class:`~replify.LearnerSpec`, :class:`~replify.AdversarySpec`,
the learner and adversary protocols), ``registry`` (pluggy's hook specifications, entry-point
loading and the registry), ``factory`` (:func:`~replify.make`, :func:`~replify.make_adversary`,
and how a user's learner becomes something the engine can build per pair).

May import: the ground floor and ``replify.components`` (action sets, the bandit protocol,
distribution sequences). The core never imports a plugin module by name: it asks the registry.
"""
