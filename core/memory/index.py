"""The search index: SQLite FTS5 over memory, disposable, rebuilt from the files
(docs/search-and-desk.md).

Files are the truth. The index is updated by the writer after every person write, and checked
against the files before it is used: a file whose size, mtime or inode differ from what was
indexed is hashed, and re-read only when its content really changed. A missing, corrupt or
outdated index is rebuilt into a new file and swapped in; it never writes to a person file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path

from tactful.core.errors import MemoryUnavailable, PersonFileCorrupt
from tactful.core.memory import personfile
from tactful.core.memory.atomic import (
    LockBusy,
    NotRegularFile,
    file_kind,
    lock_timeout,
    locked,
    read_regular_stat,
)
from tactful.core.memory.home import Home, unwritable
from tactful.core.memory.person import Person
from tactful.core.memory.settings import MemorySettings

FILE = "index.sqlite"
SCHEMA_VERSION = "2"
Progress = Callable[[str, int, int], None]  # (phase, done, total)
WRITER_WAIT = 0.2  # seconds a writer waits for the index before leaving its change to readers

# Ordered, small steps; a different version means "rebuild", never "migrate": the index is
# disposable, the files are the truth.
_SCHEMA = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID",
    "CREATE TABLE files(platform TEXT, handle TEXT, size INTEGER, mtime_ns INTEGER,"
    " inode INTEGER, sha TEXT, PRIMARY KEY(platform, handle)) WITHOUT ROWID",
    "CREATE TABLE people(pid INTEGER PRIMARY KEY, platform TEXT, handle TEXT,"
    " display_name TEXT, kind TEXT, relationship TEXT, dne INTEGER, flags TEXT,"
    " last_seen INTEGER, spoke_last TEXT, spoke_last_at INTEGER, sid TEXT,"
    " UNIQUE(platform, handle))",
    "CREATE TABLE aka(pid INTEGER, ref TEXT)",
    "CREATE INDEX aka_pid ON aka(pid)",
    "CREATE INDEX aka_ref ON aka(ref)",
    "CREATE TABLE open_items(pid INTEGER, at INTEGER, text TEXT)",
    "CREATE INDEX open_items_pid ON open_items(pid)",
    "CREATE TABLE docs(id INTEGER PRIMARY KEY, pid INTEGER, kind TEXT, at INTEGER,"
    " important INTEGER)",
    "CREATE INDEX docs_pid ON docs(pid)",
    "CREATE VIRTUAL TABLE docs_fts USING fts5(body, topics, who,"
    " tokenize = 'unicode61 remove_diacritics 2')",
)


def path_of(home: Home) -> Path:
    return home.root / FILE


def _epoch(value: datetime | None) -> int | None:
    return int(value.timestamp()) if value is not None else None


@dataclass(frozen=True)
class Doc:
    kind: str
    at: int | None
    important: bool
    body: str
    topics: str
    who: str


def docs_of(person: Person) -> list[Doc]:
    """What of a person is searchable: entries, compacted lines, pins, and their name."""
    who = " ".join(filter(None, [person.handle, f"@{person.handle}", person.display_name]))
    docs = [Doc("person", _epoch(person.last_seen), bool(person.flags), "", "", who)]
    for entry in person.entries:
        opens = [i.text for i in entry.open]
        body = " ".join(filter(None, [entry.they, entry.me, *opens, entry.withheld]))
        important = bool(entry.me) or entry.withheld is not None or any(
            i.resolved_at is None for i in entry.open)
        docs.append(Doc("entry", _epoch(entry.at), important, body, " ".join(entry.topics), who))
    for older in person.compacted:
        body = " ".join([older.summary, *(i.text for i in older.open)])
        important = any(i.resolved_at is None for i in older.open)
        docs.append(Doc("compact", _epoch(older.at), important, body, "", who))
    for pin in person.pins:
        at = _epoch(datetime.fromisoformat(pin.on)) if len(pin.on) == 10 else None
        docs.append(Doc("pin", at, False, pin.text, "", who))
    return docs


def _summary(person: Person) -> tuple[object, ...]:
    latest = person.entries[-1] if person.entries else None
    return (person.platform, person.handle, person.display_name, person.kind,
            person.relationship, int(person.do_not_engage),
            ",".join(f.name for f in person.flags), _epoch(person.last_seen),
            latest.direction if latest else None, _epoch(latest.at) if latest else None,
            person.id)


class _Batch:
    """Rows gathered for many people, written with one executemany per table."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.next_pid = (db.execute("SELECT max(pid) FROM people").fetchone()[0] or 0) + 1
        self.next_doc = (db.execute("SELECT max(id) FROM docs").fetchone()[0] or 0) + 1
        self.people: list[tuple[object, ...]] = []
        self.open_items: list[tuple[object, ...]] = []
        self.aka: list[tuple[object, ...]] = []
        self.docs: list[tuple[object, ...]] = []
        self.texts: list[tuple[object, ...]] = []
        self.files: list[tuple[object, ...]] = []

    def add(self, person: Person, found: os.stat_result, sha: str) -> None:
        pid = self.next_pid
        self.next_pid += 1
        self.people.append((pid, *_summary(person)))
        self.open_items += [(pid, _epoch(at), item.text) for at, item in person.open_items()]
        self.aka += [(pid, link.ref) for link in person.aka]
        for doc in docs_of(person):
            self.docs.append((self.next_doc, pid, doc.kind, doc.at, int(doc.important)))
            self.texts.append((self.next_doc, doc.body, doc.topics, doc.who))
            self.next_doc += 1
        self.files.append((person.platform, person.handle, found.st_size, found.st_mtime_ns,
                           found.st_ino, sha))

    def flush(self) -> None:
        db = self.db
        db.executemany("INSERT INTO people(pid, platform, handle, display_name, kind,"
                       " relationship, dne, flags, last_seen, spoke_last, spoke_last_at, sid)"
                       " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", self.people)
        db.executemany("INSERT INTO aka(pid, ref) VALUES (?,?)", self.aka)
        db.executemany("INSERT INTO open_items(pid, at, text) VALUES (?,?,?)", self.open_items)
        db.executemany("INSERT INTO docs(id, pid, kind, at, important) VALUES (?,?,?,?,?)",
                       self.docs)
        db.executemany("INSERT INTO docs_fts(rowid, body, topics, who) VALUES (?,?,?,?)",
                       self.texts)
        db.executemany("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?)", self.files)
        for rows in (self.people, self.open_items, self.aka, self.docs, self.texts, self.files):
            rows.clear()


def _put(db: sqlite3.Connection, person: Person, found: os.stat_result, sha: str) -> None:
    _drop(db, person.platform, person.handle)
    batch = _Batch(db)
    batch.add(person, found, sha)
    batch.flush()


def _drop(db: sqlite3.Connection, platform: str, handle: str) -> None:
    row = db.execute("SELECT pid FROM people WHERE platform = ? AND handle = ?",
                     (platform, handle)).fetchone()
    db.execute("DELETE FROM files WHERE platform = ? AND handle = ?", (platform, handle))
    if row is None:
        return
    pid = row[0]
    db.execute("DELETE FROM docs_fts WHERE rowid IN (SELECT id FROM docs WHERE pid = ?)", (pid,))
    db.execute("DELETE FROM docs WHERE pid = ?", (pid,))
    db.execute("DELETE FROM open_items WHERE pid = ?", (pid,))
    db.execute("DELETE FROM aka WHERE pid = ?", (pid,))
    db.execute("DELETE FROM people WHERE pid = ?", (pid,))


def _connect(path: Path) -> sqlite3.Connection:
    # Bounded like the flocks: a stuck process holding the database is waited on, not forever.
    wait = lock_timeout()
    db = sqlite3.connect(path, timeout=wait, isolation_level=None)
    db.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
    return db


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _person_files(home: Home,
                  skipped: list[str]) -> Iterator[tuple[str, str, str, os.stat_result]]:
    """Every person file with its stat (symlinks followed). A `.md` that is not a regular
    file (a FIFO, a device, a folder, a dangling link) is never opened: it goes to `skipped`
    with its path, so a scan warns about it instead of hanging on it or passing it over."""
    people = home.root / "people"
    try:
        platforms = sorted(os.scandir(people), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:  # an index of no one would be a lie: refuse instead
        raise MemoryUnavailable(f"cannot list {people}: {exc.strerror or exc}; fix its "
                                "permissions") from exc
    for folder in platforms:
        if folder.name.startswith(".") or not folder.is_dir():
            continue
        try:
            entries = list(os.scandir(folder.path))
        except OSError as exc:
            skipped.append(f"{folder.path}: cannot list the folder: {exc.strerror or exc}")
            continue
        for entry in entries:
            if not entry.name.endswith(".md") or entry.name.startswith("."):
                continue
            # A plain string: a Path per file costs more than the stat (the catch-up of every
            # search and desk makes one per person file).
            path = entry.path
            try:
                found = entry.stat()  # follows a symlink, as reading would
            except OSError as exc:
                skipped.append(f"{path}: {exc.strerror or exc}")
                continue
            if not stat.S_ISREG(found.st_mode):
                skipped.append(f"{path} is {file_kind(found.st_mode)}, not a regular file; "
                               "not read (move it away)")
                continue
            yield folder.name, entry.name[:-3], path, found


# --------------------------------------------------------------------------- building

def _lock(home: Home) -> Path:
    # One writer of the index at a time, and never a swap in the middle of someone's
    # transaction: a rollback journal left for the old file must not meet the new one.
    return home.root / ".locks" / "index.lock"


def rebuild(home: Home, settings: MemorySettings, progress: Progress | None = None) -> list[str]:
    """Build a new index from every person file and swap it in; returns the files skipped."""
    with locked(_lock(home), what="the index"):
        return _rebuild(home, settings, progress)


def _rebuild(home: Home, settings: MemorySettings, progress: Progress | None) -> list[str]:
    target = path_of(home)
    fresh = target.with_name(f".{FILE}.new-{os.getpid()}")
    # Under the lock, every half-built index is a crashed rebuild's (of any process): it holds
    # people's words, some maybe forgotten since, so it goes (docs/memory.md, "Forgetting").
    for stale in target.parent.glob(f".{FILE}.new-*"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    skipped: list[str] = []
    files = list(_person_files(home, skipped))
    db = _connect(fresh)
    try:
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        for statement in _SCHEMA:
            db.execute(statement)
        db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        db.execute("BEGIN")
        batch = _Batch(db)
        for done, (platform, handle, path, _) in enumerate(files, 1):
            person, found, sha = _read(path, settings.tz, platform, handle, skipped)
            if person is not None and found is not None:
                batch.add(person, found, sha)
            if done % 500 == 0 or done == len(files):
                batch.flush()
                if progress is not None:
                    progress("files", done, len(files))
        batch.flush()
        db.execute("COMMIT")
    except BaseException:
        db.close()
        with contextlib.suppress(FileNotFoundError):
            fresh.unlink()
        raise
    db.close()
    # Under the lock no transaction is open, so a journal here is a crashed writer's, for the
    # old file: it must go before the new file takes the name, or SQLite would replay it.
    for stale in (target.with_name(FILE + "-journal"), target.with_name(FILE + "-wal")):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    os.replace(fresh, target)
    return skipped


def _read(path: str, tz: tzinfo, platform: str, handle: str,
          skipped: list[str]) -> tuple[Person | None, os.stat_result | None, str]:
    try:
        data, found = read_regular_stat(path)
        person = personfile.loads(data.decode("utf-8"), tz, path=path, platform=platform,
                                  handle=handle)
    except (PersonFileCorrupt, NotRegularFile) as exc:
        skipped.append(str(exc))
        return None, None, ""
    except (OSError, UnicodeDecodeError) as exc:
        skipped.append(f"{path}: {exc}")
        return None, None, ""
    return person, found, _sha(data)


def _usable(target: Path) -> sqlite3.Connection | None:
    if not target.exists():
        return None
    db = _connect(target)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is not None and row[0] == SCHEMA_VERSION:
            db.execute("SELECT count(*) FROM docs_fts WHERE docs_fts MATCH 'x'").fetchone()
            return db
    except sqlite3.DatabaseError:
        pass
    db.close()
    return None


def open_fresh(home: Home, settings: MemorySettings,
               progress: Progress | None = None) -> tuple[sqlite3.Connection, list[str]]:
    """The index, brought up to date with the files first. Returns it and what was skipped."""
    home.require_readable()
    target = path_of(home)
    try:
        with locked(_lock(home), what="the index"):
            db = _usable(target)
            if db is not None:
                try:
                    return db, _catch_up(db, home, settings)
                except sqlite3.DatabaseError:
                    db.close()  # corrupt or unreadable: never trusted, rebuilt below
            skipped = _rebuild(home, settings, progress)
            return _connect(target), skipped
    except OSError as exc:
        raise unwritable(Path(exc.filename) if exc.filename else target, exc) from exc
    except sqlite3.DatabaseError as exc:
        raise MemoryUnavailable(f"cannot build the index {target}: {exc}; "
                                "check the home's permissions and free space") from exc


def _catch_up(db: sqlite3.Connection, home: Home, settings: MemorySettings) -> list[str]:
    """Re-read only files that changed behind the index; drop those that are gone."""
    known = {(p, h): (size, mtime, inode, sha) for p, h, size, mtime, inode, sha
             in db.execute("SELECT platform, handle, size, mtime_ns, inode, sha FROM files")}
    skipped: list[str] = []
    seen = set()
    changes: list[tuple[str, str, Person | None, os.stat_result | None, str]] = []
    for platform, handle, path, found in _person_files(home, skipped):
        seen.add((platform, handle))
        old = known.get((platform, handle))
        if old is not None and old[:3] == (found.st_size, found.st_mtime_ns, found.st_ino):
            continue
        if old is not None:
            try:
                data, found = read_regular_stat(path)
            except (OSError, NotRegularFile):
                continue
            if _sha(data) == old[3]:
                changes.append((platform, handle, None, found, old[3]))
                continue
        person, fresh_stat, sha = _read(path, settings.tz, platform, handle, skipped)
        changes.append((platform, handle, person, fresh_stat, sha))
    gone = [key for key in known if key not in seen]
    if not changes and not gone:
        return skipped
    db.execute("BEGIN IMMEDIATE")
    try:
        for platform, handle, person, file_stat, sha in changes:
            if person is not None and file_stat is not None:
                _put(db, person, file_stat, sha)
            elif file_stat is not None and sha:
                db.execute("UPDATE files SET size = ?, mtime_ns = ?, inode = ?"
                           " WHERE platform = ? AND handle = ?",
                           (file_stat.st_size, file_stat.st_mtime_ns, file_stat.st_ino,
                            platform, handle))
            else:
                _drop(db, platform, handle)
        for platform, handle in gone:
            _drop(db, platform, handle)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return skipped


def update_person(home: Home, person: Person, text: str, written: os.stat_result) -> None:
    """Called after every person write. No index yet: nothing to do, it is built when needed."""
    target = path_of(home)
    if not target.exists():
        return
    try:
        # A short wait only: a writer never queues behind a reader's catch-up (the desk, a
        # search); what it could not put in is caught up by that reader or the next.
        with locked(_lock(home), what="the index", timeout=WRITER_WAIT):
            db = _connect(target)
            try:
                db.execute("BEGIN IMMEDIATE")
                _put(db, person, written, _sha(text.encode("utf-8")))
                db.execute("COMMIT")
            finally:
                db.close()
    except LockBusy:
        # Another process holds the index: this change is caught up by the next reader (the
        # file's size, mtime and inode no longer match what was indexed), never lost.
        pass
    except (sqlite3.DatabaseError, OSError):
        # A broken index is dropped, never trusted: the next reader rebuilds it from the files.
        with contextlib.suppress(OSError):
            target.unlink()


# --------------------------------------------------------------------------- reading

def blocked_pids(db: sqlite3.Connection) -> set[int]:
    """Everyone `check` would stop: do-not-engage themselves, or sharing a stable id with, or
    linked (either way) to, someone who is. The desk must never list a person check refuses.
    Starts from the do-not-engage rows (few), so it costs the same at 10,000 people."""
    dne = db.execute("SELECT pid, platform, handle, sid FROM people WHERE dne = 1").fetchall()
    if not dne:
        return set()
    blocked = {pid for pid, _, _, _ in dne}
    dne_refs = sorted({f"{platform}/{handle}" for _, platform, handle, _ in dne})
    dne_ids = sorted({(platform, sid) for _, platform, _, sid in dne if sid})
    for platform, sid in dne_ids:
        blocked.update(pid for (pid,) in db.execute(
            "SELECT pid FROM people WHERE platform = ? AND sid = ?", (platform, sid)))
    refs = list(dne_refs)
    pids = sorted(pid for pid, _, _, _ in dne)
    for chunk in range(0, len(refs), 500):  # they link to someone do-not-engage
        part = refs[chunk:chunk + 500]
        blocked.update(pid for (pid,) in db.execute(
            f"SELECT pid FROM aka WHERE ref IN ({','.join('?' * len(part))})",  # noqa: S608
            part))
    linked: set[str] = set()
    for chunk in range(0, len(pids), 500):  # someone do-not-engage links to them
        part = pids[chunk:chunk + 500]
        linked.update(ref for (ref,) in db.execute(
            f"SELECT ref FROM aka WHERE pid IN ({','.join('?' * len(part))})",  # noqa: S608
            part))
    for ref in sorted(linked):
        platform, _, handle = ref.partition("/")
        blocked.update(pid for (pid,) in db.execute(
            "SELECT pid FROM people WHERE platform = ? AND handle = ?", (platform, handle)))
    return blocked


def linking_to(db: sqlite3.Connection, ref: str) -> list[tuple[str, str]]:
    """Who holds an `aka` link to this account: (platform, handle) of each."""
    return [(platform, handle) for platform, handle in db.execute(
        "SELECT p.platform, p.handle FROM aka a JOIN people p ON p.pid = a.pid WHERE a.ref = ?",
        (ref,))]

def rows(db: sqlite3.Connection, sql: str, args: Iterable[object] = ()) -> list[tuple[object, ...]]:
    return list(db.execute(sql, tuple(args)))
