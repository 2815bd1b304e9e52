"""The structured log of routines and the scheduler: one JSON object per line, on stderr.

Events carry names, counts, reasons and times; never message text, handles' words or secrets.
Callers pass only such values: `emit` refuses a string longer than a short label, so a draft or
a message cannot slip in by accident.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from typing import IO, Any

MAX_VALUE = 120  # a reason, a name, a URL; never a message
KEEP = 1_000  # events kept in memory; older ones are only in the stream


class EventLog:
    def __init__(self, stream: IO[str] | None = None,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC),
                 keep: int = KEEP) -> None:
        self.stream = stream
        self.clock = clock
        # The latest `keep`, for the caller's summary: a long `tactful run` (the companion
        # logs every turn) must not grow without bound; the stream has them all.
        self.events: deque[dict[str, Any]] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def emit(self, event: str, **fields: Any) -> None:
        for key, value in fields.items():
            if isinstance(value, str) and len(value) > MAX_VALUE:
                raise ValueError(f"log field {key!r} is {len(value)} characters: the "
                                 "structured log takes labels, never text")
        record = {"time": self.clock().isoformat(timespec="seconds"), "event": event, **fields}
        with self._lock:
            self.events.append(record)
            out = self.stream if self.stream is not None else sys.stderr
            out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            out.flush()
