"""The send ledger, `<home>/ledger.sqlite`: what was sent or is being sent (SPEC §10 step 4, 8).

One row per send key: (platform, action, the post replied to), or for a post that replies to
nothing, (platform, action, addressee, the text's hash). A post known by several spellings (its
URL, its id, the URL the author lookup returned) gets a row under each, so replying once by URL
and once by id is still "already replied". A row is claimed `pending` in one
immediate transaction just before the network call and marked `sent` with the post's URL right
after, so a crash in between leaves `pending` and a rerun refuses instead of posting twice. A send
that certainly failed (refused before the platform took it) releases its row. SQLite's own
locking makes the claim atomic between processes.

The text is kept for the operator (what was pending when it crashed); `forget` blanks it and the
handle, and keeps the key (a hash of ids, naming no one) so that forgetting never re-opens a
reply that went out.
"""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tactful.core.errors import MemoryUnavailable, Refused
from tactful.core.memory.sqlite import immediate

FILE = "ledger.sqlite"
PENDING, SENT = "pending", "sent"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sends (
    key       TEXT PRIMARY KEY,
    platform  TEXT NOT NULL,
    action    TEXT NOT NULL,
    reply_to  TEXT,
    handle    TEXT,
    thread    TEXT,
    mentions  TEXT NOT NULL DEFAULT '',
    text      TEXT,
    state     TEXT NOT NULL CHECK (state IN ('pending', 'sent')),
    started   TEXT NOT NULL,
    finished  TEXT,
    post_id   TEXT,
    url       TEXT,
    alias     INTEGER NOT NULL DEFAULT 0  -- 1: another spelling of a send already counted
);
CREATE INDEX IF NOT EXISTS sends_by_time ON sends (platform, action, started);
CREATE INDEX IF NOT EXISTS sends_by_thread ON sends (platform, handle, thread);
"""


def _utc(at: datetime) -> str:
    # One zone for every stored time: compared as text, times in mixed offsets would not sort.
    return at.astimezone(UTC).isoformat(timespec="microseconds")


def send_key(platform: str, action: str, reply_to: str | None, to: str | None,
             text: str) -> str:
    if reply_to is not None:
        parts = [platform, action, reply_to]
    else:
        parts = [platform, action, to or "", hashlib.sha256(text.encode()).hexdigest()]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


@dataclass(frozen=True)
class Record:
    key: str
    platform: str
    action: str
    reply_to: str | None
    handle: str | None
    thread: str | None
    state: str
    started: str
    url: str | None


class Ledger:
    def __init__(self, home: Path) -> None:
        self.path = home / FILE
        try:
            self.db = sqlite3.connect(self.path, timeout=15, isolation_level=None)
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(_SCHEMA)
            self.path.chmod(0o600)
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from exc

    def _unavailable(self, exc: Exception) -> MemoryUnavailable:
        return MemoryUnavailable(f"the send ledger {self.path} cannot be used: {exc}; move it "
                                 "aside only if you know nothing is pending, then retry")

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return immediate(self.db, self._unavailable)

    def close(self) -> None:
        self.db.close()

    # ---- reading ---------------------------------------------------------------------------

    def find(self, key: str) -> Record | None:
        try:
            row = self.db.execute(
                "SELECT key, platform, action, reply_to, handle, thread, state, started, url "
                "FROM sends WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from exc
        return Record(*row) if row else None

    def replied_in_thread(self, platform: str, handle: str, thread: str) -> Record | None:
        """A reply to this account in this thread, pending or sent (the one-per-thread rule)."""
        try:
            row = self.db.execute(
                "SELECT key, platform, action, reply_to, handle, thread, state, started, url "
                "FROM sends WHERE platform = ? AND handle = ? AND thread = ? LIMIT 1",
                (platform, handle, thread)).fetchone()
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from exc
        return Record(*row) if row else None

    def count_since(self, platform: str, action: str, since: datetime) -> tuple[int, str | None]:
        """Sends of one action since a time, and the oldest of them (when the window frees)."""
        try:
            count, oldest = self.db.execute(
                "SELECT count(*), min(started) FROM sends WHERE platform = ? AND action = ? "
                "AND started >= ? AND alias = 0", (platform, action, _utc(since))).fetchone()
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from exc
        return int(count), oldest

    # ---- writing ---------------------------------------------------------------------------

    def find_any(self, keys: list[str]) -> Record | None:
        """The record of any spelling of the same send (a post by URL and by id)."""
        for key in keys:
            found = self.find(key)
            if found is not None:
                return found
        return None

    def claim(self, keys: list[str], *, platform: str, action: str, reply_to: str | None,
              handle: str | None, thread: str | None, mentions: list[str], text: str,
              at: datetime, again: bool, bot_thread: tuple[str, str] | None = None,
              quota: tuple[int, datetime] | None = None) -> list[str]:
        """Mark a send pending under every key it is known by, and return the keys written.

        Refused when a record exists (unless `again`), when `bot_thread` (handle, thread)
        already has a reply, or when `quota` (cap, window start) is used up: all checked in the
        same immediate transaction as the insert, so two processes cannot both pass. With
        `again`, the earlier records stay (a sent one is never overwritten) and new rows are
        added under suffixed keys.
        """
        with self._transaction() as db:
            existing = [db.execute("SELECT state, started, url FROM sends WHERE key = ?",
                                   (key,)).fetchone() for key in keys]
            found = next((row for row in existing if row is not None), None)
            if found is not None and not again:
                raise already(found[0], found[1], found[2])
            if bot_thread is not None and db.execute(
                    "SELECT 1 FROM sends WHERE platform = ? AND handle = ? AND thread = ? "
                    "LIMIT 1", (platform, *bot_thread)).fetchone() is not None:
                raise Refused(f"refused: {platform}/@{bot_thread[0]} is a bot and was already "
                              "replied to in this thread (bots get one reply per thread); "
                              "nothing was sent")
            if quota is not None:
                cap, since = quota
                (count,) = db.execute(
                    "SELECT count(*) FROM sends WHERE platform = ? AND action = ? AND "
                    "started >= ? AND alias = 0", (platform, action, _utc(since))
                ).fetchone()
                if count >= cap:
                    from tactful.core.send.guards import QuotaReached

                    raise QuotaReached(f"refused: {count} {action} sends on {platform} in the "
                                       f"last 24 hours reach the limit of {cap}")
            if found is not None:
                suffix = f"#again-{at.isoformat()}"
                keys = [key + suffix for key in keys]
            db.executemany(
                "INSERT INTO sends (key, platform, action, reply_to, handle, thread, "
                "mentions, text, state, started, alias) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [(key, platform, action, reply_to, handle, thread, " ".join(mentions), text,
                  PENDING, _utc(at), int(n > 0)) for n, key in enumerate(keys)])
        return keys

    def mark_sent(self, keys: list[str], *, post_id: str, url: str | None,
                  at: datetime) -> None:
        with self._transaction() as db:
            db.executemany("UPDATE sends SET state = ?, finished = ?, post_id = ?, url = ? "
                           "WHERE key = ?",
                           [(SENT, _utc(at), post_id, url, key) for key in keys])

    def release(self, keys: list[str]) -> None:
        """The send certainly did not happen: let a later run try again."""
        with self._transaction() as db:
            db.executemany("DELETE FROM sends WHERE key = ? AND state = ?",
                           [(key, PENDING) for key in keys])

    def forget(self, platform: str, handle: str) -> int:
        """Blank the text and names of every send to or mentioning this person."""
        with self._transaction() as db:
            rows = db.execute("SELECT key, handle, mentions FROM sends WHERE platform = ?",
                              (platform,)).fetchall()
            keys = [(key,) for key, to, mentions in rows
                    if to == handle or handle in mentions.split()]
            # The post replied to (a URL or a DID names them) goes too; the key is a hash.
            db.executemany("UPDATE sends SET text = NULL, handle = NULL, mentions = '', "
                           "thread = NULL, reply_to = NULL WHERE key = ?", keys)
        try:
            self.db.execute("VACUUM")  # no free page keeps the old text
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from exc
        return len(keys)


def already(state: str, started: str, url: str | None) -> Refused:
    if state == SENT:
        where = f" ({url})" if url else ""
        return Refused(f"already replied: the ledger has this send as sent at {started}{where}; "
                       "pass --again to send it anyway")
    return Refused(f"already pending since {started}: an earlier run may have crashed while "
                   "sending; check the platform, then pass --again to send anyway")


def exists(home: Path) -> bool:
    return (home / FILE).exists()
