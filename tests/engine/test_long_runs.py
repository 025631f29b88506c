"""Long runs: progress bars from Python and the CLI, and Ctrl-C that ends cleanly."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import replify


def test_progress_true_draws_a_tqdm_bar_on_stderr(capsys):
    pytest.importorskip("tqdm")
    replify.evaluate("ftplb-star", "iid-bernoulli", n=3, horizon=500, pairs=40, seed=0, rho=0.1, block_size=50,
                     progress=True)
    err = capsys.readouterr().err
    assert "evaluate ftplb-star on iid-bernoulli" in err and "40/40" in err


@pytest.mark.parametrize("sequential", [False, True])
def test_a_progress_callable_sees_every_pair_of_evaluate(sequential):
    seen = []
    kw = dict(target=0.5, sequential=True) if sequential else {}
    report = replify.evaluate("constant", "iid-bernoulli", n=3, horizon=200, pairs=300, seed=0,
                              progress=lambda done, total: seen.append((done, total)), **kw)
    assert seen and all(t == 300 for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)  # done only grows
    assert seen[-1][0] == report.pairs  # the last call: the pairs run (fewer when a test stops early)


@pytest.mark.slow  # progress of evaluate and the demos stays in the default tier (above, and test_step_progress.py)
def test_sweep_stress_and_calibrate_report_progress():
    rows, spent, work = [], [], []
    replify.sweep(learners=["hedge", "constant"], adversaries=["iid-bernoulli"], horizons=[100], ns=[3], pairs=2,
                  seed=0, progress=lambda d, t: rows.append((d, t)))
    assert rows == [(1, 2), (2, 2)]
    found = replify.stress("ftpl", n=2, horizon=300, budget=64, seed=0, progress=lambda d, t: spent.append((d, t)))
    assert spent[-1] == (found.pairs_used, 64)
    # refine_pairs=40 (default 400): the regret measurements count one unit of work each, whatever their pairs
    replify.calibrate("ftplb-star", n=3, horizon=2_000, rho=0.3, seed=0, budget=4_000, block_fractions=(0.25,),
                      multipliers=(1.0, 4.0), refine_pairs=40, progress=lambda d, t: work.append((d, t)))
    assert work and all(d <= t for d, t in work) and [d for d, _ in work] == sorted(d for d, _ in work)


def test_demos_report_progress():
    from replify.experiments.lower_bounds import lazy_leader_demo

    seen = []
    lazy_leader_demo(quick=True, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_ctrl_c_ends_a_cli_sweep_in_one_line_and_its_file_stays_whole(tmp_path):
    # Run a sweep that takes several seconds, interrupt it once its first row is on disk: exit
    # status 130, one line on stderr, every line of the file a whole row; a second run resumes.
    config = tmp_path / "s.toml"
    # 8 rows of about 0.2 s each (T = 6000; 20000 took 0.75 s a row): the 7 rows after the first
    # leave over a second for the signal, which is sent within 0.05 s of the first row's write.
    config.write_text('learners = ["hedge"]\nadversaries = ["iid-bernoulli"]\nhorizons = [6000, 6001, 6002, 6003, '
                      '6004, 6005, 6006, 6007]\nns = [10]\npairs = 40\nseed = 0\n')
    out = tmp_path / "s.jsonl"
    # A shell's background job inherits SIGINT ignored (CI runs tests so), and Python then keeps it
    # ignored: give the child the default disposition, as a terminal's foreground process has.
    proc = subprocess.Popen([sys.executable, "-m", "replify.cli", "sweep", str(config), "--output", str(out), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not out.exists() or not out.read_text().strip()):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["replify: interrupted"]
    lines = out.read_text().splitlines()
    assert 1 <= len(lines) < 8 and all(json.loads(line)["config"]["learner"] == "hedge" for line in lines)
    again = subprocess.run([sys.executable, "-m", "replify.cli", "sweep", str(config), "--output", str(out), "--quiet"],
                           capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert again.returncode == 0, again.stderr
    assert len(out.read_text().splitlines()) == 8
