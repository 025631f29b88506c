"""Replicability and conformance in a user's own test suite.

* :func:`assert_replicable` — a statistical assertion built on the sequential test of
  :mod:`replify.evaluation.sequential`: it passes as soon as the anytime-valid interval for ρ lies below the
  target, and fails with ρ̂, the interval and the pairs run otherwise.
* :func:`check_learner`, :func:`check_adversary`, :func:`parametrize_with_checks` — the
  deterministic conformance checks a plugin author runs in CI, as scikit-learn's
  ``check_estimator``/``parametrize_with_checks`` do: every action is valid, ``rng`` is the
  learner's only source of randomness (two learners seeded alike play alike), stepping equals
  ``run`` bit for bit, the lane-batched form of a bandit learner plays each lane as stepping it
  alone does, the caller's arrays are untouched, consecutive chunks equal one ``sample``, ``sample_sums`` has the
  law of the summed steps, and a learner with the engine's segment protocol plays by segments
  what it plays by steps. A check demands only what the protocol demands (docs/wrapper.md):
  refusing an update past the horizon and a cost outside the declared domain are properties a
  learner *declares* (``LearnerSpec(enforces={"horizon", "domain"})``, or a class attribute
  ``enforces``), and are checked only then. A spec's ``test_params`` supply the arguments a check
  needs (``n`` and ``horizon`` among them). :func:`check_learner` takes any learner
  :func:`replify.evaluate` takes — a registered name or spec, your class or factory, a wrapped
  class, a callable ``seed -> learner``, a ``"module:Name"`` reference.

The pytest plugin ``replify_pytest`` (entry point ``pytest11``) provides the fixture
``assert_replicable``.

The package: ``common`` (sizes, costs, building from a spec), ``learners`` (the learner checks and
:func:`check_learner`), ``adversaries`` (the adversary checks and :func:`check_adversary`),
``suite`` (:func:`assert_replicable`, :func:`parametrize_with_checks`). Every name is importable
from ``replify.testing`` itself.
"""
from replify.testing.adversaries import (
    ADVERSARY_CHECKS, DECLARATION_DRAWS, DECLARATION_FALSE_ALARM, DECLARATION_FLOATS, DECLARATION_SEED,
    check_adversary, check_chunks_equal_sample, check_declarations, check_sample, check_sums_law,
)
from replify.testing.common import CHECK_HORIZON, CHECK_N, LANE_CHECK_HORIZON
from replify.testing.learners import (
    LEARNER_CHECKS, check_actions_valid, check_bandit_batches_equal_stepping, check_cycles_equal_stepping,
    check_domain_enforced, check_horizon, check_inputs_untouched, check_lanes_equal_stepping, check_learner,
    check_rng_only, check_run_equals_stepping, check_segments_equal_stepping, learner_spec,
)
from replify.testing.suite import assert_replicable, parametrize_with_checks

__all__ = [
    "ADVERSARY_CHECKS", "CHECK_HORIZON", "CHECK_N", "DECLARATION_DRAWS", "DECLARATION_FALSE_ALARM", "DECLARATION_FLOATS",
    "DECLARATION_SEED", "LANE_CHECK_HORIZON", "LEARNER_CHECKS", "assert_replicable", "check_actions_valid",
    "check_adversary", "check_bandit_batches_equal_stepping", "check_chunks_equal_sample", "check_cycles_equal_stepping",
    "check_declarations", "check_domain_enforced", "check_horizon", "check_inputs_untouched", "check_lanes_equal_stepping",
    "check_learner", "check_rng_only", "check_run_equals_stepping", "check_sample", "check_segments_equal_stepping",
    "check_sums_law", "learner_spec", "parametrize_with_checks",
]
