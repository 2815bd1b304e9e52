"""The people store: load a person, change a person under lock, find by stable id.

Readers take no lock (a replaced file is whole either way); writers lock the one person they
change, read it fresh, apply the change, and replace the file atomically. A file that does not
parse is never written over: the change fails with its file and line.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from tactful.core.errors import MemoryUnavailable
from tactful.core.memory import identity, personfile
from tactful.core.memory.atomic import Staged, locked
from tactful.core.memory.home import Home, unwritable
from tactful.core.memory.person import Person
from tactful.core.memory.settings import MemorySettings

T = TypeVar("T")


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
    # Called after every successful write (the index and the desk hang here).
    after_write: list[AfterWrite] = field(default_factory=list)

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
        self.home.prepare_folder(people)
        path = self.home.person_path(platform, handle)
        try:
            with locked(self.home.person_lock(platform, handle), what=f"{platform}/@{handle}"):
                person = self.load(platform, handle) or new_person(platform, handle,
                                                                   self.settings)
                result = mutate(person)
                refresh(person, self.settings)
                text = personfile.dumps(person, self.settings.tz)
                staged = Staged(path, text)  # written and fsynced, not yet in place
                with identity.held(self.home, platform):
                    # A change behind tactful's back (a hand edit) must not be stamped over.
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
                staged.settle()
        except OSError as exc:
            raise unwritable(path, exc) from exc
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
            if other is not None and other.id == person_id:
                found.append(other)
        return found
