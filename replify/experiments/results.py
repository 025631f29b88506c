"""A sweep's results file: one JSON row per configuration, checked before it is reused, and
kept whole whatever happens to the process or the disk (docs/evaluation.md, "Sweeps").

A row's identity is everything that determines it (configuration, pairs, sweep seed, options,
replify's version); its digest lets a resumed sweep refuse a row that was edited or damaged.
:func:`check_results_file` refuses a file that is not a results file before any work; the loader
sets damaged lines and rows that fail their checks aside in ``<file>.rejected`` (never deleted) and
repairs a torn tail atomically, through a symbolic link if the file is one; one writer holds the
file at a time (an advisory lock on ``<file>.lock``, taken on the file the path resolves to).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Iterator, Mapping

import attrs

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no advisory locks to take
    fcntl = None

from replify._version import __version__
from replify.errors import OutputPathError, SweepLockedError
from replify.base.files import atomic_write, open_sibling
from replify.evaluation.provenance import jsonable


def identity(config: Mapping[str, Any], *, pairs: int, sweep_seed: int, options: Mapping[str, Any]) -> str:
    """Everything that determines a row: its configuration, the pairs, the sweep seed, the options
    that change results (``fast_path``) and replify's version. A row in the file is reused only
    when all of these match."""

    return json.dumps(jsonable({"config": config, "pairs": pairs, "sweep_seed": sweep_seed, "options": options,
                                 "replify_version": __version__}), sort_keys=True)


def _row_identity(row: Any) -> str | None:
    if not isinstance(row, dict) or not isinstance(row.get("config"), dict) or not isinstance(row.get("report"), dict):
        return None
    if not {"pairs", "sweep_seed", "options", "replify_version"} <= set(row):
        return None  # a row written before rows carried their settings: kept, never reused
    return json.dumps(jsonable({k: row[k] for k in ("config", "pairs", "sweep_seed", "options", "replify_version")}),
                      sort_keys=True)


def row_digest(row: Mapping[str, Any]) -> str:
    """The sha256 of a row's canonical JSON (sorted keys) without its ``digest``: stored in the
    row, it lets a row read back be checked before its numbers are reused as measured."""
    body = {k: v for k, v in row.items() if k != "digest"}
    return hashlib.sha256(json.dumps(jsonable(body), sort_keys=True).encode()).hexdigest()


#: Entries of a report that are not measured (certified bounds, which may be infinite, and the
#: environment); every other number in a reused row must be finite.
_NOT_MEASURED = frozenset({"params", "concentration", "regret_bound", "transition_bound", "provenance"})

#: Why a line was set aside, by kind, in the words of the results-file warning.
_WHY = {
    "damaged": "not a whole row (torn by an interruption, not UTF-8, not JSON, or not a row)",
    "repeated": "a second row for one configuration with other content",
    "undigested": "written without a digest (by an earlier replify): its numbers cannot be checked",
    "edited": "changed after it was written (its digest does not match its content)",
    "counts": "without valid counts (0 <= failures <= pairs)",
    "not finite": "holding NaN or infinity where a measured number belongs",
    "rho_hat": "with a rho_hat that is not failures / pairs",
}


def _not_finite(value: Any, where: str) -> str | None:
    """The first place in ``value`` holding NaN or ±inf, or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else where
    if isinstance(value, dict):
        return next((w for k, v in value.items() if (w := _not_finite(v, f"{where}.{k}"))), None)
    if isinstance(value, list):
        return next((w for i, v in enumerate(value) if (w := _not_finite(v, f"{where}[{i}]"))), None)
    return None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _row_problem(row: dict[str, Any]) -> tuple[str, str] | None:
    """Why a row read back may not be reused as measured — ``(kind, detail)`` — or None. Its
    numbers must agree with its counts (the estimate is failures / pairs) and be finite, and the
    row must be what replify wrote (its digest)."""
    report = row["report"]
    failures, pairs = report.get("failures"), report.get("pairs")
    if not (_count(failures) and _count(pairs) and 0 <= failures <= pairs and pairs >= 1):
        return "counts", f"failures={failures!r}, pairs={pairs!r}"
    for key, value in report.items():
        where = None if key in _NOT_MEASURED else _not_finite(value, f"report.{key}")
        if where is not None:
            return "not finite", f"{where} is not finite"
    rho_hat = report.get("rho_hat")
    if (isinstance(rho_hat, bool) or not isinstance(rho_hat, (int, float))
            or not math.isclose(rho_hat, failures / pairs, rel_tol=1e-12, abs_tol=0.0)):
        return "rho_hat", f"rho_hat={rho_hat!r} but failures / pairs = {failures}/{pairs}"
    if "digest" not in row:
        return "undigested", "no digest"
    if row["digest"] != row_digest(row):
        return "edited", "digest mismatch"
    return None


#: How every row replify writes begins (its keys are sorted): a line torn by an interruption still does.
_ROW_START = b'{"config": '


def check_results_file(path: str | Path, *, what: str) -> None:
    """Refuse, before any work, a file at ``path`` that replify did not write: a results file is
    empty or begins with a row. Damaged lines of a results file are set aside in
    ``<file>.rejected``; a user's notes given by mistake as the results file must not be."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(1 << 20)
    except (FileNotFoundError, IsADirectoryError):
        return  # created by the sweep; a folder is refused by check_output_path
    if not first or first.startswith(_ROW_START):
        return
    try:
        row = json.loads(first)
    except (UnicodeDecodeError, ValueError):
        row = None
    if isinstance(row, dict) and isinstance(row.get("config"), dict) and "report" in row:
        return
    shown = first[:60].decode("utf-8", "replace").rstrip("\n") + ("..." if len(first) > 60 else "")
    raise OutputPathError(
        f"{what} {str(path)!r} exists and is not a replify results file: expected JSON lines of sweep rows, and its "
        f"first line is {shown!r}; replify does not rewrite a file it did not write: give a new path, or move that file"
    )


@attrs.frozen
class _FileState:
    done: dict[str, dict[str, Any]]
    rejected: int
    rejected_path: str | None
    stale: int
    #: how many lines were set aside, by the kinds of :data:`_WHY`, and one example's detail each
    why: dict[str, tuple[int, str]] = attrs.field(factory=dict)

    def explain(self) -> str:
        return "; ".join(f"{count} {_WHY[kind]}" + (f" (e.g. {detail})" if kind in ("counts", "not finite", "rho_hat") else "")
                         for kind, (count, detail) in self.why.items())


def _load(path: Path, wanted: frozenset[str] = frozenset()) -> _FileState:
    """Read an earlier run's rows from ``path`` (resolved: the file itself, not a link to it).
    Lines that are not complete rows — a line torn by an interruption, bytes that are not UTF-8,
    text that is not JSON, JSON that is not a row — are moved to ``<file>.rejected`` (appended and
    synced, so nothing is ever lost) and the file is rewritten with the good rows only
    (atomically: :func:`replify.base.files.atomic_write`). Rows repeated byte for byte (two writers) are
    kept once; a row whose identity repeats with other content is set aside too. A row this sweep
    would reuse (its identity in ``wanted``) is checked first (:func:`_row_problem`): one that fails
    — edited by hand, holding a NaN, written without a digest — is set aside and measured again."""
    if not path.exists():
        return _FileState({}, 0, None, 0)
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    good: list[bytes] = []
    bad: list[bytes] = []
    done: dict[str, dict[str, Any]] = {}
    seen_lines: set[bytes] = set()
    stale = 0
    why: dict[str, tuple[int, str]] = {}

    def set_aside(raw: bytes, kind: str, detail: str = "") -> None:
        bad.append(raw)
        count, first = why.get(kind, (0, detail))
        why[kind] = (count + 1, first)

    for raw in lines:
        if raw in seen_lines:
            continue  # an exact duplicate (two sweeps wrote the same row): one copy is enough
        try:
            if not raw.endswith(b"\n"):
                raise ValueError("torn")
            row = json.loads(raw.decode("utf-8"))
            if not isinstance(row, dict) or not isinstance(row.get("config"), dict) or "report" not in row:
                raise ValueError("not a row")
        except (UnicodeDecodeError, ValueError):
            set_aside(raw, "damaged")
            continue
        key = _row_identity(row)
        problem = _row_problem(row) if key in wanted else None
        if problem is not None:
            set_aside(raw, *problem)  # never reused unchecked: kept in .rejected, measured again
            continue
        if key is not None and key in done:
            set_aside(raw, "repeated")  # same identity, other content: set aside, never silently dropped
            continue
        seen_lines.add(raw)
        good.append(raw)
        if key is None:
            stale += 1
        else:
            done[key] = row
    rejected_path = None
    if bad:
        rejected = path.with_name(path.name + ".rejected")
        # appended, never through a link (a link there would send the lines into a file of the
        # user's), and on disk before the results file is rewritten without them
        fd = open_sibling(rejected, os.O_WRONLY | os.O_APPEND | os.O_CREAT, what="the file of set-aside lines")
        with os.fdopen(fd, "ab") as fh:
            fh.write(b"".join(raw if raw.endswith(b"\n") else raw + b"\n" for raw in bad))
            fh.flush()
            os.fsync(fh.fileno())
        rejected_path = str(rejected)
    if bad or len(good) != len(lines):
        atomic_write(path, b"".join(good), what="results file")
    return _FileState(done, len(bad), rejected_path, stale, why)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One writer per results file: an exclusive lock on ``<file>.lock`` for the whole sweep.

    ``path`` is resolved, so every name of one file (a symbolic link to it) takes the same lock.
    The lock file is created without following a link and removed when the sweep ends — only
    while its lock is held, so that nobody else holds it then. A sweep that opened the file just
    before it was removed then holds a lock on a file no longer at the path, which locks nothing:
    after locking, the file open must still be the one at the path, else the sweep opens it again."""
    lock_path = path.with_name(path.name + ".lock")
    if fcntl is None:  # pragma: no cover - not POSIX: no advisory locks to take
        yield
        return
    for _ in range(100):
        fd = open_sibling(lock_path, os.O_RDWR | os.O_CREAT, what="the sweep's lock file")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SweepLockedError(
                f"another sweep is writing {str(path)!r} (it holds {str(lock_path)!r}); let it finish, then run "
                "this one again: it will reuse the finished rows"
            ) from None
        held = os.fstat(fd)
        try:
            now = os.stat(lock_path, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            break
        os.close(fd)  # its holder removed it after we opened it: take the one at the path now
    else:  # pragma: no cover - a hundred other sweeps finished while this one tried: not seen in practice
        raise SweepLockedError(f"could not take the lock {str(lock_path)!r} of {str(path)!r}: other sweeps kept "
                               "replacing it; run this one again")
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock_path)
        os.close(fd)
