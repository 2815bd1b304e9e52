"""The people store: load a person, change a person under lock, find by stable id.

Readers take no lock (a replaced file is whole either way); writers lock the one person they
change, read it fresh, apply the change, and replace the file atomically. A file that does not
parse is never written over: the change fails with its file and line.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from tactful.core.errors import BadInput, MemoryUnavailable
from tactful.core.memory import identity, personfile
from tactful.core.memory.atomic import Staged, fsync_folder, locked
from tactful.core.memory.handles import normalize_id
from tactful.core.memory.home import Home, unwritable
from tactful.core.memory.person import Person
from tactful.core.memory.settings import MemorySettings

T = TypeVar("T")
BATCH_FILES = 1000
# `<home>/people/.staging/<platform>/`: where a person file is written before it takes its
# name. Hidden (every scan of people/ passes over names starting with '.'), under people/ so on
# the same file system as the platform folders (the rename into place stays atomic), and one
# per platform, so a temp file's name (a hash of `<handle>.md`) says whose file it was.
STAGING = ".staging"


@dataclass(frozen=True)
class Written:
    """What one change wrote: the person, the exact text, and the stat of that version."""

    person: Person
    text: str
    stat: os.stat_result


AfterWrite = Callable[[Written], None]


@dataclass
class People:
    home: Home
    settings: MemorySettings = field(default_factory=MemorySettings)
    # Called after every successful write outside a batch. (The index does not hang here: its
    # readers catch it up, so writers share no index lock.) A batch calls none: what is derived
    # is left to its next reader, once for the whole batch.
    after_write: list[AfterWrite] = field(default_factory=list)
    # Inside `batch`: files are replaced atomically but made durable together at its end.
    _batched: list[Path] | None = field(default=None, init=False, repr=False)
    _prepared: set[Path] = field(default_factory=set, init=False, repr=False)
    _stages: dict[str, Path] = field(default_factory=dict, init=False, repr=False)
    # Inside `batch`: the last write of each person, for what the batch's caller derives.
    _written: dict[tuple[str, str], Written] = field(default_factory=dict, init=False,
                                                     repr=False)

    # Inside `batch`, for writers on several threads: the files written since the last settle.
    _batch_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @contextlib.contextmanager
    def batch(self) -> Iterator[dict[tuple[str, str], Written]]:
        """Many writes, durable together: each file is still replaced atomically (a reader sees
        the old version or the new, whole) and is on disk before it takes its name (a crash
        never leaves a torn or empty file), but the renames are made durable every BATCH_FILES
        files and at the end, one fsync per folder, instead of one per write. What runs after
        the batch (sync-log's checkpoint) may count on every write in it being on disk. Writes
        of a batch may run on several threads (one person each): their fsyncs then overlap.
        The `after_write` hooks are not called inside a batch (see there); instead it yields
        the last write of each person, (platform, handle) to what was written, filled as the
        batch goes (sync-log hands them to the index, which need not parse them again)."""
        if self._batched is not None:
            yield self._written
            return
        self._batched = []
        self._written = {}
        try:
            yield self._written
        finally:
            self._settle()
            self._batched = None
            self._prepared.clear()
            self._written = {}  # the caller holds them as long as it needs them

    def _settle(self) -> None:
        """The renames of the batch on disk: each folder once (every file was fsynced before it
        took its name)."""
        with self._batch_lock:
            if not self._batched:
                return
            folders = list(dict.fromkeys(path.parent for path in self._batched))
            self._batched.clear()
        for folder in folders:
            fsync_folder(folder)

    def load(self, platform: str, handle: str) -> Person | None:
        """The person, or None when there is no file. Unreadable → MemoryUnavailable."""
        path = self.home.person_path(platform, handle)
        try:
            if not stat.S_ISREG(path.stat().st_mode):
                # A folder, a pipe (reading it would hang), a device: not a person file.
                raise MemoryUnavailable(f"{path} is not a regular file; move it away")
            return personfile.read(path, self.settings.tz, platform, handle)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise MemoryUnavailable(
                f"cannot read {path}: {exc.strerror or exc}; fix the file or its permissions"
            ) from exc

    def change(self, platform: str, handle: str, mutate: Callable[[Person], T]) -> tuple[Person, T]:
        """Load (or start) a person, apply `mutate`, recompute, write atomically, under lock."""
        # Imported here, not above: it pulls in the scrubber and the injection guard, whose
        # patterns `check` and `card` (readers only) should not pay for.
        from tactful.core.memory.recording import new_person, refresh

        people = self.home.people(platform)
        stage = self._stages.get(platform)
        if stage is None:
            stage = self._stages[platform] = staging(self.home, platform)
        if people not in self._prepared:
            self.home.prepare_folder(people)
            self.home.prepare_folder(stage)
            if self._batched is not None:
                self._prepared.add(people)  # a batch does not ask again for every file
        path = self.home.person_path(platform, handle)
        try:
            with locked(self.home.person_lock(platform, handle), what=f"{platform}/@{handle}"):
                person = self.load(platform, handle) or new_person(platform, handle,
                                                                   self.settings)
                result = mutate(person)
                refresh(person, self.settings)
                text = personfile.dumps(person, self.settings.tz)
                # Written and fsynced in the staging folder, outside the id map's lock: the
                # platform's folder does not change until the rename, so writers of the
                # platform share that lock only for the rename and the map's markers.
                # Durable before the rename, in a batch too: a crash must never leave a name
                # pointing at a file whose data never reached the disk (an empty file).
                try:
                    staged = Staged(path, text, stage=stage)
                except FileNotFoundError:  # the staging folder went since it was made
                    self.home.prepare_folder(stage)
                    staged = Staged(path, text, stage=stage)
                try:
                    with identity.held(self.home, platform):
                        # A change behind tactful's back (a hand edit) must not be stamped
                        # over: judged before this write changes the folder.
                        behind = identity.is_stale(self.home, platform)
                        staged.replace()
                        written = Written(person, text, staged.written)
                        if behind:
                            identity.rebuild_held(self.home, platform)
                        else:
                            if person.id is not None:
                                identity.record(self.home, platform, person.id, handle)
                            else:
                                identity.touch_stamp(self.home, platform)
                            identity.record_links(self.home, platform, handle,
                                                  [a.ref for a in person.aka])
                finally:
                    staged.discard()  # a temp file that never took its name goes
                _note_written(self.home, platform, handle)
                if self._batched is None:
                    staged.settle()
                else:
                    with self._batch_lock:
                        self._batched.append(path)
                        self._written[(platform, handle)] = written
                        full = len(self._batched) >= BATCH_FILES
                    if full:
                        self._settle()
        except OSError as exc:
            raise unwritable(path, exc) from exc
        if self._batched is None:
            for hook in self.after_write:
                hook(written)
        return person, result

    def same_id(self, platform: str, person_id: str, *, besides: str) -> list[Person]:
        """Other files that carry this stable id: a renamed account's earlier handles."""
        found = []
        for handle in identity.handles_for(self.home, platform, person_id):
            if handle == besides:
                continue
            other = self.load(platform, handle)
            misnamed = identity.misnamed_file(self.home, platform, handle) \
                if other is None else None
            if misnamed is not None:
                # A file made by hand under another name holds this id: it is someone, and
                # cannot be read as them.
                raise MemoryUnavailable(f"{self.home.people(platform) / misnamed} carries id "
                                        f"{person_id} but is not named {handle}.md; rename it")
            if other is not None and file_id(other) == normalize_id(person_id):
                found.append(other)
        return found


def file_id(person: Person) -> str | None:
    """The person's id as the id map keys it (one spelling: `'0042'` is 42). An id in a file
    that is no id at all cannot be told apart from another's: a refusal, never "someone else"."""
    if person.id is None:
        return None
    try:
        return normalize_id(person.id)
    except BadInput:
        raise MemoryUnavailable(f"{person.platform}/{person.handle}.md holds id "
                                f"{person.id!r}, which is no platform id; fix the id line of "
                                "the file") from None


def staging(home: Home, platform: str) -> Path:
    """Where the platform's person files are written before they take their names."""
    return home.root / "people" / STAGING / platform


def _note_written(home: Home, platform: str, handle: str) -> None:
    """Tell the index's change journal (core/memory/changes.py) which file was just written, so
    a reader re-checks that file instead of every file (docs/search-and-desk.md). Imported
    here, not at the top: `check` reads through this module and never writes."""
    from tactful.core.memory import changes

    changes.note_written(home, platform, handle)
