"""Progress bars for long runs, drawn by tqdm.

``progress=`` of :func:`replify.evaluate`, :func:`replify.sweep`, :func:`replify.calibrate`,
:func:`replify.stress` and the demos takes:

* ``None`` (the default) — a bar on stderr, with the rate and the time left, when stderr is a
  terminal and the run is long: it appears only once the work has run for :data:`AUTO_DELAY`
  seconds, so short runs print nothing; when stderr is a file or a pipe (a batch job, a log), a
  progress line instead every :data:`LINE_INTERVAL` seconds (three a minute; none for a run that
  ends sooner), as long-running tools log, so that a slow run shows a sign of life;
* ``True`` — the bar always (on stderr, wherever it goes);
* ``False`` — no bar (the command line's ``--quiet``);
* a callable ``progress(done, total)`` of the user's, called as work finishes.

:func:`replify.evaluate` counts pairs, and between two ends of pairs the steps played: ``done`` is
then the pairs finished plus the share of steps the pairs under way have played (a fraction, at
most once a second), so that a learner stepped in Python shows how far it is, and the time left,
before its first pair ends.

:func:`reporter` turns any of these into one callable with a ``close()``. Work nested inside
other work (the evaluations of a stress search, a calibration or a demo) draws no bar of its own
by default: the outer one speaks for it.
"""

from __future__ import annotations

import contextvars
import sys
import threading
import time
from typing import Any, Callable, TextIO, Union

from tqdm.auto import tqdm

#: What a ``progress=`` argument may be.
ProgressArg = Union[bool, Callable[[float, int], None], None]

#: Seconds a run with ``progress=None`` goes on before its bar appears (short runs stay silent).
AUTO_DELAY = 2.0
#: Seconds between two progress lines when stderr is not a terminal (read at each call: tests shrink it).
LINE_INTERVAL = 20.0


class TqdmProgress:
    """``progress(done, total)`` drawn by tqdm (created on the first call, when the total is known)."""

    def __init__(self, label: str, *, stream: TextIO | None = None, delay: float = 0.0) -> None:
        self.label, self.stream, self.delay = label, stream, delay
        self.bar: Any = None

    def __call__(self, done: float, total: int) -> None:
        if self.bar is None:
            self.bar = tqdm(total=total, desc=self.label, file=self.stream if self.stream is not None else sys.stderr,
                            leave=True, dynamic_ncols=True, delay=self.delay)
        if total != self.bar.total:  # a sequential test's budget, or a search's, may be known late
            self.bar.total = total
        self.bar.n = _count(done)  # a fraction of a pair between two ends of pairs, shown to a tenth
        self.bar.update(0)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class LineProgress:
    """``progress(done, total)`` as a line on stderr every :data:`LINE_INTERVAL` seconds — done,
    total, elapsed and the time left at the rate so far — for a stderr that is not a terminal,
    where a bar would be a stream of carriage returns. A daemon thread writes the lines, so that a
    run whose first pairs take minutes still shows it is alive."""

    def __init__(self, label: str, *, stream: TextIO | None = None) -> None:
        self.label, self.stream = label, stream
        self.start = time.monotonic()
        self.done, self.total, self.said = 0, 0, False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="replify-progress", daemon=True)
        self._thread.start()

    def __call__(self, done: float, total: int) -> None:
        self.done, self.total = done, total

    def _run(self) -> None:
        while not self._stop.wait(LINE_INTERVAL):
            self._line()

    def _line(self, *, end: bool = False) -> None:
        elapsed = time.monotonic() - self.start
        share = self.done / self.total if self.total else 0.0
        left = "" if end or share <= 0 else f", about {_duration(elapsed * (1 - share) / share)} left"
        counts = f"{_count(self.done)}/{self.total} ({100 * share:.0f}%)" if self.total else "started"
        try:
            print(f"replify: {self.label}: {counts}, {_duration(elapsed)} elapsed{left}" + (" (done)" if end else ""),
                  file=self.stream if self.stream is not None else sys.stderr, flush=True)
        except (OSError, ValueError):  # stderr closed or gone: nobody to tell
            return
        self.said = True

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        if self.said:  # a run that logged its progress also logs its end
            self._line(end=True)


def _count(done: float) -> float:
    """``done`` as shown: whole when it is (4, not 4.0), else to a tenth (2.3 pairs' worth of steps)."""
    return int(done) if float(done).is_integer() else round(float(done), 1)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class _Callback:
    """A user's ``progress(done, total)``, with a ``close()`` that does nothing."""

    def __init__(self, fn: Callable[[int, int], None]) -> None:
        self.fn = fn

    def __call__(self, done: float, total: int) -> None:
        self.fn(done, total)

    def close(self) -> None:
        close = getattr(self.fn, "close", None)
        if callable(close):
            close()


class _Silent:
    """No bar: ``progress(done, total)`` does nothing."""

    def __call__(self, done: float, total: int) -> None:
        pass

    def close(self) -> None:
        pass


#: How many reporters are open in this context: a default bar is drawn only at the outermost level.
_open = contextvars.ContextVar("replify_progress_open", default=0)


class _Scoped:
    """A reporter that counts itself open until it is closed (once)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._token: Any = _open.set(_open.get() + 1)

    def __call__(self, done: float, total: int) -> None:
        self.inner(done, total)

    def close(self) -> None:
        if self._token is not None:
            try:
                _open.reset(self._token)
            except ValueError:  # closed from another context: count down instead
                _open.set(max(0, _open.get() - 1))
            self._token = None
        self.inner.close()


def _terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed, or not a file at all
        return False


def reporter(progress: ProgressArg, label: str) -> Any:
    """The progress callable (with ``close()``) for a ``progress=`` argument (module docstring).
    Close it when the work ends, however it ends."""
    if progress is False or (progress is None and _open.get() > 0):
        inner: Any = _Silent()
    elif progress is None and not _terminal(sys.stderr):
        inner = LineProgress(label)
    elif progress is None:
        inner = TqdmProgress(label, delay=AUTO_DELAY)
    elif progress is True:
        inner = TqdmProgress(label)
    else:
        inner = _Callback(progress)
    return _Scoped(inner)
