"""Nothing a user gave or wrote is lost to an output path (docs/evaluation.md, "Files"): the
command line refuses, before any work, an output that is an input of the run (the learner's own
file, the adversary's data, a hard link to either), a FIFO or a terminal, or an existing file that
replify did not write; ``--json -`` writes the document alone to standard output. A user's file
that exits, parses a command line or is interrupted as it is imported is named, never mistaken
for replify. Each of these was a loss or a silent exit before."""

import json
import os
import threading

import pytest

import replify
from replify import cli
from replify.cli.outputs import is_replify_json

LEARNER = """import numpy as np


class Leader:
    def __init__(self, *, n, horizon, rng):
        self.loss = np.zeros(n)

    def act(self):
        return int(np.argmin(self.loss))

    def update(self, cost):
        self.loss += cost
"""

RUN = ["-n", "3", "-T", "40", "--pairs", "2", "--quiet", "--no-references"]


@pytest.fixture
def learner_file(tmp_path):
    path = tmp_path / "mylearn.py"
    path.write_text(LEARNER)
    return path


def test_json_on_the_learners_own_file_or_a_hard_link_to_it_is_refused_and_kept(tmp_path, learner_file, refused):
    refused(["run", f"{learner_file}:Leader", *RUN, "--json", str(learner_file)], "is an input of this run")
    link = tmp_path / "other_name.py"
    os.link(learner_file, link)
    refused(["run", f"{learner_file}:Leader", *RUN, "--json", str(link)], "is an input of this run")
    assert learner_file.read_text() == LEARNER


def test_json_on_the_adversarys_data_is_refused_and_the_data_kept(tmp_path, refused):
    data = tmp_path / "d.csv"
    data.write_text("0,1,0\n1,0,1\n" * 20)
    refused(["run", "hedge", "--adversary", "point-mass", "--adversary-param", f"path={data}", *RUN,
                     "--json", str(data)], "is an input of this run", "d.csv")
    assert data.read_text() == "0,1,0\n1,0,1\n" * 20


def test_json_on_a_fifo_or_a_terminal_is_refused_and_left_as_it_was(tmp_path, refused):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refused(["run", "hedge", *RUN, "--json", str(fifo)], "is a FIFO", "use - for standard output")
    assert fifo.is_fifo()
    leader, follower = os.openpty()  # a terminal: a character device, as /dev/stdout and /dev/null are
    try:
        refused(["run", "hedge", *RUN, "--json", os.ttyname(follower)], "is a character device")
    finally:
        os.close(leader)
        os.close(follower)


def test_json_on_a_users_file_is_refused_and_a_report_of_replifys_is_replaced(tmp_path, refused):
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": 1}\n')
    refused(["run", "hedge", *RUN, "--json", str(notes)], "is not a JSON document of replify's")
    assert notes.read_text() == '{"mine": 1}\n'
    report = tmp_path / "r.json"
    assert cli.main(["run", "hedge", *RUN, "--json", str(report)]) == 0
    assert is_replify_json(report)
    assert cli.main(["run", "hedge", *RUN, "--seed", "3", "--json", str(report)]) == 0  # its own report: replaced
    assert json.loads(report.read_text())["seed"] == 3
    demo = tmp_path / "d.json"
    assert cli.main(["demo", "coin", "--quick", "--quiet", "--json", str(demo)]) == 0
    assert json.loads(demo.read_text())["replify_version"] and is_replify_json(demo)


def test_json_dash_writes_the_document_alone_to_standard_output(capsys):
    assert cli.main(["run", "hedge", *RUN, "--json", "-"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["learner"] == "hedge"  # nothing but the document
    assert "rho_hat" in err  # the summary moved to standard error


def test_a_sweep_on_a_fifo_is_refused_at_once_not_blocked(tmp_path, capsys):
    config = tmp_path / "grid.toml"
    config.write_text('learners = ["hedge"]\nadversaries = ["iid-bernoulli"]\nhorizons = [10]\nns = [2]\npairs = 2\n'
                      'seed = 0\n')
    fifo = tmp_path / "out.jsonl"
    os.mkfifo(fifo)
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("rc", cli.main(["sweep", str(config), "--output",
                                                                                  str(fifo), "--quiet"])))
    worker.start()
    worker.join(timeout=30)
    if worker.is_alive():  # the old check opened the FIFO for reading and waited for a writer: release it
        with open(fifo, "w"):
            pass
        worker.join()
        pytest.fail("sweep --output <fifo> blocked")
    assert result["rc"] == 2 and "is a FIFO" in capsys.readouterr().err


@pytest.mark.parametrize("body, said", [
    ("import sys\nsys.exit(3)\n", "called sys.exit(3)"),
    ("import argparse\nargparse.ArgumentParser().add_argument('--lr', required=True)\n"
     "p = argparse.ArgumentParser()\np.add_argument('--lr', required=True)\np.parse_args()\n",
     "called sys.exit(2) after writing 'usage: "),
])
def test_a_learner_file_that_exits_at_import_is_named_not_obeyed(tmp_path, body, said, refused):
    path = tmp_path / "exits_at_import.py"
    path.write_text(body + LEARNER)
    err = refused(["run", f"{path}:Leader", *RUN], said, str(path), "if __name__ ==")
    assert "usage: replify" not in err  # the file's argparse names the file, not replify


def test_a_learner_file_interrupted_at_import_says_which_file(tmp_path, capsys):
    path = tmp_path / "interrupts.py"
    path.write_text("raise KeyboardInterrupt\n")
    assert cli.main(["run", f"{path}:Leader", *RUN]) == 130
    err = capsys.readouterr().err
    *note, last = err.splitlines()  # the note that the file is outside the working folder, then the interruption
    assert last.startswith("replify: interrupted: importing") and str(path) in last and len(note) <= 1


def test_a_callable_that_is_no_learner_is_refused_in_one_line(refused):
    refused(["run", "math:sqrt", *RUN], "taken for a callable seed -> learner", "raised TypeError")


def test_two_learners_of_one_name_from_two_folders_never_share_a_row(tmp_path):
    for folder, action in (("a", 0), ("b", 1)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "mylearn.py").write_text(LEARNER.replace("int(np.argmin(self.loss))", str(action)))
    grid = dict(adversaries=["iid-bernoulli"], horizons=[40], ns=[3], pairs=2, seed=0, path=tmp_path / "s.jsonl",
                progress=False)
    first = replify.sweep(learners=[f"{tmp_path / 'a' / 'mylearn.py'}:Leader"], **grid)
    with pytest.raises(replify.errors.InvalidArgumentError, match="other code.*rows are reused only for the code"):
        replify.sweep(learners=[{"learner": f"{tmp_path / 'b' / 'mylearn.py'}:Leader", "label": "Leader"}], **grid)
    again = replify.sweep(learners=[f"{tmp_path / 'a' / 'mylearn.py'}:Leader"], **grid)
    assert again.reused == 1 and again.rows == first.rows


def test_calibrate_takes_its_grid_from_the_command_line(tmp_path, refused):
    path = tmp_path / "grid_learner.py"
    path.write_text("class Fixed:\n"  # plays the expert its knob names: replicable, so every candidate passes
                    "    def __init__(self, *, n, horizon, rng, expert=0):\n        self.expert = expert\n"
                    "    def act(self):\n        return self.expert\n    def update(self, cost):\n        pass\n")
    out = tmp_path / "c.json"
    assert cli.main(["calibrate", f"{path}:Fixed", "-n", "2", "-T", "40", "--rho", "0.5", "--budget", "1000", "--regret-pairs", "4", "--refine-pairs", "8",
                     "--test-pairs", "40", "--quiet", "--grid", "expert=[1]", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["knobs"] == {"expert": 1}  # the grid's one candidate, not the default expert 0
    assert cli.main(["calibrate", f"{path}:Fixed", "-n", "2", "-T", "40", "--rho", "0.5", "--budget", "1000", "--regret-pairs", "4", "--refine-pairs", "8",
                     "--test-pairs", "40", "--quiet", "--grid", "expert=[1, 0]", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["knobs"] == {"expert": 0}  # the better of the two (expert 0 costs least)
    refused(["calibrate", f"{path}:Fixed", "-n", "2", "-T", "40", "--rho", "0.5", "--grid", "expert=[]"],
            "--grid expert=[]")


def test_sweep_lines_say_the_claim_as_the_json_does(tmp_path, capsys):
    config = tmp_path / "g.toml"
    config.write_text('learners = ["hedge", "split-commit"]\nadversaries = ["iid-bernoulli"]\nhorizons = [200]\nns = [3]\n'
                      'rhos = [0.1]\npairs = 4\nseed = 0\n')
    assert cli.main(["sweep", str(config), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [json.loads(line) for line in (tmp_path / "g.jsonl").read_text().splitlines()]
    for line, row in zip(lines, rows):
        assert line.endswith(f"(measured; the learner's claim: {row['report']['claim']})"), line
    assert "certified=True" not in "\n".join(lines)


def test_plot_replaces_a_figure_of_replifys_but_not_a_users_image(tmp_path, refused):
    pytest.importorskip("matplotlib")
    mine = tmp_path / "photo.png"
    mine.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)  # an image matplotlib did not save
    refused(["run", "hedge", *RUN, "--plot", str(mine)], "is not a figure of replify's")
    assert mine.read_bytes() == b"\x89PNG\r\n\x1a\n" + b"\x00" * 100
    for suffix in (".png", ".pdf", ".svg"):
        figure = tmp_path / f"agreement{suffix}"
        assert cli.main(["run", "hedge", *RUN, "--plot", str(figure)]) == 0
        assert cli.main(["run", "hedge", *RUN, "--seed", "1", "--plot", str(figure)]) == 0  # its own figure: replaced
