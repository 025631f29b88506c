"""A file path a user gave, checked before any work: a path no file system refuses, and an output
file that can be written and replaces nothing a user gave or wrote (docs/evaluation.md, "Files").
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Callable, Sequence

from replify.errors import InvalidArgumentError, OutputPathError



def check_path(name: str, value: Any) -> Path:
    """A file path a user gave (a ``str`` or ``os.PathLike``) as a :class:`~pathlib.Path`, refusing
    one with a NUL byte, which no file system accepts (Python's own error is "embedded null byte")."""
    if not isinstance(value, (str, os.PathLike)):
        raise InvalidArgumentError(f"{name} must be a file path (a str or pathlib.Path), got {value!r} ({type(value).__name__})")
    text = os.fspath(value)
    if "\x00" in (text if isinstance(text, str) else text.decode("latin-1")):
        raise InvalidArgumentError(f"{name} must be a file path without NUL bytes (no file system accepts one), got {text!r}")
    return Path(os.fsdecode(text))


def check_output_path(path: Any, *, what: str, suffixes: tuple[str, ...] | None = None,
                      inputs: Sequence[Any] = (), ours: Callable[[Path], bool] | None = None,
                      kind: str = "file") -> Path:
    """An output file to write later, checked now — before any work — so that a long run never
    ends in a refusal and nothing a user gave or wrote is lost (docs/evaluation.md, "Files"): a
    supported suffix, an existing folder, write permission; if the file exists, a regular file (a
    FIFO, a device or a terminal would be replaced by, or block on, a file of replify's: ``-``
    writes to standard output where the command offers it) that is none of ``inputs`` (the
    learner's and adversary's files, data, configs: links and second names resolved) and, when
    ``ours`` is given, one that ``ours`` recognises as replify's own ``kind`` of file."""
    p = check_path(what, path)
    if suffixes is not None and p.suffix.lower() not in suffixes:
        raise OutputPathError(
            f"{what} must end in {', '.join(suffixes[:-1])} or {suffixes[-1]}; got {str(p)!r}"
        )
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise OutputPathError(f"{what} {str(p)!r}: the folder {str(folder)!r} does not exist")
    for given in inputs:
        if same_file(p, given):
            raise OutputPathError(
                f"{what} {str(p)!r} is an input of this run ({str(given)!r}); expected a new file or one of replify's "
                f"own {kind}s: writing there would replace the input"
            )
    if p.exists():
        mode = os.stat(p).st_mode  # the file a link leads to: that is what a write would replace
        if not stat.S_ISREG(mode):
            kind_of = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
                       else "a character device (a terminal, /dev/null or /dev/stdout)" if stat.S_ISCHR(mode)
                       else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                       else "not a regular file")
            raise OutputPathError(
                f"{what} {str(p)!r} is {kind_of}; expected a regular file, which replify writes whole and then "
                "renames into place" + (" (use - for standard output)" if kind != "results file" else "")
            )
        if not os.access(p, os.W_OK):
            raise OutputPathError(f"{what} {str(p)!r} exists and is not a writable file")
        if ours is not None and not ours(p):
            raise OutputPathError(
                f"{what} {str(p)!r} exists and is not a {kind} of replify's; replify does not replace a file it did "
                "not write: give a new path, or move that file"
            )
    elif not os.access(folder, os.W_OK):
        raise OutputPathError(f"{what} {str(p)!r}: the folder {str(folder)!r} is not writable")
    return p


def same_file(a: Any, b: Any) -> bool:
    """Two paths naming one file: equal once links are resolved, or one file under two names
    (a hard link)."""
    if os.path.realpath(os.fspath(a)) == os.path.realpath(os.fspath(b)):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet: only its resolved name can match
        return False
