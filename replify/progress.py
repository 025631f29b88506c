"""A minimal progress bar on stderr: shown only when stderr is a terminal, only once the work
has run for more than a second, redrawn at most ten times a second."""

from __future__ import annotations

import sys
import time
from typing import TextIO


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
