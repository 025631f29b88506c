"""Progress bars for long runs.

``progress=`` of :func:`replify.evaluate`, :func:`replify.sweep`, :func:`replify.calibrate` and
:func:`replify.stress` (and the demos) takes ``True`` — a tqdm bar on stderr when tqdm is installed
(``pip install "replify[progress]"``), replify's own minimal bar otherwise — or a callable
``progress(done, total)`` of the user's, or ``None``/``False`` for none. :func:`reporter` turns
any of these into one callable with a ``close()``.

:class:`Progress` is the minimal bar the CLI falls back on: shown only when stderr is a terminal
(unless enabled explicitly), only once the work has run for more than ``delay`` seconds, redrawn at
most ten times a second.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, TextIO, Union

#: What a ``progress=`` argument may be.
ProgressArg = Union[bool, Callable[[int, int], None], None]


class Progress:
    def __init__(self, label: str, *, enabled: bool | None = None, stream: TextIO | None = None, delay: float = 1.0) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.label, self.delay = label, delay
        self.start = time.monotonic()
        self._last = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.start < self.delay or (now - self._last < 0.1 and done < total):
            return
        self._last = now
        width = 30
        filled = int(width * done / max(total, 1))
        elapsed = now - self.start
        eta = elapsed * (total - done) / done if done else float("nan")
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} ETA {eta:5.0f}s")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()


class TqdmProgress:
    """``progress(done, total)`` drawn by tqdm (created on the first call, when the total is known)."""

    def __init__(self, label: str, *, stream: TextIO | None = None) -> None:
        from tqdm.auto import tqdm

        self._tqdm, self.label, self.stream = tqdm, label, stream
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = self._tqdm(total=total, desc=self.label, file=self.stream, leave=True, dynamic_ncols=True)
        if total != self.bar.total:  # a sequential test's budget, or a search's, may be known late
            self.bar.total = total
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _Callback:
    """A user's ``progress(done, total)``, with a ``close()`` that does nothing."""

    def __init__(self, fn: Callable[[int, int], None]) -> None:
        self.fn = fn

    def __call__(self, done: int, total: int) -> None:
        self.fn(done, total)

    def close(self) -> None:
        close = getattr(self.fn, "close", None)
        if callable(close):
            close()


def reporter(progress: ProgressArg, label: str) -> Any:
    """The progress callable for a ``progress=`` argument (None when there is none): ``True`` is a
    tqdm bar (replify's own when tqdm is missing), labelled ``label``; a callable is used as it is."""
    if progress is None or progress is False:
        return None
    if progress is True:
        try:
            return TqdmProgress(label)
        except ImportError:
            return Progress(label, enabled=True, delay=0.0)
    return _Callback(progress)
