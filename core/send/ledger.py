"""The send ledger, `<home>/ledger.sqlite`: what was sent or is being sent (docs/sending.md).

One row per send key: (platform, action, the post replied to), or for a post that replies to
nothing, (platform, action, addressee, the text's hash). A post known by several spellings (its
URL, its id, the URL the author lookup returned) gets a row under each, so replying once by URL
and once by id is still "already replied". A row is claimed `pending` in one
immediate transaction just before the network call and marked `sent` with the post's URL right
after, so a crash in between leaves `pending` and a rerun refuses instead of posting twice. A send
that certainly failed (refused before the platform took it) releases its row. SQLite's own
locking makes the claim atomic between processes. A row carries its holder (`owners`): a send
whose memory is not written yet is repaired by another run only once its holder is gone.

The text is scrubbed on the way in (secrets become `[redacted:KIND]`) and kept only until memory
has the send (what was pending when it crashed, what a repair writes); then it goes. `forget`
blanks the text and names of every send to, mentioning, naming or quoting the person, and keeps
the key (a hash of ids, naming no one) so that forgetting never re-opens a reply that went out.
`secure_delete` is on, and a forget vacuums, so deleted bytes do not linger in free pages.

Every write is one durable commit, except in group-commit mode (`group_commits`, the companion's
gateway only: docs/companion.md, "Throughput"), where the writes of every task in flight share
a commit round and a writer awaits `durable()` before what depends on them goes out; a forget
still commits alone before it vacuums.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tactful.core.errors import MemoryUnavailable, Refused
from tactful.core.memory.group_commit import GroupCommit
from tactful.core.memory.scrub import scrub
from tactful.core.memory.sqlite import immediate, migrate
from tactful.core.memory.traces import Trace
from tactful.core.send import owners

FILE = "ledger.sqlite"
PENDING, SENT = "pending", "sent"

# Ordered migrations, durable ones first: the ledger is the record that prevents double posts.
# PRAGMA user_version says how many ran; each runs once, in its own transaction.
_MIGRATIONS = (
    """
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
    """,
    # What memory needs to record a send the moment it is out, kept until it is recorded: a
    # crash between "sent" and the memory write is repaired from the row on the next run.
    """
    ALTER TABLE sends ADD COLUMN person_id TEXT;
    ALTER TABLE sends ADD COLUMN in_reply_to TEXT;
    ALTER TABLE sends ADD COLUMN remembered INTEGER NOT NULL DEFAULT 1;
    """,
)


def _scrub_stored(db: sqlite3.Connection) -> None:
    """Ledgers from before scrubbing: remembered sends lose their text, the rest is scrubbed."""
    db.execute("UPDATE sends SET text = NULL WHERE remembered = 1")
    for key, text in db.execute("SELECT key, text FROM sends WHERE text IS NOT NULL").fetchall():
        db.execute("UPDATE sends SET text = ? WHERE key = ?", (scrub(text).text, key))


def _add_owner(db: sqlite3.Connection) -> None:
    """Who holds a row (`owners`): a repair takes only a send whose sender is certainly gone.
    Rows from before have no holder, as a send whose memory write failed."""
    db.execute("ALTER TABLE sends ADD COLUMN owner TEXT")


# Steps in Python, after the SQL ones, numbered on from them (new steps go at the end).
_PY_MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_scrub_stored, _add_owner)


def utc(at: datetime) -> str:
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
class Unremembered:
    key: str
    platform: str
    action: str
    handle: str | None
    person_id: str | None
    thread: str | None
    mentions: str
    text: str | None
    started: str
    url: str | None
    in_reply_to: str | None


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
        self.root = home
        self.path = home / FILE
        self._holder: owners.Holder | None = None
        self._lock = threading.RLock()  # a group commit runs in a thread of its own
        self._commits = 0
        self._group: GroupCommit | None = None
        try:
            self.db = sqlite3.connect(self.path, timeout=15, isolation_level=None,
                                      check_same_thread=False)
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA secure_delete = ON")  # deleted text is zeroed, not left
            self._migrate()
            self.path.chmod(0o600)
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from exc

    def _migrate(self) -> None:
        migrate(self.db, [*_MIGRATIONS, *_PY_MIGRATIONS], self._transaction)

    def _unavailable(self, exc: Exception) -> MemoryUnavailable:
        return MemoryUnavailable(f"the send ledger {self.path} cannot be used: {exc}; move it "
                                 "aside only if you know nothing is pending, then retry")

    @contextmanager
    def _transaction(self, *, alone: bool = False) -> Iterator[sqlite3.Connection]:
        """One immediate transaction, committed durably at its end; with group commit, a part
        of the group's open transaction instead (`alone`: commit the group, then this one)."""
        with self._lock:
            if self._group is not None and not alone:
                with self._group.write() as db:
                    yield db
                return
            if self._group is not None:
                self._group.flush()
            with immediate(self.db, self._unavailable) as db:
                yield db
            self._commits += 1

    def group_commits(self) -> None:
        """From now on, writes share one transaction per commit round, made durable in a
        thread of its own (`core/memory/group_commit.py`), and a writer awaits `durable()`
        before anything that depends on them goes out. For a sender whose writers are tasks of
        one asyncio loop (the companion's gateway); every other sender keeps a durable commit
        per write."""
        with self._lock:
            if self._group is None:
                self._group = GroupCommit(self.db, self._lock, self._unavailable, "ledger")

    async def durable(self) -> None:
        """Return once every write made before the call is durable (at once without group
        commit); raises `MemoryUnavailable` when the commit holding this task's writes failed:
        a claim that is not on disk must not be sent on."""
        if self._group is not None:
            await self._group.durable()

    @property
    def commits(self) -> int:
        """Durable commits made through this ledger (each an fsync round)."""
        return self._commits + (self._group.commits if self._group is not None else 0)

    def close(self) -> None:
        try:
            if self._group is not None:
                # What is open is committed first; not under the lock, which a commit round
                # already handed to the commit thread needs to finish.
                self._group.close()
                self._group = None
        finally:
            with self._lock:
                self.db.close()
        if self._holder is not None:
            self._holder.close()
            self._holder = None

    @property
    def token(self) -> str:
        """This ledger's holder token, its lock taken on first use (`owners`)."""
        if self._holder is None:
            try:
                self._holder = owners.Holder(self.root)
            except OSError as exc:
                raise self._unavailable(exc) from exc
        return self._holder.token

    # ---- reading ---------------------------------------------------------------------------

    def find(self, key: str) -> Record | None:
        try:
            with self._lock:
                row = self.db.execute(
                    "SELECT key, platform, action, reply_to, handle, thread, state, started, url "
                    "FROM sends WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from exc
        return Record(*row) if row else None

    def replied_in_thread(self, platform: str, handle: str, thread: str) -> Record | None:
        """A reply to this account in this thread, pending or sent (the one-per-thread rule)."""
        try:
            with self._lock:
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
            with self._lock:
                count, oldest = self.db.execute(
                    "SELECT count(*), min(started) FROM sends WHERE platform = ? AND action = ? "
                    "AND started >= ? AND alias = 0", (platform, action, utc(since))).fetchone()
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
              handle: str | None, thread: str | None, mentions: list[str], text: str | None,
              at: datetime, again: bool, person_id: str | None = None,
              in_reply_to: str | None = None,
              checks: Sequence[Callable[[sqlite3.Connection], None]] = ()) -> list[str]:
        """Mark a send pending under every key it is known by, and return the keys written.

        `checks` (the gate's guards: the ledger itself, a bot's one reply per thread, quotas)
        run inside the same immediate transaction as the insert, so two processes cannot both
        pass. With `again`, the earlier records stay (a sent one is never overwritten) and new
        rows are added under suffixed keys.
        """
        kept = scrub(text).text if text is not None else None
        token = self.token
        with self._transaction() as db:
            for check in checks:
                check(db)

            def taken(names: list[str]) -> bool:
                return any(db.execute("SELECT 1 FROM sends WHERE key = ?", (name,)).fetchone()
                           for name in names)

            if again and taken(keys):
                # Every retry its own rows: a sent record is never overwritten.
                tries = 1
                while taken([f"{key}#again-{tries}" for key in keys]):
                    tries += 1
                keys = [f"{key}#again-{tries}" for key in keys]
            db.executemany(
                "INSERT INTO sends (key, platform, action, reply_to, handle, thread, "
                "mentions, text, state, started, alias, person_id, in_reply_to, remembered, "
                "owner) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,0,?)",
                [(key, platform, action, reply_to, handle, thread, " ".join(mentions), kept,
                  PENDING, utc(at), int(n > 0), person_id, in_reply_to, token)
                 for n, key in enumerate(keys)])
        return keys

    def mark_sent(self, keys: list[str], *, post_id: str, url: str | None,
                  at: datetime, remembered: bool = False) -> None:
        """The post is out. Until `mark_remembered`, the row also says memory still lacks it."""
        with self._transaction() as db:
            db.executemany("UPDATE sends SET state = ?, finished = ?, post_id = ?, url = ?, "
                           "remembered = ?, text = CASE WHEN ? THEN NULL ELSE text END "
                           "WHERE key = ?",
                           [(SENT, utc(at), post_id, url, int(remembered), int(remembered), key)
                            for key in keys])

    def mark_remembered(self, keys: list[str]) -> None:
        with self._transaction() as db:
            # Memory has it now: the ledger's copy of the text is no longer needed.
            db.executemany("UPDATE sends SET remembered = 1, text = NULL WHERE key = ?",
                           [(key,) for key in keys])

    def disown(self, keys: list[str]) -> None:
        """Memory could not be written by this ledger: any later run may repair the send."""
        with self._transaction() as db:
            db.executemany("UPDATE sends SET owner = NULL WHERE key = ? AND owner = ?",
                           [(key, self.token) for key in keys])

    def unremembered(self) -> list[Unremembered]:
        """Sends that went out but whose memory entry is not written yet: a crash between,
        a failed write, or a sender still writing it (`take` tells them apart)."""
        try:
            with self._lock:
                rows = self.db.execute(
                    "SELECT key, platform, action, handle, person_id, thread, mentions, text, "
                    "started, url, in_reply_to FROM sends WHERE state = ? AND remembered = 0 "
                    "AND alias = 0 ORDER BY started", (SENT,)).fetchall()
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from exc
        return [Unremembered(*row) for row in rows]

    def take(self, key: str) -> Unremembered | None:
        """The send to repair, made this ledger's, or None: already remembered, or its holder
        (the sender, or another repairer) may still be alive. One immediate transaction, so
        of two repairers at once exactly one takes it."""
        token = self.token
        with self._transaction() as db:
            sql = ("SELECT owner, key, platform, action, handle, person_id, thread, mentions, "
                   "text, started, url, in_reply_to FROM sends WHERE key = ? AND state = ? "
                   "AND remembered = 0")
            row = db.execute(sql + self._ROW_LOCK, (key, SENT)).fetchone()
            if row is None:
                return None
            holder = row[0]
            if holder == token or (holder is not None and not self._gone(str(holder))):
                return None
            db.execute("UPDATE sends SET owner = ? WHERE key = ?", (token, key))
        return Unremembered(*row[1:])

    # What `take` adds to lock the row it reads: nothing here, where the immediate transaction
    # already holds the whole file.
    _ROW_LOCK = ""

    def _gone(self, holder: str) -> bool:
        """Whether the process that held a send has ended (its lock file is free)."""
        return owners.gone(self.root, holder)

    def release(self, keys: list[str]) -> None:
        """The send certainly did not happen: let a later run try again."""
        with self._transaction() as db:
            db.executemany("DELETE FROM sends WHERE key = ? AND state = ?",
                           [(key, PENDING) for key in keys])

    def forget(self, platform: str, handle: str) -> int:
        return self.forget_trace(Trace.of(platform, [handle]))

    def forget_trace(self, trace: Trace) -> int:
        """Blank the text and names of every send to, mentioning, naming or quoting them."""
        with self._transaction(alone=True) as db:
            rows = db.execute("SELECT key, handle, mentions, person_id, text, reply_to, "
                              "in_reply_to, thread, post_id, url FROM sends "
                              "WHERE platform = ?", (trace.platform,)).fetchall()
            keys = [(key,) for key, to, mentions, person_id, *texts in rows
                    if to in trace.handles or (person_id is not None and person_id in trace.ids)
                    or not trace.handles.isdisjoint(mentions.split())
                    or any(trace.names_them(t) for t in texts)]
            # The post replied to (a URL or a DID names them) goes too, and so does the sent
            # post's id and URL (a chat's message is known by the chat); the key is a hash.
            db.executemany("UPDATE sends SET text = NULL, handle = NULL, mentions = '', "
                           "thread = NULL, reply_to = NULL, person_id = NULL, "
                           "in_reply_to = NULL, post_id = NULL, url = NULL, remembered = 1 "
                           "WHERE key = ?", keys)
        try:
            with self._lock:
                if self._group is not None:
                    self._group.flush()  # VACUUM cannot run inside the group's transaction
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


def erase_person(root: Path, platform: str, handle: str, person_id: str | None = None) -> int:
    """`tactful forget`'s part in the ledger: the text and names of every send to or mentioning
    them go; the keys (hashes that name no one) stay, so forgetting never re-opens a reply that
    went out. Nothing to do in a home that never sent."""
    if not exists(root):
        return 0
    ledger = Ledger(root)
    try:
        return ledger.forget(platform, handle)
    finally:
        ledger.close()


def erase_trace(root: Path, trace: Trace) -> int:
    if not exists(root):
        return 0
    ledger = Ledger(root)
    try:
        return ledger.forget_trace(trace)
    finally:
        ledger.close()


def register_for_forget() -> None:
    """Register the ledger with memory's forget (the application does this when it forgets)."""
    from tactful.core.memory import forgetting

    forgetting.register_traced_store("ledger rows blanked", erase_trace)
