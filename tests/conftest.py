"""Shared test learners. replify is imported inside the fixtures and test modules, not here at
import time, so that typeguard's import hook (``--typeguard-packages``) instruments it."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


def __getattr__(name):
    """``from conftest import RandomHedge``: the user's own learner of the README and the quick
    start (exponential weights sampling with rng.choice, so its action is random and its rng
    use depends on the costs it was fed). Imported on demand, after typeguard's hook is on."""
    if name == "RandomHedge":
        from quickstart import MyHedge

        return MyHedge
    raise AttributeError(name)


class Spy:
    """Records the horizon it was built with and every vector it is fed; plays argmin of the
    running sum (deterministic, so stepping and batch runs must agree)."""

    instances: list = []

    def __init__(self, *, n, horizon, rng):
        self.n, self.horizon = n, horizon
        self.fed: list[np.ndarray] = []
        self.acts = 0
        self.total = np.zeros(n)
        Spy.instances.append(self)

    def act(self):
        self.acts += 1
        return int(np.argmin(self.total))

    def update(self, cost):
        self.fed.append(np.array(cost, copy=True))
        self.total += cost


@pytest.fixture
def spy():
    Spy.instances.clear()
    yield Spy
    Spy.instances.clear()


@pytest.fixture
def bernoulli_costs():
    def draw(horizon, n, seed, p=0.5):
        return (np.random.default_rng(seed).random((horizon, n)) < p).astype(float)

    return draw


@pytest.fixture(autouse=True)
def replify_warnings_are_errors():
    """An unexpected replify warning fails the test; tests that expect one use pytest.warns.
    ReplicabilityWarning (parameters that do not certify the rho passed) is the exception: many
    tests choose eps and B freely to exercise the mechanics; the tests of that warning use
    pytest.warns, which records it whatever the filter."""
    import warnings

    from replify.errors import ReplicabilityWarning, ReplifyWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", ReplifyWarning)
        warnings.simplefilter("ignore", ReplicabilityWarning)
        yield
