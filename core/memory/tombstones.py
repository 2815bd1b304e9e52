"""Tombstones: a forgotten person stays forgotten (docs/log.md).

`forget` appends one line per handle and per stable id of the person, `{"hash": ..., "time":
...}`, to `<home>/tombstones.jsonl`: a hash of platform and handle (or id), never the handle
itself. `sync-log` carries no event of a buried handle or id, whatever the event's date: a log
cannot tell a replay from new contact, and a date in a log proves nothing (docs/log.md). New
contact reaches memory through the paths that write it directly (a send, `remember`, the batch
replier), which check the fetched post's platform time against the tombstone (`buried`).

The hash is unsalted on purpose (it must match the same account after any restore), so it hides
the handle from a casual reader of the file, not from someone who guesses the handle and hashes
it: the file says "someone was forgotten", and nothing they said.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import unicodedata
from datetime import datetime

from tactful.core.memory.atomic import locked, open_regular
from tactful.core.memory.home import Home

FILE = "tombstones.jsonl"


def person_hash(platform: str, handle: str) -> str:
    return hashlib.sha256(f"tactful-tombstone:{platform}/{handle}".encode()).hexdigest()


def id_hash(platform: str, person_id: str) -> str:
    return hashlib.sha256(f"tactful-tombstone-id:{platform}/{person_id}".encode()).hexdigest()


def bury(home: Home, platform: str, handle: str, at: datetime) -> None:
    _append(home, person_hash(platform, handle), at)


def bury_id(home: Home, platform: str, person_id: str, at: datetime) -> None:
    _append(home, id_hash(platform, person_id), at)


def _append(home: Home, key: str, at: datetime) -> None:
    path = home.root / FILE
    line = json.dumps({"hash": key, "time": at.isoformat()})
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


def buried(stones: dict[str, datetime], platform: str, handle: str, at: datetime,
           person_id: str | None = None) -> bool:
    """True when something at `at` (a platform's own time) about this person predates their
    tombstone, by handle or by id."""
    keys = [person_hash(platform, handle)]
    if person_id is not None:
        keys.append(id_hash(platform, person_id))
    return any((when := stones.get(key)) is not None and at <= when for key in keys)


def forgotten(stones: dict[str, datetime], platform: str, handle: str,
              person_id: str | None = None) -> bool:
    """True when this handle or id was ever forgotten: a log's events never bring them back."""
    return person_hash(platform, handle) in stones or (
        person_id is not None and id_hash(platform, person_id) in stones)


_TOKEN = re.compile(r"[\w.:-]+")


def names_buried(stones: dict[str, datetime], platform: str, text: str | None) -> bool:
    """Does this text (someone else's line of an old log) name a forgotten handle or id of
    the platform? Every word-like token is tried as a handle and as an id, by hash: nothing
    but the hashes is kept, so their words (a quote) cannot be recognised here, only their
    names."""
    if not stones or not text:
        return False
    return any(key in stones for token in _TOKEN.findall(unicodedata.normalize("NFKC", text))
               for key in _token_keys(platform, token))


@functools.lru_cache(maxsize=65536)
def _token_keys(platform: str, token: str) -> tuple[str, ...]:
    """The tombstone hashes a token would have as a handle or an id (words repeat across a
    log: each is hashed once)."""
    from tactful.core.errors import BadInput
    from tactful.core.memory.handles import normalize_handle

    keys: list[str] = []
    for raw in {token, token.strip(".:-")} - {""}:
        keys += [id_hash(platform, c) for c in ({raw, str(int(raw))} if raw.isdigit() else {raw})]
        try:
            keys.append(person_hash(platform, normalize_handle(raw, platform)))
        except BadInput:
            continue
    return tuple(keys)
