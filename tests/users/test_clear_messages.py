"""Mistakes that gave a raw numpy or Python error, or a message about something the user never
passed: each now gives replify's own error, naming the argument, what was expected and what came.
Each test fails on the code before the fix."""

from __future__ import annotations

import numpy as np
import pytest

import replify
from replify.errors import InvalidArgumentError


def test_wrap_bandit_form_names_eps_certified_not_a_rounding_never_passed():
    with pytest.raises(InvalidArgumentError) as info:
        replify.wrap("hedge", n=3, horizon=100, rho=0.1, seed=0, feedback="bandit", eps="certified")
    message = str(info.value)
    assert "eps='certified'" in message and "rounding" not in message
    assert "numeric eps=" in message


@pytest.fixture(scope="module")
def small_report():
    return replify.evaluate("hedge", "iid-bernoulli", n=2, horizon=20, pairs=2, seed=0)


@pytest.mark.parametrize("ax", ["x", 3, object()])
def test_plot_agreement_refuses_an_ax_that_is_not_axes(small_report, ax):
    pytest.importorskip("matplotlib")
    from replify.plots import plot_agreement

    with pytest.raises(InvalidArgumentError, match=r"plot_agreement: ax must be a matplotlib Axes .*got "):
        plot_agreement(small_report, ax=ax)


def test_plot_sweep_refuses_axes_that_are_not_a_pair_of_axes():
    pytest.importorskip("matplotlib")
    from replify.plots import figure, plot_sweep

    fig, ax = figure()
    with pytest.raises(InvalidArgumentError, match=r"plot_sweep: axes must be a pair of matplotlib Axes .*got 'ab'"):
        plot_sweep(object(), axes="ab")
    with pytest.raises(InvalidArgumentError, match="axes must be a pair"):
        plot_sweep(object(), axes=[ax])  # one axes, not two


def test_plot_agreement_still_draws_into_axes_of_yours(small_report):
    pytest.importorskip("matplotlib")
    from replify.plots import figure, plot_agreement

    fig, ax = figure()
    assert plot_agreement(small_report, ax=ax) is fig


def _bandit_learners():
    return sorted(name for name, spec in replify.learners().items() if spec.feedback == "bandit")


@pytest.mark.parametrize("name", _bandit_learners())
def test_a_bandit_learners_update_with_a_cost_vector_says_it_takes_action_and_cost(name):
    from replify.errors import LearnerProtocolError

    spec = replify.registry().learner(name)
    takes_rho = spec.parameters is not None or spec.guarantee is not None
    learner = replify.make(name, n=3, horizon=20, seed=0, rho=0.2 if takes_rho else None)
    learner.act(np.full((3, 2), 0.5)) if spec.problem == "contextual" else learner.act()
    with pytest.raises(LearnerProtocolError, match=r"update\(action, cost\).*shape \(3,\).*costs\[action\]"):
        learner.update(np.array([0.1, 0.2, 0.3]))
    assert learner.t == 0  # nothing was learnt from the refused call


def test_a_wrapped_bandits_update_with_one_number_says_what_it_takes():
    from replify.errors import LearnerProtocolError

    learner = replify.wrap("hedge", n=3, horizon=100, rho=0.1, seed=0, feedback="bandit")
    learner.act()
    with pytest.raises(LearnerProtocolError, match=r"ReplicableBandit.update\(\) at step 1: .*update\(action, cost\)"):
        learner.update(0.5)


@pytest.mark.parametrize("how", ["run", "step"])
@pytest.mark.parametrize("name", ["ftplb-star", "iid-experts"])
def test_anytime_names_the_real_step_of_a_bad_cost_not_the_epochs_own(name, how):
    from replify.errors import CostError

    learner = replify.anytime(name, rho=0.1, n=3, seed=0, first_epoch=16)  # epochs: steps 1..16, 17..48, ...
    costs = np.random.default_rng(0).random((60, 3))
    costs[39, 1] = np.nan  # step 40, the epoch's 24th
    with pytest.raises(CostError) as info:
        if how == "run":
            learner.run(costs)
        else:
            for row in costs:
                learner.act()
                learner.update(row)
    message = str(info.value)
    assert "at step 40 " in message and "step 24" not in message and "(epoch 1, steps 17..48)" in message


def test_anytime_bandit_epochs_name_the_real_step():
    from replify.errors import CostError

    learner = replify.anytime("rep-elimination", rho=0.1, n=3, seed=0, first_epoch=16)
    for _ in range(30):
        learner.update(learner.act(), 0.5)
    with pytest.raises(CostError, match=r"cost at step 31 must be .* got nan \(epoch 1, steps 17\.\.48\)"):
        learner.update(learner.act(), np.nan)


N_HUGE = 10**9
HUGE_N = r"n(s\[\.\.\.\])? must be at most 3,145,728, got 1,000,000,000: .*n costs as float64.*7\.45 GiB a step.*24 MiB"


@pytest.mark.parametrize("call", [
    lambda: replify.evaluate("hedge", "iid-bernoulli", n=N_HUGE, horizon=10, pairs=2, seed=0),
    lambda: replify.stress("ftpl", n=N_HUGE, horizon=10, budget=16, seed=0),
    lambda: replify.calibrate("hedge", n=N_HUGE, horizon=100, rho=0.1, seed=0),
    lambda: replify.sweep(learners=["hedge"], adversaries=["iid-bernoulli"], horizons=[10], ns=[N_HUGE], pairs=2,
                          seed=0),
], ids=["evaluate", "stress", "calibrate", "sweep"])
def test_a_huge_n_is_refused_at_once_with_the_limit_and_why(call):
    with pytest.raises(InvalidArgumentError, match=HUGE_N):
        call()


def test_the_limit_on_n_follows_the_engines_memory_budget(monkeypatch):
    from replify.engine import limits

    monkeypatch.setattr(limits, "MEMORY_BUDGET", 8 * 100)
    with pytest.raises(InvalidArgumentError, match="n must be at most 100, got 101"):
        replify.evaluate("hedge", "iid-bernoulli", n=101, horizon=10, pairs=2, seed=0)
    assert replify.evaluate("hedge", "iid-bernoulli", n=100, horizon=5, pairs=2, seed=0).pairs == 2


def test_the_command_line_refuses_a_huge_n_before_spreading_its_means(capsys):
    from replify.cli import main

    assert main(["run", "hedge", "-n", str(N_HUGE), "-T", "10", "--pairs", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("replify: error: -n must be at most 3,145,728, got 1,000,000,000") and "MEMORY_BUDGET" in err


@pytest.mark.parametrize("params, words", [
    (dict(lam=1e-320), r"rep-ridge: lam=1e-320 and feature_bound=1.0 make .*beta=inf.*lam too small"),
    (dict(feature_bound=1e300), r"rep-ridge: lam=30.0 and feature_bound=1e\+300 .*feature_bound too large"),
    (dict(feature_bound=1e-320), r"rep-ridge: .*feature_bound too small"),
    (dict(grid_scale=1e-320), r"rep-ridge: the rounding grid's widths .*grid_scale=1e-320"),
])
def test_rep_ridge_refuses_parameters_float64_cannot_hold(params, words):
    with pytest.raises(InvalidArgumentError, match=words):
        replify.make("rep-ridge", n=3, horizon=100, seed=0, rho=0.2, **params)


def test_rep_ridge_refuses_a_grid_that_overflows_once_it_sees_the_features():
    with pytest.raises(InvalidArgumentError, match=r"rep-ridge: the rounding grid's widths for d=5 features .*inf"):
        replify.evaluate("rep-ridge", "linear-bernoulli", n=3, horizon=50, pairs=2, seed=0, rho=0.2,
                         learner_params={"grid_scale": 1e308}, adversary_params={"contexts": "sphere"})


def test_a_linear_adversary_with_a_huge_d_is_refused_with_the_limit():
    with pytest.raises(InvalidArgumentError, match=r"linear-gaussian: d must be at most 1,048,576, got "
                                                   r"1,000,000,000,000: .*n x d = 3 x d features.*MEMORY_BUDGET"):
        replify.evaluate("rep-ridge", "linear-gaussian", n=3, horizon=100, pairs=2, seed=0, rho=0.2,
                         adversary_params={"d": 10**12})


def _shows_contexts(d):
    class Shown:
        iid = True

        def __init__(self, n, horizon, rng):
            self.n, self.horizon, self.d = n, horizon, d

        def sample_contexts(self, rng, start, stop):
            rows = stop - start
            return np.full((rows, self.n, 2), 0.5), rng.random((rows, self.n)), np.full((rows, self.n), 0.5)

        def sample_chunk(self, rng, start, stop):
            return self.sample_contexts(rng, start, stop)[1]

        def sample(self, rng):
            return self.sample_chunk(rng, 0, self.horizon)

    return Shown


@pytest.mark.parametrize("d, got", [(2.5, r"2\.5 \(float\)"), ("2", r"'2' \(str\)"), (None, r"None"), (-1, "-1"),
                                    (10**12, r"1,000,000,000,000")])
@pytest.mark.parametrize("learner", ["rep-ridge", "ucb1"])
def test_an_adversarys_d_that_is_not_a_whole_number_of_features_is_refused_naming_the_adversary(d, got, learner):
    with pytest.raises(InvalidArgumentError, match=rf"the adversary Shown's d \(features per arm\) must be .*got {got}"):
        replify.evaluate(learner, _shows_contexts(d), n=3, horizon=20, pairs=2, seed=0,
                         rho=0.2 if learner == "rep-ridge" else None)


def test_an_adversary_that_shows_contexts_without_d_is_told_to_declare_it():
    Shown = _shows_contexts(2)

    class Missing(Shown):
        def __init__(self, n, horizon, rng):
            self.n, self.horizon = n, horizon
    with pytest.raises(InvalidArgumentError, match="the adversary Missing shows contexts, so it must declare d"):
        replify.evaluate("ucb1", Missing, n=3, horizon=20, pairs=2, seed=0)
    assert replify.evaluate("ucb1", Shown, n=3, horizon=20, pairs=2, seed=0).pairs == 2  # d = 2 runs


# -- files a user hands replify ----------------------------------------------------------------------


def _load(path, n=2, horizon=3):
    from replify.components.userdata import load_cost_matrix

    return load_cost_matrix(path=path, n=n, horizon=horizon)


def test_a_pickled_npy_is_refused_saying_why_and_what_to_save(tmp_path):
    path = tmp_path / "costs.npy"
    np.save(path, np.array([[{"a": 1}] * 2] * 3, dtype=object), allow_pickle=True)
    with pytest.raises(InvalidArgumentError, match=r"holds an array of Python objects \(saved with allow_pickle\).*"
                                                   r"np\.save\(path, np\.asarray\(costs, dtype=float\)\)"):
        _load(path)


@pytest.mark.parametrize("damage, words", [
    (lambda good: good[:-10], r"damaged \.npy file: its header declares an array of shape \(3, 2\).*cut short"),
    (lambda good: good[:20], r"damaged \.npy file: its header cannot be read"),
    (lambda good: good[:10] + b"{garbage" + good[18:], r"damaged \.npy file: its header cannot be read"),
    (lambda good: good.replace(b"'shape': (3, 2)", b"'shape': (9**9, 2)"), r"damaged \.npy file"),  # not a literal
    (lambda good: b"hello, world", r"is not a \.npy file: it does not begin as every file np\.save writes"),
    (lambda good: b"", r"is not a \.npy file"),
])
def test_a_damaged_or_foreign_npy_is_refused_as_such(tmp_path, damage, words):
    good = tmp_path / "good.npy"
    np.save(good, np.arange(6.0).reshape(3, 2))
    bad = tmp_path / "bad.npy"
    bad.write_bytes(damage(good.read_bytes()))
    with pytest.raises(InvalidArgumentError, match=words):
        _load(bad)
    assert _load(good).tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


def test_a_damaged_header_declaring_a_huge_shape_is_refused_not_allocated(tmp_path):
    good = tmp_path / "good.npy"
    np.save(good, np.arange(6.0).reshape(3, 2))
    data = good.read_bytes()
    header = data[10:].split(b"\n", 1)[0]
    huge = header.replace(b"(3, 2)", b"(1000000000000, 2)")
    bad = tmp_path / "bad.npy"
    bad.write_bytes(data[:10] + huge[: len(header)].ljust(len(header)) + data[10 + len(header):])
    with pytest.raises(InvalidArgumentError, match=r"declares an array of shape \(1000000000000, 2\)"):
        _load(bad)


def test_a_csv_with_a_byte_order_mark_is_read_as_the_numbers_it_holds(tmp_path):
    path = tmp_path / "costs.csv"
    path.write_text("0.1,0.2\n0.3,0.4\n0.5,0.6\n", encoding="utf-8-sig")  # as Excel saves "CSV UTF-8"
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    assert _load(path).tolist() == [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]


def test_a_csv_that_is_not_utf8_is_refused_naming_the_byte(tmp_path):
    path = tmp_path / "costs.csv"
    path.write_bytes(b"0.1,0.2\n\xff\xfe,0.4\n0.5,0.6\n")
    with pytest.raises(InvalidArgumentError, match=r"is not UTF-8 text \(byte b'\\xff' at offset 8\)"):
        _load(path)


def test_a_nul_byte_in_a_path_is_refused_by_replify_not_python(tmp_path):
    with pytest.raises(InvalidArgumentError, match=r"path must be a file path without NUL bytes .*got 'a\\x00b\.npy'"):
        _load("a\x00b.npy")
    with pytest.raises(InvalidArgumentError, match=r"point-mass: path must be a file path without NUL bytes"):
        replify.evaluate("hedge", "point-mass", n=2, horizon=3, pairs=2, seed=0,
                         adversary_params={"path": "a\x00b.npy"})
    for argument, call in (
        ("learner", lambda: replify.evaluate("x\x00.py:Foo", "iid-bernoulli", n=2, horizon=3, pairs=2, seed=0)),
        ("adversary", lambda: replify.evaluate("hedge", "x\x00.py:Foo", n=2, horizon=3, pairs=2, seed=0)),
    ):
        with pytest.raises(InvalidArgumentError, match=rf"{argument} 'x\\x00\.py:Foo': .*without NUL bytes"):
            call()
    with pytest.raises(InvalidArgumentError, match="path must be a file path without NUL bytes"):
        replify.sweep(learners=["hedge"], adversaries=["iid-bernoulli"], horizons=[3], ns=[2], pairs=2, seed=0,
                      path=str(tmp_path / "a\x00b.jsonl"))


@pytest.mark.parametrize("argv, words", [
    (["sweep", "a\x00b.toml"], "the config file must be a file path without NUL bytes"),
    (["run", "x\x00.py:Foo", "-n", "2", "-T", "5"], "NAME 'x\\x00.py:Foo': expected"),
    (["run", "hedge", "-n", "2", "-T", "5", "--json", "a\x00b.json"], "--json must be a file path without NUL bytes"),
])
def test_the_command_line_refuses_a_nul_byte_in_a_path_in_one_line(argv, words, capsys):
    from replify.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("replify: error: ") and words in err and "Traceback" not in err


def test_a_sweep_config_that_is_not_utf8_is_refused_naming_the_byte(tmp_path, capsys):
    from replify.cli import main

    config = tmp_path / "sweep.toml"
    config.write_bytes(b'learners = ["hedge"]\n# caf\xe9\n')  # Latin-1, not UTF-8
    assert main(["sweep", str(config)]) == 2
    err = capsys.readouterr().err
    assert "is not UTF-8 text (byte b'\\xe9' at offset 26)" in err and "Traceback" not in err


def test_a_sweep_config_with_a_byte_order_mark_is_read(tmp_path, capsys):
    from replify.cli import main

    config = tmp_path / "sweep.toml"
    config.write_text('learners = ["hedge"]\nadversaries = ["iid-bernoulli"]\nhorizons = [3]\nns = [2]\npairs = 2\n'
                      "seed = 0\n", encoding="utf-8-sig")
    assert main(["sweep", str(config), "--quiet"]) == 0
    assert "1 computed" in capsys.readouterr().out


# -- the command line's --json -----------------------------------------------------------------------

RUN = ["run", "hedge", "-n", "2", "-T", "10", "--pairs", "2", "--quiet", "--no-references"]


@pytest.mark.parametrize("value, words", [
    ("", "--json needs a file path, or - for standard output; got an empty string"),
    ("newdir/", "--json 'newdir/' ends in a path separator, so it names a folder; expected a file path"),
    ("x.json/", "--json 'x.json/' ends in a path separator"),
    ("/dev/stderr", "--json '/dev/stderr' is standard error; expected a file path, or - for standard output"),
])
def test_json_paths_that_name_no_file_are_refused_with_exit_status_2(value, words, tmp_path, monkeypatch, capsys):
    from replify.cli import main

    monkeypatch.chdir(tmp_path)
    assert main([*RUN, "--json", value]) == 2
    assert capsys.readouterr().err.startswith(f"replify: error: {words}")
    assert list(tmp_path.iterdir()) == []  # nothing written, no folder made


@pytest.mark.parametrize("option, value", [("--plot", ""), ("--plot", "fig.png/")])
def test_plot_paths_that_name_no_file_are_refused(option, value, tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    from replify.cli import main

    monkeypatch.chdir(tmp_path)
    assert main([*RUN, option, value]) == 2
    assert f"replify: error: {option}" in capsys.readouterr().err and list(tmp_path.iterdir()) == []


def test_json_to_dev_stdout_is_json_to_standard_output(tmp_path):
    import json
    import subprocess
    import sys

    out = tmp_path / "out.txt"
    with open(out, "wb") as fh:  # --json /dev/stdout > file: /dev/stdout is that file
        done = subprocess.run([sys.executable, "-m", "replify.cli", *RUN, "--json", "/dev/stdout"], stdout=fh,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["pairs"] == 2  # the document alone; the summary went to stderr
    assert "rho_hat" in done.stderr


FORKING_LEARNER = '''
import os

import numpy as np

os.fork()  # at import: the child goes on running replify's command too


class Forky:
    def __init__(self, n, horizon, rng):
        self.n, self.rng = n, rng

    def act(self):
        return int(self.rng.integers(self.n))

    def update(self, cost):
        pass
'''


def test_a_learner_file_that_forks_leaves_one_json_document_and_says_so(tmp_path):
    import json
    import subprocess
    import sys

    (tmp_path / "forky.py").write_text(FORKING_LEARNER)
    done = subprocess.run([sys.executable, "-m", "replify.cli", "run", str(tmp_path / "forky.py") + ":Forky", "-n", "2",
                           "-T", "10", "--pairs", "2", "--quiet", "--json", "-"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)  # one document: two would be "Extra data"
    assert document["pairs"] == 2
    assert done.stderr.count("was forked from replify's process") == 1
    assert "stops here, without writing its output: only the process that started writes the output" in done.stderr
