"""replify.offpolicy's estimates against the peers that install beside replify: Vowpal Wabbit's
``--cb --eval`` (IPS of a given policy on a logged contextual bandit data set) and coba's
``SequentialCB(eval="ips")`` (the same on a logged environment), on the very same log. Both peers
fit their own online regression model for DR and DM, so only the IPS is the same quantity there;
the DR and SNIPS are held to their textbook formulas in test_offpolicy.py."""

from __future__ import annotations

import numpy as np
import pytest

from replify.offpolicy import Log, estimate

vowpalwabbit = pytest.importorskip("vowpalwabbit")
coba = pytest.importorskip("coba")


def _log_and_policy():
    # Logging probabilities 1/2, 1/4, 1/4 and costs 0/1 (wine, the supervised-to-bandit
    # construction): every c/p is exact in float32, which Vowpal Wabbit reads its labels into, so
    # the peers and replify sum the same numbers.
    logging = lambda contexts: np.tile([0.5, 0.25, 0.25], (contexts.shape[0], 1))  # noqa: E731
    log = Log.simulate("classification-bandit", n=3, rows=1500, seed=3, logging=logging,
                       adversary_params={"features_as": "same"})
    policy = lambda contexts: np.where(contexts[:, 0, 1] > 0, 0, np.where(contexts[:, 0, 2] > 0, 1, 2))  # noqa: E731
    return log, policy


def test_vowpal_wabbit_eval_gives_replifys_ips():
    log, policy = _log_and_policy()
    target = policy(log.contexts)
    vw = vowpalwabbit.Workspace(f"--cb {log.n} --eval --cb_type ips --quiet")
    try:
        for i in range(log.rows):  # VW's text format: "<policy's action> <logged action>:<cost>:<probability> | features"
            feats = " ".join(f"f{j}:{v!r}" for j, v in enumerate(log.contexts[i, 0].tolist()))
            vw.learn(f"{int(target[i]) + 1} {int(log.actions[i]) + 1}:{float(log.costs[i])!r}:"
                     f"{float(log.propensities[i])!r} | {feats}")
        theirs = vw.get_sum_loss() / vw.get_weighted_examples()
    finally:
        vw.finish()
    assert abs(estimate(log, policy, "ips").value - theirs) <= 1e-10


def test_coba_sequential_ips_gives_replifys_ips():
    log, policy = _log_and_policy()
    rows = [coba.LoggedInteraction(tuple(log.contexts[i, 0].tolist()), int(log.actions[i]), -float(log.costs[i]),
                                   probability=float(log.propensities[i]), actions=list(range(log.n)))
            for i in range(log.rows)]

    class Logged(coba.Environment):
        params = {"env": "replify log"}

        def read(self):
            return iter(rows)

    class Rule(coba.Learner):  # the target policy, one context at a time
        params = {"family": "rule"}

        def request(self, context, actions, request):
            raise NotImplementedError

        def predict(self, context, actions):
            return int(policy(np.asarray(context)[None, None, :])[0]), {}

        def learn(self, *args, **kwargs):
            pass

    result = coba.Experiment(coba.Environments.from_custom(Logged()), [Rule()],
                             coba.SequentialCB(learn=None, eval="ips", record=["reward"])).run(quiet=True, processes=1)
    k = list(result.interactions.columns).index("reward")
    theirs = -np.mean([row[k] for row in result.interactions])  # coba's rewards are replify's costs negated
    assert len(list(result.interactions)) == log.rows
    assert abs(estimate(log, policy, "ips").value - theirs) <= 1e-10
