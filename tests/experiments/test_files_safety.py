"""Nothing a user wrote is lost: whole-file writes are atomic, results files and their siblings
are never written through a symbolic link, and rows read back are checked before reuse."""

import errno
import json
import os
import warnings

import pytest

import replify
from replify import cli
from replify.base.files import atomic_write


def full_disk(monkeypatch):
    """Every fsync fails as on a full disk (the data never reaches it)."""
    def fsync(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)


def leftovers(folder, *keep):
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


# -- whole-file writes ---------------------------------------------------------------------------

def test_a_failed_write_keeps_the_earlier_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "report.json"
    path.write_text("earlier\n")
    full_disk(monkeypatch)
    with pytest.raises(OSError, match=r"could not write file .*report\.json.*No space left on device; the earlier .* was kept") as info:
        atomic_write(path, "new content that never lands")
    assert info.value.errno == errno.ENOSPC
    assert path.read_text() == "earlier\n"
    assert leftovers(tmp_path) == ["report.json"]


def test_a_write_through_a_link_replaces_the_linked_file_and_keeps_the_link(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("earlier\n")
    os.chmod(target, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    atomic_write(link, b"new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert oct(target.stat().st_mode & 0o777) == oct(0o640)  # the user's permission bits stay
    assert leftovers(tmp_path) == ["link.json", "real.json"]


def test_an_interrupted_write_leaves_nothing_behind(tmp_path):
    from replify.base.files import atomic_writer

    path = tmp_path / "x.bin"
    with pytest.raises(KeyboardInterrupt):
        with atomic_writer(path) as fh:
            fh.write(b"half")
            raise KeyboardInterrupt
    assert leftovers(tmp_path) == []


def test_cli_json_on_a_full_disk_keeps_the_earlier_report(tmp_path, monkeypatch, capsys):
    path = tmp_path / "r.json"
    path.write_text('{"earlier": true, "replify_version": "0.1.0"}\n')  # a document of replify's, which it may replace
    full_disk(monkeypatch)
    rc = cli.main(["run", "hedge", "--adversary", "iid-bernoulli", "-n", "2", "-T", "10", "--pairs", "2", "--quiet",
                   "--json", str(path)])
    err = capsys.readouterr().err
    assert rc == 2 and "could not write --json" in err and "was kept" in err and err.count("\n") == 1
    assert path.read_text() == '{"earlier": true, "replify_version": "0.1.0"}\n'
    assert leftovers(tmp_path) == ["r.json"]


def test_a_plot_that_fails_to_save_keeps_the_earlier_plot(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from replify.plots import save_figure, pyplot

    plt = pyplot()
    fig = plt.figure()
    path = tmp_path / "p.svg"
    path.write_text("<svg>earlier</svg>")
    full_disk(monkeypatch)
    with pytest.raises(OSError, match="was kept"):
        save_figure(fig, path)
    monkeypatch.undo()
    assert path.read_text() == "<svg>earlier</svg>" and leftovers(tmp_path) == ["p.svg"]
    save_figure(fig, path)
    plt.close(fig)
    assert path.read_text().lstrip().startswith("<?xml") and leftovers(tmp_path) == ["p.svg"]


# -- a results file's siblings and links --------------------------------------------------------

SMALL = dict(learners=["ftpl"], adversaries=["iid-bernoulli"], horizons=[20, 30], ns=[2], pairs=2, seed=1)


@pytest.mark.parametrize("sibling", ["s.jsonl.lock", "s.jsonl.rejected"])
def test_a_link_at_a_sibling_is_refused_and_the_users_file_untouched(tmp_path, sibling):
    path = tmp_path / "s.jsonl"
    replify.sweep(**SMALL, path=path)
    path.write_bytes(path.read_bytes() + b"{torn")  # so that a line must be set aside
    mine = tmp_path / "mine.txt"
    mine.write_text("the user's own file\n")
    (tmp_path / sibling).symlink_to(mine)
    with pytest.raises(replify.errors.OutputPathError, match=rf"{sibling}' is a symbolic link \(to .*mine\.txt'\)"):
        replify.sweep(**SMALL, path=path)
    assert mine.read_text() == "the user's own file\n"
    assert (tmp_path / sibling).is_symlink()


def test_two_names_of_one_results_file_take_one_lock(tmp_path):
    path = tmp_path / "s.jsonl"
    alias = tmp_path / "alias.jsonl"
    alias.symlink_to(path)
    seen = []

    def second_writer(done, total):
        if done == 1:  # the first sweep holds the file: a sweep through the link must be refused
            with pytest.raises(replify.errors.SweepLockedError, match=r"another sweep is writing .*s\.jsonl"):
                replify.sweep(**SMALL, path=alias)
            seen.append(done)

    replify.sweep(**SMALL, path=path, progress=second_writer)
    assert seen == [1]
    assert not (tmp_path / "s.jsonl.lock").exists() and not (tmp_path / "alias.jsonl.lock").exists()
    assert replify.sweep(**SMALL, path=alias).reused == 2  # and the link works as the file


def test_a_torn_tail_is_repaired_in_the_linked_file_and_the_link_stays(tmp_path):
    real = tmp_path / "data" / "s.jsonl"
    real.parent.mkdir()
    replify.sweep(**SMALL, path=real)
    whole = real.read_bytes()
    real.write_bytes(whole + b'{"config": {"learner": "ftpl", "to')  # a kill mid-line
    link = tmp_path / "s.jsonl"
    link.symlink_to(real)
    with pytest.warns(replify.errors.ResultsFileWarning, match=r"1 damaged line"):
        result = replify.sweep(**SMALL, path=link)
    assert result.reused == 2 and result.rejected == 1
    assert link.is_symlink() and real.read_bytes() == whole
    assert (real.parent / "s.jsonl.rejected").read_bytes() == b'{"config": {"learner": "ftpl", "to\n'
    assert sorted(p.name for p in real.parent.iterdir()) == ["s.jsonl", "s.jsonl.rejected"]  # no .tmp, no .lock


def test_a_lock_removed_by_its_holder_is_taken_afresh(tmp_path, monkeypatch):
    # a sweep that opened the lock file just before its holder removed it must not count that
    # file's lock as the results file's: it opens the file now at the path
    from replify.experiments import results as sweeps  # the results file and its lock

    path = tmp_path / "s.jsonl"
    lock = tmp_path / "s.jsonl.lock"
    real_flock, calls = sweeps.fcntl.flock, []

    def flock(fd, op):
        if not calls:  # the holder finishes between our open and our lock
            os.unlink(lock)
        calls.append(op)
        return real_flock(fd, op)

    monkeypatch.setattr(sweeps.fcntl, "flock", flock)
    replify.sweep(**SMALL, path=path)
    assert len(calls) == 2 and not lock.exists()


# -- rows read back are checked before they are reused as measured --------------------------------

def _rewrite_first_row(path, change, *, redigest):
    from replify.experiments.results import row_digest

    lines = path.read_text().splitlines(keepends=True)
    row = json.loads(lines[0])
    change(row)
    if redigest:
        row["digest"] = row_digest(row)
    elif redigest is None:  # a row as an earlier replify wrote it
        del row["digest"]
    lines[0] = json.dumps(row, sort_keys=True) + "\n"
    path.write_text("".join(lines))
    return lines[0]


@pytest.mark.parametrize("change,redigest,why", [
    (lambda row: row["report"].update(regret_mean=0.0), False, r"1 changed after it was written \(its digest does not match"),
    (lambda row: row["report"].update(rho_hat=0.0), True, r"1 with a rho_hat that is not failures / pairs \(e\.g\. rho_hat=0\.0 but"),
    (lambda row: row["report"].update(regret_mean=float("nan")), True, r"1 holding NaN or infinity .*report\.regret_mean is not finite"),
    (lambda row: row["report"].update(failures=5), True, r"1 without valid counts .*failures=5, pairs=2"),
    (lambda row: None, None, r"1 written without a digest \(by an earlier replify\)"),
])
def test_a_row_that_fails_its_checks_is_set_aside_and_measured_again(tmp_path, change, redigest, why):
    path = tmp_path / "s.jsonl"
    replify.sweep(**SMALL, path=path)
    whole = path.read_bytes()
    edited = _rewrite_first_row(path, change, redigest=redigest)
    with pytest.warns(replify.errors.ResultsFileWarning, match=r"1 damaged line\(s\) .* set aside .*: " + why):
        result = replify.sweep(**SMALL, path=path)
    assert (result.reused, result.rejected) == (1, 1)
    # measured again, the row as first written (at the end of the file now)
    assert sorted(path.read_bytes().splitlines()) == sorted(whole.splitlines())
    assert (tmp_path / "s.jsonl.rejected").read_text() == edited  # the edited line kept, not deleted


def test_rows_carry_their_digest_and_an_intact_file_is_reused_silently(tmp_path):
    from replify.experiments.results import row_digest

    path = tmp_path / "s.jsonl"
    first = replify.sweep(**SMALL, path=path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert all(row["digest"] == row_digest(row) for row in rows)
    assert all(row["report"]["rho_hat"] == row["report"]["failures"] / row["report"]["pairs"] for row in rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error", replify.errors.ResultsFileWarning)
        again = replify.sweep(**SMALL, path=path)
    assert again.reused == 2 and again.rows == first.rows


class Coin:
    """A learner that plays a fixed expert (only its identity matters here)."""

    def __init__(self, *, n, horizon, rng, expert=0):
        self.expert = expert

    def act(self):
        return self.expert

    def update(self, cost):
        pass


def test_two_callables_with_one_name_are_not_answered_with_each_others_rows(tmp_path):
    path = tmp_path / "s.jsonl"
    grid = dict(SMALL, horizons=[20])
    first = lambda *, n, horizon, rng: Coin(n=n, horizon=horizon, rng=rng, expert=0)  # noqa: E731
    second = lambda *, n, horizon, rng: Coin(n=n, horizon=horizon, rng=rng, expert=1)  # noqa: E731
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"learners: two learners of the sweep have "
                       r"the label '.*<lambda>' but differ \(<function .*<lambda> at .* and <function .*\); expected one label"):
        replify.sweep(**dict(grid, learners=[first, second]))
    replify.sweep(**dict(grid, learners=[first]), path=path)
    before = path.read_bytes()
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"holds rows for the label '.*<lambda>' written by "
                       r"tests?\.?.*line \d+ sha256:[0-9a-f]+, but this sweep's .*line \d+ sha256:[0-9a-f]+ .*give this one its own label"):
        replify.sweep(**dict(grid, learners=[second]), path=path)
    assert path.read_bytes() == before
    labelled = replify.sweep(**dict(grid, learners=[{"learner": second, "label": "expert-1"}]), path=path)
    assert labelled.reused == 0 and replify.sweep(**dict(grid, learners=[first]), path=path).reused == 1
