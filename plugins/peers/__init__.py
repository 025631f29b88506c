"""Peers' contextual bandit policies run as replify contextual learners (docs/contextual.md,
"Peers' policies inside replify"): river's bandit policies (:class:`RiverPolicy`) and mabwiser's
``MAB`` (:class:`MabwiserPolicy`). They are not registered (each needs its package:
``pip install "replify[peers]"``); pass the class, or a ``functools.partial`` of it, wherever a
learner goes — ``replify.evaluate`` measures *their* replicability, and ``replify.wrap`` makes them
replicable by the contextual conversion.

May import: replify's public API and ``replify.components``, ``replify.errors``; river and mabwiser
only when a policy is built.
"""

from replify_plugins.peers.adapters import MabwiserPolicy, RiverPolicy, shared_context

__all__ = ["MabwiserPolicy", "RiverPolicy", "shared_context"]
