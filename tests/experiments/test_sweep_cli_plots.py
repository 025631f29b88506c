"""Sweeps (resumable JSONL), the command line, and plots."""

import json
import subprocess
import sys
import warnings

import pytest

import replify
from replify.cli import main as cli_main
from replify.experiments import sweeps as sweep_module

GRID = dict(
    learners=["ftplb-star", "ftpl"], adversaries=["iid-bernoulli"], horizons=[500, 2000], ns=[3],
    rhos=[0.2], block_multipliers=[0.05, 0.2], pairs=6, seed=7,
)


def quiet(fn):
    """BlockSizeWarning is expected in sweeps over small T; the tests turn replify warnings into
    errors, so silence them here."""
    import warnings

    from replify.errors import BlockSizeWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BlockSizeWarning)
        return fn()


def test_sweep_rows_seeds_and_grid(tmp_path):
    result = quiet(lambda: replify.sweep(**GRID, path=tmp_path / "s.jsonl"))
    recs = result.records()
    # ftplb-star: 2 horizons x 2 multipliers; ftpl (a baseline): one row per horizon, no rho, no multiplier
    assert len(recs) == 6
    assert [r["block_multiplier"] for r in recs if r["learner"] == "ftpl"] == [None, None]
    assert all(r["replify_version"] == replify.__version__ for r in recs)
    row = json.loads((tmp_path / "s.jsonl").read_text().splitlines()[0])
    assert set(row) == {"config", "seed", "replify_version", "report", "pairs", "sweep_seed", "options", "digest"}
    assert (row["pairs"], row["sweep_seed"], row["options"]) == (6, 7, {"fast_path": None})
    # the seed is a function of the sweep seed and the configuration only
    assert row["seed"] == sweep_module.row_seed(7, row["config"])
    again = replify.evaluate(row["config"]["learner"], "iid-bernoulli", n=3, horizon=row["config"]["horizon"], pairs=6,
                             seed=row["seed"], rho=0.2, block_size=row["report"]["params"]["block_size"])
    assert again.rho_hat == row["report"]["rho_hat"] and again.regret_mean == row["report"]["regret_mean"]


def test_an_interrupted_sweep_resumes_to_the_same_file(tmp_path, monkeypatch):
    full = tmp_path / "full.jsonl"
    quiet(lambda: replify.sweep(**GRID, path=full))
    part = tmp_path / "part.jsonl"
    real, calls = sweep_module._run_row, []

    def interrupted(*args, **kwargs):
        if len(calls) == 3:
            raise KeyboardInterrupt  # killed half way
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(sweep_module, "_run_row", interrupted)
    with pytest.raises(KeyboardInterrupt):
        quiet(lambda: replify.sweep(**GRID, path=part))
    with part.open("a") as fh:
        fh.write('{"config": {"learner": "ftpl", "torn')  # and a line torn by the kill
    monkeypatch.setattr(sweep_module, "_run_row", lambda *a, **k: (calls.append(2), real(*a, **k))[1])
    with pytest.warns(replify.errors.ResultsFileWarning, match=r"1 damaged line\(s\) .* set aside"):
        result = quiet(lambda: replify.sweep(**GRID, path=part))
    assert calls.count(2) == 3  # only the unfinished rows were computed
    assert (result.reused, result.rejected) == (3, 1)
    assert part.read_bytes() == full.read_bytes()
    # the torn line is set aside, not deleted
    assert (tmp_path / "part.jsonl.rejected").read_text() == '{"config": {"learner": "ftpl", "torn\n'


def test_to_pandas_when_pandas_is_installed(tmp_path):
    pd = pytest.importorskip("pandas")
    frame = quiet(lambda: replify.sweep(**GRID)).to_pandas()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 6 and "rho_hat" in frame


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "replify.cli", *args], capture_output=True, text=True, timeout=300)


def cli_here(capsys, *args):
    """The command line run in this process (``replify.cli.main``, as the console script calls it):
    (exit code, standard output, standard error). Quicker than a subprocess where the test is about
    what it answers, not how it starts."""
    capsys.readouterr()
    try:
        code = cli_main(list(args))
    except SystemExit as exc:  # argparse's own refusals and --version
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_list_and_run(tmp_path, capsys):
    code, listed, _ = cli_here(capsys, "list")
    assert code == 0 and "ftplb-star" in listed and "iid-bernoulli" in listed and "means:" in listed
    out = run_cli("run", "ftplb-star", "--adversary", "iid-bernoulli", "-n", "5", "-T", "3000", "--rho", "0.1",
                  "--pairs", "20", "--seed", "1", "--block-size", "300", "--adversary-param", "means=0.4",
                  "--json", str(tmp_path / "r.json"), "--plot", str(tmp_path / "r.svg"), "--quiet")
    assert out.returncode == 0, out.stderr
    assert "rho_hat" in out.stdout
    # B = 300 with the theorem's eps does not certify rho = 0.1: said once, and in the table
    assert out.stderr.count("ReplicabilityWarning") + out.stderr.count("warning:") >= 1
    assert out.stderr.count("certify only rho <= 0.7252") == 1, out.stderr  # the sharper FTPLB* bound at B = 300
    assert "NOT certified" in out.stdout and "outside thm:FTPLS-regret-replicability" in out.stdout
    # every number says what it is, and a replicable learner is shown beside both reference rows
    assert "gain over constant" in out.stdout
    assert "reference constant" in out.stdout and "reference hedge" in out.stdout
    hedge = replify.evaluate("hedge", "iid-bernoulli", n=5, horizon=3000, pairs=20, seed=1, adversary_params={"means": 0.4})
    assert f"regret {hedge.regret_mean:.2f}" in out.stdout.split("reference hedge")[1]
    code, quiet, _ = cli_here(capsys, "run", "ftplb-star", "--adversary", "iid-bernoulli", "-n", "5", "-T", "3000",
                              "--rho", "0.1", "--pairs", "4", "--block-size", "300", "--no-references", "--quiet")
    assert code == 0 and "rho_hat" in quiet and "reference" not in quiet
    report = json.loads((tmp_path / "r.json").read_text())
    direct = replify.evaluate("ftplb-star", "iid-bernoulli", n=5, horizon=3000, pairs=20, seed=1, rho=0.1, block_size=300,
                              adversary_params={"means": 0.4})
    assert report["rho_hat"] == direct.rho_hat and report["regret"] == direct.regret.tolist()
    assert (tmp_path / "r.svg").read_text().startswith("<?xml")


def cli_command(*args):
    """run_cli(*args) as a mark: the command runs ahead in the background (conftest.py, early_subprocess)."""
    return pytest.mark.early_subprocess([sys.executable, "-m", "replify.cli", *args], timeout=300)


@pytest.mark.parametrize("args,message", [
    (["run", "nope", "--adversary", "iid-bernoulli", "-n", "3", "-T", "10"], "no learner named 'nope'; known learners:"),
    (["run", "hedge", "--adversary", "nope", "-n", "3", "-T", "10"], "no adversary named 'nope'; known adversaries:"),
    (["run", "hedge", "--adversary", "iid-bernoulli", "-n", "1", "-T", "10"], "n must be an integer >= 2, got 1"),
    (["run", "ftplb-star", "--adversary", "iid-bernoulli", "-n", "3", "-T", "100"], "needs rho in (0, 1); got none"),
    (["run", "hedge", "--adversary", "iid-bernoulli", "-n", "3", "-T", "100", "--param", "oops"], "--param must look like key=value"),
    (["sweep", "missing.toml"], "config file 'missing.toml' not found"),
])
def test_cli_errors_are_one_line(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli_here(capsys, *args)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("replify: error: ") and message in err, err


@cli_command("run", "hedge", "--adversary", "iid-bernoulli", "-n", "three", "-T", "10")
def test_cli_bad_numbers_are_rejected_by_the_parser(early_subprocess):
    out = early_subprocess  # the console entry point itself: its parser's refusal and exit code
    assert out.returncode == 2 and "invalid int value: 'three'" in out.stderr


def test_cli_sweep_writes_results_and_plots(tmp_path, capsys):
    config = tmp_path / "grid.toml"
    config.write_text(
        'learners = ["ftplb-star"]\nadversaries = ["iid-bernoulli"]\nhorizons = [1000, 4000]\nns = [3]\n'
        'rhos = [0.2]\nblock_multipliers = [0.02, 0.1]\npairs = 8\nseed = 3\n'
    )
    out = run_cli("sweep", str(config), "--output", str(tmp_path / "grid.jsonl"), "--plot", str(tmp_path / "grid.png"), "--quiet")
    assert out.returncode == 0, out.stderr
    assert len((tmp_path / "grid.jsonl").read_text().splitlines()) == 4
    assert (tmp_path / "grid.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = tmp_path / "bad.toml"
    bad.write_text("learners = [\n")
    code, _, err = cli_here(capsys, "sweep", str(bad))
    assert code == 2 and "is not valid TOML" in err
    extra = tmp_path / "extra.toml"
    extra.write_text(config.read_text() + "colour = 1\n")
    code, _, err = cli_here(capsys, "sweep", str(extra))
    assert code == 2 and "unknown keys ['colour']" in err


def test_progress_bar_by_default_only_on_a_terminal_and_never_nested(monkeypatch):
    import io
    import sys

    from replify.base import progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    # not a terminal: the default draws nothing
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    bar = progress.reporter(None, "x")
    bar(1, 2)
    bar.close()
    assert sys.stderr.getvalue() == ""
    # a terminal: tqdm draws the bar with the time left, once the delay has passed (0 here)
    monkeypatch.setattr(sys, "stderr", Terminal())
    monkeypatch.setattr(progress, "AUTO_DELAY", 0.0)
    bar = progress.reporter(None, "outer")
    bar(1, 4)
    inner = progress.reporter(None, "inner")  # work nested inside the outer run draws no bar of its own
    inner(1, 2)
    inner.close()
    bar(4, 4)
    bar.close()
    text = sys.stderr.getvalue()
    assert "outer" in text and "4/4" in text and "inner" not in text
    # False silences it on a terminal too; a short run under the default delay stays silent
    monkeypatch.setattr(sys, "stderr", Terminal())
    for arg in (False,):
        quiet = progress.reporter(arg, "q")
        quiet(1, 1)
        quiet.close()
    monkeypatch.setattr(progress, "AUTO_DELAY", 60.0)
    short = progress.reporter(None, "short")
    short(1, 1)
    short.close()
    assert sys.stderr.getvalue() == ""


def test_plots_save_png_svg_and_pdf(tmp_path):
    report = replify.evaluate("ftplb-star", "iid-bernoulli", n=3, horizon=2000, pairs=10, seed=0, rho=0.1, block_size=200)
    from replify.plots import plot_agreement, plot_sweep

    plot_agreement(report, path=tmp_path / "a.png")
    assert (tmp_path / "a.png").stat().st_size > 1000
    result = quiet(lambda: replify.sweep(**GRID))
    plot_sweep(result, path=tmp_path / "s.svg")
    assert "<svg" in (tmp_path / "s.svg").read_text()
    plot_agreement(report, path=tmp_path / "a.pdf")
    assert (tmp_path / "a.pdf").read_bytes()[:5] == b"%PDF-"
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"plot path must end in .png, .svg or .pdf; got .*a\.gif"):
        plot_agreement(report, path=tmp_path / "a.gif")


# -- faults: nothing a user wrote is lost ----------------------------------------------------------

SMALL = dict(learners=["ftpl"], adversaries=["iid-bernoulli"], horizons=[200, 300, 400], ns=[3], pairs=3, seed=1)


@pytest.mark.parametrize("damage", [b"{not json\n", b"\xff\xfe binary \xff\n", b'{"report": {}}\n', b"[1, 2, 3]\n",
                                    b'{"config": 5, "report": {}}\n'])
def test_a_damaged_line_is_set_aside_and_every_other_row_kept(tmp_path, damage):
    path = tmp_path / "s.jsonl"
    replify.sweep(**SMALL, path=path)
    other = dict(SMALL, horizons=[500])  # a row from another grid, after the damage
    replify.sweep(**other, path=path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + damage + b"".join(lines[1:]))
    with pytest.warns(replify.errors.ResultsFileWarning, match=r"1 damaged line"):
        result = replify.sweep(**SMALL, path=path)
    assert (result.reused, result.rejected) == (3, 1)
    assert path.read_bytes() == b"".join(lines)  # every row kept, the other grid's too
    assert (tmp_path / "s.jsonl.rejected").read_bytes() == damage
    assert replify.sweep(**other, path=path).reused == 1


def test_duplicate_rows_are_kept_once_and_a_second_writer_is_refused(tmp_path):
    path = tmp_path / "s.jsonl"
    replify.sweep(**SMALL, path=path)
    once = path.read_bytes()
    path.write_bytes(once + once)  # what two unlocked writers used to leave
    result = replify.sweep(**SMALL, path=path)
    assert result.reused == 3 and path.read_bytes() == once
    import fcntl

    with (tmp_path / "s.jsonl.lock").open("a") as fh:  # another sweep holds the file
        fcntl.flock(fh, fcntl.LOCK_EX)
        with pytest.raises(replify.errors.SweepLockedError, match=r"another sweep is writing"):
            replify.sweep(**SMALL, path=path)


def test_rows_are_reused_only_when_everything_that_determines_them_matches(tmp_path):
    path = tmp_path / "s.jsonl"
    first = replify.sweep(**SMALL, path=path)
    assert first.reused == 0
    more_pairs = replify.sweep(**dict(SMALL, pairs=4), path=path)
    other_seed = replify.sweep(**dict(SMALL, seed=2), path=path)
    assert more_pairs.reused == other_seed.reused == 0 and other_seed.stale == 0
    assert all(r["report"]["pairs"] == 4 for r in more_pairs.rows)
    assert len(path.read_text().splitlines()) == 9  # nothing overwritten: three settings, three rows each
    assert replify.sweep(**SMALL, path=path).reused == 3


@pytest.mark.parametrize("kw,message", [
    (dict(block_multipliers=[-1.0]), r"block_multipliers must be finite numbers > 0; got -1\.0"),
    (dict(block_multipliers=[float("nan")]), r"block_multipliers must be finite numbers > 0; got nan"),
    (dict(learners="hedge"), r"learners must be a non-empty list; got 'hedge' \(did you mean \['hedge'\]\?\)"),
    (dict(horizons=[0]), r"horizons\[...\] must be an integer >= 1, got 0"),
])
def test_sweep_arguments_are_checked(kw, message):
    with pytest.raises(replify.errors.InvalidArgumentError, match=message):
        replify.sweep(**{**SMALL, "learners": ["ftplb-star"], "rhos": [0.1], **kw})


def test_a_sweep_warns_once_per_cause_and_not_about_the_theorems_block_size(tmp_path):
    import warnings as w

    with w.catch_warnings(record=True) as record:
        w.simplefilter("always")
        replify.sweep(learners=["ftplb-star"], adversaries=["iid-bernoulli"], horizons=[2000, 3000], ns=[3], rhos=[0.1],
                      block_multipliers=[0.001, 0.002], pairs=2, seed=0)
    kinds = [r.category for r in record if issubclass(r.category, replify.errors.ReplifyWarning)]
    # the theorem's B exceeds T here, but the B in force (a small multiple of it) does not: no BlockSizeWarning;
    # those B with the theorem's eps do not certify rho: one ReplicabilityWarning for the whole sweep
    assert kinds == [replify.errors.ReplicabilityWarning]
    assert "4 rows of 4" in str(record[-1].message) and record[-1].filename == __file__


def test_output_paths_are_checked_before_any_work(tmp_path):
    with pytest.raises(replify.errors.OutputPathError, match=r"the folder .*nowhere' does not exist"):
        replify.sweep(**SMALL, path=tmp_path / "nowhere" / "s.jsonl")


def test_cli_checks_outputs_first_and_reads_parameters_strictly(tmp_path, capsys):
    import time

    start = time.perf_counter()
    code, _, err = cli_here(capsys, "run", "hedge", "--adversary", "iid-bernoulli", "-n", "3", "-T", "10000000",
                            "--plot", str(tmp_path / "x.gif"))
    assert code == 2 and "--plot must end in .png, .svg or .pdf" in err
    code, _, err = cli_here(capsys, "demo", "coin", "--json", str(tmp_path / "missing" / "d.json"))
    assert code == 2 and "the folder" in err and "does not exist" in err
    assert time.perf_counter() - start < 30  # refused before the (long) work, not after it
    code, _, err = cli_here(capsys, "run", "hedge", "--adversary", "iid-bernoulli", "-n", "3", "-T", "10",
                            "--adversary-param", "means=[0.4")
    assert code == 2 and "--adversary-param means='[0.4': the value is not valid JSON" in err
    code, _, err = cli_here(capsys, "run", "hedge", "--adversary", "iid-bernoulli", "-n", "3", "-T", "10",
                            "--adversary-param", "means")
    assert code == 2 and "--adversary-param must look like key=value, got 'means'" in err
    code, out, _ = cli_here(capsys, "list")
    assert "parameters: rho, fraction=0.25, eps=None" in out  # split-commit's own parameters
    code, _, _ = cli_here(capsys, "run", "hedge", "--adversary", "iid-bernoulli", "-n", "3", "-T", "200", "--pairs",
                          "2", "--plot", str(tmp_path / "a.pdf"), "--quiet")
    assert code == 0 and (tmp_path / "a.pdf").read_bytes()[:5] == b"%PDF-"
    out = run_cli("--version")  # the console entry point itself, once
    assert out.returncode == 0 and out.stdout.strip() == f"replify {replify.__version__}"


def test_cli_keeps_the_traceback_of_a_bug_and_shows_it_on_request(tmp_path, monkeypatch):
    from replify import cli

    def boom(args):
        raise ZeroDivisionError("a bug, not an input error")

    monkeypatch.setattr(cli, "cmd_list", boom)
    with pytest.raises(ZeroDivisionError):  # not swallowed into a tidy line
        cli.main(["list"])

    def refused(args):
        raise replify.errors.InvalidArgumentError("n must be an integer >= 2, got 1")

    monkeypatch.setattr(cli, "cmd_list", refused)
    assert cli.main(["list"]) == 2
    with pytest.raises(replify.errors.InvalidArgumentError):
        cli.main(["--traceback", "list"])


@pytest.mark.parametrize("suffix", [".png", pytest.param(".svg", marks=pytest.mark.slow), pytest.param(".pdf", marks=pytest.mark.slow)])
def test_the_regret_curve_plot_overlays_learners_in_every_format(tmp_path, suffix):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from replify.plots import plot_regret_curve

    kw = dict(n=3, horizon=2000, pairs=10, seed=0, adversary_params={"means": [0.3, 0.5, 0.7]})
    reports = [replify.evaluate("ftplb-star", "iid-bernoulli", rho=0.1, block_size=200, **kw),
               replify.evaluate("constant", "iid-bernoulli", **kw), replify.evaluate("hedge", "iid-bernoulli", **kw)]
    fig = plot_regret_curve(reports, path=tmp_path / f"r{suffix}", log=True)
    assert (tmp_path / f"r{suffix}").stat().st_size > 1000
    assert [t.get_text() for t in fig.legends[0].get_texts()][1].startswith("constant")  # one legend below the panels
    mine, ax = plt.subplots()
    assert plot_regret_curve(reports[0], ax=ax) is mine  # into the user's own figure
    plt.close("all")


def test_a_sweep_scales_block_sizes_only_for_learners_with_blocks():
    # learners whose parameters set no block size (iid-experts' segments, split-commit's split,
    # rep-elimination's phases) run once per configuration, with no block multiplier
    with warnings.catch_warnings():  # at T = 400 the theorems' block sizes are clipped: expected here
        warnings.simplefilter("ignore", replify.errors.ReplifyWarning)
        result = replify.sweep(learners=["iid-experts", "split-commit", "rep-elimination", "ftplb-star"],
                               adversaries=["iid-bernoulli"], horizons=[400], ns=[2], pairs=2, seed=0, rhos=[0.2],
                               block_multipliers=[0.5, 1.0])
    mults = {}
    for r in result.records():
        mults.setdefault(r["learner"], set()).add(r["block_multiplier"])
    assert mults == {"iid-experts": {None}, "split-commit": {None}, "rep-elimination": {None}, "ftplb-star": {0.5, 1.0}}
