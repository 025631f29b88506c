"""Shared test learners. replify is imported inside the fixtures and test modules, not here at
import time, so that typeguard's import hook (``--typeguard-packages``) instruments it."""

from __future__ import annotations

import numpy as np
import pytest


class RandomHedge:
    """A user's own learner, as in the README: exponential weights sampling with rng.choice, so
    its action is random and its rng use depends on the costs it was fed."""

    def __init__(self, *, n, horizon, rng):
        self.n, self.rng = n, rng
        self.eta = np.sqrt(8 * np.log(n) / horizon)
        self.loss = np.zeros(n)

    def act(self):
        w = np.exp(-self.eta * (self.loss - self.loss.min()))
        return int(self.rng.choice(self.n, p=w / w.sum()))

    def update(self, cost):
        self.loss += cost


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
    """An unexpected replify warning fails the test; tests that expect one use pytest.warns."""
    import warnings

    from replify.errors import ReplifyWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", ReplifyWarning)
        yield
