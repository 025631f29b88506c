"""A learner saved mid-stream with pickle (its R stream included) and resumed plays on exactly as
the uninterrupted one: every registered full-information experts learner, a wrapped Hedge and a
wrapped contextual learner. (The first part of a production checkpointing story: resuming in a
service is documented where the whole story is.)"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import replify


def _experts():
    specs = replify.learners()
    return sorted(name for name, spec in specs.items() if spec.problem == "experts" and spec.feedback == "full")


@pytest.mark.parametrize("name", _experts())
def test_a_registered_learner_resumed_from_a_pickle_plays_on_bit_identically(name):
    spec = replify.learners()[name]
    horizon, cut = 400, 150
    learner = replify.make(name, n=4, horizon=horizon, seed=3, **({"rho": 0.1} if spec.parameters else {}))
    lo, hi = spec.cost_range
    costs = lo + (hi - lo) * np.random.default_rng(0).random((horizon, 4))
    for t in range(cut):
        learner.act()
        learner.update(costs[t])
    resumed = pickle.loads(pickle.dumps(learner))
    for t in range(cut, horizon):
        assert np.array_equal(np.asarray(learner.act()), np.asarray(resumed.act())), (name, t)
        learner.update(costs[t])
        resumed.update(costs[t])


def test_a_wrapped_learner_resumed_from_a_pickle_plays_on_bit_identically():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", replify.errors.BlockSizeWarning)
        learner = replify.wrap("hedge", n=3, horizon=2_000, rho=0.1, seed=1, block_size=20)
    costs = np.random.default_rng(2).uniform(-1, 1, (2_000, 3))
    for t in range(700):
        learner.act()
        learner.update(costs[t])
    resumed = pickle.loads(pickle.dumps(learner))
    for t in range(700, 2_000):
        assert learner.act() == resumed.act(), t
        learner.update(costs[t])
        resumed.update(costs[t])


def test_a_wrapped_contextual_learner_resumed_from_a_pickle_plays_on_bit_identically():
    # the registered linucb, which refuses a second act before an update: the conversion never asks its
    # fed learner twice (an unanswered warm-up act once broke it at the first committed step)
    learner = replify.wrap("linucb", n=3, horizon=3_000, rho=0.1, seed=4)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3_000, 3, 2))
    x /= 2 * np.linalg.norm(x, axis=2, keepdims=True)
    noise = 0.1 * rng.normal(size=3_000)
    theta = np.array([0.3, -0.2])
    for t in range(1_000):  # past the first decision: the fed learner is part of what is saved
        a = learner.act(x[t])
        learner.update(a, float(x[t, a] @ theta + noise[t]))
    resumed = pickle.loads(pickle.dumps(learner))
    for t in range(1_000, 3_000):
        a, b = learner.act(x[t]), resumed.act(x[t])
        assert a == b, t
        learner.update(a, float(x[t, a] @ theta + noise[t]))
        resumed.update(b, float(x[t, b] @ theta + noise[t]))
