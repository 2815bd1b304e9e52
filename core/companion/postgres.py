"""The companion's store in PostgreSQL, for many workers (docs/companion.md, "Running on many
workers"); the embedded default is `CompanionStore` on SQLite (core/companion/store.py).

It is that class with its connection swapped: the same methods, the same SQL (spoken through
core/memory/postgres.py), `together()` as one transaction. What differs is here:
- The tables live in the schema `companion_<bot>` (the bot's name, lower case), created at
  first use in one transaction under an advisory lock, so workers starting together do not
  race. The schema is versioned by a `schema_version` table instead of `PRAGMA user_version`.
- Chat ids are BIGINT (Telegram's exceed 32 bits); times stay UTC ISO text, as in SQLite, so the
  shared queries compare them the same way.
- The queue of Telegram updates waiting for a worker (`updates`) is in the same schema, so a
  `/delete` scrubs it with the rest.
- `vacuum` (after /forget and /delete) is the scrub of core/memory/postgres.py: every table
  rewritten, the WAL that held the rows removed. A cluster where that cannot hold is refused at
  start-up (`check_erasable`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tactful.core.companion.session import utc_text
from tactful.core.companion.store import CompanionStore
from tactful.core.errors import MemoryUnavailable
from tactful.core.memory.postgres import Connection, check_erasable, shown

SCHEMA_VERSION = 1

_SCHEMA = (
    """CREATE TABLE users (
        chat_id         BIGINT PRIMARY KEY,
        language_code   TEXT,
        timezone        TEXT NOT NULL,
        started_at      TEXT NOT NULL,
        last_user_at    TEXT,
        last_bot_at     TEXT,
        paused          INTEGER NOT NULL DEFAULT 0,
        blocked         INTEGER NOT NULL DEFAULT 0,
        last_checkin_at TEXT,
        unanswered      INTEGER NOT NULL DEFAULT 0,
        last_pass_at    TEXT,
        invite_code     TEXT UNIQUE,
        invited_count   INTEGER NOT NULL DEFAULT 0,
        handle          TEXT,
        timezone_set_at TEXT)""",
    "CREATE TABLE message_times (chat_id BIGINT NOT NULL, at TEXT NOT NULL)",
    "CREATE INDEX message_times_by_chat ON message_times (chat_id, at)",
    "CREATE TABLE checkins (chat_id BIGINT NOT NULL, at TEXT NOT NULL)",
    "CREATE INDEX checkins_by_chat ON checkins (chat_id, at)",
    """CREATE TABLE pending (
        chat_id    BIGINT NOT NULL,
        message_id BIGINT NOT NULL,
        text       TEXT NOT NULL,
        at         TEXT NOT NULL,
        release_at TEXT NOT NULL,
        kind       TEXT NOT NULL DEFAULT 'held',
        user_id    BIGINT,
        handle     TEXT,
        PRIMARY KEY (chat_id, message_id))""",
    "CREATE INDEX pending_by_release ON pending (release_at)",
    """CREATE TABLE summaries (
        id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        chat_id BIGINT NOT NULL,
        at      TEXT NOT NULL,
        text    TEXT NOT NULL)""",
    "CREATE INDEX summaries_by_time ON summaries (at)",
    "CREATE TABLE schedule (job TEXT PRIMARY KEY, due_at TEXT NOT NULL)",
    # Updates the poller took from Telegram, until a worker handled them (adapters/telegram/
    # workers.py). update_id is Telegram's, increasing: a redelivery is a no-op.
    """CREATE TABLE updates (
        update_id BIGINT PRIMARY KEY,
        chat_id   BIGINT NOT NULL,
        body      TEXT NOT NULL)""",
    "CREATE INDEX updates_by_chat ON updates (chat_id, update_id)",
    # The poller's offset: what Telegram may forget (everything below it is in `updates` or
    # handled already).
    "CREATE TABLE poller (id INTEGER PRIMARY KEY CHECK (id = 1), next_update BIGINT NOT NULL)",
)


def schema_of(bot: str) -> str:
    return f"companion_{bot.lower()}"


class PostgresStore(CompanionStore):
    """`CompanionStore` on a PostgreSQL database shared by every worker of one bot."""

    def __init__(self, home: Path, bot: str, dsn: str, *, check: bool = True) -> None:
        # The SQLite constructor is not called: no file is made. What the shared methods use
        # of it is set here.
        self.home, self.bot = home, bot
        self.path = Path(f"postgresql:{shown(dsn)}/{schema_of(bot)}")
        self._lock = threading.RLock()
        self._depth = 0
        self._commits = 0
        self._group = None  # every write commits as it is made: no group commit here
        self.db: Any = Connection(dsn, schema_of(bot), self._unavailable,
                                  name=f"tactful-companion-{bot}")
        try:
            if check:
                check_erasable(self.db, "companion.database")
            self._migrate()
        except BaseException:
            self.db.close()
            raise

    def _unavailable(self, exc: Exception) -> MemoryUnavailable:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return MemoryUnavailable(f"the companion database ({self.path}) cannot be used: "
                                 f"{type(exc).__name__}: {first}; check companion.database, "
                                 "that the server runs and the role's rights, then restart")

    def _migrate(self) -> None:
        with self.db.transaction() as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = db.execute("SELECT max(version) FROM schema_version").fetchone()
            version = int(row[0]) if row and row[0] is not None else 0
            if version > SCHEMA_VERSION:
                raise MemoryUnavailable(
                    f"the companion database ({self.path}) has schema {version}, newer than "
                    f"this tactful knows ({SCHEMA_VERSION}); upgrade tactful")
            if version == 0:
                for statement in _SCHEMA:
                    db.execute(statement)
                db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))

    @contextmanager
    def _transaction(self, *, alone: bool = False) -> Iterator[Any]:
        with self._lock, self.db.transaction() as db:
            self._depth += 1
            try:
                yield db
            finally:
                self._depth -= 1

    def _read(self, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with self._lock:
            return list(self.db.execute(sql, args).fetchall())

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def vacuum(self) -> None:
        """No byte of deleted rows left anywhere in the cluster (core/memory/postgres.py)."""
        with self._lock:
            self.db.scrub()

    async def durable(self) -> None:
        """Every write of this store is committed when its method returns: nothing waits."""

    # ---- the dialect bits the shared SQL cannot say in both -----------------------------

    def _pass_candidates(self, now: datetime, quiet_minutes: int, *, quiet: bool) -> list[int]:
        cutoff = utc_text(now - timedelta(minutes=quiet_minutes))
        rows = self._read(
            "SELECT chat_id FROM users WHERE last_user_at IS NOT NULL "
            "AND (last_pass_at IS NULL OR last_user_at > last_pass_at) "
            "AND (last_user_at <= ?) = ? ORDER BY chat_id", (cutoff, quiet))
        return [int(str(chat_id)) for (chat_id,) in rows]

    def stats(self, now: datetime | None = None) -> dict[str, int]:
        moment = now or datetime.now(UTC)
        day = utc_text(moment - timedelta(days=1))
        week = utc_text(moment - timedelta(days=7))
        row = self._read(
            "SELECT count(*), count(*) FILTER (WHERE last_user_at >= ?), "
            "count(*) FILTER (WHERE last_user_at >= ?), coalesce(sum(paused), 0), "
            "coalesce(sum(blocked), 0), coalesce(sum(invited_count), 0) FROM users",
            (day, week))[0]
        (pending,) = self._read("SELECT count(*) FROM pending WHERE kind = 'held'")[0]
        keys = ("users", "active_24h", "active_7d", "paused", "blocked")
        counts = {key: int(str(value)) for key, value in zip(keys, row, strict=False)}
        return {**counts, "pending": int(str(pending)), "invites": int(str(row[5]))}



def bots(dsn: str) -> list[str]:
    """The bots whose companion has a schema in this database (`tactful companion stats`)."""
    db = Connection(dsn, "public", _failed(dsn), name="tactful-companion-stats")
    try:
        rows = db.raw.execute("SELECT table_schema FROM information_schema.tables "
                              "WHERE table_name = 'users' AND table_schema LIKE 'companion\\_%' "
                              "ORDER BY 1").fetchall()
    finally:
        db.close()
    return [str(schema).removeprefix("companion_") for (schema,) in rows]


def _failed(dsn: str) -> Callable[[Exception], MemoryUnavailable]:
    def failed(exc: Exception) -> MemoryUnavailable:
        return MemoryUnavailable(f"the companion database ({shown(dsn)}) cannot be used: "
                                 f"{type(exc).__name__}; check companion.database and that "
                                 "the server runs")
    return failed
