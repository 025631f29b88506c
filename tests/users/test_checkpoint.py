"""A learner saved mid-stream with pickle (its R stream included) and resumed plays on exactly as
the uninterrupted one: every registered learner (experts, online linear optimisation, bandit and
contextual), interrupted at three steps; a wrapped Hedge and a wrapped contextual learner
(docs/service.md, "A replicable learner in a service")."""

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


def _driver(name):
    """(make, step) for a registered learner: its build at a seed, and one step of the protocol its spec
    declares — act() then update(cost vector) under full information, act() then update(arm, cost)
    under bandit feedback, act(context) then update(arm, cost) for a contextual learner — on data
    drawn from a fixed generator, returning what it played."""
    spec = replify.learners()[name]
    n, horizon = 4, 600
    params = dict(spec.test_params or {})
    lo, hi = spec.cost_range
    rng = np.random.default_rng(11)
    costs = lo + (hi - lo) * rng.random((horizon, n))
    if spec.problem == "olo":  # online linear optimisation's costs: l1 norm at most 1
        costs /= np.maximum(1.0, np.abs(costs).sum(axis=1, keepdims=True))
    # contexts that change, on the unit ball; rep-linear-elimination designs for fixed features
    fixed = name == "rep-linear-elimination"
    x = rng.normal(size=(1 if fixed else horizon, n, 3))
    x /= 2 * np.linalg.norm(x, axis=2, keepdims=True)

    def make():
        return replify.make(name, n=n, horizon=horizon, seed=7, **params)

    def step(learner, t):
        if spec.problem == "contextual":
            arm = learner.act(x[0 if fixed else t])
            learner.update(arm, float(costs[t, arm]))
            return arm
        played = learner.act()
        if spec.feedback == "bandit":
            learner.update(played, float(costs[t, played]))
        else:
            learner.update(costs[t])
        return np.asarray(played).tolist()

    return make, step, horizon


@pytest.mark.parametrize("name", sorted(replify.learners()))
def test_every_registered_learner_interrupted_at_three_random_steps_resumes_bit_identically(name):
    # the service's checkpoint: pickle the learner (its R stream is its rng's state, inside it), and go
    # on from the bytes; three interruptions at steps from a fixed generator
    make, step, horizon = _driver(name)
    reference = make()
    played = [step(reference, t) for t in range(horizon)]
    cuts = set(np.random.default_rng(13).choice(np.arange(1, horizon), 3, replace=False).tolist())
    learner = make()
    for t in range(horizon):
        if t in cuts:
            learner = pickle.loads(pickle.dumps(learner))
        assert step(learner, t) == played[t], (name, t)


def test_a_checkpoint_file_is_written_whole_and_read_back(tmp_path):
    import warnings

    from replify.checkpoint import MAGIC
    from replify.errors import InvalidArgumentError, OutputPathError, ReplifyWarning

    make, step, horizon = _driver("linucb")
    reference, learner = make(), make()
    played = [step(reference, t) for t in range(horizon)]
    for t in range(horizon):
        if t in (100, 400):  # the service restarts from its file
            replify.save_learner(learner, tmp_path / "learner.ckpt")
            learner = replify.load_learner(tmp_path / "learner.ckpt")
        assert step(learner, t) == played[t]
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(OutputPathError):  # a file that is not a checkpoint is never replaced by one
        replify.save_learner(learner, tmp_path / "notes.txt")
    assert (tmp_path / "notes.txt").read_text() == "mine"
    with pytest.raises(InvalidArgumentError, match="is not a replify checkpoint"):
        replify.load_learner(tmp_path / "notes.txt")
    (tmp_path / "cut.ckpt").write_bytes((tmp_path / "learner.ckpt").read_bytes()[:60])
    with pytest.raises(InvalidArgumentError, match="is damaged"):
        replify.load_learner(tmp_path / "cut.ckpt")
    body = (tmp_path / "learner.ckpt").read_bytes()[len(MAGIC):].partition(b"\n")[2]
    (tmp_path / "old.ckpt").write_bytes(MAGIC + b"0.0.1\n" + body)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReplifyWarning)
        with pytest.raises(ReplifyWarning, match="written by replify 0.0.1"):
            replify.load_learner(tmp_path / "old.ckpt")
    with pytest.raises(InvalidArgumentError, match="cannot be saved"):
        replify.save_learner(lambda: 0, tmp_path / "fn.ckpt")
