"""The reference row, `constant`: it runs on every instance a learner can be run on, and the learning
gain compares a learner with it on the same draws and the same R."""

import numpy as np
import pytest

import replify


@pytest.mark.parametrize("adversary, n, params", [
    ("linear-gaussian", 5, {"contexts": "sphere", "d": 3}),   # Gaussian costs, contexts drawn every step
    ("linear-gaussian", 5, {"contexts": "gaussian", "d": 3}),
    ("linear-gaussian", 5, {"d": 3}),                          # fixed features, Gaussian noise
    ("linear-switching", 5, {"contexts": "sphere", "d": 3}),
    ("gaussian-arms", 4, {"sigma": 2.0}),
])
def test_constant_runs_on_unbounded_costs_and_contexts(adversary, n, params):
    # it never looks at a cost: Gaussian costs outside [-1, 1] are no reason to refuse the run
    report = replify.evaluate("constant", adversary, n=n, horizon=300, pairs=3, seed=0, progress=False,
                              adversary_params=params)
    assert report.failures == 0 and report.learning_gain == 0.0


def test_constant_still_refuses_a_cost_that_is_not_a_number():
    learner = replify.make("constant", n=3, horizon=5, seed=0)
    with pytest.raises(replify.errors.CostError):
        learner.domain.check(np.array([0.0, np.nan, 0.0]), n=3, step=1)


@pytest.mark.parametrize("adversary, n, horizon, params", [
    ("iid-bernoulli", 10, 100_000, {}),                        # the block-sum path
    ("random-signs", 4, 2_000, {}),
    ("linear-gaussian", 10, 100_000, {}),                      # fixed features
    ("classification-bandit", 3, 3_000, {}),                   # contexts that change: against the best policy
    ("linear-gaussian", 5, 1_000, {"contexts": "sphere", "d": 3}),
])
def test_constant_gains_exactly_nothing_over_itself(adversary, n, horizon, params):
    report = replify.evaluate("constant", adversary, n=n, horizon=horizon, pairs=10, seed=0, progress=False,
                              adversary_params=params)
    assert report.learning_gain == 0.0 and report.learning_gain_ci == (0.0, 0.0)
    # the reference is the regret the constant row itself reports at this seed, pair by pair
    assert np.array_equal(report.constant_regret, report.regret)


def test_the_reference_plays_the_expert_constant_draws_from_the_pairs_r():
    n = 10

    class Stubborn:
        """A user's learner stepped in Python that plays, from the pair's seed, the expert constant plays."""

        def __init__(self, seed):
            self.action = int(replify.make("constant", n=n, horizon=2_000, seed=seed).act())

        def act(self):
            return self.action

        def update(self, cost):
            pass

    kw = dict(n=n, horizon=2_000, pairs=6, seed=3, progress=False, adversary_params={"means": np.linspace(0.3, 0.7, n)})
    stubborn = replify.evaluate(Stubborn, "iid-bernoulli", **kw)
    # the same costs and the same R: its regret is the reference's, exactly, whatever expert R drew
    assert np.array_equal(stubborn.constant_regret, stubborn.regret) and stubborn.learning_gain == 0.0
    assert stubborn.regret.max() > 100  # R did not always draw the best expert: the gain is not 0 by accident
    hedge = replify.evaluate("hedge", "iid-bernoulli", **kw)
    assert hedge.learning_gain == pytest.approx((hedge.constant_regret - hedge.regret).mean())
    assert hedge.learning_gain > 0  # hedge learns
