"""A quiet progress line on standard error for runs longer than a moment.

Drawn only after DELAY seconds, so short runs print nothing, and at most every
REFRESH seconds, so it costs nothing next to scoring.
"""

from __future__ import annotations

import io
import os
import sys
import time
from typing import TextIO

DELAY = 1.0  # seconds before the first draw: a run that ends sooner stays silent
REFRESH = 0.2  # seconds between redraws
BLOCK = 1 << 20  # bytes read at a time when counting lines


class Progress:
    def __init__(self, total: int | None, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = total
        chosen: TextIO | None = stream or sys.stderr
        self.enabled = enabled and chosen is not None  # standard error closed: nothing to draw on
        self.stream: TextIO = chosen if chosen is not None else io.StringIO()  # never drawn on when disabled
        self.done = 0
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._drawn = False

    def advance(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._start >= DELAY and now - self._last_draw >= REFRESH:
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = now - self._start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        text = f"{self.done}"
        if self.total:
            text += f"/{self.total} ({100 * self.done / self.total:.0f}%)"
            if rate > 0:
                text += f", {_duration((self.total - self.done) / rate)} left"
        text += f", {rate:.1f} samples/s"
        self.stream.write(f"\r\x1b[2Kscoring {text}")
        self.stream.flush()
        self._last_draw = now
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def count_lines(path: str) -> int | None:
    """Non-blank lines of a file, for the total, read in fixed-size blocks (a file without a
    newline costs one block of memory, not its size); None for standard input, a pipe or a
    device (reading those ahead would consume them)."""
    if path == "-" or not os.path.isfile(path):
        return None
    count = 0
    blank = True  # the line read so far holds nothing but whitespace
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK):
            parts = block.split(b"\n")
            for index, part in enumerate(parts):
                if part.strip():
                    blank = False
                if index < len(parts) - 1:  # a newline ends this line
                    count += not blank
                    blank = True
    return count + (not blank)
