"""The companion's private database, `<home>/companion/<bot>/companion.sqlite` (docs/companion.md).

It holds what the rules need to know about a user and no conversation: metadata per chat
(language, time zone, when they started and last wrote, pause and block, check-in counters,
the last memory pass, an invite code and how many arrived by it), the times of the user's own
messages (for the limits), the messages held over a limit, and the memory pass's neutral
operational summaries. Held messages are the one place text lives here, and only until they
are answered, forgotten or deleted; no log ever carries them.

Choices made here:
- Times are stored as UTC ISO 8601 with microseconds (`session.utc_text`), so string order is
  time order. A naive datetime is refused.
- `PRAGMA secure_delete` is on, so a deleted row is overwritten in place, and the journal is
  the rollback kind (never WAL, whose file would keep old pages after a delete); `delete_user`
  and `clear_pending` also VACUUM, so no free page keeps anyone's words.
- The file is created 0600 before SQLite opens it; the folder is 0700.
- The schema is versioned with `PRAGMA user_version` and built by small ordered migrations,
  each in one immediate transaction, so two processes opening a new file do not race.
- A connection may be used from several threads (one lock serializes them), though a worker
  thread is better served by a store of its own.
- Message times older than `MESSAGE_TIMES_DAYS` (2) are pruned: the daily cap needs at most
  one local day (≤ 25 h) and the window ten minutes. Summaries are kept `SUMMARY_DAYS` (30).
- Check-in times are kept for the life of the user row (a few a week at most): the check-in
  policy needs to know which of day-2 and week-1 went out, and the rolling weekly count.
- `record_arrival` counts an arrival and stores nothing else: not who arrived, not when, and
  there is no `invited_by` column (only the count of arrivals is kept). The caller
  should count only a chat's first contact, since nothing here can tell a repeat.
- An invite code is 12 URL-safe characters from `secrets` (72 bits), made on first ask, never
  changed; it fits a Telegram `start` parameter.
- Setters on a chat with no row do nothing: a /delete may have raced a turn, and the turn must
  not bring the user back. `invite_code` on an unknown chat raises `LookupError`.
- "Active" in `stats` is a rolling 24 hours and 7 days, not a calendar day: users live in
  different zones.
- `together()` groups writes into one transaction (one durable commit): a turn's writes at
  arrival, and those after its answer (docs/companion.md, "Throughput").
- With `group_commit` (the gateway's store), the writes of every turn in flight share one open
  transaction and one commit round (`core/memory/group_commit.py`); a turn awaits `durable()`
  before anything that depends on them leaves the process. Erasure commits alone, then VACUUMs.
- This class is the companion's one seam to its database: nothing else runs SQL on it. Another
  backend (PostgreSQL for several workers) would be a class with these methods, made where the
  gateway makes its store (docs/companion.md, "Where another database would plug in").
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tactful.core.companion.session import bot_folder, make_private_dirs, utc_text
from tactful.core.errors import MemoryUnavailable
from tactful.core.memory.clock import zone
from tactful.core.memory.group_commit import GroupCommit
from tactful.core.memory.sqlite import immediate

FILE = "companion.sqlite"
MESSAGE_TIMES_DAYS = 2
SUMMARY_DAYS = 30
_CODE = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class User:
    chat_id: int
    language_code: str | None  # as the platform gave it, e.g. "nl-BE"
    timezone: str  # an IANA name
    started_at: datetime
    last_user_at: datetime | None
    last_bot_at: datetime | None
    paused: bool
    blocked: bool
    last_checkin_at: datetime | None
    unanswered: int  # check-ins since the user last wrote
    checkins_sent: tuple[datetime, ...]  # every check-in, oldest first
    last_pass_at: datetime | None
    invite_code: str | None
    invited_count: int
    handle: str | None = None  # the username, normalized, when they have one


@dataclass(frozen=True)
class Pending:
    chat_id: int
    message_id: int
    text: str
    at: datetime
    release_at: datetime
    kind: str = "held"  # "held" over a limit, or "queued" in the join pause
    user_id: int | None = None  # who wrote it (in a group, one of many; the send gate checks)
    handle: str | None = None  # their username, normalized, when they have one


@dataclass(frozen=True)
class Summary:
    chat_id: int
    at: datetime
    text: str


# ---- schema: small ordered migrations; the list index + 1 is the user_version ---------------

def _v1(db: sqlite3.Connection) -> None:
    db.execute("""CREATE TABLE users (
        chat_id         INTEGER PRIMARY KEY,
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
        invited_count   INTEGER NOT NULL DEFAULT 0)""")
    db.execute("CREATE TABLE message_times (chat_id INTEGER NOT NULL, at TEXT NOT NULL)")
    db.execute("CREATE INDEX message_times_by_chat ON message_times (chat_id, at)")
    db.execute("CREATE TABLE checkins (chat_id INTEGER NOT NULL, at TEXT NOT NULL)")
    db.execute("CREATE INDEX checkins_by_chat ON checkins (chat_id, at)")
    db.execute("""CREATE TABLE pending (
        chat_id    INTEGER NOT NULL,
        message_id INTEGER NOT NULL,
        text       TEXT NOT NULL,
        at         TEXT NOT NULL,
        release_at TEXT NOT NULL,
        PRIMARY KEY (chat_id, message_id))""")
    db.execute("CREATE INDEX pending_by_release ON pending (release_at)")
    db.execute("""CREATE TABLE summaries (
        id      INTEGER PRIMARY KEY,
        chat_id INTEGER NOT NULL,
        at      TEXT NOT NULL,
        text    TEXT NOT NULL)""")
    db.execute("CREATE INDEX summaries_by_time ON summaries (at)")


def _v2(db: sqlite3.Connection) -> None:
    # The user's username, normalized: a do-not-engage flag set by username must stop check-ins
    # and held answers too, which know the chat only by its id.
    db.execute("ALTER TABLE users ADD COLUMN handle TEXT")


def _v3(db: sqlite3.Connection) -> None:
    # A message waiting out the join pause is kept here too ("queued"), so a restart in that
    # pause (or while the responder thinks) loses nothing: the platform has already taken the
    # message as delivered. "held" is a message over a limit.
    db.execute("ALTER TABLE pending ADD COLUMN kind TEXT NOT NULL DEFAULT 'held'")


def _v4(db: sqlite3.Connection) -> None:
    # When the user last set their time zone: once a day, or a new zone's fresh midnight
    # would reset the daily cap at will.
    db.execute("ALTER TABLE users ADD COLUMN timezone_set_at TEXT")


def _v5(db: sqlite3.Connection) -> None:
    # Who wrote a waiting message: in a group the chat names no person, and the answer must
    # pass the send gate for everyone it answers.
    db.execute("ALTER TABLE pending ADD COLUMN user_id INTEGER")
    db.execute("ALTER TABLE pending ADD COLUMN handle TEXT")


def _v6(db: sqlite3.Connection) -> None:
    # When each recurring job (the memory pass) is next due: a restart keeps the schedule,
    # so a bot restarted more often than the interval still rewrites notes.
    db.execute("CREATE TABLE schedule (job TEXT PRIMARY KEY, due_at TEXT NOT NULL)")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_v1, _v2, _v3, _v4, _v5, _v6]

_USER_COLUMNS = ("chat_id, language_code, timezone, started_at, last_user_at, last_bot_at, "
                 "paused, blocked, last_checkin_at, unanswered, last_pass_at, invite_code, "
                 "invited_count, handle")


def _time(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _required_time(text: str) -> datetime:
    return datetime.fromisoformat(text)


class CompanionStore:
    def __init__(self, home: Path, bot: str, *, group_commit: bool = False) -> None:
        folder = bot_folder(home, bot)
        self.path = folder / FILE
        self._lock = threading.RLock()
        self._depth = 0  # > 0 inside `together`
        self._commits = 0  # durable commits outside a group
        self._group: GroupCommit | None = None
        try:
            make_private_dirs(folder)
            # Made 0600 before SQLite opens it, and only when missing: closing a descriptor
            # of the file drops every POSIX lock this process holds on it, so opening an
            # existing one here (a worker's store, while the gateway's commit round holds the
            # write lock) would let another process take a live transaction's journal for a
            # crashed one's.
            with contextlib.suppress(FileExistsError):
                os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
            self.db = sqlite3.connect(self.path, timeout=15, isolation_level=None,
                                      check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise self._unavailable(exc) from exc
        try:
            self.db.execute("PRAGMA journal_mode=DELETE")
            self.db.execute("PRAGMA secure_delete=ON")
            self.db.execute("PRAGMA synchronous=FULL")
            self._migrate()
        except BaseException:
            self.db.close()
            raise
        if group_commit:
            self._group = GroupCommit(self.db, self._lock, self._unavailable, "companion")

    def _unavailable(self, exc: Exception) -> MemoryUnavailable:
        return MemoryUnavailable(f"the companion database {self.path} cannot be used: "
                                 f"{type(exc).__name__}: {exc}; check its permissions and disk, "
                                 "then restart")

    def _migrate(self) -> None:
        with self._transaction() as db:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            if version > len(MIGRATIONS):
                raise MemoryUnavailable(
                    f"the companion database {self.path} has schema {version}, newer than this "
                    f"tactful knows ({len(MIGRATIONS)}); upgrade tactful")
            for number, step in enumerate(MIGRATIONS[version:], start=version + 1):
                step(db)
                db.execute(f"PRAGMA user_version = {number}")

    @contextmanager
    def _transaction(self, *, alone: bool = False) -> Iterator[sqlite3.Connection]:
        """A write block: its own durable commit, or with group commit a part of the group's
        open transaction. `alone` (erasure) commits the group first and then itself, so that a
        VACUUM can follow at once."""
        with self._lock:
            if self._depth:  # inside `together`: one commit for all of it
                yield self.db
                return
            if self._group is not None and not alone:
                with self._group.write() as db:
                    self._depth += 1
                    try:
                        yield db
                    finally:
                        self._depth -= 1
                return
            if self._group is not None:
                self._group.flush()
            with immediate(self.db, self._unavailable) as db:
                self._depth += 1
                try:
                    yield db
                finally:
                    self._depth -= 1
            self._commits += 1

    @property
    def commits(self) -> int:
        """Durable commits this store made (each an fsync round): the bench and the tests
        count them."""
        return self._commits + (self._group.commits if self._group is not None else 0)

    @property
    def grouped(self) -> bool:
        return self._group is not None

    async def durable(self) -> None:
        """Return once every write made before the call is durable. Without group commit each
        write already is; with it, this waits for the commit round that holds them, and raises
        `MemoryUnavailable` when the one holding this task's own writes failed."""
        if self._group is not None:
            await self._group.durable()

    @contextmanager
    def together(self) -> Iterator[None]:
        """The writes made inside, in one transaction: one durable commit instead of one each
        (all of them, or none). A turn's writes at arrival and after its answer go this way."""
        with self._transaction():
            yield

    def _read(self, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with self._lock:
            try:
                return list(self.db.execute(sql, args).fetchall())
            except sqlite3.Error as exc:
                raise self._unavailable(exc) from exc

    def _write(self, sql: str, args: tuple[object, ...] = (), *, alone: bool = False) -> int:
        """One statement in its own transaction; returns the rows it changed."""
        with self._transaction(alone=alone) as db:
            return db.execute(sql, args).rowcount

    def close(self) -> None:
        try:
            if self._group is not None:
                # What is open is committed first; not under the lock, which a commit round
                # already handed to the commit thread needs to finish.
                self._group.close()
        finally:
            with self._lock:
                self.db.close()

    def vacuum(self) -> None:
        """Rebuild the file so that no free page keeps deleted words."""
        with self._lock:
            if self._group is not None:
                self._group.flush()  # VACUUM cannot run inside the group's transaction
            try:
                self.db.execute("VACUUM")
            except sqlite3.Error as exc:
                raise self._unavailable(exc) from exc

    # ---- users ------------------------------------------------------------------------------

    def user(self, chat_id: int) -> User | None:
        rows = self._read(f"SELECT {_USER_COLUMNS} FROM users WHERE chat_id = ?",  # noqa: S608 — a constant column list
                          (chat_id,))
        if not rows:
            return None
        sent = self._read("SELECT at FROM checkins WHERE chat_id = ? ORDER BY at", (chat_id,))
        return _user(rows[0], tuple(_required_time(str(at)) for (at,) in sent))

    def users(self) -> list[User]:
        """Every user, by chat id (the check-in round visits them all)."""
        sent: dict[int, list[datetime]] = {}
        for chat_id, at in self._read("SELECT chat_id, at FROM checkins ORDER BY at"):
            sent.setdefault(int(str(chat_id)), []).append(_required_time(str(at)))
        return [_user(row, tuple(sent.get(int(str(row[0])), ())))
                for row in self._read(f"SELECT {_USER_COLUMNS} FROM users "  # noqa: S608 — constant
                                      "ORDER BY chat_id")]

    def touch_user(self, chat_id: int, *, language_code: str | None, at: datetime,
                   tz_default: str, handle: str | None = None) -> User:
        """The user's row, made at first contact (`started_at` = `at`, time zone =
        `tz_default`); a later contact only refreshes the language the platform reports."""
        zone(tz_default)  # an unknown zone is refused before it is stored
        known = self.user(chat_id)
        if known is not None and (not language_code or known.language_code == language_code) \
                and (not handle or known.handle == handle):
            return known  # nothing new: no write (this runs for every message)
        with self._transaction() as db:
            db.execute("INSERT OR IGNORE INTO users (chat_id, language_code, timezone, "
                       "started_at) VALUES (?, ?, ?, ?)",
                       (chat_id, language_code, tz_default, utc_text(at)))
            if language_code:
                db.execute("UPDATE users SET language_code = ? WHERE chat_id = ?",
                           (language_code, chat_id))
            if handle:
                db.execute("UPDATE users SET handle = ? WHERE chat_id = ?", (handle, chat_id))
        user = self.user(chat_id)
        if user is None:  # deleted by another process between the two statements
            raise MemoryUnavailable("the companion user row vanished while it was written; "
                                    "retry the message")
        return user

    def record_user_message(self, chat_id: int, at: datetime, *, counted: bool = True) -> None:
        """They wrote: note the time (for the limits, unless `counted` is False: a message held
        over a limit does not push the limit further), and reset unanswered check-ins."""
        stamp = utc_text(at)
        old = utc_text(at - timedelta(days=MESSAGE_TIMES_DAYS))
        with self._transaction() as db:
            changed = db.execute(
                "UPDATE users SET last_user_at = max(coalesce(last_user_at, ''), ?), "
                "unanswered = 0 WHERE chat_id = ?", (stamp, chat_id)).rowcount
            if changed and counted:
                db.execute("INSERT INTO message_times (chat_id, at) VALUES (?, ?)",
                           (chat_id, stamp))
                db.execute("DELETE FROM message_times WHERE chat_id = ? AND at < ?",
                           (chat_id, old))

    def count_message(self, chat_id: int, at: datetime) -> None:
        """Count one message toward the limits without it being a message of theirs (the
        answer to held messages is a turn like any other)."""
        self._write("INSERT INTO message_times (chat_id, at) SELECT ?, ? WHERE EXISTS "
                    "(SELECT 1 FROM users WHERE chat_id = ?)", (chat_id, utc_text(at), chat_id))

    def drop_pending(self, chat_id: int, message_ids: list[int]) -> None:
        """Remove the held messages that were answered (newer ones stay held)."""
        with self._transaction() as db:
            db.executemany("DELETE FROM pending WHERE chat_id = ? AND message_id = ?",
                           [(chat_id, m) for m in message_ids])

    def record_bot_message(self, chat_id: int, at: datetime) -> None:
        """The bot wrote. Only `last_bot_at` moves: the bot never extends retention."""
        self._write("UPDATE users SET last_bot_at = ? WHERE chat_id = ?",
                    (utc_text(at), chat_id))

    def message_times(self, chat_id: int, since: datetime) -> list[datetime]:
        """The user's own message times at or after `since`, oldest first."""
        rows = self._read("SELECT at FROM message_times WHERE chat_id = ? AND at >= ? "
                          "ORDER BY at", (chat_id, utc_text(since)))
        return [_required_time(str(at)) for (at,) in rows]

    def set_paused(self, chat_id: int, paused: bool) -> None:
        self._write("UPDATE users SET paused = ? WHERE chat_id = ?", (int(paused), chat_id))

    def set_blocked(self, chat_id: int, blocked: bool) -> None:
        self._write("UPDATE users SET blocked = ? WHERE chat_id = ?", (int(blocked), chat_id))

    def set_timezone(self, chat_id: int, timezone: str, at: datetime | None = None) -> None:
        zone(timezone)  # BadInput for a name that is not an IANA zone
        self._write("UPDATE users SET timezone = ?, timezone_set_at = ? WHERE chat_id = ?",
                    (timezone, utc_text(at) if at is not None else None, chat_id))

    def timezone_set_at(self, chat_id: int) -> datetime | None:
        rows = self._read("SELECT timezone_set_at FROM users WHERE chat_id = ?", (chat_id,))
        return _time(str(rows[0][0])) if rows and rows[0][0] is not None else None

    def record_checkin(self, chat_id: int, at: datetime) -> None:
        """A check-in went out: one more unanswered, and its time for the weekly count."""
        with self._transaction() as db:
            changed = db.execute(
                "UPDATE users SET last_checkin_at = ?, unanswered = unanswered + 1 "
                "WHERE chat_id = ?", (utc_text(at), chat_id)).rowcount
            if changed:
                db.execute("INSERT INTO checkins (chat_id, at) VALUES (?, ?)",
                           (chat_id, utc_text(at)))

    def mark_pass(self, chat_id: int, at: datetime) -> None:
        """The memory pass is done with this chat up to `at`."""
        self._write("UPDATE users SET last_pass_at = ? WHERE chat_id = ?",
                    (utc_text(at), chat_id))

    # ---- invites ----------------------------------------------------------------------------

    def invite_code(self, chat_id: int) -> str:
        """This user's personal code: made once, then always the same."""
        with self._transaction() as db:
            row = db.execute("SELECT invite_code FROM users WHERE chat_id = ?",
                             (chat_id,)).fetchone()
            if row is None:
                raise LookupError("no companion user with this chat id; /start comes first")
            if row[0] is not None:
                return str(row[0])
            while True:
                code = secrets.token_urlsafe(9)
                taken = db.execute("SELECT 1 FROM users WHERE invite_code = ?",
                                   (code,)).fetchone()
                if taken is None:
                    db.execute("UPDATE users SET invite_code = ? WHERE chat_id = ?",
                               (code, chat_id))
                    return code

    def record_arrival(self, code: str) -> bool:
        """Someone arrived by `code`: count it and keep nothing else. False: no such code."""
        if not _CODE.fullmatch(code):
            return False
        return self._write("UPDATE users SET invited_count = invited_count + 1 "
                           "WHERE invite_code = ?", (code,)) == 1

    # ---- held messages ----------------------------------------------------------------------

    def hold(self, chat_id: int, message_id: int, text: str, at: datetime,
             release_at: datetime, *, kind: str = "held", user_id: int | None = None,
             handle: str | None = None) -> None:
        """Keep a message until `release_at`: over a limit ("held"), or in the join pause
        ("queued"). The same message twice (a platform redelivering after a restart) is kept
        once."""
        self._write("INSERT OR IGNORE INTO pending (chat_id, message_id, text, at, release_at, "
                    "kind, user_id, handle) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (chat_id, message_id, text, utc_text(at), utc_text(release_at), kind,
                     user_id, handle))

    def move_release(self, chat_id: int, release_at: datetime) -> None:
        """One release time for all of the chat's held messages (a longer hold moves it)."""
        self._write("UPDATE pending SET release_at = ? WHERE chat_id = ? AND kind = 'held'",
                    (utc_text(release_at), chat_id))

    def pending(self, chat_id: int, kind: str | None = None) -> list[Pending]:
        """The chat's waiting messages (of one kind, or all), oldest first, left in place."""
        rows = self._read("SELECT chat_id, message_id, text, at, release_at, kind, user_id, "
                          "handle FROM pending WHERE chat_id = ? AND (? IS NULL OR kind = ?) "
                          "ORDER BY at, message_id",
                          (chat_id, kind, kind))
        return [_pending(row) for row in rows]

    def take_pending(self, chat_id: int) -> list[Pending]:
        """Remove and return the chat's held messages, oldest first, in one transaction: two
        callers never both get the same message."""
        with self._transaction() as db:
            rows = db.execute("SELECT chat_id, message_id, text, at, release_at, kind, "
                              "user_id, handle FROM pending WHERE chat_id = ? "
                              "ORDER BY at, message_id",
                              (chat_id,)).fetchall()
            db.execute("DELETE FROM pending WHERE chat_id = ?", (chat_id,))
        return [_pending(row) for row in rows]

    def due_pending(self, now: datetime) -> list[int]:
        """Chats whose earliest release time has come (all their held messages go together)."""
        rows = self._read("SELECT chat_id FROM pending GROUP BY chat_id "
                          "HAVING min(release_at) <= ? ORDER BY chat_id", (utc_text(now),))
        return [int(str(chat_id)) for (chat_id,) in rows]

    def clear_pending(self, chat_id: int) -> int:
        """Drop the chat's held messages unanswered (/forget), and VACUUM; returns how many."""
        removed = self._write("DELETE FROM pending WHERE chat_id = ?", (chat_id,), alone=True)
        self.vacuum()
        return removed

    # ---- the memory pass --------------------------------------------------------------------

    def due_at(self, job: str) -> datetime | None:
        """When the recurring `job` (e.g. "memory_pass") is next due; None: never scheduled."""
        rows = self._read("SELECT due_at FROM schedule WHERE job = ?", (job,))
        return _time(str(rows[0][0])) if rows else None

    def set_due(self, job: str, at: datetime) -> None:
        self._write("INSERT INTO schedule (job, due_at) VALUES (?, ?) "
                    "ON CONFLICT (job) DO UPDATE SET due_at = excluded.due_at",
                    (job, utc_text(at)))

    def chats_for_pass(self, now: datetime, quiet_minutes: int) -> list[int]:
        """Chats where the user wrote since their last pass and has been quiet since at least
        `quiet_minutes`."""
        return self._pass_candidates(now, quiet_minutes, quiet=True)

    def chats_not_quiet(self, now: datetime, quiet_minutes: int) -> list[int]:
        """Chats where the user wrote since their last pass but not yet quiet long enough."""
        return self._pass_candidates(now, quiet_minutes, quiet=False)

    def _pass_candidates(self, now: datetime, quiet_minutes: int, *, quiet: bool) -> list[int]:
        cutoff = utc_text(now - timedelta(minutes=quiet_minutes))
        rows = self._read(
            "SELECT chat_id FROM users WHERE last_user_at IS NOT NULL "
            "AND (last_pass_at IS NULL OR last_user_at > last_pass_at) "
            "AND (last_user_at <= ?) = ? ORDER BY chat_id", (cutoff, int(quiet)))
        return [int(str(chat_id)) for (chat_id,) in rows]

    def save_summary(self, chat_id: int, at: datetime, text: str) -> bool:
        """Keep a neutral operational summary; False (nothing kept) when the user is gone."""
        return self._write(
            "INSERT INTO summaries (chat_id, at, text) SELECT ?, ?, ? "
            "WHERE EXISTS (SELECT 1 FROM users WHERE chat_id = ?)",
            (chat_id, utc_text(at), text, chat_id)) == 1

    def summaries(self, limit: int) -> list[Summary]:
        """The newest `limit` summaries, newest first."""
        rows = self._read("SELECT chat_id, at, text FROM summaries ORDER BY at DESC, id DESC "
                          "LIMIT ?", (max(limit, 0),))
        return [Summary(int(str(c)), _required_time(str(a)), str(t)) for c, a, t in rows]

    # ---- retention and erasure --------------------------------------------------------------

    def idle_chats(self, cutoff: datetime) -> list[int]:
        """Chats whose user last wrote before `cutoff` (or never, and started before it)."""
        rows = self._read("SELECT chat_id FROM users WHERE coalesce(last_user_at, started_at) "
                          "<= ? ORDER BY chat_id", (utc_text(cutoff),))
        return [int(str(chat_id)) for (chat_id,) in rows]

    def prune(self, now: datetime) -> int:
        """Drop message times the limits no longer need and old summaries; returns rows."""
        with self._transaction() as db:
            times = db.execute("DELETE FROM message_times WHERE at < ?",
                               (utc_text(now - timedelta(days=MESSAGE_TIMES_DAYS)),)).rowcount
            old = db.execute("DELETE FROM summaries WHERE at < ?",
                             (utc_text(now - timedelta(days=SUMMARY_DAYS)),)).rowcount
        return int(times) + int(old)

    def clear_handle(self, chat_id: int) -> None:
        """Drop the username kept for a chat (a group keeps its last writer's): the operator
        forgot that person (`tactful forget`)."""
        self._write("UPDATE users SET handle = NULL WHERE chat_id = ?", (chat_id,))

    def delete_user(self, chat_id: int) -> None:
        """Every row of theirs in every table, then VACUUM."""
        with self._transaction(alone=True) as db:
            for table in ("pending", "message_times", "checkins", "summaries", "users"):
                db.execute(f"DELETE FROM {table} WHERE chat_id = ?", (chat_id,))  # noqa: S608
        self.vacuum()

    # ---- for the operator -------------------------------------------------------------------

    def stats(self, now: datetime | None = None) -> dict[str, int]:
        """Counts only: users, active in the last 24 hours and 7 days, paused, blocked, held
        messages, arrivals by invite."""
        moment = now or datetime.now(UTC)
        day = utc_text(moment - timedelta(days=1))
        week = utc_text(moment - timedelta(days=7))
        users, active_day, active_week, paused, blocked, invites = self._read(
            "SELECT count(*), "
            "coalesce(sum(last_user_at >= ?), 0), coalesce(sum(last_user_at >= ?), 0), "
            "coalesce(sum(paused), 0), coalesce(sum(blocked), 0), "
            "coalesce(sum(invited_count), 0) FROM users", (day, week))[0]
        (pending,) = self._read("SELECT count(*) FROM pending WHERE kind = 'held'")[0]
        return {"users": _int(users), "active_24h": _int(active_day),
                "active_7d": _int(active_week), "paused": _int(paused),
                "blocked": _int(blocked), "pending": _int(pending), "invites": _int(invites)}


def _int(value: object) -> int:
    return int(str(value))


def _user(row: tuple[object, ...], checkins: tuple[datetime, ...]) -> User:
    (chat_id, language_code, timezone, started_at, last_user_at, last_bot_at, paused, blocked,
     last_checkin_at, unanswered, last_pass_at, invite_code, invited_count, handle) = row
    return User(
        chat_id=_int(chat_id),
        language_code=None if language_code is None else str(language_code),
        timezone=str(timezone),
        started_at=_required_time(str(started_at)),
        last_user_at=_time(None if last_user_at is None else str(last_user_at)),
        last_bot_at=_time(None if last_bot_at is None else str(last_bot_at)),
        paused=bool(paused),
        blocked=bool(blocked),
        last_checkin_at=_time(None if last_checkin_at is None else str(last_checkin_at)),
        unanswered=_int(unanswered),
        checkins_sent=checkins,
        last_pass_at=_time(None if last_pass_at is None else str(last_pass_at)),
        invite_code=None if invite_code is None else str(invite_code),
        invited_count=_int(invited_count),
        handle=None if handle is None else str(handle),
    )


def _pending(row: tuple[object, ...]) -> Pending:
    chat_id, message_id, text, at, release_at, kind, user_id, handle = row
    return Pending(chat_id=_int(chat_id), message_id=_int(message_id), text=str(text),
                   at=_required_time(str(at)), release_at=_required_time(str(release_at)),
                   kind=str(kind), user_id=None if user_id is None else _int(user_id),
                   handle=None if handle is None else str(handle))
