"""replify — replicable online learning.

An implementation of "Replicable Online Learning" (Ahmadi, Bhandari, Blum): wrap any online
learner into an adversarially ρ-replicable one (:func:`wrap`), build registered learners and
adversaries by name (:func:`make`, :func:`make_adversary`), and measure replicability and
regret over paired runs (:func:`evaluate`).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from . import actions, errors
from .evaluation import Report, evaluate
from .factory import make, make_adversary
from .framework import ReplicableFactory, ReplicableLearner, wrap
from .plugins import Registry, adversaries, check_pending, hookimpl, hookspec, learners, registry
from .randomness import Streams
from .specs import AdversarySpec, DistributionSequence, Learner, LearnerSpec
from .anytime import anytime
from .calibration import Calibration, calibrate
from .stress import StressResult, stress
from .sweeps import SweepResult, sweep
from .theory import FrameworkParams, certified_eps

try:
    __version__ = version("replify")
except PackageNotFoundError:  # running from a checkout that is not installed
    __version__ = "0+unknown"

__all__ = [
    "actions",
    "AdversarySpec",
    "DistributionSequence",
    "FrameworkParams",
    "Learner",
    "LearnerSpec",
    "Registry",
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
    "errors",
    "evaluate",
    "hookimpl",
    "hookspec",
    "learners",
    "make",
    "make_adversary",
    "registry",
    "stress",
    "sweep",
    "wrap",
]
