"""replify — replicable online learning.

An implementation of "Replicable Online Learning" (Ahmadi, Bhandari, Blum): wrap any online
learner into an adversarially ρ-replicable one (:func:`wrap`), build registered learners and
adversaries by name (:func:`make`, :func:`make_adversary`), and measure replicability and
regret over paired runs (:func:`evaluate`).

The top level is the public API: this module's names, and ``errors`` (every exception and
warning), ``wrapper`` (:func:`wrap`, which resolves the learner once and hands it to the registered
conversion that serves it), ``anytime`` (:func:`anytime`), ``datasets`` (real cost
matrices), ``testing`` (conformance checks for plugins and :func:`assert_replicable`), ``plots``
and ``cli``. The layers under it, each folder's ``__init__`` saying what lives there and what it
may import: ``base`` (the ground floor: checks, random streams, files, progress, references) →
``guarantees`` (certificates, theory) → ``components`` → ``plugins`` (specs, registry, factory) →
``conversions`` (what ``wrap`` builds: the experts, bandit and contextual conversions) → ``sources`` (what a user hands replify as a learner or an adversary) → ``engine`` → ``evaluation``
→ ``experiments`` and, beside it, ``offpolicy`` (logged bandit data: off-policy estimates). Module paths that moved keep working, with a DeprecationWarning naming the new
place (``replify._moved``).
"""

from __future__ import annotations

from replify import _moved, errors
from replify._version import __version__
from replify.anytime import anytime
from replify.checkpoint import load_learner, save_learner
from replify.components import actions
from replify.evaluation.evaluate import evaluate
from replify.evaluation.report import Report
from replify.experiments.calibration import Calibration, calibrate
from replify.experiments.stress import StressResult, stress
from replify.experiments.sweeps import SweepResult, sweep
from replify.guarantees.theory import FrameworkParams, certified_eps
from replify.plugins.factory import make, make_adversary
from replify.plugins.registry import (Registry, adversaries, check_pending, conversions, hookimpl, hookspec, learners,
                                      registry)
from replify.plugins.specs import AdversarySpec, ConversionSpec, DistributionSequence, Learner, LearnerSpec
from replify.base.randomness import Streams
from replify.conversions import ReplicableBandit, ReplicableContextual, ReplicableLearner
from replify.components.rounded_ridge import HorizonPlan, horizon_for, planned_cost
from replify.wrapper import ReplicableFactory, wrap

# modules and names that moved keep their old import paths, with a DeprecationWarning (replify._moved)
_moved.install()

__all__ = [
    "__version__",
    "actions",
    "AdversarySpec",
    "ConversionSpec",
    "DistributionSequence",
    "FrameworkParams",
    "HorizonPlan",
    "Learner",
    "LearnerSpec",
    "Registry",
    "ReplicableBandit",
    "ReplicableContextual",
    "ReplicableFactory",
    "ReplicableLearner",
    "Report",
    "Streams",
    "StressResult",
    "SweepResult",
    "adversaries",
    "anytime",
    "Calibration",
    "calibrate",
    "certified_eps",
    "check_pending",
    "conversions",
    "errors",
    "evaluate",
    "hookimpl",
    "hookspec",
    "horizon_for",
    "learners",
    "load_learner",
    "make",
    "make_adversary",
    "planned_cost",
    "registry",
    "save_learner",
    "stress",
    "sweep",
    "wrap",
]
