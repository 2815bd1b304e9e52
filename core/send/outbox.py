"""The dry-run outbox, `<home>/outbox/dry-run.jsonl`: what would have been sent (docs/sending.md).

Every text is scrubbed on the way in (secrets become `[redacted:KIND]`), like memory: the
persona's own words can carry someone's number too. `forget` removes a person's lines from it
like their log events (by `handle`, `mentions`, and any text that names or quotes them).
"""

from __future__ import annotations

import json
from typing import Any

from tactful.core.memory.atomic import append_line
from tactful.core.memory.forgetting import OUTBOX, OUTBOX_LOCK
from tactful.core.memory.home import Home, unwritable
from tactful.core.memory.scrub import scrub

# The image is a URL the operator gave: a presigned one carries its signature.
TEXT_KEYS = ("text", "image")


def append(home: Home, record: dict[str, Any]) -> None:
    target = home.root / OUTBOX
    home.prepare_folder(target.parent)
    record = dict(record)
    kinds: set[str] = set()
    for key in TEXT_KEYS:
        if isinstance(record.get(key), str):
            scrubbed = scrub(record[key])
            record[key] = scrubbed.text
            kinds.update(scrubbed.kinds)
    if kinds:
        record["redacted"] = sorted(kinds)
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        append_line(target, home.root / OUTBOX_LOCK, line)
    except OSError as exc:
        raise unwritable(target, exc) from exc
