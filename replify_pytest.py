"""replify's pytest plugin (entry point ``pytest11``): the fixture ``assert_replicable``, so that a
user asserts the replicability of their own learners in their own suites:

    def test_my_learner_is_replicable(assert_replicable):
        assert_replicable(MyLearnerFactory, "iid-bernoulli", rho=0.1, n=10, horizon=10_000)

It is :func:`replify.testing.assert_replicable` (sequential, anytime-valid: a learner whose failure
rate is at most ρ fails with probability at most ``alpha`` = 0.05, plus the chance that
``max_pairs`` cannot separate a rate very close to ρ). replify itself is imported only when the
fixture is used, so installing replify costs other test suites nothing.
"""

import pytest


@pytest.fixture
def assert_replicable():
    from replify.testing import assert_replicable as check

    return check
