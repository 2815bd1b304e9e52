"""The inbox, `<home>/inbox.sqlite`: what arrived for the persona, and where fetching stopped.

The batch repliers fetch with an *inbound* cursor per platform, kept here and apart from the
ledger (which only knows what was sent): the two never move each other. A fetched page and
its cursor are stored in one transaction, so a crash never skips or repeats an item. Each item
then ends `answered` or `skipped` (with a reason); a dry run reads the inbox and changes
nothing in it, so it needs no credential.

The text of an item is someone's words: it is scrubbed on the way in (secrets become
`[redacted:KIND]`), whether it reads like instructions is judged on the raw text and kept as
a reason (`instructs`), and the text is dropped once the item is answered or skipped. It lives
only here (private, like the home), never in a log; `forget` blanks every item by, to, naming
or quoting the person. Deleted bytes do not linger: `secure_delete` is on, and a forget
vacuums. Older inboxes are migrated on open (`PRAGMA user_version`).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from tactful.core.errors import MemoryUnavailable
from tactful.core.memory.injection import injection_reason
from tactful.core.memory.scrub import scrub
from tactful.core.memory.sqlite import immediate, migrate
from tactful.core.memory.traces import Trace
from tactful.core.send.adapter import Author, Inbound, PostRef

FILE = "inbox.sqlite"
WAITING, ANSWERED, SKIPPED = "waiting", "answered", "skipped"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    platform     TEXT NOT NULL,
    post_id      TEXT NOT NULL,
    url          TEXT,
    handle       TEXT,
    author_id    TEXT,
    display_name TEXT,
    is_bot       INTEGER NOT NULL DEFAULT 0,
    thread       TEXT,
    text         TEXT,
    mentions     TEXT NOT NULL DEFAULT '',
    at           TEXT NOT NULL,
    state        TEXT NOT NULL DEFAULT 'waiting',
    reason       TEXT,
    attempts     INTEGER NOT NULL DEFAULT 0,  -- drafts that failed: retried, up to a limit
    remembered   INTEGER NOT NULL DEFAULT 0,  -- their words are in memory: never twice
    PRIMARY KEY (platform, post_id)
);
CREATE TABLE IF NOT EXISTS cursors (
    platform TEXT PRIMARY KEY,
    cursor   TEXT
);
"""
HANDLED = (ANSWERED, SKIPPED)


def _clean(raw: str | None) -> tuple[str | None, str | None]:
    """(the text to keep, why it reads like instructions): judged raw, kept scrubbed."""
    if raw is None:
        return None, None
    return scrub(raw).text, injection_reason(raw)


def _scrub_stored(db: sqlite3.Connection) -> None:
    """Inboxes from before scrubbing: handled items lose their text, waiting ones are scrubbed
    (and judged on what they held)."""
    db.execute("UPDATE items SET text = NULL WHERE state IN (?, ?)", HANDLED)
    rows = db.execute("SELECT platform, post_id, text FROM items WHERE text IS NOT NULL")
    for platform, post_id, raw in rows.fetchall():
        text, instructs = _clean(raw)
        db.execute("UPDATE items SET text = ?, instructs = ? WHERE platform = ? AND post_id = ?",
                   (text, instructs, platform, post_id))


# Ordered; PRAGMA user_version says how many ran. The first is the schema as it always was
# (IF NOT EXISTS: an inbox from before the numbering takes it as a no-op).
_MIGRATIONS: tuple[str | Callable[[sqlite3.Connection], None], ...] = (
    _SCHEMA,
    "ALTER TABLE items ADD COLUMN instructs TEXT",
    _scrub_stored,
)


@dataclass(frozen=True)
class Item:
    inbound: Inbound
    state: str
    reason: str | None


class Inbox:
    def __init__(self, home: Path) -> None:
        self.path = home / FILE
        try:
            self.db = sqlite3.connect(self.path, timeout=15, isolation_level=None)
            self.db.execute("PRAGMA secure_delete = ON")  # deleted text is zeroed, not left
            self._migrate()
            self.path.chmod(0o600)
        except sqlite3.Error as exc:
            raise MemoryUnavailable(f"the inbox {self.path} cannot be used: {exc}; move it "
                                    "aside (it is refilled by the next fetch) and retry") from exc

    def _migrate(self) -> None:
        migrate(self.db, _MIGRATIONS, self._transaction)

    def close(self) -> None:
        self.db.close()

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return immediate(self.db, lambda exc: MemoryUnavailable(
            f"the inbox {self.path} cannot be written: {exc}"))

    def cursor(self, platform: str) -> str | None:
        row = self.db.execute("SELECT cursor FROM cursors WHERE platform = ?",
                              (platform,)).fetchone()
        return row[0] if row else None

    def add(self, platform: str, items: Iterable[Inbound], cursor: str | None) -> int:
        """Store a fetched page and move the cursor, together. Known items are left alone."""
        added = 0
        with self._transaction() as db:
            for item in items:
                a = item.author
                if db.execute("SELECT 1 FROM items WHERE platform = ? AND post_id = ?",
                              (platform, _forgotten_id(item.post.id))).fetchone():
                    continue  # a post of someone forgotten, fetched again: stays forgotten
                text, instructs = _clean(item.text)
                cur = db.execute(
                    "INSERT OR IGNORE INTO items (platform, post_id, url, handle, author_id, "
                    "display_name, is_bot, thread, text, mentions, at, instructs) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (platform, item.post.id, item.post.url, a.handle, a.id, a.display_name,
                     int(a.is_bot), item.thread or a.thread, text,
                     " ".join(item.mentions), item.at.isoformat(), instructs))
                added += cur.rowcount
            if cursor is not None:
                db.execute("INSERT INTO cursors (platform, cursor) VALUES (?, ?) "
                           "ON CONFLICT (platform) DO UPDATE SET cursor = excluded.cursor",
                           (platform, cursor))
        return added

    def waiting(self, platform: str) -> list[Inbound]:
        rows = self.db.execute(
            "SELECT post_id, url, handle, author_id, display_name, is_bot, thread, text, "
            "mentions, at FROM items WHERE platform = ? AND state = ? AND handle IS NOT NULL "
            "ORDER BY at, post_id", (platform, WAITING)).fetchall()
        return [Inbound(post=PostRef(platform, post_id, url),
                        author=Author(handle=handle, id=author_id, display_name=display,
                                      is_bot=bool(is_bot), thread=thread, url=url),
                        text=text or "", at=datetime.fromisoformat(at), thread=thread,
                        mentions=tuple(mentions.split()))
                for (post_id, url, handle, author_id, display, is_bot, thread, text, mentions,
                     at) in rows]

    def settle(self, platform: str, post_id: str, state: str, reason: str | None = None) -> None:
        """An item is handled: its text is no longer needed, and goes."""
        with self._transaction() as db:
            db.execute("UPDATE items SET state = ?, reason = ?, text = CASE WHEN ? IN (?, ?) "
                       "THEN NULL ELSE text END WHERE platform = ? AND post_id = ?",
                       (state, reason, state, *HANDLED, platform, post_id))

    def instructs(self, platform: str, post_id: str) -> str | None:
        """Why the item's text, as it arrived, reads like instructions; None when it does
        not. Judged before scrubbing, so a payload the scrubber hid still counts."""
        row = self.db.execute("SELECT instructs FROM items WHERE platform = ? AND post_id = ?",
                              (platform, post_id)).fetchone()
        return row[0] if row else None

    def failed_draft(self, platform: str, post_id: str) -> int:
        """Count one failed draft of an item; returns how many it has had."""
        with self._transaction() as db:
            db.execute("UPDATE items SET attempts = attempts + 1 WHERE platform = ? AND "
                       "post_id = ?", (platform, post_id))
            row = db.execute("SELECT attempts FROM items WHERE platform = ? AND post_id = ?",
                             (platform, post_id)).fetchone()
        return int(row[0]) if row else 0

    def remembered(self, platform: str, post_id: str) -> bool:
        row = self.db.execute("SELECT remembered FROM items WHERE platform = ? AND post_id = ?",
                              (platform, post_id)).fetchone()
        return bool(row and row[0])

    def mark_remembered(self, platform: str, post_id: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE items SET remembered = 1 WHERE platform = ? AND post_id = ?",
                       (platform, post_id))

    def counts(self, platform: str) -> dict[str, int]:
        return dict(self.db.execute("SELECT state, count(*) FROM items WHERE platform = ? "
                                    "GROUP BY state", (platform,)).fetchall())

    def forget(self, platform: str, handle: str) -> int:
        return self.forget_trace(Trace.of(platform, [handle]))

    def their_words(self, platform: str, handles: frozenset[str]) -> list[str]:
        """What they wrote, as the inbox holds it (so a quote of it elsewhere is found)."""
        rows = self.db.execute("SELECT handle, text FROM items WHERE platform = ? AND "
                               "text IS NOT NULL", (platform,)).fetchall()
        return [text for by, text in rows if by in handles]

    def forget_trace(self, trace: Trace) -> int:
        """Blank their words and names from every item by, mentioning, naming or quoting
        them, and their posts' ids from the fetch cursor (a refetch of an old post of theirs
        is then dropped, see `add`)."""
        platform = trace.platform
        with self._transaction() as db:
            rows = db.execute("SELECT post_id, handle, author_id, display_name, mentions, text, "
                              "url FROM items WHERE platform = ?", (platform,)).fetchall()
            keys = [(platform, post_id) for post_id, by, author, display, mentions, text, url
                    in rows
                    if by in trace.handles or (author is not None and author in trace.ids)
                    or not trace.handles.isdisjoint(mentions.split())
                    or any(trace.names_them(t) for t in (text, display, url))]
            ids = set(trace.ids) | {str(author) for _, by, author, *_ in rows
                                    if by in trace.handles and author is not None}
            names = set(trace.handles) | ids
            # Other people's items in their thread carry their id in the thread root.
            db.executemany("UPDATE items SET thread = NULL WHERE platform = ? AND "
                           "instr(thread, ?) > 0", [(platform, n) for n in names])
            cursor = self.cursor(platform)
            if cursor is not None and any(n in cursor for n in names):
                kept = " ".join(t for t in cursor.split() if not any(n in t for n in names))
                db.execute("UPDATE cursors SET cursor = ? WHERE platform = ?", (kept, platform))
            # Their post's id and URL name them too (a DID, a handle in the path): the id is
            # kept only as a hash, so the item is still known and never fetched as new.
            db.executemany(
                "UPDATE items SET text = NULL, handle = NULL, author_id = NULL, "
                "display_name = NULL, mentions = '', url = NULL, thread = NULL, "
                "instructs = NULL, post_id = ?, state = 'skipped', reason = 'forgotten' "
                "WHERE platform = ? AND post_id = ?",
                [(_forgotten_id(post_id), platform, post_id) for platform, post_id in keys])
        try:
            self.db.execute("VACUUM")
        except sqlite3.Error as exc:
            raise MemoryUnavailable(f"the inbox {self.path} cannot be compacted: {exc}") from exc
        return len(keys)


def _forgotten_id(post_id: str) -> str:
    if post_id.startswith("forgotten:"):
        return post_id
    return "forgotten:" + hashlib.sha256(post_id.encode()).hexdigest()


def erase_person(root: Path, platform: str, handle: str, person_id: str | None = None) -> int:
    """`tactful forget`'s part in the inbox: their words and names in every item by or
    mentioning them. Nothing to do in a home that never fetched."""
    if not (root / FILE).exists():
        return 0
    inbox = Inbox(root)
    try:
        return inbox.forget(platform, handle)
    finally:
        inbox.close()


def erase_trace(root: Path, trace: Trace) -> int:
    if not (root / FILE).exists():
        return 0
    inbox = Inbox(root)
    try:
        return inbox.forget_trace(trace)
    finally:
        inbox.close()


def words_of(root: Path, platform: str, handles: frozenset[str]) -> list[str]:
    if not (root / FILE).exists():
        return []
    inbox = Inbox(root)
    try:
        return inbox.their_words(platform, handles)
    finally:
        inbox.close()


def register_for_forget() -> None:
    """Register the inbox with memory's forget (the application does this when it forgets)."""
    from tactful.core.memory import forgetting

    forgetting.register_traced_store("inbox items blanked", erase_trace, words_of)
