"""The command line never overwrites what the user gave it: an output that is the config (or a
link to it), two outputs on one file, a results file that is somebody's notes — refused before
any work, with the options and the path named."""

import pytest

import replify

CONFIG = 'learners = ["hedge"]\nadversaries = ["iid-bernoulli"]\nhorizons = [10]\nns = [2]\npairs = 2\nseed = 0\n'


@pytest.fixture
def no_work(monkeypatch):
    """Any evaluation is a failure of the test: every refusal comes before the work."""
    def refuse(*args, **kwargs):
        raise AssertionError("work started before the outputs were checked")

    for name in ("evaluate", "sweep", "calibrate", "stress"):
        monkeypatch.setattr(replify, name, refuse)
    monkeypatch.setattr(replify.experiments.sweeps, "_run_row", refuse)


def test_sweep_output_on_its_own_config_or_a_link_to_it_is_refused(tmp_path, no_work, refused):
    config = tmp_path / "grid.toml"
    config.write_text(CONFIG)
    refused(["sweep", str(config), "--output", str(config)],
            f"--output {str(config)!r} and the config file {str(config)!r} are the same file", "would overwrite")
    alias = tmp_path / "alias.jsonl"
    alias.symlink_to(config)
    refused(["sweep", str(config), "--output", str(alias)], "--output", str(alias), "the config file")
    config.write_text(CONFIG + f'output = "{config}"\n')
    refused(["sweep", str(config)], "the config's output", "the config file")
    assert config.read_text() == CONFIG + f'output = "{config}"\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alias.jsonl", "grid.toml"]


@pytest.mark.parametrize("command", [
    ["run", "hedge", "--adversary", "iid-bernoulli", "-n", "2", "-T", "10"],
    ["calibrate", "fllb", "-n", "2", "-T", "10", "--rho", "0.1"],
])
def test_json_and_plot_on_one_file_are_refused(tmp_path, no_work, command, refused):
    pytest.importorskip("matplotlib")
    out = tmp_path / "out.png"
    refused(command + ["--json", str(out), "--plot", str(tmp_path / "." / "out.png")],
            "--plot", "--json", "are the same file")
    assert not out.exists()


def test_sweep_output_and_plot_on_one_file_are_refused(tmp_path, no_work, refused):
    config = tmp_path / "grid.toml"
    config.write_text(CONFIG + f'plot = "{tmp_path / "p.png"}"\n')
    refused(["sweep", str(config), "--output", str(tmp_path / "p.png")], "--output", "the config's plot")


def test_notes_given_as_the_results_file_are_refused_and_kept(tmp_path, no_work, refused):
    config = tmp_path / "grid.toml"
    config.write_text(CONFIG)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\nmore notes\n")
    refused(["sweep", str(config), "--output", str(notes)],
            f"--output {str(notes)!r} exists and is not a replify results file", "'my notes'")
    assert notes.read_text() == "my notes\nmore notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.toml", "notes.txt"]  # no .rejected


def test_the_library_refuses_notes_too_and_takes_a_results_file_with_a_torn_first_row(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    kw = dict(learners=["hedge"], adversaries=["iid-bernoulli"], horizons=[10], ns=[2], pairs=2, seed=0)
    with pytest.raises(replify.errors.OutputPathError, match=r"path '.*notes\.txt' exists and is not a replify results file"):
        replify.sweep(**kw, path=notes)
    assert notes.read_text() == "my notes\n"
    torn = tmp_path / "s.jsonl"
    torn.write_bytes(b'{"config": {"learner": "hed')  # the first row, torn by a kill: the file is ours
    with pytest.warns(replify.errors.ResultsFileWarning, match="1 damaged line"):
        result = replify.sweep(**kw, path=torn)
    assert result.rejected == 1 and len(result.rows) == 1


# -- a sweep's arguments are checked as every other command's ---------------------------------------

KW = dict(learners=["hedge"], adversaries=["iid-bernoulli", "ties"], horizons=[10], ns=[2], pairs=2, seed=0)


@pytest.mark.parametrize("params,message", [
    ({"iid-bernoulli": {"mean": 0.3}},
     r"adversary_params\['iid-bernoulli'\]: 'mean' is not a parameter of adversary 'iid-bernoulli'; its parameters: means, scale"),
    ({"iid-bernouli": {"means": 0.3}}, r"adversary_params: 'iid-bernouli' is not an adversary of the sweep; expected a "
                                       r"mapping from the sweep's adversaries \('iid-bernoulli', 'ties'\)"),
    ({"means": {"a": 1}}, r"'means' is a parameter of 'iid-bernoulli': give \{'iid-bernoulli': \{'means': \.\.\.\}\}"),
])
def test_a_sweep_refuses_adversary_params_it_would_ignore_before_any_row(params, message, no_work):
    with pytest.raises(replify.errors.InvalidArgumentError, match=message):
        replify.experiments.sweeps.sweep(**KW, adversary_params=params)


def test_a_sweep_refuses_a_negative_seed_as_evaluate_does():
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"seed must be an integer >= 0, got -1"):
        replify.sweep(**dict(KW, seed=-1))
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"seed must be a non-negative int"):
        replify.evaluate("hedge", "iid-bernoulli", n=2, horizon=10, pairs=2, seed=-1)


def test_cli_prints_a_type_error_on_one_line(tmp_path, refused):
    config = tmp_path / "grid.toml"
    config.write_text(CONFIG + 'fast_path = "yes"\n')
    refused(["sweep", str(config), "--quiet"], 'argument "fast_path" of evaluate(): expected bool or None, got str')
    config.write_text(CONFIG + "[adversary_params]\niid-bernoulli = 0.3\n")
    refused(["sweep", str(config), "--quiet"],
            "argument \"adversary_params\" of sweep(): expected Mapping[str, Mapping[str, Any]] (value of key "
            "'iid-bernoulli' is not a mapping) or None, got dict")
    config.write_text(CONFIG + "[adversary_params.iid-bernoulli]\nmean = 0.3\n")
    refused(["sweep", str(config), "--quiet"], "'mean' is not a parameter of adversary 'iid-bernoulli'")
