"""The dry-run outbox, `<home>/outbox/dry-run.jsonl`: what would have been sent (SPEC §10 step 5).

`forget` removes a person's lines from it like their log events (by `handle` and `mentions`).
"""

from __future__ import annotations

import json
import os
from typing import Any

from tactful.core.memory.atomic import locked
from tactful.core.memory.forgetting import OUTBOX, OUTBOX_LOCK
from tactful.core.memory.home import Home, unwritable


def append(home: Home, record: dict[str, Any]) -> None:
    target = home.root / OUTBOX
    home.prepare_folder(target.parent)
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        with locked(home.root / OUTBOX_LOCK):
            fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                while line:
                    line = line[os.write(fd, line):]
                os.fsync(fd)
            finally:
                os.close(fd)
    except OSError as exc:
        raise unwritable(target, exc) from exc
