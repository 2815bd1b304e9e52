"""Forgetting a person, completely (docs/log.md).

Their file, the marks their handle left (id map, lock, leftover temp files), their lines in the
engagement log, the dry-run outbox, the desk and its archive, their links from other people's
files, and their rows in the index (rebuilt into a new file, so no free page keeps their words).
Every account handle that carried the same stable id on the platform (a renamed account's
older files) goes with it. Then their traces in what is not theirs (see `traces`): entries of
other people that name or quote them lose their text, journal entries and log lines likewise,
desk-archive lines go. (The traces go first in fact, while their files still hold what finds
them, so a forget interrupted midway and run again finds the same.) Tombstones (by handle and
by id) then keep any log, whatever its dates, from bringing them back. `keep_dne` leaves a file
that says do_not_engage and holds only what keeps the flag on the whole person: their stable id
(so a renamed account stays flagged) and the refs of their aka links, whose other sides keep
their link too (so the same person elsewhere stays flagged). Nothing they said or did is kept.

Stores beyond memory's own files (the send ledger, the inbox, the companion's private store)
are reached through a registration, never an import: each registers an eraser here
(`register_store`) when the application is about to forget (`App.register_stores`), and
`forget` calls every one. A caller that forgets without the application reaches only memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from tactful.core.errors import BadInput, MemoryUnavailable
from tactful.core.memory import check, desk, identity, index, journal, tombstones
from tactful.core.memory.atomic import (
    DEFAULT_LOCK_TIMEOUT,
    TEMP_PREFIX,
    locked,
    read_regular,
    temp_prefix,
    write_atomic,
)
from tactful.core.memory.handles import normalize_handle, normalize_platform, split_ref
from tactful.core.memory.home import Home, unwritable
from tactful.core.memory.person import Person
from tactful.core.memory.settings import MemorySettings
from tactful.core.memory.store import STAGING, People, staging
from tactful.core.memory.traces import Trace

ENGAGEMENT_LOCK = Path(".locks") / "engagement.lock"
OUTBOX = Path("outbox") / "dry-run.jsonl"
OUTBOX_LOCK = Path(".locks") / "outbox.lock"


# An eraser: (home root, platform, handle, the person's stable id when known) -> how many of
# its records named them (and now no longer do).
Eraser = Callable[[Path, str, str, str | None], int]

# A store that can also find a person's traces in other people's records: (home root, the
# trace) -> how many records it blanked; and (home root, platform, handles) -> what they wrote
# there, so a quote of it elsewhere is recognised.
TraceEraser = Callable[[Path, Trace], int]
Words = Callable[[Path, str, frozenset[str]], list[str]]

_stores: dict[str, Eraser] = {}
_traced: dict[str, tuple[TraceEraser, Words | None]] = {}

FORGOTTEN_NOTE = "forgotten (named or quoted someone who was forgotten); content not stored"


def register_store(what: str, eraser: Eraser) -> None:
    """A store that holds something of people, to be erased with them: `what` names what the
    eraser counts ("ledger rows blanked"). Registering the same name again replaces it."""
    _stores[what] = eraser


def register_traced_store(what: str, eraser: TraceEraser, words: Words | None = None) -> None:
    """A store erased by trace: every record by, to, naming or quoting the person."""
    _traced[what] = (eraser, words)


@dataclass
class Forgotten:
    file: bool = False
    log_events: int = 0
    outbox_lines: int = 0
    stores: dict[str, int] = field(default_factory=dict)  # what each registered store erased
    archive_lines: int = 0
    links: list[str] = field(default_factory=list)
    traces: int = 0  # entries of other people, journal entries that named or quoted them
    unreachable: list[str] = field(default_factory=list)  # files that could not be swept


def about(event: object, platform: str, handle: str) -> bool:
    """Is this log event about that person? Read as leniently as sync-log reads it."""
    if not isinstance(event, dict):
        return False
    raw_platform, raw_handle = event.get("platform"), event.get("handle")
    try:
        return (isinstance(raw_platform, str) and isinstance(raw_handle, str)
                and normalize_platform(raw_platform) == platform
                and normalize_handle(raw_handle, platform) == handle)
    except BadInput:
        return False


def _mentions(event: object, platform: str, handle: str) -> bool:
    """A log or dry-run line that @mentions them (its `mentions` list, as the adapter found
    them when the post was sent)."""
    if not isinstance(event, dict) or event.get("platform") != platform:
        return False
    mentions = event.get("mentions")
    return isinstance(mentions, list) and handle in mentions


def rewrite_jsonl(path: Path, change: Callable[[object], object | None],
                  raw_line: Callable[[str], bool] | None = None) -> int:
    """Rewrite a JSON-lines file through `change`: None drops the line, another value
    replaces it, the same object keeps it byte for byte. Returns how many lines went.

    Lines that are not JSON are kept as they are (they belong to no one we can name), unless
    `raw_line` says they name the person.
    """
    try:
        raw = read_regular(path)  # a FIFO or device: NotRegularFile (exit 4), never a hang
    except FileNotFoundError:
        return 0
    kept, removed, edited = [], 0, False
    for line in raw.split(b"\n"):
        try:
            event = json.loads(line)
        except ValueError:
            if raw_line is not None and line and raw_line(line.decode("utf-8", "replace")):
                removed += 1
            else:
                kept.append(line)
            continue
        new = change(event)
        if new is None:
            removed += 1
        elif new is event:
            kept.append(line)
        else:
            kept.append(json.dumps(new, ensure_ascii=False).encode("utf-8"))
            edited = True
    if removed or edited:
        write_atomic(path, b"\n".join(kept))
    return removed


def filter_jsonl(path: Path, keep: Callable[[object], bool]) -> int:
    """Rewrite a JSON-lines file without the lines `keep` refuses; returns how many went."""
    return rewrite_jsonl(path, lambda event: event if keep(event) else None)


def _drop_desk_lines(path: Path, ref: str) -> int:
    """Remove the lines of one person from the desk or its archive; no one else's.

    Desk lines start "- x/@ada " or "- x/@ada:", and archive lines carry the same
    after "TIME | section | ", so the match is on that exact start, never a substring.
    """
    try:
        lines = read_regular(path).decode("utf-8").split("\n")
    except FileNotFoundError:
        return 0
    starts = (f"- {ref} ", f"- {ref}:")

    def theirs(line: str) -> bool:
        body = line.split(" | ", 2)[-1] if " | " in line else line
        return body.startswith(starts) or body == f"- {ref}"

    kept = [line for line in lines if not theirs(line)]
    if len(kept) != len(lines):
        write_atomic(path, "\n".join(kept))
    return len(lines) - len(kept)


def _unlink_marks(home: Home, platform: str, handle: str) -> None:
    # Temp files of their file, beside it or where writers stage it (see store.staging).
    for folder in (home.people(platform), staging(home, platform)):
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            for name in os.listdir(folder):
                if name.startswith(temp_prefix(f"{handle}.md")):
                    with contextlib.suppress(FileNotFoundError):
                        (folder / name).unlink()
    ids = home.ids(platform)
    with contextlib.suppress(FileNotFoundError):
        for folder_of_marks in [ids, ids / identity.LINKS]:
            for name in os.listdir(folder_of_marks) if folder_of_marks.is_dir() else []:
                marker = folder_of_marks / name / handle
                if name != identity.LINKS and marker.exists():
                    marker.unlink()
                    with contextlib.suppress(OSError):
                        (folder_of_marks / name).rmdir()


KEPT_LINK = "kept with do-not-engage"


def _minimal(platform: str, handle: str, person: Person | None, now: datetime) -> str:
    lines = ["---", f"platform: {platform}", f"handle: {handle}"]
    if person is not None and person.id is not None:
        lines.append(f"id: {json.dumps(person.id)}")
    lines.append("do_not_engage: true")
    refs = sorted({link.ref for link in person.aka}) if person is not None else []
    if refs:
        lines.append("aka:")
        lines += [f"- {{ref: {json.dumps(ref)}, reason: {KEPT_LINK}, "
                  f"at: '{now.isoformat(timespec='seconds')}'}}" for ref in refs]
    return "\n".join([*lines, "---", ""])


def _load(people: People, platform: str, handle: str) -> Person | None:
    try:
        return people.load(platform, handle)
    except MemoryUnavailable:
        return None  # a broken file is still theirs: it goes all the same


def _same_id_handles(home: Home, platform: str, person_id: str) -> set[str]:
    try:
        return set(identity.handles_for(home, platform, person_id))
    except MemoryUnavailable:
        # Someone's file cannot be read: the map as it stands still names the rest.
        with contextlib.suppress(OSError):
            return set(os.listdir(home.ids(platform) / person_id))
        return set()


def _log_lines(path: Path) -> list[dict[str, object]]:
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        return []
    out = []
    for line in raw.split(b"\n"):
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict):
                out.append(event)
    return out


def _event_id(event: dict[str, object]) -> str | None:
    value = event.get("id")
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else None


def trace_of(home: Home, people: People, platform: str, handle: str) -> tuple[Trace, set[str]]:
    """Everything that marks the person, and every handle of their account on the platform
    (the same stable id: a renamed account's older files)."""
    handles, ids = {handle}, set[str]()
    names: set[str | None] = set()
    texts: list[str | None] = []
    events = [e for e in _log_lines(home.engagement_log) + _log_lines(home.root / OUTBOX)]
    loaded: set[str] = set()
    while True:  # ids lead to handles and handles to ids, until nothing new turns up
        for h in sorted(handles - loaded):
            loaded.add(h)
            person = _load(people, platform, h)
            if person is None:
                continue
            if person.id is not None:
                ids.add(person.id)
            names.add(person.display_name)
            texts += [e.they for e in person.entries]
            texts += [c.summary for c in person.compacted if c.direction == "inbound"]
            texts += [p.text for p in person.pins if p.by == "them"]
        for event in events:
            event_id = _event_id(event)
            if any(about(event, platform, h) for h in handles):
                if event_id is not None:
                    ids.add(event_id)
                texts.append(event.get("they") if isinstance(event.get("they"), str)
                             else None)  # type: ignore[arg-type]
            elif event_id is not None and event_id in ids \
                    and event.get("platform") == platform and isinstance(event.get("handle"), str):
                with contextlib.suppress(BadInput):
                    handles.add(normalize_handle(str(event["handle"]), platform))
        for person_id in sorted(ids):
            handles |= _same_id_handles(home, platform, person_id)
        if handles <= loaded:
            break
    for _, words in sorted(_traced.items()):
        if words[1] is not None:
            texts += words[1](home.root, platform, frozenset(handles))
    return Trace.of(platform, handles, ids=ids, names=names, texts=texts), handles


def forget(home: Home, settings: MemorySettings, platform: str, handle: str, *,
           keep_dne: bool, now: datetime) -> Forgotten:
    home.require_readable()
    people = People(home, settings)
    done = Forgotten()
    path = home.person_path(platform, handle)
    try:
        _adopt_misnamed(home, platform, handle)
        trace, handles = trace_of(home, people, platform, handle)
        # Their traces first, while their files still hold what finds them: a forget that is
        # interrupted (a lock held elsewhere, a crash) and run again makes the same trace.
        theirs = {(platform, each) for each in handles}
        done.traces += _sweep_people(home, people, trace, theirs, done.unreachable)
        done.traces += _sweep_journal(home, settings, trace, done.unreachable)
        done.traces += _sweep_leftovers(home, trace, done.unreachable)
        done.traces += _sweep_config_copies(home, trace)
        with locked(home.root / ENGAGEMENT_LOCK, what="the engagement log"):
            done.log_events += rewrite_jsonl(home.engagement_log, lambda e: _unquote(e, trace),
                                             trace.names_them)
        with locked(home.root / OUTBOX_LOCK, what="the outbox"):
            done.outbox_lines += rewrite_jsonl(home.root / OUTBOX, lambda e: _unquote(e, trace),
                                               trace.names_them)
        for what, (erase, _) in sorted(_traced.items()):
            done.stores[what] = done.stores.get(what, 0) + erase(home.root, trace)
        with locked(home.root / ".locks" / "desk.lock", what="the desk"):
            done.archive_lines += _drop_named_lines(home.root / desk.ARCHIVE, trace)
            _drop_named_lines(home.root / desk.DESK, trace)
        # The handle asked for first when the flag is kept (its stub is the one that stays, and
        # keeps their id); otherwise last, so that until it goes its file still names their id
        # and through it their other handles.
        others = sorted(handles - {handle})
        for each in [handle, *others] if keep_dne else [*others, handle]:
            _forget_account(home, settings, people, platform, each, trace, done,
                            keep_dne=keep_dne and each == handle, now=now)
        for person_id in sorted(trace.ids):
            tombstones.bury_id(home, platform, person_id, now)
        index.rebuild(home, settings)
    except OSError as exc:
        raise unwritable(path, exc) from exc
    desk.regenerate(home, settings, now)
    return done


def _forget_account(home: Home, settings: MemorySettings, people: People, platform: str,
                    handle: str, trace: Trace, done: Forgotten, *, keep_dne: bool,
                    now: datetime) -> None:
    path = home.person_path(platform, handle)
    ref = f"{platform}/{handle}"
    # Who links to them, found through the index: their own file may not parse, and a link
    # may be one-sided. Taken before anything is deleted, with every file stat-ed (a link
    # written in by hand in place must not be missed).
    db, _ = index.open_fresh(home, settings, every_file=True)
    try:
        backlinks = set(index.linking_to(db, ref))
    finally:
        db.close()
    lock = home.person_lock(platform, handle)
    with locked(lock, what=f"{platform}/@{handle}"):
        # The tombstone first: a sync-log running now re-checks it under this same lock,
        # so it cannot bring the person back in the moment between delete and tombstone.
        tombstones.bury(home, platform, handle, now)
        person = _load(people, platform, handle)
        done.file = done.file or path.exists()
        if keep_dne:
            write_atomic(path, _minimal(platform, handle, person, now))
        elif path.is_dir() and not path.is_symlink():  # a link goes, never its target
            shutil.rmtree(path)
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        for copy in identity.copies_of(home, platform, handle):
            # A hand-made file for them under another spelling holds them too.
            done.file = True
            with contextlib.suppress(FileNotFoundError):
                copy.unlink()
        _unlink_marks(home, platform, handle)
        # The map from the files as they are now: no marker names them any more (with
        # the flag kept, their id and links are marked again from the kept file).
        identity.rebuild(home, platform)
    backlinks |= {split_ref(link.ref) for link in person.aka} if person else set()
    # With the flag kept, the other sides keep their links: the person stays flagged there.
    for other_platform, other_handle in sorted(backlinks) if not keep_dne else []:
        if other_platform == platform and other_handle in trace.handles:
            continue
        if check.check(people, other_platform, other_handle).status in (check.DNE,
                                                                         check.UNREADABLE):
            # A do-not-engage person keeps their link to this account (or memory about
            # them cannot be read): forgetting one account must not make them reachable
            # through it.
            continue
        if people.load(other_platform, other_handle) is not None:
            people.change(other_platform, other_handle, lambda p: _unlink_aka(p, ref))
            done.links.append(f"{other_platform}/{other_handle}")
    if not keep_dne:
        identity.forget_links_to(home, ref)
        identity.rebuild_all(home)  # links a flagged person keeps are marked again
    with locked(home.root / ENGAGEMENT_LOCK, what="the engagement log"):
        done.log_events += filter_jsonl(
            home.engagement_log,
            lambda e: not about(e, platform, handle) and not _mentions(e, platform, handle))
    with locked(home.root / OUTBOX_LOCK, what="the outbox"):
        done.outbox_lines += filter_jsonl(
            home.root / OUTBOX,
            lambda e: not about(e, platform, handle) and not _mentions(e, platform, handle))
    person_id = person.id if person is not None else None
    for what, erase in _stores.items():
        done.stores[what] = done.stores.get(what, 0) + erase(home.root, platform, handle,
                                                             person_id)
    with locked(home.root / ".locks" / "desk.lock", what="the desk"):
        # Out of both first, so the regenerated desk has no line of theirs to archive.
        done.archive_lines += _drop_desk_lines(home.root / desk.ARCHIVE, f"{platform}/@{handle}")
        _drop_desk_lines(home.root / desk.DESK, f"{platform}/@{handle}")


# --------------------------------------------------------------------------- their traces

def _unquote(event: object, trace: Trace) -> object | None:
    """A log or outbox line of someone else: what names or quotes them goes, the line stays.
    A line about them under any of their handles or ids goes whole."""
    if not isinstance(event, dict):
        return event
    if event.get("platform") == trace.platform and (
            _event_id(event) in trace.ids
            or any(about(event, trace.platform, h) or _mentions(event, trace.platform, h)
                   for h in trace.handles)):
        return None
    changed = dict(event)
    for key, value in event.items():
        if _scalar_names_them(value, trace):
            if key in ("time", "platform", "handle", "action"):
                return None  # a required key names them: the line is theirs
            changed[key] = None
            if key in ("text", "they"):
                changed["withheld"] = FORGOTTEN_NOTE
        elif isinstance(value, list | dict):
            changed[key] = _without(value, trace)
    return event if changed == event else changed


def _scalar_names_them(value: object, trace: Trace) -> bool:
    """A string that names them, or a number that is one of their ids (an `in_reply_to`
    written as a number by a hand or another tool)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return trace.names_them(str(value))
    return isinstance(value, str) and trace.names_them(value)


def _without(value: object, trace: Trace) -> object:
    """A list or mapping of a log line without what names them, however deeply nested: list
    items that name them go, mapping values that do become null."""
    if isinstance(value, list):
        return [_without(v, trace) for v in value if not _scalar_names_them(v, trace)]
    if isinstance(value, dict):
        return {k: None if _scalar_names_them(v, trace) else _without(v, trace)
                for k, v in value.items() if not trace.names_them(str(k))}
    return value


def _blank_person(person: Person, trace: Trace) -> int:
    """Blank whatever of `person`'s file names or quotes the forgotten one; count entries."""
    names = trace.names_them
    blanked = 0
    for entry in person.entries:
        if any(names(t) for t in (entry.they, entry.me, entry.link, entry.thread,
                                   *entry.topics, *(o.text for o in entry.open))):
            entry.they = entry.me = None
            entry.topics = []
            entry.link = None if names(entry.link) else entry.link
            entry.thread = None if names(entry.thread) else entry.thread
            entry.withheld = FORGOTTEN_NOTE
            for item in entry.open:
                item.text = "[forgotten]" if names(item.text) else item.text
            blanked += 1
    for older in person.compacted:
        if any(names(t) for t in (older.summary, older.link, older.thread,
                                   *(o.text for o in older.open))):
            older.summary = "[forgotten]" if names(older.summary) else older.summary
            older.link = None if names(older.link) else older.link
            older.thread = None if names(older.thread) else older.thread
            for item in older.open:
                item.text = "[forgotten]" if names(item.text) else item.text
            blanked += 1
    pins = [p for p in person.pins if not names(p.text)]
    blanked += len(person.pins) - len(pins)
    person.pins = pins
    for link in person.aka:
        if names(link.proof):
            link.proof, blanked = None, blanked + 1
        if names(link.reason):
            link.reason, blanked = "[forgotten]", blanked + 1
    for flag in person.flags:
        if names(flag.reason):
            flag.reason, blanked = None, blanked + 1
    if names(person.dne_reason):
        person.dne_reason, blanked = None, blanked + 1
    for key, value in list(person.extra.items()):
        if _scalar_names_them(value, trace) or names(key):
            del person.extra[key]
            blanked += 1
        elif isinstance(value, list | dict):
            person.extra[key] = _without(value, trace)
            blanked += person.extra[key] != value
    return blanked


def _sweep_people(home: Home, people: People, trace: Trace, kept: set[tuple[str, str]],
                  unreachable: list[str]) -> int:
    blanked = 0
    root = home.root / "people"
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if not folder.is_dir() or folder.is_symlink():
            continue
        for path in sorted(folder.glob("*.md")):
            platform, handle = folder.name, path.stem
            if (platform, handle) in kept:
                continue
            try:
                text = read_regular(path).decode("utf-8", "replace")
            except (OSError, MemoryUnavailable):
                continue
            if not trace.may_name_them(text):
                continue
            try:
                _, count = people.change(platform, handle, lambda p: _blank_person(p, trace))
            except MemoryUnavailable as exc:
                unreachable.append(str(exc))
                continue
            blanked += count
    return blanked


def _sweep_journal(home: Home, settings: MemorySettings, trace: Trace,
                   unreachable: list[str]) -> int:
    blanked = 0
    names = trace.names_them
    for month in journal.months(home):
        path = journal.path_of(home, month)
        with locked(journal.lock_of(home, month), what=f"the journal of {month}"):
            try:
                entries = journal.read(home, month, settings.tz)
            except MemoryUnavailable as exc:
                unreachable.append(str(exc))
                continue
            changed = 0
            for entry in entries:
                if any(names(t) for t in (entry.text, entry.link, entry.thread)):
                    entry.text = None
                    entry.link = None if names(entry.link) else entry.link
                    entry.thread = None if names(entry.thread) else entry.thread
                    entry.withheld = FORGOTTEN_NOTE
                    changed += 1
            if changed:
                write_atomic(path, journal.dumps(entries, month, settings.tz))
                blanked += changed
    return blanked


def _drop_named_lines(path: Path, trace: Trace) -> int:
    try:
        lines = read_regular(path).decode("utf-8").split("\n")
    except FileNotFoundError:
        return 0
    kept = [line for line in lines if not trace.names_them(line)]
    if len(kept) != len(lines):
        write_atomic(path, "\n".join(kept))
    return len(lines) - len(kept)


def _misnamed(home: Home, platform: str, handle: str) -> list[Path]:
    """Their files named by hand in another spelling (`Troll.md`, `troll.MD`, `people/X/…`):
    `check` refuses for such a handle, and forget must not leave one behind as "file absent"."""
    return [path for path in identity.copies_of(home, platform, handle)
            if path.is_file() and not path.is_symlink()]


def _adopt_misnamed(home: Home, platform: str, handle: str) -> None:
    """A misnamed file of theirs takes its proper name first (when that is free), so their
    trace is read from it like any file of theirs; it goes with them all the same."""
    path = home.person_path(platform, handle)
    strays = _misnamed(home, platform, handle)
    if not strays:
        return
    with locked(home.person_lock(platform, handle), what=f"{platform}/@{handle}"):
        if not path.exists():
            os.replace(strays[0], path)
    identity.rebuild(home, platform)


def _unlink_aka(person: Person, ref: str) -> None:
    person.aka = [a for a in person.aka if a.ref != ref]


# Copies of a file that are not the file: what an interrupted atomic write leaves, and what an
# editor leaves beside a file edited by hand.
BACKUP_ENDINGS = ("~", ".bak", ".orig", ".swp", ".swo")


def _leftover(name: str) -> bool:
    return name.startswith(TEMP_PREFIX) or name.endswith(BACKUP_ENDINGS)


def _sweep_leftovers(home: Home, trace: Trace, unreachable: list[str]) -> int:
    """Temp files of interrupted writes and editors' backups anywhere under the home that name
    or quote them go. A temp file of a person file goes under that person's lock, so a write
    in flight keeps its own; another temp file goes once older than any lock is held (a
    younger one is a write in flight, and is reported instead)."""
    gone = 0
    for path in sorted(home.root.rglob("*")):
        if not _leftover(path.name) or path.is_symlink() or not path.is_file():
            continue
        try:
            text = read_regular(path).decode("utf-8", "replace")
        except (OSError, MemoryUnavailable):
            continue
        if not trace.names_them(text):
            continue
        owner = _temp_owner(home, path)
        if owner is not None:
            with locked(home.person_lock(*owner), what=f"{owner[0]}/@{owner[1]}"), \
                    contextlib.suppress(FileNotFoundError):
                path.unlink()
        elif path.name.startswith(TEMP_PREFIX) and \
                time.time() - path.stat().st_mtime < DEFAULT_LOCK_TIMEOUT:
            unreachable.append(f"{path}: a write in progress; run forget again")
            continue
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        gone += 1
    return gone


def _sweep_config_copies(home: Home, trace: Trace) -> int:
    """The copies of the config that `check` keeps in the home (docs/memory.md) hold the file's
    every byte, comments included: a copy naming them goes, and the next `check` reads the
    config whole and keeps it anew."""
    gone = 0
    folder = home.root / ".cache" / "config"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            text = read_regular(path).decode("utf-8", "replace")
        except (OSError, MemoryUnavailable):
            continue
        if trace.names_them(text) or any(trace.names_them(s) for s in _strings(text)):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            gone += 1
    return gone


def _strings(text: str) -> list[str]:
    """The strings of a JSON copy as the config held them: JSON writes a line break or a tab
    as a backslash and a letter, which would glue that letter to the name that follows."""
    try:
        stack: list[object] = [json.loads(text)]
    except (ValueError, RecursionError):
        return []
    found: list[str] = []
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item
    return found


def _temp_owner(home: Home, path: Path) -> tuple[str, str] | None:
    """The person whose file a temp file in a people folder, or in its staging folder
    (store.staging), was to replace, when known."""
    if not path.name.startswith(TEMP_PREFIX):
        return None
    if path.parent.parent == home.root / "people" / STAGING:
        folder = home.people(path.parent.name)
    elif path.parent.parent == home.root / "people":
        folder = path.parent
    else:
        return None
    platform = folder.name
    for person in folder.glob("*.md"):
        if path.name.startswith(temp_prefix(person.name)):
            return platform, person.stem
    return None
