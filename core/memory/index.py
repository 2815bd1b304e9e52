"""The search index: SQLite FTS5 over memory, disposable, rebuilt from the files
(docs/search-and-desk.md).

Files are the truth. The index is updated by the writer after every person write, and brought
up to date before it is used without stat-ing every file: the change journal (changes.py) names
the files tactful wrote, and a platform folder whose mtime moved is listed (names and inodes,
no stat) to find files made, removed or saved over by hand. Only those files are stat-ed; one
whose size, mtime or inode differ from what was indexed is hashed, and re-read only when its
content really changed. Every SWEEP_EVERY seconds, and whenever the journal cannot be trusted,
every file is stat-ed instead (that is how an edit made in place by hand is seen). A missing,
corrupt or outdated index is rebuilt into a new file and swapped in; it never writes to a
person file.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from tactful.core.errors import MemoryUnavailable, PersonFileCorrupt
from tactful.core.memory import changes
from tactful.core.memory.atomic import (
    NotRegularFile,
    file_kind,
    lock_timeout,
    locked,
    read_regular_stat,
)
from tactful.core.memory.home import Home, unwritable
from tactful.core.memory.settings import MemorySettings

if TYPE_CHECKING:
    from tactful.core.memory.person import OpenItem, Person
    from tactful.core.memory.store import Written

# What the writers of a batch wrote, by (platform, handle): see `take_written`.
Known: TypeAlias = "dict[tuple[str, str], Written]"

FILE = "index.sqlite"
SCHEMA_VERSION = "5"
Progress = Callable[[str, int, int], None]  # (phase, done, total)
# How often every person file is stat-ed anyway: the bound on how long an edit made in place by
# hand (no rename, so no folder mtime moves) can go unseen by search and the desk.
SWEEP_EVERY = 60.0
# A folder mtime this close to now is not trusted yet: mtimes are coarse, and a file made in the
# same tick right after the folder was looked at would leave it unchanged.
SETTLE_NS = 2_000_000_000

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
    "CREATE INDEX open_items_at ON open_items(at)",  # the desk reads the newest first
    "CREATE TABLE docs(id INTEGER PRIMARY KEY, pid INTEGER, kind TEXT, at INTEGER,"
    " important INTEGER)",
    "CREATE INDEX docs_pid ON docs(pid)",
    # Person files that could not be indexed (they do not parse, or are not regular files):
    # looked at again on every use, so each search and desk still warns about them.
    "CREATE TABLE unread(platform TEXT, handle TEXT, PRIMARY KEY(platform, handle))"
    " WITHOUT ROWID",
    "CREATE VIRTUAL TABLE docs_fts USING fts5(body, topics, who,"
    " tokenize = 'unicode61 remove_diacritics 2')",
)


def path_of(home: Home) -> Path:
    return home.root / FILE


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SECOND = timedelta(seconds=1)


def _epoch(value: datetime | None) -> int | None:
    return int(value.timestamp()) if value is not None else None


# What a document is: (kind, at, important, body, topics, who). A bare tuple: a reindex makes
# one per entry, and even a NamedTuple is dearer to make.
Doc = tuple[str, int | None, bool, str, str, str]


def docs_of(person: Person) -> list[Doc]:
    """What of a person is searchable: entries, compacted lines, pins, and their name (the
    rows `_rows_of` gives the index, read back as documents)."""
    docs: list[tuple[object, ...]] = []
    texts: list[tuple[object, ...]] = []
    _rows_of(person, 0, 0, docs, texts, [])
    return [(kind, at, bool(important), body, topics, who)  # type: ignore[misc]
            for (_, _, kind, at, important), (_, body, topics, who) in zip(docs, texts,
                                                                         strict=True)]


def _rows_of(person: Person, pid: int, seq: int, docs: list[tuple[object, ...]],
             texts: list[tuple[object, ...]], open_items: list[tuple[object, ...]]) -> int:
    """Append a person's rows of the docs table, of the text index and of open_items; returns
    the running number after theirs. One pass over the entries for all three: a reindex does
    this for every entry of every person, and a pass apiece cost about 5% of its time."""
    who = " ".join(filter(None, [person.handle, f"@{person.handle}", person.display_name]))
    at = _epoch(person.last_seen)
    docs.append((doc_key(at, seq), pid, "person", at, int(bool(person.flags))))
    texts.append((docs[-1][0], "", "", who))
    seq += 1
    owed: list[tuple[object, ...]] = []  # the entries' open items, after the compacted lines'
    epoch, second, mask = _EPOCH, _SECOND, _SEQ_MASK
    for entry in person.entries:
        me, withheld = entry.me, entry.withheld
        if entry.open:
            opens = [i.text for i in entry.open]
            body = " ".join(filter(None, [entry.they, me, *opens, withheld]))
            important = bool(me) or withheld is not None or any(
                i.resolved_at is None for i in entry.open)
            owed += [(pid, _epoch(entry.at), i.text) for i in entry.open
                     if i.resolved_at is None]
        else:  # most entries: the same text and weight, without the lists
            body = entry.they or ""
            if me:
                body = f"{body} {me}" if body else me
            if withheld:
                body = f"{body} {withheld}" if body else withheld
            important = bool(me) or withheld is not None
        # Entry times are aware (personfile): whole seconds since the epoch, as timestamp()
        # gives them, without the float.
        at = (entry.at - epoch) // second
        # doc_key, without the call for the common case: a time inside its range
        doc_id = (at << SEQ_BITS) | (seq & mask) if 0 <= at < _TIMES else doc_key(at, seq)
        seq += 1
        docs.append((doc_id, pid, "entry", at, int(important)))
        texts.append((doc_id, body, " ".join(entry.topics), who))
    for older in person.compacted:
        body = " ".join([older.summary, *(i.text for i in older.open)])
        important = any(i.resolved_at is None for i in older.open)
        at = _epoch(older.at)
        open_items += [(pid, at, i.text) for i in older.open if i.resolved_at is None]
        doc_id = doc_key(at, seq)
        seq += 1
        docs.append((doc_id, pid, "compact", at, int(important)))
        texts.append((doc_id, body, "", who))
    open_items += owed
    for pin in person.pins:
        at = _pin_epoch(pin.on)
        doc_id = doc_key(at, seq)
        seq += 1
        docs.append((doc_id, pid, "pin", at, 0))
        texts.append((doc_id, pin.text, "", who))
    return seq


def _pin_epoch(on: str) -> int | None:
    """A pin's day as a time, or None: a day written by hand may be one no clock holds
    (0001-01-01), and that must not keep the pin, or the whole index, from being made."""
    if len(on) != 10:
        return None
    try:
        return int(datetime.fromisoformat(on).timestamp())
    except (ValueError, OverflowError, OSError):
        return None


def _summary(person: Person) -> tuple[object, ...]:
    latest = person.entries[-1] if person.entries else None
    return (person.platform, person.handle, person.display_name, person.kind,
            person.relationship, int(person.do_not_engage),
            ",".join(f.name for f in person.flags), _epoch(person.last_seen),
            latest.direction if latest else None, _epoch(latest.at) if latest else None,
            person.id)


SEQ_BITS = 30
_SEQ_MASK = (1 << SEQ_BITS) - 1
_TIMES = 1 << 33  # document times are clamped below this (doc_key)
_FIRST = itemgetter(0)  # a row's document id


def doc_key(at: int | None, seq: int) -> int:
    """A document's id (its FTS5 rowid): its time in the high bits, a running number below.
    So FTS5's cheapest order, by rowid, is newest first: search takes its candidates for a very
    common word from there without ranking every match (search.py). Times are 1970 to 2200
    (personfile), so the id fits 63 bits; the running number wraps after 2^30 documents, and a
    clash then fails the insert, which drops the index to be rebuilt (renumbered from 0). A time
    outside that range (a pin dated by hand) is clamped to it."""
    when = min(max(at or 0, 0), _TIMES - 1)
    return (when << SEQ_BITS) | (seq & _SEQ_MASK)


# The text rows a rebuild holds before writing them to FTS5 (about 300 bytes each): below it,
# the whole index's text goes in at once, in id order.
TEXT_ROWS_HELD = 100_000
# FTS5 writes a segment out whenever its pending terms pass this many bytes (1 MiB by default):
# many small segments, to write and then merge. A rebuild's transaction writes fewer, larger.
FTS_HASH_BYTES = 16 << 20


class _Batch:
    """Rows gathered for many people, written with one executemany per table."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.next_pid = (db.execute("SELECT max(pid) FROM people").fetchone()[0] or 0) + 1
        row = db.execute("SELECT value FROM meta WHERE key = 'seq'").fetchone()
        self.seq = int(row[0]) if row is not None else 0
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
        self.aka += [(pid, link.ref) for link in person.aka]
        self.seq = _rows_of(person, pid, self.seq, self.docs, self.texts, self.open_items)
        self.files.append((person.platform, person.handle, found.st_size, found.st_mtime_ns,
                           found.st_ino, sha))

    def flush(self, *, last: bool = True) -> None:
        """Write what was gathered. With `last` False (a rebuild on its way), the documents wait
        for the next flush unless there are many: ids are times, not the order people are read
        in, and FTS5 writes out what it holds in memory whenever an id comes lower than the one
        before (a b-tree too pays for an insert out of order), so one sorted insert of all of
        them is the cheapest."""
        db = self.db
        db.executemany("INSERT INTO people(pid, platform, handle, display_name, kind,"
                       " relationship, dne, flags, last_seen, spoke_last, spoke_last_at, sid)"
                       " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", self.people)
        db.executemany("INSERT INTO aka(pid, ref) VALUES (?,?)", self.aka)
        db.executemany("INSERT INTO open_items(pid, at, text) VALUES (?,?,?)", self.open_items)
        # In id order: FTS5 writes out what it holds in memory whenever an id comes lower than
        # the one before, and ids are times, not the order people are read in.
        if last or len(self.texts) >= TEXT_ROWS_HELD:
            self.docs.sort(key=_FIRST)
            self.texts.sort(key=_FIRST)
            db.executemany("INSERT INTO docs(id, pid, kind, at, important) VALUES (?,?,?,?,?)",
                           self.docs)
            db.executemany("INSERT INTO docs_fts(rowid, body, topics, who) VALUES (?,?,?,?)",
                           self.texts)
            self.docs.clear()
            self.texts.clear()
        db.executemany("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?)", self.files)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('seq', ?)", (str(self.seq),))
        for rows in (self.people, self.open_items, self.aka, self.files):
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


# Files hashed by this process: the first few with Python's own SHA-256, the rest with
# OpenSSL's (hashlib). Loading OpenSSL costs a search that catches up one file written just
# before it far more than hashing that file (some 5 ms of CPU, a sixth of a bare interpreter
# start); hashing thousands (a rebuild) is several times quicker with it. The same digest
# either way.
_SMALL_SHA_FILES = 16
_hashed = 0


def _sha(data: bytes) -> str:
    global _hashed
    _hashed += 1
    if _hashed <= _SMALL_SHA_FILES:
        small = _builtin_sha256()
        if small is not None:
            return str(small(data).hexdigest())
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _builtin_sha256() -> Callable[[bytes], Any] | None:
    """Python's own SHA-256, without OpenSSL (named _sha256 in 3.11, _sha2 after); None
    where the interpreter was built without it."""
    for name in ("_sha2", "_sha256"):
        with contextlib.suppress(ImportError):
            module = __import__(name)
            return module.sha256  # type: ignore[no-any-return]
    return None


@dataclass
class _Look:
    """What one look at the person files found besides the files: problems to warn about (and
    the files they are of, looked at again next time), and each platform folder's mtime."""

    skipped: list[str] = field(default_factory=list)
    unread: set[tuple[str, str]] = field(default_factory=set)
    folders: dict[str, int] = field(default_factory=dict)

    def problem(self, platform: str, handle: str, message: str) -> None:
        self.skipped.append(message)
        self.unread.add((platform, handle))

    def folder(self, platform: str, found: os.stat_result) -> None:
        # Not trusted while it may still move within the same tick: -1 makes the next reader
        # list the folder again.
        settled = time.time_ns() - found.st_mtime_ns > SETTLE_NS
        self.folders[platform] = found.st_mtime_ns if settled else -1


def _platforms(home: Home) -> list[os.DirEntry[str]]:
    people = home.root / "people"
    try:
        found = sorted(os.scandir(people), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:  # an index of no one would be a lie: refuse instead
        raise MemoryUnavailable(f"cannot list {people}: {exc.strerror or exc}; fix its "
                                "permissions") from exc
    return [folder for folder in found if not folder.name.startswith(".") and folder.is_dir()]


def _folder_files(folder: os.DirEntry[str],
                  look: _Look) -> Iterator[tuple[str, str, os.stat_result]]:
    """Every person file of one platform folder with its stat (symlinks followed). A `.md` that
    is not a regular file (a FIFO, a device, a folder, a dangling link) is never opened: it is
    a problem named with its path, so a scan warns about it instead of hanging on it or passing
    it over. The folder's mtime is taken first: a change after it moves it again."""
    try:
        look.folder(folder.name, folder.stat())
        entries = list(os.scandir(folder.path))
    except OSError as exc:
        look.skipped.append(f"{folder.path}: cannot list the folder: {exc.strerror or exc}")
        look.folders[folder.name] = -1
        return
    for entry in entries:
        name = entry.name
        if not name.endswith(".md") or name.startswith("."):
            continue
        # A plain string: a Path per file costs more than the stat.
        path = entry.path
        try:
            found = entry.stat()  # follows a symlink, as reading would
        except OSError as exc:
            look.problem(folder.name, name[:-3], f"{path}: {exc.strerror or exc}")
            continue
        if not stat.S_ISREG(found.st_mode):
            look.problem(folder.name, name[:-3], f"{path} is {file_kind(found.st_mode)}, not a "
                         "regular file; not read (move it away)")
            continue
        yield name[:-3], path, found


# --------------------------------------------------------------------------- building

def _lock(home: Home) -> Path:
    # One writer of the index at a time, and never a swap in the middle of someone's
    # transaction: a rollback journal left for the old file must not meet the new one.
    return home.root / ".locks" / "index.lock"


def take_written(home: Home, settings: MemorySettings, written: Known) -> list[str]:
    """Bring the index up to date after a batch of writes (sync-log), taking each person as
    the writer holds it instead of parsing the file again: what a reader would do next
    (`open_fresh`: catch up, or rebuild a missing index), in one transaction, and the same
    index it would make. A file not exactly as written (changed since, by hand or by another
    writer) is read as always. Returns the files skipped."""
    db, skipped = open_fresh(home, settings, held=written)
    db.close()
    return skipped


def rebuild(home: Home, settings: MemorySettings, progress: Progress | None = None, *,
            ids: bool = False) -> list[str]:
    """Build a new index from every person file and swap it in; returns the files skipped.
    With `ids`, the id map is rebuilt from the same reading of the files (`tactful reindex`):
    each header is parsed once for both."""
    with locked(_lock(home), what="the index"):
        return _rebuild(home, settings, progress, ids=ids)


def _rebuild(home: Home, settings: MemorySettings, progress: Progress | None, *,
             ids: bool = False, held: Known | None = None) -> list[str]:
    target = path_of(home)
    fresh = target.with_name(f".{FILE}.new-{os.getpid()}")
    # Under the lock, every half-built index is a crashed rebuild's (of any process): it holds
    # people's words, some maybe forgotten since, so it goes (docs/memory.md, "Forgetting").
    for stale in target.parent.glob(f".{FILE}.new-*"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    # Lines appended from here on may be of writes this reading misses: they are kept.
    since = changes.size(home)
    look = _Look()
    folders = _platforms(home)
    db = _connect(fresh)
    try:
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        # The tables first and their indexes after the rows: one sort per index instead of a
        # b-tree insert per row in no useful order (the same schema in the end).
        indexes = [sql for sql in _SCHEMA if sql.startswith("CREATE INDEX")]
        for statement in _SCHEMA:
            if statement not in indexes:
                db.execute(statement)
        db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        with contextlib.suppress(sqlite3.OperationalError):  # an SQLite without it: slower
            db.execute("INSERT INTO docs_fts(docs_fts, rank) VALUES ('hashsize', ?)",
                       (FTS_HASH_BYTES,))
        db.execute("BEGIN")
        batch = _Batch(db)
        done = 0
        for folder in folders:
            began = time.time_ns()  # the id map's sweeps read again what changes from here
            files = list(_folder_files(folder, look))
            parsed: dict[str, tuple[str | None, list[str]]] = {}
            for handle, path, _ in files:
                person, found, sha = _read(path, settings.tz, folder.name, handle, look,
                                           held.get((folder.name, handle)) if held else None)
                if person is not None and found is not None:
                    batch.add(person, found, sha)
                    parsed[f"{handle}.md"] = (person.id, [link.ref for link in person.aka])
                done += 1
                if done % 500 == 0:
                    batch.flush(last=False)
                    if progress is not None:
                        progress("files", done, done + 1)
            if ids:
                _ids_from(home, folder.name, look.folders[folder.name], parsed, began)
        batch.flush()
        for statement in indexes:
            db.execute(statement)
        if progress is not None:
            progress("files", done, done)
        db.executemany("INSERT INTO unread VALUES (?, ?)", sorted(look.unread))
        token, offset = changes.reset(home, since)
        _remember(db, look.folders, token, offset, swept=time.time())
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
    return look.skipped


def _ids_from(home: Home, platform: str, mtime: int,
              parsed: dict[str, tuple[str | None, list[str]]], began: int) -> None:
    """The platform's id map from the headers just parsed, when no file was made, removed or
    renamed in its folder since they were listed (its mtime, settled, did not move; tactful's
    own writes are renames, under the map's lock); otherwise read again under that lock."""
    from tactful.core.memory import identity  # see _read

    with identity.held(home, platform):
        try:
            now = home.people(platform).stat().st_mtime_ns
        except OSError:
            now = -2
        if mtime >= 0 and now == mtime:
            identity.rebuild_from_parsed(home, platform, parsed, began)
        else:
            identity.rebuild_held(home, platform)


def _remember(db: sqlite3.Connection, folders: dict[str, int], token: str, offset: int, *,
              swept: float | None) -> None:
    """Note where this look left the journal and the folders, for the next one."""
    db.execute("DELETE FROM meta WHERE key LIKE 'folder:%'")
    db.executemany("INSERT INTO meta VALUES (?, ?)",
                   [(f"folder:{platform}", str(mtime)) for platform, mtime in folders.items()])
    db.execute("INSERT OR REPLACE INTO meta VALUES ('journal', ?)", (f"{token} {offset}",))
    if swept is not None:
        db.execute("INSERT OR REPLACE INTO meta VALUES ('swept', ?)", (repr(swept),))


def _read(path: str, tz: tzinfo, platform: str, handle: str, look: _Look,
          written: Written | None = None) -> tuple[Person | None, os.stat_result | None, str]:
    # Imported when a file is read: a search on a fresh index reads none, and should not pay
    # for the person-file reader and PyYAML at start (`tactful search` is a fast path).
    from tactful.core.memory import personfile

    try:
        data, found = _read_listed(path)
        person = _as_written(written, data, tz, path, platform, handle) \
            if written is not None else None
        if person is None:
            person = personfile.loads(data.decode("utf-8"), tz, path=path, platform=platform,
                                      handle=handle)
    except (PersonFileCorrupt, NotRegularFile) as exc:
        look.problem(platform, handle, str(exc))
        return None, None, ""
    except (OSError, UnicodeDecodeError) as exc:
        look.problem(platform, handle, f"{path}: {exc}")
        return None, None, ""
    return person, found, _sha(data)


# As atomic.open_regular opens a file: never waiting on a FIFO swapped in, no controlling tty.
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)


def _read_listed(path: str) -> tuple[bytes, os.stat_result]:
    """atomic.read_regular_stat for a file its caller has just stat-ed and found regular
    (every caller of `_read` has): opened without blocking and checked again with fstat, as
    that does, without its Path, its stat before the open and its buffered file object, which
    cost a rebuild more than the read itself."""
    fd = os.open(path, _READ_FLAGS)
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise NotRegularFile(path, found.st_mode)
        parts = [os.read(fd, found.st_size + 1)]
        while parts[-1]:  # to the end, should the file have grown since its stat
            parts.append(os.read(fd, 1 << 16))
    finally:
        os.close(fd)
    return b"".join(parts), found


def _as_written(written: Written, data: bytes, tz: tzinfo, path: str, platform: str,
                handle: str) -> Person | None:
    """The person a writer just wrote, as reading the file would make it, without parsing
    its entries again; None when not sure (the caller parses the file). Sure only when the
    file holds exactly the text written (byte for byte), and every value of the body the
    index takes is already in the form the file gives back (see `_reads_back`). The header,
    where do-not-engage, the id and the links live, is always parsed from the text itself,
    with every rule of the reader; it is a few lines."""
    from tactful.core.memory import personfile

    text = written.text
    if data != text.encode("utf-8") or not text.startswith("---\n"):
        return None
    close = text.find("\n---\n", 3)
    if close < 0 or not _reads_back(written.person):
        return None
    try:
        person = personfile.loads(_without_tone(text[:close + 5]), tz, path=path,
                                  platform=platform, handle=handle)
    except PersonFileCorrupt:
        return None  # the whole file read says what is wrong with it, and where
    if person.entries or person.compacted or person.pins:
        return None  # cannot be, the header ended there: read it all
    person.tone_notes = written.person.tone_notes  # not indexed
    person.pins = written.person.pins
    person.compacted = written.person.compacted
    person.entries = written.person.entries
    return person


_TONE = "\ntone_notes: "


def _without_tone(header: str) -> str:
    """The header with its tone line emptied, when it is one line: the tone is not indexed,
    and its usual words ("warm, technical") send the whole header to the YAML loader, several
    times the cost of the reader's own path (personfile.fast_header) for the keys that are.
    What `dumps` writes there is a string YAML reads back as one, so the reader takes every
    header with it exactly as without it; a tone over more lines (or two tone lines) is left
    as it is, and read by every rule."""
    start = header.find(_TONE)
    if start < 0 or header.find(_TONE, start + 1) >= 0:
        return header
    end = header.find("\n", start + 1)
    if end < 0 or header[end + 1:end + 2] in (" ", "\t", "-", ""):
        return header  # a value that goes on over the next line
    return f"{header[:start]}{_TONE}''{header[end:]}"


_PIN_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _reads_back(person: Person) -> bool:
    """Whether the body of this person, written by personfile.dumps, reads back as it is in
    memory, in every value the index takes (and with nothing the reader would refuse): texts
    already on one clean line (the writer one-lines them, the reader gives that back), kinds
    and directions the reader knows, whole-second times it reads without a second look."""
    from tactful.core.memory.person import DIRECTIONS, ENTRY_KINDS
    from tactful.core.memory.text import one_line

    def line(value: str | None) -> bool:
        # one_line's own quick answer, without the call, for the common case
        return value is None or (value.isprintable() and "  " not in value
                                 and value.strip() == value) or value == one_line(value)

    def moment(at: datetime | None) -> bool:
        # Years well inside those the reader takes in every zone (offsets are under a day).
        return at is not None and at.tzinfo is not None and at.microsecond == 0 \
            and 1971 < at.year < 2199

    def opens(items: list[OpenItem]) -> bool:
        return all(line(i.text) and (i.resolved_at is None or moment(i.resolved_at))
                   for i in items)

    for entry in person.entries:
        if not (entry.kind in ENTRY_KINDS and entry.direction in DIRECTIONS and moment(entry.at)
                and line(entry.they) and line(entry.me) and line(entry.withheld)):
            return False
        if entry.open and not opens(entry.open):
            return False
        if entry.topics and not all(t and line(t) and "," not in t for t in entry.topics):
            return False
    for older in person.compacted:
        if not (older.kind in ENTRY_KINDS and older.direction in DIRECTIONS and moment(older.at)
                and line(older.summary) and opens(older.open)):
            return False
    return all(line(pin.text) and _PIN_DAY.fullmatch(pin.on) for pin in person.pins)


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


def open_fresh(home: Home, settings: MemorySettings, progress: Progress | None = None, *,
               every_file: bool = False,
               held: Known | None = None) -> tuple[sqlite3.Connection, list[str]]:
    """The index, brought up to date with the files first. Returns it and what was skipped.
    `every_file` stats every person file, as a sweep does: for a reader that must see an edit
    made in place by hand at once (the desk when it is read). `held`: people a writer just
    wrote, taken as written when their files still hold exactly that (`take_written`)."""
    home.require_readable()
    target = path_of(home)
    try:
        with locked(_lock(home), what="the index"):
            db = _usable(target)
            if db is not None:
                try:
                    return db, _catch_up(db, home, settings, every_file=every_file,
                                         held=held)
                except sqlite3.DatabaseError:
                    db.close()  # corrupt or unreadable: never trusted, rebuilt below
            skipped = _rebuild(home, settings, progress, held=held)
            return _connect(target), skipped
    except OSError as exc:
        raise unwritable(Path(exc.filename) if exc.filename else target, exc) from exc
    except sqlite3.DatabaseError as exc:
        raise MemoryUnavailable(f"cannot build the index {target}: {exc}; "
                                "check the home's permissions and free space") from exc


# One change to apply: the person as read (None: only the stat moved, or the file is gone).
_Change: TypeAlias = "tuple[str, str, Person | None, os.stat_result | None, str]"


def _catch_up(db: sqlite3.Connection, home: Home, settings: MemorySettings, *,
              every_file: bool = False, held: Known | None = None) -> list[str]:
    """Re-read only files that changed behind the index; drop those that are gone. Which files
    to look at: those the journal names, those of folders whose mtime moved whose inode or
    name differ from the index's, and those that could not be indexed last time; or every
    file, when the journal cannot be trusted or the last such sweep is SWEEP_EVERY old."""
    meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('journal', 'swept')"))
    token, _, offset = meta.get("journal", "").partition(" ")
    read = changes.read_since(home, token or None, int(offset) if offset.isdigit() else 0)
    if not read.token:  # no journal (or not a journal): start one; lines appended meanwhile stay
        token, start = changes.reset(home, read.offset)
        read = changes.Read(token, start, read.written, complete=False)
    elif read.offset > changes.RESET_AFTER and read.complete:
        token, start = changes.reset(home, read.offset)
        read = changes.Read(token, start, read.written, complete=True)
    since = time.time() - float(meta.get("swept", "0"))
    if every_file or not read.complete or not 0 <= since < SWEEP_EVERY:
        return _sweep(db, home, settings, read, held)
    return _look_at_changes(db, home, settings, read, held)


def _sweep(db: sqlite3.Connection, home: Home, settings: MemorySettings,
           read: changes.Read, held: Known | None = None) -> list[str]:
    """Stat every person file; look closer only at those whose stat moved."""
    known = {(p, h): (size, mtime, inode) for p, h, size, mtime, inode
             in db.execute("SELECT platform, handle, size, mtime_ns, inode FROM files")}
    look = _Look()
    seen = set()
    wanted: list[tuple[str, str, str, os.stat_result]] = []
    for folder in _platforms(home):
        platform = folder.name
        for handle, path, found in _folder_files(folder, look):
            key = (platform, handle)
            seen.add(key)
            if known.get(key) != (found.st_size, found.st_mtime_ns, found.st_ino):
                wanted.append((platform, handle, path, found))
    found_changes = _changes(db, settings, wanted, look, held)
    gone = [key for key in known if key not in seen]
    _apply(db, found_changes, gone, look, read, swept=time.time())
    return look.skipped


def _look_at_changes(db: sqlite3.Connection, home: Home, settings: MemorySettings,
                     read: changes.Read, held: Known | None = None) -> list[str]:
    """Stat only the files the journal names, the files of folders whose mtime moved whose
    name or inode differ from what was indexed, and those not indexed last time."""
    look = _Look()
    recorded = dict(db.execute("SELECT substr(key, 8), value FROM meta"
                               " WHERE key LIKE 'folder:%'"))
    wanted = set(read.written)
    wanted.update(db.execute("SELECT platform, handle FROM unread"))
    gone: set[tuple[str, str]] = set()
    folders = _platforms(home)
    for folder in folders:
        platform = folder.name
        try:
            found = folder.stat()
        except OSError:
            look.folders[platform] = -1
            continue
        if recorded.get(platform) == str(found.st_mtime_ns):
            look.folders[platform] = found.st_mtime_ns
            continue
        look.folder(platform, found)
        # Made, removed or saved over (a new inode) since the last look: listing the folder
        # says which, without a stat per file.
        inodes = dict(db.execute("SELECT handle, inode FROM files WHERE platform = ?",
                                 (platform,)))
        try:
            entries = list(os.scandir(folder.path))
        except OSError as exc:
            look.skipped.append(f"{folder.path}: cannot list the folder: {exc.strerror or exc}")
            look.folders[platform] = -1
            continue
        present = set()
        for entry in entries:
            name = entry.name
            if not name.endswith(".md") or name.startswith("."):
                continue
            handle = name[:-3]
            present.add(handle)
            if inodes.get(handle) != entry.inode():  # a symlink's own inode: always looked at
                wanted.add((platform, handle))
        gone.update((platform, handle) for handle in inodes if handle not in present)
    listed = {folder.name for folder in folders}
    for (platform,) in db.execute("SELECT DISTINCT platform FROM files").fetchall():
        if platform not in listed:  # the whole folder went (or is hidden now)
            gone.update(db.execute("SELECT platform, handle FROM files WHERE platform = ?",
                                   (platform,)))
    stats: list[tuple[str, str, str, os.stat_result]] = []
    people = home.root / "people"
    for platform, handle in sorted(wanted - gone):
        path = str(people / platform / f"{handle}.md")
        try:
            found = Path(path).stat()
        except FileNotFoundError:
            gone.add((platform, handle))
            continue
        except OSError as exc:
            look.problem(platform, handle, f"{path}: {exc.strerror or exc}")
            continue
        if not stat.S_ISREG(found.st_mode):
            look.problem(platform, handle, f"{path} is {file_kind(found.st_mode)}, not a "
                         "regular file; not read (move it away)")
            continue
        row = db.execute("SELECT size, mtime_ns, inode FROM files WHERE platform = ? AND"
                         " handle = ?", (platform, handle)).fetchone()
        if row != (found.st_size, found.st_mtime_ns, found.st_ino):
            stats.append((platform, handle, path, found))
    found_changes = _changes(db, settings, stats, look, held)
    _apply(db, found_changes, sorted(gone), look, read, swept=None)
    return look.skipped


def _changes(db: sqlite3.Connection, settings: MemorySettings,
             wanted: list[tuple[str, str, str, os.stat_result]], look: _Look,
             held: Known | None = None) -> list[_Change]:
    """Of files whose stat moved: those whose content is the same only have their stat noted;
    the others are read."""
    found: list[_Change] = []
    for platform, handle, path, _ in wanted:
        row = db.execute("SELECT sha FROM files WHERE platform = ? AND handle = ?",
                         (platform, handle)).fetchone()
        if row is not None:
            try:
                data, fresh = read_regular_stat(path)
            except (OSError, NotRegularFile):
                continue
            if _sha(data) == row[0]:
                found.append((platform, handle, None, fresh, row[0]))
                continue
        person, fresh_stat, sha = _read(path, settings.tz, platform, handle, look,
                                        held.get((platform, handle)) if held else None)
        found.append((platform, handle, person, fresh_stat, sha))
    return found


def _apply(db: sqlite3.Connection, found: list[_Change], gone: Iterable[tuple[str, str]],
           look: _Look, read: changes.Read, *, swept: float | None) -> None:
    gone = list(gone)
    # Every file not indexed last time was looked at again: what is unread now is what this
    # look found a problem with.
    unread = look.unread
    before = {(p, h) for p, h in db.execute("SELECT platform, handle FROM unread")}
    recorded = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'folder:%'"
                               " OR key = 'journal'"))
    wanted = {f"folder:{p}": str(m) for p, m in look.folders.items()}
    wanted["journal"] = f"{read.token} {read.offset}"
    if not found and not gone and unread == before and wanted == recorded and swept is None:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        for platform, handle, person, file_stat, sha in found:
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
        if unread != before:
            db.execute("DELETE FROM unread")
            db.executemany("INSERT INTO unread VALUES (?, ?)", sorted(unread))
        _remember(db, look.folders, read.token, read.offset, swept=swept)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


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
