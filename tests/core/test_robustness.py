"""Robustness: the registry survives an interrupted load, and every per-pair float of a report
is the same bits whichever way the pairs are split into processes and time into chunks
(docs/evaluation.md: results are identical whatever ``n_jobs`` and the backend)."""

import numpy as np
import pytest

import replify
from replify.engine import limits as engine  # the engine's sizes, which tests shrink
from replify.plugins.registry import Registry

from conftest import RandomHedge


class LearnersPlugin:
    def __init__(self, *names):
        self.names = names

    @replify.hookimpl
    def register_learners(self, register):
        for name in self.names:
            register(replify.LearnerSpec(name, RandomHedge, "experts", description=f"test learner {name}"))


class InterruptedOnce:
    """An entry point whose first load is interrupted (Ctrl-C while a slow plugin imports)."""

    def __init__(self, name, target):
        self.name, self.target, self.dist, self.loads = name, target, None, 0

    def load(self):
        self.loads += 1
        if self.loads == 1:
            raise KeyboardInterrupt
        return self.target


class Plain:
    def __init__(self, name, target):
        self.name, self.target, self.dist = name, target, None

    def load(self):
        return self.target


def test_an_interrupted_plugin_load_is_retried_in_full_on_the_next_lookup():
    first, slow, last = Plain("first", LearnersPlugin("a")), InterruptedOnce("slow", LearnersPlugin("b")), Plain("last", LearnersPlugin("c"))
    reg = Registry(entry_points=[first, slow, last])
    with pytest.raises(KeyboardInterrupt):
        reg.learners()
    assert list(reg.learners()) == ["a", "b", "c"]
    assert reg.learner("b").description == "test learner b"
    assert slow.loads == 2 and reg.failures == ()


# -- determinism -------------------------------------------------------------------------------

N = 4
UNEQUAL = {"means": np.linspace(0.3, 0.7, N)}


@pytest.mark.parametrize("learner, adversary, params, kw", [
    ("hedge", "iid-bernoulli", UNEQUAL, {}),                                    # per-step path
    ("hedge", "iid-bernoulli", dict(UNEQUAL, scale=0.37), {}),                  # non-integer costs
    ("ftplb-star", "switching-bernoulli",
     {"means": [np.linspace(0.3, 0.7, N), np.linspace(0.7, 0.2, N)]}, {"rho": 0.2, "block_size": 25, "fast_path": False}),  # block path
    ("ftplb-star", "iid-bernoulli", UNEQUAL, {"rho": 0.2, "block_size": 25}),  # block-sum path
])
def test_per_pair_floats_do_not_depend_on_n_jobs_or_chunking(learner, adversary, params, kw, monkeypatch):
    common = dict(n=N, horizon=600, pairs=4, seed=3, adversary_params=params, **kw)
    two = replify.evaluate(learner, adversary, n_jobs=2, **common).to_dict(per_pair=True)
    one = replify.evaluate(learner, adversary, n_jobs=1, **common).to_dict(per_pair=True)
    # The same in one process cut into chunks of 7 steps (the workers above keep the default).
    monkeypatch.setattr(engine, "MEMORY_BUDGET", 4 * N * 8 * 2 * 7)
    chunked = replify.evaluate(learner, adversary, n_jobs=1, **common).to_dict(per_pair=True)
    assert one["pseudo_regret"] is not None
    for other in (two, chunked):
        assert other.keys() == one.keys()
        for key in one:  # key by key, so that a failure names the number that moved
            assert other[key] == one[key], key
