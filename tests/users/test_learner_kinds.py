"""Every kind of learner a user can hold, at every entry point (a matrix, not a few examples):
a registered name, a class or factory taking n, horizon, rng, a functools.partial, a callable
seed -> learner (a function, a lambda), a class decorated with replify.wrap (with and without its
horizon and rho), a wrapped learner and its factory, and references 'module:Name' and
'file.py:Name' — through evaluate, sweep, stress, calibrate, assert_replicable, the conformance
checks and the command line; full information and bandit feedback."""

import json
import pickle
import warnings

import numpy as np
import pytest

import replify
import replify.sources
from replify.cli import main
from replify.errors import ReplifyWarning
from replify.testing import assert_replicable, check_learner

import own_learners
from own_learners import N, RHO, T, bandit_kinds, full_information_kinds

FULL = full_information_kinds()
BANDIT = bandit_kinds()
KINDS = [pytest.param(FULL[k], "iid-bernoulli", id=f"full-{k}") for k in FULL] + [
    pytest.param(BANDIT[k], "bernoulli-arms", id=f"bandit-{k}") for k in BANDIT
]
#: the learners that need rho from the run (the decorator left it out)
NEEDS_RHO = (own_learners.WrappedLater,)
SPREAD = {"iid-bernoulli": {"means": [0.3, 0.5, 0.7]}, "bernoulli-arms": {}}


def extra(learner):
    return {"rho": RHO} if learner in NEEDS_RHO else {}


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplifyWarning)  # B clipped to T for the learner wrapped without its horizon
        return fn()


def replicable(learner):
    return isinstance(learner, (replify.ReplicableFactory, replify.ReplicableLearner)) or (
        isinstance(learner, str) and learner.endswith("WrappedGradient"))


@pytest.mark.parametrize("learner, adversary", KINDS)
def test_evaluate_names_pickles_and_round_trips_every_kind(learner, adversary):
    report = quiet(lambda: replify.evaluate(learner, adversary, n=N, horizon=T, pairs=4, seed=0, label="mine",
                                            adversary_params=SPREAD[adversary], **extra(learner)))
    assert report.learner == "mine" and report.pairs == 4 and report.regret.shape == (4, 2)
    again = pickle.loads(pickle.dumps(report))
    assert again.learner == "mine" and np.array_equal(again.regret, report.regret)
    assert np.array_equal(again.identical, report.identical)
    back = replify.Report.from_dict(json.loads(json.dumps(report.to_dict(per_pair=True))))
    assert back.learner == "mine" and back.rho_hat == report.rho_hat and np.array_equal(back.regret, report.regret)
    # the report, unpickled, still replays the pair it measured whenever the learner pickles (all but the lambda)
    if not (callable(learner) and getattr(learner, "__name__", "") == "<lambda>"):
        assert quiet(lambda: again.replay(1)).identical == bool(report.identical[1])
    else:
        with pytest.raises(replify.errors.InvalidArgumentError, match="cannot replay: it was pickled"):
            again.replay(1)


@pytest.mark.parametrize("learner, adversary", KINDS)
def test_every_kind_is_named_by_default_and_deterministic(learner, adversary):
    run = lambda: quiet(lambda: replify.evaluate(learner, adversary, n=N, horizon=T, pairs=2, seed=5,  # noqa: E731
                                                 adversary_params=SPREAD[adversary], **extra(learner)))
    a, b = run(), run()
    assert a.learner == b.learner and a.learner.split(".")[-1] in ("<lambda>", "hedge", "ucb1", "ProjectedGradient",
                                                                   "EpsilonGreedy", "WrappedGradient", "WrappedLater",
                                                                   "gradient_from_seed", "greedy_from_seed") \
        or a.learner.startswith(("ProjectedGradient(", "EpsilonGreedy("))
    assert np.array_equal(a.regret, b.regret) and np.array_equal(a.identical, b.identical)


@pytest.mark.parametrize("learner, adversary", KINDS)
def test_sweep_takes_every_kind_under_its_label(learner, adversary, tmp_path):
    result = quiet(lambda: replify.sweep(
        learners=[{"learner": learner, "label": "mine"}], adversaries=[adversary], horizons=[T], ns=[N],
        rhos=[RHO], pairs=2, seed=0, path=tmp_path / "s.jsonl", adversary_params={adversary: SPREAD[adversary]}))
    assert [r["learner"] for r in result.records()] == ["mine"]
    row = json.loads((tmp_path / "s.jsonl").read_text().splitlines()[0])
    assert row["report"]["learner"] == "mine" and row["config"]["learner"] == "mine"


@pytest.mark.parametrize("learner, adversary", KINDS)
def test_stress_takes_every_kind(learner, adversary):
    result = quiet(lambda: replify.stress(learner, n=N, horizon=T, budget=16, seed=0, families=["ties"],
                                          label="mine", **({"rho": RHO} if learner in NEEDS_RHO else {})))
    assert result.learner == "mine" and result.pairs_used >= 2 and 0.0 <= result.worst.rho_hat <= 1.0
    if learner is own_learners.WrappedGradient:  # stressed at the rho it was wrapped with
        assert result.rho == RHO


@pytest.mark.parametrize("learner, adversary", KINDS)
def test_check_learner_takes_every_kind(learner, adversary):
    if learner in NEEDS_RHO:  # the checks build it at their own sizes; rho must come from somewhere
        with pytest.raises(replify.errors.InvalidArgumentError, match=r"wrapped without rho.*expected rho in \(0, 1\)"):
            check_learner(learner)
        return
    # a seed -> learner callable's learner was built for its own sizes: the checks are told them
    sizes = {"n": N, "horizon": T} if callable(learner) and replify.sources.learner_arg(learner).kind == "seeded" else {}
    quiet(lambda: check_learner(learner, **sizes))


@pytest.mark.parametrize("learner, adversary", KINDS)
def test_assert_replicable_takes_every_kind(learner, adversary):
    # a learner that needs rho (wrapped without it) is built at the rho asserted
    run = lambda: quiet(lambda: assert_replicable(learner, adversary, rho=0.3, n=N, horizon=T, max_pairs=60,  # noqa: E731
                                                  adversary_params=SPREAD[adversary], label="mine"))
    if replicable(learner):
        assert run().learner == "mine"
    else:  # the plain learners part in most pairs: the sequential test decides "above" and the assertion says so
        with pytest.raises(AssertionError, match=r"mine is not shown 0.3-replicable"):
            run()


@pytest.mark.parametrize("kind", ["class", "decorated"])  # a file reference: through the command line, below
def test_calibrate_takes_a_users_learner(kind):
    learner = FULL[kind]
    # The learner as given is the one candidate: the decorated one passes its tests, the plain one is
    # refused (it parts in most pairs) with its label in the refusal.
    run = lambda: quiet(lambda: replify.calibrate(learner, n=N, horizon=T, rho=0.3, budget=2000, test_pairs=120,  # noqa: E731
                                                  regret_pairs=4, refine_pairs=4, label="mine"))
    if replicable(learner):
        cal = run()
        assert cal.learner == "mine" and cal.checks and all(c.decision == "below" for c in cal.checks)
        # its own parameters certify rho as well, and the claim says so rather than "not certified"
        assert cal.certified and "also certified" in cal.label and cal.to_dict()["certified"] is True
    else:  # decided above rho, so the refusal does not ask for more pairs
        with pytest.raises(replify.errors.InvalidArgumentError,
                           match=r"calibrate\('mine'\) found no candidate .*more pairs will not help"):
            run()


@pytest.mark.parametrize("learner, adversary", [pytest.param(FULL[k], "iid-bernoulli", id=k)
                                                for k in ("registered", "module-reference", "file-reference")]
                         + [pytest.param(BANDIT["file-reference"], "bernoulli-arms", id="bandit-file-reference")])
def test_the_command_line_runs_a_users_learner(learner, adversary, capsys, tmp_path):
    code = main(["run", learner, "--adversary", adversary, "-n", str(N), "-T", str(T), "--pairs", "4", "--quiet",
                 "--label", "mine", "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out.startswith("mine on ") and json.loads((tmp_path / "r.json").read_text())["learner"] == "mine"
    if replicable(learner):  # shown beside both reference rows
        assert "reference constant" in out.out and "reference hedge" in out.out
    code = main(["stress", learner, "-n", str(N), "-T", str(T), "--budget", "16", "--family", "ties", "--quiet"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out.startswith(f"replify stress {learner.rpartition(':')[2]}:")


@pytest.mark.slow
def test_the_command_line_calibrates_a_users_learner(capsys):
    code = main(["calibrate", FULL["file-reference"], "-n", str(N), "-T", str(T), "--rho", "0.3", "--budget", "2000", "--regret-pairs", "4", "--refine-pairs", "4",
                 "--test-pairs", "120", "--quiet"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out.startswith("replify calibrate WrappedGradient:") and "below" in out.out


def test_the_command_line_takes_a_users_adversary(capsys):
    code = main(["run", "hedge", "--adversary", f"{own_learners.__file__}:Coins", "--adversary-param", "first=0.1",
                 "-n", "3", "-T", "300", "--pairs", "4", "--quiet"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out.startswith("hedge on Coins:")
    report = replify.evaluate("hedge", own_learners.Coins, n=3, horizon=300, pairs=4, seed=0,
                              adversary_params={"first": 0.1})
    assert report.adversary == "Coins" and report.learning_gain > 0


def test_a_hyperparameter_called_label_goes_in_learner_params():
    # follow-the-leader on equal means parts in most pairs (every early tie is broken by the draw)
    report = replify.evaluate(own_learners.Labelled, "iid-bernoulli", n=3, horizon=100, pairs=8, seed=0,
                              label="named", learner_params={"label": "leader"})
    assert report.learner == "named" and report.rho_hat > 0.5  # the hyperparameter reached the learner
    fixed = replify.evaluate(own_learners.Labelled, "iid-bernoulli", n=3, horizon=100, pairs=8, seed=0, label="leader")
    assert fixed.learner == "leader" and fixed.rho_hat == 0.0  # label named the row and did not reach the learner
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"learner_params and keyword arguments both set 'eta'"):
        replify.evaluate("hedge", "iid-bernoulli", n=3, horizon=100, pairs=2, seed=0, eta=0.1, learner_params={"eta": 0.2})


def test_the_documented_contract_passes_the_checks_and_a_declared_property_is_checked():
    check_learner(own_learners.Minimal)  # exactly __init__(*, n, horizon, rng), act(), update(cost)
    with pytest.raises(AssertionError, match=r"update\(\) past the horizon T=120 was accepted"):
        check_learner(own_learners.ClaimsHorizon)
    with pytest.raises(AssertionError, match="past the horizon"):
        check_learner(replify.LearnerSpec("minimal", own_learners.Minimal, "experts", enforces={"horizon"}))


def test_the_built_ins_declare_what_the_checks_test():
    for name, spec in replify.learners().items():
        assert spec.enforces == {"horizon", "domain"}, name
        built = quiet(lambda: replify.make(name, n=3, horizon=50, seed=0, **({"rho": 0.2} if spec.parameters or
                                                                          spec.guarantee else {})))
        assert spec.feedback == getattr(built, "feedback", "full"), name


@pytest.mark.parametrize("kind", ["class", "partial", "decorated", "decorated-later", "file-reference"])
def test_anytime_takes_a_users_learner_where_it_applies(kind):
    learner = FULL[kind]
    wrap = {} if isinstance(learner, replify.ReplicableFactory) else {"wrap": True}
    report = quiet(lambda: replify.evaluate(
        lambda s: replify.anytime(learner, rho=0.1, n=N, seed=s, first_epoch=64, **wrap), "iid-bernoulli",
        n=N, horizon=T, pairs=4, seed=0, label="anytime"))
    # epochs of 64, 128, ...: each wrapped with its own certified B and eps, so the sum certifies rho
    assert report.learner == "anytime" and report.certified is True
    assert report.params["replicability_bound"] <= 0.1


def test_anytime_refuses_what_has_no_guarantee_or_fixes_its_horizon():
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"anytime\('ProjectedGradient'\) needs a replicable "
                                                                  r"learner.*Pass wrap=True"):
        replify.anytime(FULL["class"], rho=0.1, n=N, seed=0)
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"got a callable seed -> learner, which fixes its own"):
        replify.anytime(FULL["seed-callable"], rho=0.1, n=N, seed=0, wrap=True)


def test_a_pickled_report_loads_where_the_learner_cannot_be_imported(tmp_path):
    import subprocess
    import sys

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "far_away_learner.py").write_text(
        "class Far:\n    def __init__(self, *, n, horizon, rng):\n        self.n, self.rng = n, rng\n"
        "    def act(self):\n        return int(self.rng.integers(self.n))\n    def update(self, cost):\n        pass\n")
    report = replify.evaluate(f"{folder / 'far_away_learner.py'}:Far", "iid-bernoulli", n=3, horizon=50, pairs=2, seed=0)
    (tmp_path / "r.pkl").write_bytes(pickle.dumps(report))
    code = ("import pickle, sys; r = pickle.load(open(sys.argv[1], 'rb')); print(r.learner, r.pairs)\n"
            "try:\n    r.replay(0)\nexcept Exception as e:\n    print(type(e).__name__, e)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "r.pkl")], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Far 2\n")
    assert "InvalidArgumentError this report cannot replay here: its learner or adversary could not be unpickled" \
        in out.stdout


def test_a_plot_without_matplotlib_is_refused_before_any_work(monkeypatch, capsys, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    code = main(["run", "hedge", "-n", "3", "-T", "100", "--pairs", "2", "--quiet", "--plot", str(tmp_path / "a.png")])
    out = capsys.readouterr()
    assert code == 2 and out.out == ""  # nothing ran
    assert "--plot needs matplotlib, which is not installed: pip install 'replify[plot]'" in out.err
