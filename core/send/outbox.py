"""The dry-run outbox, `<home>/outbox/dry-run.jsonl`: what would have been sent (SPEC §10 step 5).

`forget` removes a person's lines from it like their log events (by `handle` and `mentions`).
"""

from __future__ import annotations

import json
from typing import Any

from tactful.core.memory.atomic import append_line
from tactful.core.memory.forgetting import OUTBOX, OUTBOX_LOCK
from tactful.core.memory.home import Home, unwritable


def append(home: Home, record: dict[str, Any]) -> None:
    target = home.root / OUTBOX
    home.prepare_folder(target.parent)
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        append_line(target, home.root / OUTBOX_LOCK, line)
    except OSError as exc:
        raise unwritable(target, exc) from exc
