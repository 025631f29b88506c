"""The command line for a user's own learner: every option explained with its default, the
feedback of every learner listed, an informative default instance, and the shipped sweep config."""

import argparse
import json
import shutil
import warnings

import pytest

import replify
from replify.cli import SPREAD, main, parser
from replify.errors import ReplifyWarning

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def subcommands():
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


@pytest.mark.parametrize("command", sorted(subcommands()))
def test_every_option_has_help_and_says_its_default(command, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # one line per option: argparse would break "iid-bernoulli" at its hyphen
    sub = subcommands()[command]
    text = sub.format_help()
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"replify {command} {action.option_strings or action.dest} has no help text"
        worth_saying = action.default not in (None, [], argparse.SUPPRESS) and action.default is not False
        if action.option_strings and worth_saying:
            assert f"(default: {action.default})" in " ".join(text.split()), (command, action.dest)


def test_list_shows_every_learners_feedback(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "feedback" in out.splitlines()[1]
    for name, spec in replify.learners().items():
        line = next(line for line in out.splitlines() if line.split()[:1] == [name])
        assert line.split()[2] == spec.feedback, line
    assert sum(spec.feedback == "bandit" for spec in replify.learners().values()) >= 6


def test_the_default_instance_has_spread_means_and_says_so(capsys, tmp_path):
    # 20 pairs: the gain's interval carries the spread of the expert constant draws from each pair's R
    assert main(["run", "hedge", "-n", "4", "-T", "2000", "--pairs", "20", "--quiet", "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert f"means spread evenly over [{SPREAD[0]}, {SPREAD[1]}]" in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["provenance"]["configuration"]["adversary_params"]["means"] == [0.3, 0.433333, 0.566667, 0.7]
    assert report["learning_gain_ci"][0] > 0  # hedge has something to learn, and learns it


@pytest.mark.slow  # replify sweep itself is the default tier's in test_sweep_cli_plots.py
def test_the_shipped_sweep_config_runs_with_its_references(tmp_path, capsys):
    config = tmp_path / "sweep.toml"
    shutil.copy(ROOT / "examples" / "my_learners.py", tmp_path / "my_learners.py")
    text = (ROOT / "examples" / "sweep.toml").read_text()
    assert "my_learners.py:ReplicableGradient" in text and text.count("#") > 10  # commented, with a learner of one's own
    config.write_text(text.replace("pairs = 20 ", "pairs = 2 "))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReplifyWarning)  # the example's parameters are certified: no warning
        code = main(["sweep", str(config), "--output", str(tmp_path / "out.jsonl"), "--quiet"])
    out = capsys.readouterr()
    assert code == 0, out.err
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["config"]["learner"] for r in rows] == ["constant", "hedge", "ReplicableGradient", "OGD step 0.01"]
    wrapped = rows[2]["report"]
    assert wrapped["certified"] is True and wrapped["params"]["replicability_bound"] <= 0.1


# Ctrl-C while replify is still being imported, made certain: the interrupt is sent as the import
# of replify.cli begins (an import hook), not after a guessed delay
INTERRUPT_AT_IMPORT = """
import os, signal, sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "replify.cli":
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Interrupt())
import replify_cli
sys.exit(replify_cli.main())
"""


def test_ctrl_c_while_replify_is_imported_is_one_line_and_status_130():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", INTERRUPT_AT_IMPORT, "list"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "replify: interrupted\n" and done.stdout == ""


@pytest.mark.slow
def test_ctrl_c_sent_early_to_the_command_is_one_line_and_status_130():
    import signal
    import subprocess
    import sys
    import time

    # The child says it is running (Python's own start-up, which no program can guard, is over) and then
    # runs the command's entry point; the signal comes `delay` after that: during replify's import, or
    # the command (demo coin runs for seconds). Without the wait, a loaded machine delivered it inside
    # Python's start-up (init_import_site), before any of replify's code.
    start = ("import runpy, sys; sys.stdout.write('r'); sys.stdout.flush(); "
             "sys.argv = ['replify', 'demo', 'coin', '--quiet']; runpy.run_module('replify_cli', run_name='__main__')")
    for delay in (0.05, 0.15, 0.3):
        proc = subprocess.Popen([sys.executable, "-c", start], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout.read(1) == "r"
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130 and "Traceback" not in err and err.strip().endswith("interrupted"), (delay, err)
