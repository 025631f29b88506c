"""Shared test learners. replify is imported inside the fixtures and test modules, not here at
import time, so that typeguard's import hook (``--typeguard-packages``) instruments it."""

from __future__ import annotations

import subprocess
import sys
import tempfile
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


# -- tests that are one long subprocess, started early --------------------------------------------
# A test marked early_subprocess(argv, cwd=None, timeout=600) runs one command and checks its result.
# The command is started as soon as the session's tests are collected (only for the tests selected),
# so that it runs on another core beside the in-process tests; the early_subprocess fixture waits
# for it and returns it finished, as subprocess.run(argv, capture_output=True, text=True) would. A
# test whose command was not started early (run on its own, or collected some other way) starts it
# when it runs. The command sees the environment and working directory of collection time.

_early: dict = {}


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "early_subprocess(argv, cwd=None, timeout=600): the test's command, started once the tests "
        "are collected; the early_subprocess fixture returns its finished result")


def _start_early(marker):
    argv = [str(a) for a in marker.args[0]]
    out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")  # files, not pipes: never full
    proc = subprocess.Popen(argv, cwd=marker.kwargs.get("cwd"), stdout=out, stderr=err, text=True)
    return proc, out, err, argv, marker.kwargs.get("timeout", 600)


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    for item in session.items:
        marker = item.get_closest_marker("early_subprocess")
        if marker is not None and item.nodeid not in _early:
            _early[item.nodeid] = _start_early(marker)


def pytest_sessionfinish(session):
    for proc, out, err, _, _ in _early.values():  # started but never waited for (-x, a keyboard interrupt)
        proc.kill()
        proc.wait()
        out.close()
        err.close()
    _early.clear()


@pytest.fixture
def early_subprocess(request):
    marker = request.node.get_closest_marker("early_subprocess")
    assert marker is not None, "early_subprocess needs the test's early_subprocess(argv, ...) marker"
    proc, out, err, argv, timeout = _early.pop(request.node.nodeid, None) or _start_early(marker)
    try:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(argv, proc.returncode, out.read(), err.read())
    finally:
        out.close()
        err.close()
