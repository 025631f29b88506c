"""Mistakes that gave a raw numpy or Python error, or a message about something the user never
passed: each now gives replify's own error, naming the argument, what was expected and what came.
Each test fails on the code before the fix."""

from __future__ import annotations

import numpy as np
import pytest

import replify
from replify.errors import InvalidArgumentError


def test_wrap_bandit_form_names_eps_certified_not_a_rounding_never_passed():
    with pytest.raises(InvalidArgumentError) as info:
        replify.wrap("hedge", n=3, horizon=100, rho=0.1, seed=0, feedback="bandit", eps="certified")
    message = str(info.value)
    assert "eps='certified'" in message and "rounding" not in message
    assert "numeric eps=" in message


@pytest.fixture(scope="module")
def small_report():
    return replify.evaluate("hedge", "iid-bernoulli", n=2, horizon=20, pairs=2, seed=0)


@pytest.mark.parametrize("ax", ["x", 3, object()])
def test_plot_agreement_refuses_an_ax_that_is_not_axes(small_report, ax):
    pytest.importorskip("matplotlib")
    from replify.plots import plot_agreement

    with pytest.raises(InvalidArgumentError, match=r"plot_agreement: ax must be a matplotlib Axes .*got "):
        plot_agreement(small_report, ax=ax)


def test_plot_sweep_refuses_axes_that_are_not_a_pair_of_axes():
    pytest.importorskip("matplotlib")
    from replify.plots import figure, plot_sweep

    fig, ax = figure()
    with pytest.raises(InvalidArgumentError, match=r"plot_sweep: axes must be a pair of matplotlib Axes .*got 'ab'"):
        plot_sweep(object(), axes="ab")
    with pytest.raises(InvalidArgumentError, match="axes must be a pair"):
        plot_sweep(object(), axes=[ax])  # one axes, not two


def test_plot_agreement_still_draws_into_axes_of_yours(small_report):
    pytest.importorskip("matplotlib")
    from replify.plots import figure, plot_agreement

    fig, ax = figure()
    assert plot_agreement(small_report, ax=ax) is fig


def _bandit_learners():
    return sorted(name for name, spec in replify.learners().items() if spec.feedback == "bandit")


@pytest.mark.parametrize("name", _bandit_learners())
def test_a_bandit_learners_update_with_a_cost_vector_says_it_takes_action_and_cost(name):
    from replify.errors import LearnerProtocolError

    spec = replify.registry().learner(name)
    takes_rho = spec.parameters is not None or spec.guarantee is not None
    learner = replify.make(name, n=3, horizon=20, seed=0, rho=0.2 if takes_rho else None)
    learner.act(np.full((3, 2), 0.5)) if spec.problem == "contextual" else learner.act()
    with pytest.raises(LearnerProtocolError, match=r"update\(action, cost\).*shape \(3,\).*costs\[action\]"):
        learner.update(np.array([0.1, 0.2, 0.3]))
    assert learner.t == 0  # nothing was learnt from the refused call


def test_a_wrapped_bandits_update_with_one_number_says_what_it_takes():
    from replify.errors import LearnerProtocolError

    learner = replify.wrap("hedge", n=3, horizon=100, rho=0.1, seed=0, feedback="bandit")
    learner.act()
    with pytest.raises(LearnerProtocolError, match=r"ReplicableBandit.update\(\) at step 1: .*update\(action, cost\)"):
        learner.update(0.5)


@pytest.mark.parametrize("how", ["run", "step"])
@pytest.mark.parametrize("name", ["ftplb-star", "iid-experts"])
def test_anytime_names_the_real_step_of_a_bad_cost_not_the_epochs_own(name, how):
    from replify.errors import CostError

    learner = replify.anytime(name, rho=0.1, n=3, seed=0, first_epoch=16)  # epochs: steps 1..16, 17..48, ...
    costs = np.random.default_rng(0).random((60, 3))
    costs[39, 1] = np.nan  # step 40, the epoch's 24th
    with pytest.raises(CostError) as info:
        if how == "run":
            learner.run(costs)
        else:
            for row in costs:
                learner.act()
                learner.update(row)
    message = str(info.value)
    assert "at step 40 " in message and "step 24" not in message and "(epoch 1, steps 17..48)" in message


def test_anytime_bandit_epochs_name_the_real_step():
    from replify.errors import CostError

    learner = replify.anytime("rep-elimination", rho=0.1, n=3, seed=0, first_epoch=16)
    for _ in range(30):
        learner.update(learner.act(), 0.5)
    with pytest.raises(CostError, match=r"cost at step 31 must be .* got nan \(epoch 1, steps 17\.\.48\)"):
        learner.update(learner.act(), np.nan)


N_HUGE = 10**9
HUGE_N = r"n(s\[\.\.\.\])? must be at most 3,145,728, got 1,000,000,000: .*n costs as float64.*7\.45 GiB a step.*24 MiB"


@pytest.mark.parametrize("call", [
    lambda: replify.evaluate("hedge", "iid-bernoulli", n=N_HUGE, horizon=10, pairs=2, seed=0),
    lambda: replify.stress("ftpl", n=N_HUGE, horizon=10, budget=16, seed=0),
    lambda: replify.calibrate("hedge", n=N_HUGE, horizon=100, rho=0.1, seed=0),
    lambda: replify.sweep(learners=["hedge"], adversaries=["iid-bernoulli"], horizons=[10], ns=[N_HUGE], pairs=2,
                          seed=0),
], ids=["evaluate", "stress", "calibrate", "sweep"])
def test_a_huge_n_is_refused_at_once_with_the_limit_and_why(call):
    with pytest.raises(InvalidArgumentError, match=HUGE_N):
        call()


def test_the_limit_on_n_follows_the_engines_memory_budget(monkeypatch):
    from replify.engine import limits

    monkeypatch.setattr(limits, "MEMORY_BUDGET", 8 * 100)
    with pytest.raises(InvalidArgumentError, match="n must be at most 100, got 101"):
        replify.evaluate("hedge", "iid-bernoulli", n=101, horizon=10, pairs=2, seed=0)
    assert replify.evaluate("hedge", "iid-bernoulli", n=100, horizon=5, pairs=2, seed=0).pairs == 2


def test_the_command_line_refuses_a_huge_n_before_spreading_its_means(capsys):
    from replify.cli import main

    assert main(["run", "hedge", "-n", str(N_HUGE), "-T", "10", "--pairs", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("replify: error: -n must be at most 3,145,728, got 1,000,000,000") and "MEMORY_BUDGET" in err
