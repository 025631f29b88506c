"""Every bad input gets a clear error from replify.errors naming the argument, what was expected
and what came."""

import re

import numpy as np
import pytest

import replify
from replify.errors import (
    ActionError,
    ArgumentTypeError,
    CostError,
    HorizonError,
    InvalidArgumentError,
    LearnerProtocolError,
    UnknownNameError,
)

from conftest import RandomHedge


def wrapped(**kw):
    args = dict(n=3, horizon=100, rho=0.1, seed=0, block_size=10) | kw
    return replify.wrap(RandomHedge, **args)


@pytest.mark.parametrize(
    "cost,match",
    [
        ([0.1, np.nan, 0.2], r"cost at step 1 must be finite, got \[0.1, nan, 0.2\]"),
        ([0.1, np.inf, 0.2], r"cost at step 1 must be finite"),
        ([0.1, 0.2], r"cost at step 1 must have shape \(3,\), got shape \(2,\)"),
        ([[0.1, 0.2, 0.3]], r"must have shape \(3,\), got shape \(1, 3\)"),
        ([0.1, 1.5, 0.2], r"entries in \[-1, 1\], got \[0.1, 1.5, 0.2\]"),
        ([0.1j, 0.0, 0.0], r"array of real numbers, got an array of dtype complex128"),
        (["a", "b", "c"], r"array of real numbers, got an array of dtype <U1"),
    ],
)
def test_bad_cost_vectors(cost, match):
    with pytest.raises(CostError, match=match):
        wrapped().update(cost)


def test_l1_bound_is_checked_for_l1_norm():
    with pytest.raises(CostError, match=r"l1 norm <= 1, got l1 norm 1.5"):
        wrapped(norm="l1").update([0.5, 0.5, 0.5])
    wrapped(norm="l1").update(np.full(3, 1 / 3))  # rounding slack: sums to 1 up to an ulp


def test_bad_cost_matrix_names_the_step():
    costs = np.zeros((50, 3))
    costs[17, 2] = np.nan
    with pytest.raises(CostError, match=r"costs at step 18 must be finite"):
        wrapped().run(costs)
    learner = wrapped()
    learner.run(np.zeros((5, 3)))
    costs[17, 2] = -2.0
    with pytest.raises(CostError, match=r"costs at step 23 must have entries in \[-1, 1\]"):
        learner.run(costs)
    with pytest.raises(CostError, match=r"costs must have shape \(T, 3\), got shape \(50,\)"):
        wrapped().run(np.zeros(50))


def test_the_callers_cost_array_is_never_modified():
    costs = np.random.default_rng(0).random((100, 3))
    before = costs.copy()
    wrapped().run(costs)
    learner = wrapped()
    for c in costs:
        learner.update(c)
    assert np.array_equal(costs, before)


def test_update_past_the_horizon():
    learner = wrapped(horizon=5, block_size=2)
    learner.run(np.zeros((5, 3)))
    with pytest.raises(HorizonError, match=r"step 6, past the horizon T=5"):
        learner.update(np.zeros(3))
    with pytest.raises(HorizonError, match=r"costs has 6 rows but only 5 steps remain"):
        wrapped(horizon=5, block_size=2).run(np.zeros((6, 3)))


@pytest.mark.parametrize("rho", [0, 1, -0.1, 1.5, float("nan"), float("inf")])
def test_rho_outside_the_open_unit_interval(rho):
    with pytest.raises(InvalidArgumentError, match=r"rho must"):
        wrapped(rho=rho)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(horizon=0), r"horizon must be an integer >= 1, got 0"),
        (dict(n=1), r"n must be an integer >= 2, got 1"),
        (dict(block_size=0), r"block_size must be an integer >= 1, got 0"),
        (dict(eps=0.0), r"eps must be > 0, got 0.0"),
        (dict(seed=-3), r"seed must be a non-negative int or a numpy.random.SeedSequence, got -3"),
    ],
)
def test_bad_numbers(kw, match):
    with pytest.raises(InvalidArgumentError, match=match):
        wrapped(**kw)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(horizon="100"), r'argument "horizon" \(str did not match any element in the union:\n  int: is not an instance of int'),
        (dict(norm="l2"), r"argument \"norm\" \(str did .*is not any of \('linf', 'l1'\)"),
        (dict(rho="0.1"), r'argument "rho" \(str did .* in wrap\(\)'),
    ],
)
def test_wrong_types_are_type_errors_that_name_the_argument(kw, match):
    with pytest.raises(ArgumentTypeError, match=re.compile(match, re.S)) as info:
        wrapped(**kw)
    assert isinstance(info.value, TypeError)


def test_missing_arguments_are_named():
    with pytest.raises(InvalidArgumentError, match=r"wrap\(\) needs n, seed to build a learner"):
        replify.wrap(RandomHedge, horizon=10, rho=0.1)


def test_factory_that_is_not_callable_or_builds_no_learner():
    with pytest.raises(ArgumentTypeError, match=r'argument "learner"'):
        replify.wrap(42, n=3, horizon=10, rho=0.1, seed=0)

    class NoUpdate:
        def __init__(self, *, n, horizon, rng):
            pass

        def act(self):
            return 0

    with pytest.raises(LearnerProtocolError, match=r"got NoUpdate without update\(\)"):
        replify.wrap(NoUpdate, n=3, horizon=10, rho=0.1, seed=0, block_size=2)


@pytest.mark.parametrize("bad", [3, -1, 1.0, "0", None, True])
def test_action_out_of_range(bad):
    class Bad:
        def __init__(self, *, n, horizon, rng):
            self.calls = 0

        def act(self):
            self.calls += 1
            return 0 if self.calls == 1 else bad

        def update(self, cost):
            pass

    learner = replify.wrap(Bad, n=3, horizon=10, rho=0.1, seed=0, block_size=2)
    learner.update(np.zeros(3))
    with pytest.raises(ActionError, match=rf"returned action {bad!r} at step 3; expected an integer expert index in \[0, 3\)"):
        learner.update(np.zeros(3))


def test_l1_learner_refuses_linf_normalisation(spy):
    spec = replify.LearnerSpec("l1-spy", spy, "olo", norm="l1", cost_range=(-1, 1))
    with pytest.raises(InvalidArgumentError, match=r"norm must be 'l1' for learner 'l1-spy'"):
        replify.wrap(spec, n=3, horizon=10, rho=0.1, seed=0, norm="linf")
    with pytest.raises(InvalidArgumentError, match=r"problem must match learner 'hedge'"):
        replify.wrap("hedge", n=3, horizon=10, rho=0.1, seed=0, problem="olo")


def test_unknown_learner_name_lists_the_known_ones():
    known = ", ".join(sorted(replify.learners()))
    assert "ftplb-star" in known and "hedge" in known
    with pytest.raises(UnknownNameError, match=re.escape(f"no learner named 'hedgehog'; known learners: {known}")) as info:
        replify.wrap("hedgehog", n=3, horizon=10, rho=0.1, seed=0)
    assert isinstance(info.value, KeyError)
    with pytest.raises(UnknownNameError, match=re.escape(f"no adversary named 'dice'; known adversaries: {', '.join(sorted(replify.adversaries()))}")):
        replify.make_adversary("dice", n=2, horizon=10, seed=0)


def test_make_refuses_rho_for_a_learner_without_a_guarantee_and_unknown_overrides():
    with pytest.raises(InvalidArgumentError, match=r"'hedge' has no replicability guarantee; got rho=0.1"):
        replify.make("hedge", n=3, horizon=10, seed=0, rho=0.1)
    with pytest.raises(InvalidArgumentError, match=r"learner 'hedge' does not accept 'gamma'; it accepts eta, horizon, n, rng"):
        replify.make("hedge", n=3, horizon=10, seed=0, gamma=2.0)
    with pytest.raises(InvalidArgumentError, match=r"overrides must not set rng"):
        replify.make("hedge", n=3, horizon=10, seed=0, rng=None)


def test_adversary_parameters_are_checked():
    with pytest.raises(InvalidArgumentError, match=r"means must be a number or an array of shape \(3,\) with entries in \[0, 1\]"):
        replify.make_adversary("iid-bernoulli", n=3, horizon=10, seed=0, means=[0.2, 1.2, 0.3])
    with pytest.raises(InvalidArgumentError, match=r"adversary 'iid-bernoulli' does not accept 'mean'"):
        replify.make_adversary("iid-bernoulli", n=3, horizon=10, seed=0, mean=0.3)
    with pytest.raises(InvalidArgumentError, match=r"point-mass: costs must be an array of shape \(10, 3\); got shape \(10, 2\)"):
        replify.make_adversary("point-mass", n=3, horizon=10, seed=0, costs=np.zeros((10, 2)))


def test_evaluate_arguments_are_checked():
    with pytest.raises(InvalidArgumentError, match=r"pairs must be an integer >= 2, got 1"):
        replify.evaluate("hedge", "iid-bernoulli", n=3, horizon=10, pairs=1, seed=0)
    with pytest.raises(InvalidArgumentError, match=r"learner built with horizon=100, but evaluate\(\) was given horizon=10"):
        replify.evaluate(lambda s: wrapped(seed=s), "iid-bernoulli", n=3, horizon=10, pairs=2, seed=0)
    with pytest.raises(InvalidArgumentError, match=r"confidence must lie strictly between 0 and 1, got 1.0"):
        replify.evaluate("hedge", "iid-bernoulli", n=3, horizon=10, pairs=2, seed=0, confidence=1.0)
