"""The conversions :func:`replify.wrap` builds, one room (layer 4: above the plugin system, whose
registry they are registered in as :class:`~replify.ConversionSpec` plugins, below ``replify.wrapper``).

``experts`` (the paper's §5 conversion, ℓ1 and ℓ∞, full information: :class:`ReplicableLearner`),
``bandit`` (the conversion under bandit feedback, ours: :class:`ReplicableBandit`), ``contextual``
(the contextual conversion, ours: :class:`ReplicableContextual`, which runs the user's learner on
what it feeds it) — each with its options class and its ``build`` — and what they share:
``resolve`` (the learner resolved once, :class:`Resolved`) and ``internal`` (how the experts and
bandit forms build and feed their internal learner). The grid and the schedules they round on
are in ``replify.components`` (``grid``, ``blocks``, ``exploring``, ``rounded_ridge``). The built-in
conversions are registered by the plugin ``replify_plugins.conversions``; a third party's through
the same hook (docs/plugins.md, "Registering a conversion").

May import: the ground floor, ``replify.guarantees``, ``replify.components`` and ``replify.plugins``.
"""

from replify.conversions.bandit import BanditOptions, ReplicableBandit
from replify.conversions.contextual import ContextualOptions, ReplicableContextual
from replify.conversions.experts import ExpertsOptions, ReplicableLearner
from replify.conversions.resolve import Resolved, resolve

__all__ = ["BanditOptions", "ContextualOptions", "ExpertsOptions", "ReplicableBandit", "ReplicableContextual",
           "ReplicableLearner", "Resolved", "resolve"]
