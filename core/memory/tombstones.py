"""Tombstones: a forgotten person stays forgotten (SPEC §9).

`forget` appends one line per person, `{"hash": ..., "time": ...}`, to `<home>/tombstones.jsonl`:
a hash of platform and handle, never the handle itself. A later sync of an old log skips every
event of that person from before the tombstone; an event after it is new contact.

The hash is unsalted on purpose (it must match the same account after any restore), so it hides
the handle from a casual reader of the file, not from someone who guesses the handle and hashes
it: the file says "someone was forgotten", and nothing they said.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

from tactful.core.memory.atomic import locked, open_regular
from tactful.core.memory.home import Home

FILE = "tombstones.jsonl"


def person_hash(platform: str, handle: str) -> str:
    return hashlib.sha256(f"tactful-tombstone:{platform}/{handle}".encode()).hexdigest()


def bury(home: Home, platform: str, handle: str, at: datetime) -> None:
    path = home.root / FILE
    line = json.dumps({"hash": person_hash(platform, handle), "time": at.isoformat()})
    with locked(home.root / ".locks" / "tombstones.lock", what="the tombstones"), \
            open_regular(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()


def load(home: Home) -> dict[str, datetime]:
    """The latest tombstone time of each hash."""
    found: dict[str, datetime] = {}
    try:
        # A FIFO or device here is refused (NotRegularFile), never read: a sync that cannot
        # read the tombstones must not bring anyone back, and must not hang either.
        with open_regular(home.root / FILE, "r", encoding="utf-8") as f:
            for line in f:
                try:
                    record = json.loads(line)
                    when = datetime.fromisoformat(record["time"])
                    key = str(record["hash"])
                except (ValueError, KeyError, TypeError):
                    continue  # a torn last line from a crash: the earlier lines still count
                if key not in found or when > found[key]:
                    found[key] = when
    except FileNotFoundError:
        pass
    return found


def buried(stones: dict[str, datetime], platform: str, handle: str, at: datetime) -> bool:
    """True when an event at `at` about this person predates their tombstone."""
    when = stones.get(person_hash(platform, handle))
    return when is not None and at <= when
