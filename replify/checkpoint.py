"""A learner saved mid-stream and resumed (docs/service.md, "A replicable learner in a service").

A replify learner — registered, wrapped (``replify.wrap``), or your own made of picklable parts —
carries its whole state in itself, its stream of R included (a numpy ``Generator``, whose state
pickles exactly). :func:`save_learner` writes it to a file whole or not at all (a new file in the
same folder, flushed, then renamed over the old one: a crash while saving leaves the last checkpoint
as it was), with a header naming the replify version that wrote it; :func:`load_learner` reads it
back, refusing a file that is not a checkpoint and warning where another replify version wrote it.
Resumed, the learner plays on bit-identically to one never interrupted: a test interrupts every
registered learner, a wrapped Hedge and a wrapped contextual learner at three steps
(``tests/users/test_checkpoint.py``).

A checkpoint is a pickle: loading one runs code it names, so load only checkpoints you wrote.
Replicability is a statement about two runs that share R; a resumed run shares the R of the run it
continues, so the certificate of that run holds for it.
"""

from __future__ import annotations

import os
import pickle
import warnings
from pathlib import Path
from typing import Any

from replify._version import __version__
from replify.base.files import atomic_write
from replify.base.paths import check_output_path
from replify.errors import InvalidArgumentError, ReplifyWarning

#: The first bytes of a checkpoint, then the replify version that wrote it and a newline
MAGIC = b"replify-checkpoint 1\n"


def save_learner(learner: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``learner`` to ``path`` whole or not at all (module docstring); the path written."""
    target = check_output_path(path, what="checkpoint path", ours=_is_checkpoint, kind="checkpoint")
    try:
        body = pickle.dumps(learner, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise InvalidArgumentError(f"learner: {type(learner).__name__} cannot be saved ({exc}); a checkpoint needs a "
                                   "learner made of picklable parts (no lambdas, open files or threads in its state)"
                                   ) from None
    atomic_write(target, MAGIC + __version__.encode() + b"\n" + body, what="checkpoint")
    return target


def _is_checkpoint(path: Path) -> bool:
    """Whether ``path`` holds a checkpoint (its first bytes): only those are replaced by a new one."""
    try:
        with path.open("rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def load_learner(path: str | os.PathLike[str]) -> Any:
    """The learner :func:`save_learner` wrote to ``path`` (only load checkpoints you wrote: module
    docstring)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InvalidArgumentError(f"path: cannot read the checkpoint {str(p)!r}: {exc.strerror or exc}") from None
    if not data.startswith(MAGIC):
        raise InvalidArgumentError(f"path: {str(p)!r} is not a replify checkpoint (it does not start with "
                                   f"{MAGIC.decode().strip()!r}); expected a file save_learner wrote")
    version, _, body = data[len(MAGIC):].partition(b"\n")
    if version.decode(errors="replace") != __version__:
        warnings.warn(f"{str(p)!r} was written by replify {version.decode(errors='replace')}, this is {__version__}: "
                      "a learner whose code changed between them may not resume as it was", ReplifyWarning, stacklevel=2)
    try:
        return pickle.loads(body)
    except Exception as exc:  # noqa: BLE001  (a damaged file: said, naming it)
        raise InvalidArgumentError(f"path: the checkpoint {str(p)!r} is damaged ({type(exc).__name__}: {exc})") from None
