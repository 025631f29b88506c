"""Nothing a user wrote is lost: whole-file writes are atomic, results files and their siblings
are never written through a symbolic link, and rows read back are checked before reuse."""

import errno
import json
import os

import pytest

import replify
from replify import cli
from replify.files import atomic_write


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
    from replify.files import atomic_writer

    path = tmp_path / "x.bin"
    with pytest.raises(KeyboardInterrupt):
        with atomic_writer(path) as fh:
            fh.write(b"half")
            raise KeyboardInterrupt
    assert leftovers(tmp_path) == []


def test_cli_json_on_a_full_disk_keeps_the_earlier_report(tmp_path, monkeypatch, capsys):
    path = tmp_path / "r.json"
    path.write_text('{"earlier": true}\n')
    full_disk(monkeypatch)
    rc = cli.main(["run", "hedge", "--adversary", "iid-bernoulli", "-n", "2", "-T", "10", "--pairs", "2", "--quiet",
                   "--json", str(path)])
    err = capsys.readouterr().err
    assert rc == 2 and "could not write --json" in err and "was kept" in err and err.count("\n") == 1
    assert path.read_text() == '{"earlier": true}\n'
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
