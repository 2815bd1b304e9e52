"""Forgetting a person, completely (SPEC §9).

Their file, the marks their handle left (id map, lock, leftover temp files), their lines in the
engagement log, the dry-run outbox, the desk and its archive, their links from other people's
files, and their rows in the index (rebuilt into a new file, so no free page keeps their words).
A tombstone then keeps an old log from bringing them back. `keep_dne` leaves a file that says
do_not_engage and holds only what keeps the flag on the whole person: their stable id (so a
renamed account stays flagged) and the refs of their aka links, whose other sides keep their
link too (so the same person elsewhere stays flagged). Nothing they said or did is kept.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from tactful.core.errors import BadInput, MemoryUnavailable
from tactful.core.memory import check, desk, identity, index, tombstones
from tactful.core.memory.atomic import locked, read_regular, temp_prefix, write_atomic
from tactful.core.memory.handles import normalize_handle, normalize_platform, split_ref
from tactful.core.memory.home import Home, unwritable
from tactful.core.memory.person import Person
from tactful.core.memory.settings import MemorySettings
from tactful.core.memory.store import People

ENGAGEMENT_LOCK = Path(".locks") / "engagement.lock"
OUTBOX = Path("outbox") / "dry-run.jsonl"
OUTBOX_LOCK = Path(".locks") / "outbox.lock"


# An eraser: (home root, platform, handle, the person's stable id when known) -> how many of
# its records named them (and now no longer do).
Eraser = Callable[[Path, str, str, str | None], int]

_stores: dict[str, Eraser] = {}


def register_store(what: str, eraser: Eraser) -> None:
    """A store that holds something of people, to be erased with them: `what` names what the
    eraser counts ("ledger rows blanked"). Registering the same name again replaces it."""
    _stores[what] = eraser


@dataclass
class Forgotten:
    file: bool = False
    log_events: int = 0
    outbox_lines: int = 0
    stores: dict[str, int] = field(default_factory=dict)  # what each registered store erased
    archive_lines: int = 0
    links: list[str] = field(default_factory=list)


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


def filter_jsonl(path: Path, keep: Callable[[object], bool]) -> int:
    """Rewrite a JSON-lines file without the lines `keep` refuses; returns how many went.

    Lines that are not JSON are kept as they are: they belong to no one we can name.
    """
    try:
        raw = read_regular(path)  # a FIFO or device: NotRegularFile (exit 4), never a hang
    except FileNotFoundError:
        return 0
    kept, removed = [], 0
    for line in raw.split(b"\n"):
        try:
            event = json.loads(line)
        except ValueError:
            kept.append(line)
            continue
        if keep(event):
            kept.append(line)
        else:
            removed += 1
    if removed:
        write_atomic(path, b"\n".join(kept))
    return removed


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
    folder = home.people(platform)
    with contextlib.suppress(FileNotFoundError):
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


def forget(home: Home, settings: MemorySettings, platform: str, handle: str, *,
           keep_dne: bool, now: datetime) -> Forgotten:
    home.require_readable()
    people = People(home, settings)
    path = home.person_path(platform, handle)
    done = Forgotten()
    ref = f"{platform}/{handle}"
    # Who links to them, found through the index: their own file may not parse, and a link
    # may be one-sided. Taken before anything is deleted.
    db, _ = index.open_fresh(home, settings)
    try:
        backlinks = set(index.linking_to(db, ref))
    finally:
        db.close()
    lock = home.person_lock(platform, handle)
    try:
        with locked(lock, what=f"{platform}/@{handle}"):
            # The tombstone first: a sync-log running now re-checks it under this same lock,
            # so it cannot bring the person back in the moment between delete and tombstone.
            tombstones.bury(home, platform, handle, now)
            person: Person | None
            try:
                person = people.load(platform, handle)
            except MemoryUnavailable:
                person = None  # a broken file is still theirs: it goes all the same
            done.file = path.exists()
            if keep_dne:
                write_atomic(path, _minimal(platform, handle, person, now))
            elif path.is_dir() and not path.is_symlink():  # a link goes, never its target
                shutil.rmtree(path)
            else:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            _unlink_marks(home, platform, handle)
            # The map from the files as they are now: no marker names them any more (with
            # the flag kept, their id and links are marked again from the kept file).
            identity.rebuild(home, platform)
        backlinks |= {split_ref(link.ref) for link in person.aka} if person else set()
        # With the flag kept, the other sides keep their links: the person stays flagged there.
        for other_platform, other_handle in sorted(backlinks) if not keep_dne else []:
            if (other_platform, other_handle) == (platform, handle):
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
            done.log_events = filter_jsonl(
                home.engagement_log,
                lambda e: not about(e, platform, handle) and not _mentions(e, platform, handle))
        with locked(home.root / OUTBOX_LOCK, what="the outbox"):
            done.outbox_lines = filter_jsonl(
                home.root / OUTBOX,
                lambda e: not about(e, platform, handle) and not _mentions(e, platform, handle))
        person_id = person.id if person is not None else None
        for what, erase in _stores.items():
            done.stores[what] = erase(home.root, platform, handle, person_id)
        with locked(home.root / ".locks" / "desk.lock", what="the desk"):
            # Out of both first, so the regenerated desk has no line of theirs to archive.
            done.archive_lines = _drop_desk_lines(home.root / desk.ARCHIVE, f"{platform}/@{handle}")
            _drop_desk_lines(home.root / desk.DESK, f"{platform}/@{handle}")
        index.rebuild(home, settings)
    except OSError as exc:
        raise unwritable(path, exc) from exc
    desk.regenerate(home, settings, now)
    return done


def _unlink_aka(person: Person, ref: str) -> None:
    person.aka = [a for a in person.aka if a.ref != ref]
