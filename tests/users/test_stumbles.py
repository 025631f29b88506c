"""What a new user tripped on: old import paths, a wrapped class tied to one horizon, a slow run
silent in a log. Each test fails on the code before the fix."""

import importlib
import io
import sys
import warnings

import pytest

import replify
from conftest import RandomHedge  # the README's own Hedge
from replify import _moved
from replify.base import progress


@pytest.mark.parametrize("old, new", sorted(_moved.MODULES.items()))
def test_every_module_path_a_user_could_import_still_imports_with_a_warning_naming_the_new_place(old, new):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} has moved to {new}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)  # one module under two names: the same objects


def test_importing_an_old_module_path_leaves_the_public_function_of_that_name():
    # replify.stress was a module and is a function: importing the old path set the module on the package,
    # and every later replify.stress(...) in the process failed with "'module' object is not callable".
    sys.modules.pop("replify.stress", None)
    with pytest.warns(DeprecationWarning, match="replify.stress has moved"):
        importlib.import_module("replify.stress")
    assert callable(replify.stress) and replify.stress is replify.experiments.stress.stress
    assert sys.modules["replify.stress"] is replify.experiments.stress


@pytest.mark.parametrize("package, name", sorted((p, n) for p, names in _moved.NAMES.items() for n in names))
def test_every_name_of_a_module_that_became_a_package_still_imports(package, name):
    module = importlib.import_module(package)
    vars(module).pop(name, None)  # a name fetched once is cached: fetch it afresh
    with pytest.warns(DeprecationWarning, match=f"{package}.{name} has moved to {_moved.NAMES[package][name]}"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(_moved.NAMES[package][name]), name)


def test_the_old_report_import_of_the_issue_works():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vars(importlib.import_module("replify.evaluation")).pop("Report", None)
        from replify.evaluation import Report
    assert Report is replify.Report
    assert [str(w.message) for w in caught if w.category is DeprecationWarning][0].startswith(
        "replify.evaluation.Report has moved to replify.evaluation.report.Report")
    assert caught[0].filename == __file__  # the warning points at the user's line, where default filters show it


@replify.wrap(rho=0.1, blocks=20, eps="certified")
class AnyHorizon(RandomHedge):
    pass


def test_one_decorated_class_sweeps_over_horizons_with_its_block_count_and_certified_eps():
    result = replify.sweep(learners=[AnyHorizon], adversaries=["iid-bernoulli"], horizons=[400, 4000], ns=[3],
                           pairs=2, seed=0, progress=False)
    for record in result.records():
        T = record["horizon"]
        assert record["block_size"] == T // 20
        assert record["certified"] and record["eps"] == pytest.approx(
            replify.certified_eps(horizon=T, n=3, rho=0.1, block_size=T // 20))
    learner = AnyHorizon(n=3, horizon=1000, seed=1)
    assert learner.block_size == 50 and learner.params.replicability_bound <= 0.1 + 1e-12


def test_blocks_and_block_size_together_are_refused_by_name():
    with pytest.raises(replify.errors.InvalidArgumentError, match="give one of blocks=4 .* and block_size=10"):
        replify.wrap(RandomHedge, n=3, horizon=100, rho=0.1, seed=0, blocks=4, block_size=10)


def test_a_long_run_logs_progress_lines_when_stderr_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr(progress, "LINE_INTERVAL", 0.05)
    log = io.StringIO()  # not a terminal, as a batch job's log file
    monkeypatch.setattr(sys, "stderr", log)
    bar = progress.reporter(None, "evaluate slow on coin")
    bar(0, 4)
    deadline = progress.time.monotonic() + 10
    while "0/4" not in log.getvalue() and progress.time.monotonic() < deadline:
        progress.time.sleep(0.01)
    bar(4, 4)
    bar.close()
    lines = log.getvalue().splitlines()
    assert lines[0].startswith("replify: evaluate slow on coin: 0/4 (0%), ")
    assert lines[-1].startswith("replify: evaluate slow on coin: 4/4 (100%)") and lines[-1].endswith("(done)")


def test_a_short_run_logs_nothing(monkeypatch):
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    replify.evaluate("hedge", "iid-bernoulli", n=2, horizon=50, pairs=2, seed=0)
    assert log.getvalue() == ""


class TakesAnyKeywords:
    """A factory written with **kwargs: it takes n, horizon and rng like any other."""

    def __init__(self, **kwargs):
        self.n, self.rng = kwargs["n"], kwargs["rng"]

    def act(self):
        return int(self.rng.integers(self.n))

    def update(self, cost):
        pass


def test_a_factory_taking_only_keywords_is_a_factory_not_refused():
    report = replify.evaluate(TakesAnyKeywords, "iid-bernoulli", n=3, horizon=50, pairs=2, seed=0)
    assert report.rho_hat == 0.0  # both runs draw from one rng seeded alike: identical, as a factory's must be
    assert replify.evaluate(lambda **kw: TakesAnyKeywords(**kw), "iid-bernoulli", n=3, horizon=50, pairs=2,
                            seed=0).rho_hat == 0.0


def test_a_replify_error_inside_a_seeded_callable_keeps_its_own_words():
    # a seed -> learner callable that raises replify's own error (a wrapped class refusing a knob) is not
    # re-described as "not a learner": its message is the one that says what to do
    def build(seed):
        return replify.wrap(RandomHedge, n=3, horizon=100, rho=0.1, seed=seed, block_size=0)

    with pytest.raises(replify.errors.InvalidArgumentError, match="block_size must be an integer >= 1") as info:
        replify.evaluate(build, "iid-bernoulli", n=3, horizon=100, pairs=2, seed=0)
    assert "taken for a callable seed -> learner" not in str(info.value)
