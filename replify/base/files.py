"""Writing a user's files so that a failure never leaves half of one.

Every file replify writes whole — a ``--json`` report, a saved plot, a results file rewritten
after damaged lines were set aside — is written to a new file in the same folder, flushed to
disk, and only then renamed over the target: a full disk, a crash or an interruption leaves the
earlier file as it was (docs/evaluation.md: nothing a user wrote is lost). Siblings that replify appends to or
locks (``<file>.rejected``, ``<file>.lock``) are opened without following a symbolic link, so a
link placed there never leads replify to write into a file it does not own.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path
from typing import BinaryIO, Iterator

from replify.errors import OutputPathError

#: Flags of a file that replify creates next to a target: never through a symbolic link (the
#: final component is not followed), never inherited by a child process.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def resolve(path: str | os.PathLike[str]) -> Path:
    """The file ``path`` names, following symbolic links (a link that points nowhere yet resolves
    to the file it would create): writing there keeps the user's link a link, and two names of
    one file resolve to the same path."""
    return Path(os.path.realpath(os.fspath(path)))


def open_sibling(path: Path, flags: int, *, what: str) -> int:
    """A file descriptor for ``path``, opened with ``flags`` (and created, mode 0o666 less the
    umask, when ``flags`` hold ``O_CREAT``) but never through a symbolic link: a link there is
    refused with an :class:`~replify.errors.OutputPathError` naming it and where it points,
    and the file it points to is not touched."""
    try:
        return os.open(path, flags | _NOFOLLOW, 0o666)
    except OSError as exc:
        if os.path.islink(path):  # ELOOP on Linux, EMLINK on some BSDs: ask the path, not the errno
            raise OutputPathError(
                f"{what} {str(path)!r} is a symbolic link (to {os.readlink(path)!r}); replify writes its own file "
                "there and does not follow links: remove the link, or move the file it points to"
            ) from None
        raise exc


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, what: str = "file") -> Iterator[BinaryIO]:
    """A binary file object whose content replaces ``path`` only once it is whole.

    The content goes to a new file with a unique name in the target's folder (created with
    ``O_CREAT | O_EXCL | O_NOFOLLOW``), is flushed and fsynced, and is then renamed onto the
    target with :func:`os.replace`. When ``path`` is a symbolic link the file it points to is
    replaced and the link stays. An existing target keeps its permission bits. If anything fails
    before the rename — the block, the write, the fsync — the temporary file is removed, the
    earlier file is untouched, and an :class:`OSError` says so (with the original errno)."""
    target = resolve(path)
    try:
        before = os.stat(target)
    except FileNotFoundError:
        before = None
    fd, tmp = _create_temporary(target)
    try:
        if before is not None and stat.S_ISREG(before.st_mode):
            os.fchmod(fd, stat.S_IMODE(before.st_mode))
        with os.fdopen(fd, "wb") as fh:
            fd = -1  # the file object owns the descriptor now and closes it
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        if fd != -1:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, OutputPathError):
            kept = (f"the earlier {str(target)!r} was kept as it was" if before is not None
                    else f"no file was created at {str(target)!r}")
            raise OSError(exc.errno, f"could not write {what} {str(path)!r}: {exc.strerror or exc}; {kept}") from exc
        raise
    _sync_folder(target.parent)


def atomic_write(path: str | os.PathLike[str], data: bytes | str, *, what: str = "file") -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8) as :func:`atomic_writer` does:
    whole, or not at all."""
    with atomic_writer(path, what=what) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def _create_temporary(target: Path) -> tuple[int, Path]:
    """A new, empty file beside ``target``: a random name (hidden, so that a listing does not
    show it), created exclusively, so that nothing already there — a file, a link — is reused."""
    for _ in range(100):
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"no unused temporary name beside {str(target)!r} after 100 tries")


def _sync_folder(folder: Path) -> None:
    """Flush the rename itself to disk (the folder's entry), where the system allows it."""
    flags = getattr(os, "O_DIRECTORY", None)
    if flags is None:  # pragma: no cover - not POSIX: the rename is as durable as the system makes it
        return
    try:
        fd = os.open(folder, os.O_RDONLY | flags)
    except OSError:  # pragma: no cover - a folder we may write but not open: the rename stands
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
