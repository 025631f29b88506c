"""Shared test learners. replify is imported inside the fixtures and test modules, not here at
import time, so that typeguard's import hook (``--typeguard-packages``) instruments it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


def certificate_ratio(report, *, rho=0.1, alpha=1e-6):
    """An attack on a printed certificate: assert the report's bound is at most ``rho`` and not refuted
    (P(Bin(pairs, bound) >= failures) >= ``alpha``, so a true certificate fails with probability at most
    ``alpha``), and return bound / rho_hat, the factor the attack leaves."""
    from replify.evaluation.stats import binomial_upper_tail

    params = report.params or {}
    bound = params.get("replicability_bound", params.get("rho_bound"))
    assert bound <= rho * (1 + 1e-12) and binomial_upper_tail(report.failures, report.pairs, bound) >= alpha, report.rho_hat
    return bound / max(report.rho_hat, 1e-9)


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
def refused(capsys):
    """``refused(argv, *fragments)``: the command line refuses ``argv`` with exit status 2 and one
    line on stderr, ``replify: error: ...``, holding every one of ``fragments``; returns that line."""
    from replify import cli

    def check(argv, *fragments):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        # a user's file in tmp_path is outside the working folder: the note naming it comes first
        err = "".join(line for line in err.splitlines(keepends=True) if "from outside the working folder" not in line)
        assert err.startswith("replify: error: ") and err.count("\n") == 1, err
        for fragment in fragments:
            assert fragment in err, err
        return err

    return check


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


# -- the two tiers ----------------------------------------------------------------------------------
# The default tier (``python -m pytest``) covers every public behaviour in about two minutes; the full
# tier (``python -m pytest --full``, what CI runs) type-checks every replify function (TYPECHECKED) and
# adds the tests marked ``slow``: the long statistical
# tests, the attacks with many pairs, the long command-line demos, the documentation's blocks, figures,
# site build and render in Chromium. A slow test keeps its assertions; each behaviour it covers keeps a
# faster test in the default tier. ``python -m pytest -m slow --full`` runs the full tier's own tests
# alone.

FULL_COMMAND = "python -m pytest --full"


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", default=False,
                     help="run the full tier: the tests marked slow too, every replify function type-checked "
                          "(what CI runs)")


#: The packages the full tier instruments with typeguard's import hook: every annotated function of
#: replify is type-checked on every call, not only the public boundary (which checks its arguments in
#: both tiers). It doubles the suite's time, so the default tier runs without it. Exempt
#: (``@typeguard_ignore``): the validators that run each step (they check their own arguments) and
#: the small per-step or per-chunk helpers whose callers check what they pass; measured on
#: test_rep_gap_elimination, test_bandit_lanes and test_certificates, the hook took 120 s where the
#: same tests take 55 s without it.
TYPECHECKED = ["replify", "replify_plugins"]


def _typecheck_in_full_tier(config):
    if config.getoption("full") and not config.getoption("typeguard_packages", None):
        from typeguard import install_import_hook  # before any test module imports replify

        install_import_hook(packages=TYPECHECKED)


def pytest_collection_modifyitems(config, items):
    if config.getoption("full"):
        return
    skip = pytest.mark.skip(reason=f"slow: in the full tier, which `{FULL_COMMAND}` runs")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


def _skipped(item):
    return item.get_closest_marker("slow") is not None and not item.config.getoption("full")


# -- tests whose work is one long subprocess, run ahead in the background ---------------------------
# A test marked early_subprocess(argv, cwd=None, timeout=600) checks the result of one command. Once
# the session's tests are collected, the commands of the selected ones are run one after another by a
# background thread, on the machine's second core while the in-process tests run on the first; the
# early_subprocess fixture returns the command finished, as subprocess.run(argv, capture_output=True,
# text=True, cwd=cwd, timeout=timeout) would (a TimeoutExpired is raised in the test). A command not
# yet started when its test runs is run by the test itself, so a test run on its own is unchanged.
# Under pytest-xdist (addopts: -n 2) the controller collects nothing and each worker collects every
# test but runs only some, so nothing runs ahead: each command runs in its own test, on its worker's core.
# A test skipped in the default tier (marked slow, without --full) queues nothing.
# cwd=TEMP_DIR runs the command in a new empty directory (argv naming its files relatively), whose
# path is the result's ``cwd`` attribute. Tests whose markers are equal share one run; each gets its
# result from the fixture. Commands see the environment and working directory of collection time.

TEMP_DIR = "<a new temporary directory>"


class _EarlyCommand:
    def __init__(self, argv, cwd, timeout):
        # cwd=None: the working directory of now (collection), and the environment of now, not those of
        # whichever test runs (and may have changed them) when the command starts
        self.argv, self.cwd, self.timeout = [str(a) for a in argv], os.getcwd() if cwd is None else cwd, timeout
        self.env = dict(os.environ)
        self.lock = threading.Lock()
        self.state = "queued"  # queued -> running -> done, or queued -> cancelled
        self.done = threading.Event()
        self.proc = self.result = self.workdir = None

    def claim(self):
        with self.lock:
            if self.state != "queued":
                return False
            self.state = "running"
            return True

    def run(self):
        try:
            if self.cwd == TEMP_DIR:
                self.workdir = tempfile.mkdtemp(prefix="replify-tests-")
            cwd = self.workdir if self.cwd == TEMP_DIR else self.cwd
            with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:  # files: never full
                with self.lock:
                    if self.state == "cancelled":
                        return
                    self.proc = subprocess.Popen(self.argv, cwd=cwd, env=self.env, stdout=out, stderr=err, text=True)
                try:
                    self.proc.wait(timeout=self.timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
                    raise
                out.seek(0)
                err.seek(0)
                self.result = subprocess.CompletedProcess(self.argv, self.proc.returncode, out.read(), err.read())
                self.result.cwd = Path(cwd)
        except BaseException as exc:  # noqa: BLE001 - handed to the test that waits for it
            self.result = exc
        finally:
            with self.lock:
                self.state = "done" if self.state == "running" else self.state
            self.done.set()

    def finished(self):
        if self.claim():  # not started in the background: run it now
            self.run()
        self.done.wait()
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result

    def cancel(self):
        with self.lock:
            if self.state == "queued":
                self.state = "cancelled"
                self.done.set()
            elif self.state == "running":
                if self.proc is None:
                    self.state = "cancelled"  # claimed, not yet started: run() stops before starting it
                else:
                    self.proc.kill()


_early: dict = {}  # marker key -> _EarlyCommand
_early_thread = None


def _early_key(marker):
    kw = marker.kwargs
    return (tuple(str(a) for a in marker.args[0]), str(kw.get("cwd")), kw.get("timeout", 600))


def _early_command(marker):
    key = _early_key(marker)
    if key not in _early:
        _early[key] = _EarlyCommand(marker.args[0], marker.kwargs.get("cwd"), marker.kwargs.get("timeout", 600))
    return _early[key]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    _typecheck_in_full_tier(config)
    config.addinivalue_line(
        "markers", "early_subprocess(argv, cwd=None, timeout=600): the test's command, run ahead in the background "
        "once the tests are collected; the early_subprocess fixture returns it finished")


def pytest_collection_finish(session):
    global _early_thread
    if session.config.option.collectonly or hasattr(session.config, "workerinput"):
        return  # nothing runs; or a pytest-xdist worker, which runs only some of the items it collected
    queue = []
    for item in session.items:
        marker = item.get_closest_marker("early_subprocess")
        if marker is not None and not _skipped(item) and _early_key(marker) not in _early:
            queue.append(_early_command(marker))
    if queue:
        _early_thread = threading.Thread(target=lambda: [c.run() for c in queue if c.claim()], daemon=True)
        _early_thread.start()


def pytest_sessionfinish(session):
    for command in _early.values():  # queued or running but never waited for (-x, an interrupt)
        command.cancel()
    if _early_thread is not None:
        _early_thread.join(timeout=60)
    for command in _early.values():
        if command.workdir is not None:
            shutil.rmtree(command.workdir, ignore_errors=True)
    _early.clear()


@pytest.fixture
def early_subprocess(request):
    marker = request.node.get_closest_marker("early_subprocess")
    assert marker is not None, "early_subprocess needs the test's early_subprocess(argv, ...) marker"
    return _early_command(marker).finished()
