"""The send ledger in PostgreSQL, shared by the companion's workers (docs/companion.md,
"Running on many workers"); the embedded default is `Ledger` on `<home>/ledger.sqlite`
(core/send/ledger.py).

It is that class with its connection swapped (core/memory/postgres.py speaks its SQL): the same
rows, the same claim. What differs:
- The table lives in the schema `tactful_send`. Every write transaction takes the schema's
  advisory lock first, as SQLite's `BEGIN IMMEDIATE` takes the write lock, so the gate's
  in-claim checks (the ledger, quotas) and the insert cannot race another worker: of two
  workers claiming one message, one claims and the other finds it claimed.
- A row's holder is a session advisory lock held by the ledger's connection (not a lock file:
  workers may run on several machines). A worker killed after its claim leaves the row
  `pending`; the gate takes pending as answered, so that message is never sent again (fail
  closed: it may have gone out). `take` (the repair of public sends) sees a holder as gone only
  when its lock is free.
- `VACUUM` after a forget is the scrub of core/memory/postgres.py.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from tactful.core.errors import MemoryUnavailable
from tactful.core.memory.postgres import Connection, lock_key, shown
from tactful.core.send.ledger import SENT, Ledger, utc

SCHEMA = "tactful_send"
_TABLE = """CREATE TABLE IF NOT EXISTS sends (
    key         TEXT PRIMARY KEY,
    platform    TEXT NOT NULL,
    action      TEXT NOT NULL,
    reply_to    TEXT,
    handle      TEXT,
    thread      TEXT,
    mentions    TEXT NOT NULL DEFAULT '',
    text        TEXT,
    state       TEXT NOT NULL CHECK (state IN ('pending', 'sent')),
    started     TEXT NOT NULL,
    finished    TEXT,
    post_id     TEXT,
    url         TEXT,
    alias       INTEGER NOT NULL DEFAULT 0,
    person_id   TEXT,
    in_reply_to TEXT,
    remembered  INTEGER NOT NULL DEFAULT 1,
    owner       TEXT)"""
_INDEXES = ("CREATE INDEX IF NOT EXISTS sends_by_time ON sends (platform, action, started)",
            "CREATE INDEX IF NOT EXISTS sends_by_thread ON sends (platform, handle, thread)")


def _holder_key(token: str) -> int:
    return lock_key("tactful-ledger-holder", token)


class PostgresLedger(Ledger):
    def __init__(self, home: Path, dsn: str) -> None:
        # The SQLite constructor is not called: no file is made.
        self.root = home
        self.path = Path(f"postgresql:{shown(dsn)}/{SCHEMA}")
        self._holder = None
        self._token: str | None = None
        self._guard = threading.RLock()
        self._lock = threading.RLock()
        self._commits = 0
        self._group = None  # every claim and mark commits as it is made: nothing to group
        self.db: Any = Connection(dsn, SCHEMA, self._unavailable, name="tactful-ledger")
        try:
            with self.db.transaction() as db:
                db.execute(_TABLE)
                for statement in _INDEXES:
                    db.execute(statement)
        except BaseException:
            self.db.close()
            raise

    def _unavailable(self, exc: Exception) -> MemoryUnavailable:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return MemoryUnavailable(f"the send ledger ({self.path}) cannot be used: "
                                 f"{type(exc).__name__}: {first}; check companion.database "
                                 "and that the server runs; nothing was sent")

    @contextmanager
    def _transaction(self, *, alone: bool = False) -> Iterator[Any]:
        with self.db.transaction() as db:
            yield db

    def close(self) -> None:
        self.db.close()  # the holder's lock goes with the session

    async def durable(self) -> None:
        """Every claim and mark is committed when its method returns: nothing waits."""

    @property
    def token(self) -> str:
        """This ledger's holder token: a session advisory lock, taken on first use, that
        PostgreSQL drops when the session ends (a worker killed included)."""
        with self._guard:
            if self._token is None:
                token = uuid.uuid4().hex
                self.db.execute("SELECT pg_advisory_lock(?)", (_holder_key(token),))
                self._token = token
            return self._token

    _ROW_LOCK = " FOR UPDATE"  # two repairers on two workers: one takes the send

    def _gone(self, holder: str) -> bool:
        """Whether the holder's session is certainly over: its lock is free."""
        (free,) = self.db.execute("SELECT pg_try_advisory_lock(?)",
                                  (_holder_key(holder),)).fetchone()
        if free:
            self.db.execute("SELECT pg_advisory_unlock(?)", (_holder_key(holder),))
        return bool(free)

    def mark_sent(self, keys: list[str], *, post_id: str, url: str | None,
                  at: datetime, remembered: bool = False) -> None:
        """As `Ledger.mark_sent`. A send remembered at once is a private one (the gate says so
        for companion chats): its post id (the companion's names the chat) is not kept either,
        so a /delete leaves no chat id in the ledger."""
        if remembered:
            post_id, url = "", None
        with self._transaction() as db:
            db.executemany("UPDATE sends SET state = ?, finished = ?, post_id = ?, url = ?, "
                           "remembered = ?, text = CASE WHEN ? THEN NULL ELSE text END "
                           "WHERE key = ?",
                           [(SENT, utc(at), post_id, url, int(remembered), remembered, key)
                            for key in keys])
