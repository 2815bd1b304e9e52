"""One self-rewriting progress line on a terminal, for long work (reindex, sync-log).

Nothing at all when stderr is piped: cron and CI logs stay clean (the README's commands).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Call with (phase, done, total); redrawn at most ten times a second."""

    def __init__(self, label: str, stream: TextIO) -> None:
        self.label = label
        self.stream = stream
        self.last = 0.0
        self.shown = False

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        percent = 100 * done // total if total else 100
        if phase == "reading":  # bytes, not items: the count would mean nothing to a reader
            text = f"{self.label}: reading the log {percent:3d}%"
        else:
            text = f"{self.label}: {phase} {done}/{total} ({percent}%)"
        self.stream.write(f"\r{text}\x1b[K")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def on_terminal(label: str) -> Progress | None:
    return Progress(label, sys.stderr) if sys.stderr.isatty() else None
