"""Peers' contextual policies (river, mabwiser) run as replify contextual learners: measured inside
replify, seeded from the pair's shared R, and made replicable by replify.wrap."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import replify
from replify.conversions.contextual import ReplicableContextual
from replify.errors import ActionError, InvalidArgumentError
from replify_plugins.peers import MabwiserPolicy, RiverPolicy, shared_context
from replify_plugins.peers import adapters

pytest.importorskip("river")
pytest.importorskip("mabwiser")

PEERS = [RiverPolicy, functools.partial(MabwiserPolicy, alpha=1.0), functools.partial(MabwiserPolicy, policy="LinTS")]
WINE = dict(n=3, horizon=400, pairs=2, seed=0, progress=False, adversary_params={"features_as": "same"})


def test_the_shared_context_is_the_common_row_else_every_arms_features():
    same = np.tile([1.0, 2.0, 3.0], (4, 1))
    assert shared_context(same).tolist() == [1.0, 2.0, 3.0]
    differ = np.arange(6.0).reshape(3, 2)
    assert shared_context(differ).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.mark.slow  # about 1 ms a step for each peer: 19 s together
@pytest.mark.parametrize("peer", PEERS, ids=["river-linucb", "mabwiser-linucb", "mabwiser-lints"])
def test_peers_learn_wine_inside_replify_and_are_measured(peer):
    report = replify.evaluate(peer, "classification-bandit", **WINE)
    # one seed, a margin of 2x: wine's classes are nearly linearly separable; a fixed arm errs on 60%
    assert report.regret.mean() < 0.5 * report.constant_regret.mean()
    # not replicable: two runs on independent rows part at once (compared by their arms)
    assert report.claim == "measured" and report.rho_hat == 1.0


@pytest.mark.parametrize("peer", PEERS, ids=["river-linucb", "mabwiser-linucb", "mabwiser-lints"])
def test_a_peers_randomness_comes_from_the_runs_generator(peer):
    # Two builds from generators of one seed play the same arms on the same data: the policy's own
    # generator is seeded from R, so a pair's two runs share it.
    seq = replify.make_adversary("linear-gaussian", n=4, horizon=60, seed=0, d=3, contexts="sphere")
    x, c, _ = seq.sample_contexts(np.random.default_rng(1), 0, 60)

    def arms(seed):
        learner = peer(n=4, horizon=60, rng=np.random.default_rng(seed))
        out = []
        for t in range(60):
            a = learner.act(x[t])
            learner.update(a, float(c[t, a]))
            out.append(a)
        return out

    assert arms(5) == arms(5)


def test_wrap_makes_a_peers_policy_replicable_by_the_contextual_conversion():
    built = replify.wrap(RiverPolicy, n=3, horizon=1_000, rho=0.1, seed=0)
    assert isinstance(built, ReplicableContextual) and built.model == "disjoint" and built.params.certified
    report = replify.evaluate(replify.wrap(rho=0.1)(RiverPolicy), "classification-bandit", **WINE)
    assert report.claim == "certified"


def test_bad_policies_and_a_missing_package_are_said_clearly(monkeypatch):
    with pytest.raises(InvalidArgumentError, match=r"river's contextual policies \('LinUCBDisjoint',\); got 'UCB'"):
        RiverPolicy(n=3, horizon=10, rng=np.random.default_rng(0), policy="UCB")
    with pytest.raises(InvalidArgumentError, match="rng must be a numpy Generator"):
        MabwiserPolicy(n=3, horizon=10, rng=0)

    def missing(name):
        raise ImportError(name)

    monkeypatch.setattr(adapters.importlib, "import_module", missing)
    with pytest.raises(InvalidArgumentError, match=r'mabwiser is not installed: pip install "replify\[peers\]"'):
        MabwiserPolicy(n=3, horizon=10, rng=np.random.default_rng(0))


@pytest.mark.parametrize("peer", PEERS, ids=["river-linucb", "mabwiser-linucb", "mabwiser-lints"])
def test_a_peer_reads_one_layout_for_the_whole_run(peer):
    # the first step shows one row for every arm, the second rows that differ: the policy's models
    # were built on d features, and are never handed n·d (refused, naming the way out)
    learner = peer(n=3, horizon=10, rng=np.random.default_rng(0))
    a = learner.act(np.tile([0.1, 0.2], (3, 1)))
    learner.update(a, 1.0)
    with pytest.raises(InvalidArgumentError, match="the arms' rows differ.*context='concatenated'"):
        learner.act(np.arange(6.0).reshape(3, 2) / 10)
    # declared concatenated: n·d features at every step, whatever the rows
    held = peer(n=3, horizon=10, rng=np.random.default_rng(0), context="concatenated")
    for x in (np.tile([0.1, 0.2], (3, 1)), np.arange(6.0).reshape(3, 2) / 10):
        arm = held.act(x)
        held.update(arm, 0.5)
    seen = held._context if isinstance(held, RiverPolicy) else held._x
    assert len(seen) == 6


@pytest.mark.parametrize("peer", PEERS, ids=["river-linucb", "mabwiser-linucb", "mabwiser-lints"])
def test_a_peer_refuses_one_arm_an_arm_out_of_range_and_a_non_finite_context(peer):
    with pytest.raises(InvalidArgumentError, match="n must be an integer >= 2 .* got 1"):
        peer(n=1, horizon=10, rng=np.random.default_rng(0))
    learner = peer(n=3, horizon=10, rng=np.random.default_rng(0))
    a = learner.act(np.eye(3))
    with pytest.raises(ActionError, match=r"action must be an arm in \[0, 3\); got 7"):
        learner.update(7, 0.0)
    learner.update(a, 0.0)
    with pytest.raises(InvalidArgumentError, match=r"context must be a finite \(n, d\) = \(3, d\) array .* non-finite"):
        learner.act(np.array([[np.nan, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    with pytest.raises(InvalidArgumentError, match=r"got shape \(2, 2\)"):
        learner.act(np.eye(2))
    with pytest.raises(InvalidArgumentError, match="context must be one of"):
        peer(n=3, horizon=10, rng=np.random.default_rng(0), context="rows")
