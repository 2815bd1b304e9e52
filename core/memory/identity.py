"""Stable ids: which handles have carried which platform id (docs/memory.md).

Handles change, ids do not, so a renamed do-not-engage account must still be found. The map is
a folder per id under `<home>/.ids/<platform>/` holding one empty marker file per handle: adding
a marker is atomic and needs no lock. It is derived data, a hint only: every handle it names is
confirmed against the person file itself, and the whole map is rebuilt from the files whenever
the people folder changed behind tactful's back (its mtime is newer than the map's stamp), and
by `tactful reindex`. A file edited in place (as most editors save) moves no folder mtime: the
first lookup ten seconds or more after the last sweep stats every file and reads again the
headers of those changed since, so an id or a link written by hand counts within ten seconds.

Beside the ids, the map keeps the reverse of every `aka` link: `.links/<hash of the linked
ref>/<handle>` in the folder of the platform whose file holds the link. A link counts from
either side, so `check` of one account finds the files that name it as the same person even
when only they recorded the link (a hand edit, or the other side forgotten).

The rebuild also notes person files whose names are not normalized handles (`Troll.md`, made
by hand): `check` cannot find them by name, so it refuses for that handle instead of calling
the person a stranger.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tactful.core.errors import BadInput, MemoryUnavailable
from tactful.core.memory.handles import canonical_ref, normalize_handle, normalize_id
from tactful.core.memory.home import Home

if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:  # the interpreter's own SHA-256: `check` hashes a ref; hashlib loads OpenSSL (~3 ms)
        from _sha256 import sha256
    except ImportError:  # another Python: the same digest through hashlib
        from hashlib import sha256

T = TypeVar("T")

STAMP = ".stamp"
SWEPT = ".swept"  # its mtime: files changed since were not looked at by a sweep yet
MISNAMED = ".misnamed"
LINKS = ".links"
UNREADABLE = ".unreadable"
# How often the files themselves are looked at (a stat of each: ~10 ms per 1,000 files), for
# edits made in place, which no folder mtime shows: short, since this is how long a flagged
# person's id written by hand may go unseen; a long-lived process pays it once per period, a
# command run less often than that at each start (docs/memory.md).
SWEEP_EVERY_NS = 10_000_000_000
# A sweep counts from a little before it began: file times come from a coarse clock, and a file
# changed while the sweep ran must still be newer than the mark it leaves.
_SWEEP_MARGIN_NS = 2_000_000_000


@contextlib.contextmanager
def held(home: Home, platform: str) -> Iterator[None]:
    """The platform's map lock: a writer holds it from the moment its file takes its name until
    the map and the stamp say so, and a reader holds it to judge staleness and rebuild. So a
    write in flight never reads as a change behind tactful's back (which would rebuild the
    whole map, and could drop the marker another writer just added). Short: no fsync under it.
    A home where the lock cannot be made (read-only) is read without it."""
    from tactful.core.memory.atomic import locked

    try:
        guard = locked(home.lock(f"ids/{platform}.lock"), what="the id map")
        guard.__enter__()
    except OSError:
        yield
        return
    try:
        yield
    finally:
        guard.__exit__(None, None, None)


def record(home: Home, platform: str, person_id: str, handle: str) -> None:
    folder = home.ids(platform) / person_id
    try:
        (folder / handle).touch()
    except FileNotFoundError:  # the folder first, only when missing
        folder.mkdir(parents=True, exist_ok=True)
        (folder / handle).touch()
    touch_stamp(home, platform)


def record_links(home: Home, platform: str, handle: str, refs: list[str]) -> None:
    """Note that `platform/handle` names each of `refs` as the same person."""
    for ref in refs:
        folder = home.ids(platform) / LINKS / _link_key(ref)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / handle).touch()
    if refs:
        touch_stamp(home, platform)


def linked_from(home: Home, ref: str) -> list[tuple[str, str]]:
    """Every (platform, handle) whose file may name `ref` in its aka links: a hint, to be
    confirmed against the file itself."""
    # Paths as strings here and below: `check` runs these a dozen times per companion
    # message, and building a Path costs more than the stat it is built for.
    people = os.path.join(home.root, "people")
    try:
        platforms = os.listdir(people)
    except (FileNotFoundError, NotADirectoryError):
        return []
    key = _link_key(ref)
    found: list[tuple[str, str]] = []
    for platform in sorted(platforms):
        if platform.startswith(".") or not os.path.isdir(os.path.join(people, platform)):
            continue
        folder = os.path.join(home.ids(platform), LINKS, key)
        handles = _consult(home, platform, lambda scan: scan.links.get(key, set()),
                           partial(_linked_handles, folder))
        found.extend((platform, handle) for handle in sorted(handles))
    return found


def _linked_handles(folder: str) -> set[str]:
    return set(_listing(folder))


def forget_links_to(home: Home, ref: str) -> None:
    """Drop every marker of a link to `ref` (forget: its name goes from the map too)."""
    import shutil

    key = _link_key(ref)
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for platform in os.listdir(home.root / "people"):
            shutil.rmtree(home.ids(platform) / LINKS / key, ignore_errors=True)


def _link_key(ref: str) -> str:
    """The key of a linked account, whatever spelling the link was written in."""
    named = canonical_ref(ref)
    return _ref_key(f"{named[0]}/{named[1]}" if named is not None else ref)


def _ref_key(ref: str) -> str:
    # A hash: a ref may be longer than a file name may be, and this names no one in plain text.
    return sha256(ref.encode("utf-8")).hexdigest()[:32]


def touch_stamp(home: Home, platform: str) -> None:
    """The map is up to date with the people folder as it is now. The stamp is set strictly
    later than the folder's mtime: mtimes are coarse, and a stamp in the same tick as tactful's
    own write would read as a change behind its back (and every next write or check would
    rebuild the whole map)."""
    stamp = os.path.join(home.ids(platform), STAMP)
    try:
        os.utime(stamp)  # to now (one call: a sync-log stamps once per file it writes)
    except FileNotFoundError:
        Path(stamp).parent.mkdir(parents=True, exist_ok=True)
        Path(stamp).touch()
    try:
        folder = _changed_at(os.stat(home.people(platform)))
    except FileNotFoundError:
        return
    if os.stat(stamp).st_mtime_ns <= folder:
        os.utime(stamp, ns=(folder + 1, folder + 1))


def handles_for(home: Home, platform: str, person_id: str) -> list[str]:
    """Handles that have carried this id, by the map, rebuilt first if it may be stale.
    A person file of the platform that cannot be read may carry the id too: then nobody can
    say who has it, and the answer is a refusal (MemoryUnavailable), never "nobody"."""
    folder = home.ids(platform)
    unreadable, handles = _consult(
        home, platform, lambda scan: (scan.unreadable, scan.ids.get(person_id, set())),
        lambda: (_listing(os.path.join(folder, UNREADABLE), read=True),
                 set(_listing(os.path.join(folder, person_id)))))
    if unreadable:
        raise MemoryUnavailable(f"{home.people(platform) / unreadable[0]} cannot be read, so "
                                f"it cannot be told whether it holds id {person_id}; fix the "
                                "file (or move it away), then run `tactful reindex`")
    return sorted(handles)


def _listing(folder: str, *, read: bool = False) -> list[str]:
    try:
        names = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    if not read:
        return names
    return [Path(folder, name).read_text(encoding="utf-8") for name in names]


def misnamed_file(home: Home, platform: str, handle: str) -> str | None:
    """The name of a hand-made file that means this handle but is not `<handle>.md`."""
    def from_disk() -> str | None:
        try:
            with open(os.path.join(home.ids(platform), MISNAMED, handle),
                      encoding="utf-8") as file:
                return file.read()
        except (FileNotFoundError, NotADirectoryError):
            return None

    return _consult(home, platform, lambda scan: scan.misnamed.get(handle), from_disk)


def _consult(home: Home, platform: str, from_scan: Callable[[Scan], T],
             from_disk: Callable[[], T]) -> T:
    """An answer from the map: from the scan it was just rebuilt from, or read from its folder.
    A rebuild empties the folder before it fills it again, so a reading taken meanwhile could
    say "nobody": the stamp (made anew by each rebuild, touched by each writer) must be the
    same before and after the reading, or it is taken again under `held`, where no rebuild
    runs."""
    found = _rebuilt_if_stale(home, platform)
    if found is not None:
        return from_scan(found)
    before = _stamp_seen(home, platform)
    answer = from_disk()
    if before is not None and _stamp_seen(home, platform) == before:
        return answer
    with held(home, platform):
        if _stale(home, platform):
            return from_scan(_rebuild(home, platform))
        return from_disk()


def _stamp_seen(home: Home, platform: str) -> tuple[int, int, int] | None:
    try:
        seen = os.stat(os.path.join(home.ids(platform), STAMP))
    except (FileNotFoundError, NotADirectoryError):
        return None
    return seen.st_ino, seen.st_mtime_ns, seen.st_ctime_ns


def _rebuilt_if_stale(home: Home, platform: str) -> Scan | None:
    """The scan the map was just rebuilt from when it was stale, else None (read the map).
    A fresh map takes no lock; one that looks stale, or is due a sweep, is judged again under
    `held`, where a write in flight has finished: only a change behind tactful's back rebuilds
    it, and a sweep adds what files edited in place say."""
    if not _stale(home, platform) and not _sweep_due(home, platform):
        return None
    with held(home, platform):
        if _stale(home, platform):
            return _rebuild(home, platform)
        return _sweep(home, platform) if _sweep_due(home, platform) else None


def _swept_at(home: Home, platform: str) -> int | None:
    try:
        return os.stat(os.path.join(home.ids(platform), SWEPT)).st_mtime_ns
    except (FileNotFoundError, NotADirectoryError):
        return None


def _sweep_due(home: Home, platform: str) -> bool:
    swept = _swept_at(home, platform)
    # A mark ahead of now (the clock was set back, a home copied from a machine whose clock
    # was ahead) is due at once: else no sweep would come until the clock caught up with it.
    if swept is not None and 0 <= time.time_ns() - swept < SWEEP_EVERY_NS:
        return False
    return os.path.isdir(os.path.join(home.root, "people", platform))  # else nothing to sweep


def _mark_swept(home: Home, platform: str, at: int) -> None:
    path = os.path.join(home.ids(platform), SWEPT)
    with open(path, "a"):
        pass
    os.utime(path, ns=(at, at))


def _sweep(home: Home, platform: str) -> Scan | None:
    """Read again the headers of the files changed (ctime or mtime) since the last sweep and add
    to the map what they say: ids, links, files that cannot be read. Only adds: a marker the
    files no longer back is harmless (each is confirmed against its file). A map older than
    sweeps, or whose mark is ahead of the clock, is rebuilt instead; a home where the map cannot
    be written gets the whole scan when a file changed since the mark."""
    since = _swept_at(home, platform)
    start = time.time_ns() - _SWEEP_MARGIN_NS
    if since is None or since > start + _SWEEP_MARGIN_NS:
        # No mark, or one ahead of now: a file changed before the clock reaches it would look
        # older than the mark to every sweep. The whole map is made again, and the mark set now.
        return _rebuild(home, platform)
    people = os.path.join(home.root, "people", platform)
    changed: list[str] = []
    try:
        with os.scandir(people) as entries:
            for entry in entries:
                if entry.name.startswith(".") or not entry.name.strip().lower().endswith(".md"):
                    continue
                try:
                    # A link is read again at every sweep: what it leads to can change with no
                    # time moving on the file it now reaches (a folder on its way swapped).
                    linked = entry.is_symlink()
                    seen = entry.stat()  # followed, as the reader follows a link
                except OSError:
                    changed.append(entry.name)
                    continue
                if linked or seen.st_ctime_ns >= since or seen.st_mtime_ns >= since:
                    changed.append(entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return None
    found = scan(Path(people), names=changed)
    try:
        _add_markers(home, platform, found, changed)
        _mark_swept(home, platform, max(start, since))
    except OSError:
        # The map cannot be written (a read-only home): it is still whole when no file changed
        # since its mark; else the answer comes from every file, as a rebuild's would.
        return scan(Path(people)) if changed else None
    return None


def _add_markers(home: Home, platform: str, found: Scan, looked_at: list[str]) -> None:
    folder = home.ids(platform)
    for person_id, handles in found.ids.items():
        (folder / person_id).mkdir(parents=True, exist_ok=True)
        for handle in handles:
            (folder / person_id / handle).touch()
    for key, handles in found.links.items():
        (folder / LINKS / key).mkdir(parents=True, exist_ok=True)
        for handle in handles:
            (folder / LINKS / key / handle).touch()
    if found.misnamed:  # a file brought in with the folder's mtime put back (rsync -a, cp -a)
        (folder / MISNAMED).mkdir(parents=True, exist_ok=True)
        for normal, name in found.misnamed.items():
            (folder / MISNAMED / normal).write_text(name, encoding="utf-8")
    (folder / UNREADABLE).mkdir(parents=True, exist_ok=True)
    for name in looked_at:
        marker = folder / UNREADABLE / _ref_key(name)
        if name in found.unreadable:
            marker.write_text(name, encoding="utf-8")
        else:  # fixed in place: it no longer stands in the way of every check by id
            marker.unlink(missing_ok=True)


def misnamed_folder(home: Home, platform: str) -> str | None:
    """A hand-made folder under people/ that means this platform but is not named it (`X/`,
    `x /`): its files are someone's, and tactful would never read them."""
    try:
        names = os.listdir(os.path.join(home.root, "people"))
    except (FileNotFoundError, NotADirectoryError):
        return None
    return next((name for name in sorted(names)
                 if name != platform and name.strip().lower() == platform), None)


def copies_of(home: Home, platform: str, handle: str) -> list[Path]:
    """Hand-made files that stand for this handle but are not `people/<platform>/<handle>.md`
    (`Troll.md`, `troll.MD`, `people/X/troll.md`): forgetting must remove them too."""
    folders = [platform]
    misnamed = misnamed_folder(home, platform)
    try:
        names = os.listdir(home.root / "people")
    except (FileNotFoundError, NotADirectoryError):
        names = []
    if misnamed is not None:
        folders += [n for n in names if n != platform and n.strip().lower() == platform]
    found: list[Path] = []
    for folder in folders:
        path = home.root / "people" / folder
        try:
            files = os.listdir(path)
        except (FileNotFoundError, NotADirectoryError):
            continue
        for name in sorted(files):
            trimmed = name.strip()
            if name.startswith(".") or not trimmed.lower().endswith(".md"):
                continue
            if folder == platform and name == f"{handle}.md":
                continue  # the file itself, which forgetting handles
            with contextlib.suppress(BadInput):
                if normalize_handle(trimmed[:-3].strip(), platform) == handle:
                    found.append(path / name)
    return found


def is_stale(home: Home, platform: str) -> bool:
    """Whether the map may miss a change made behind tactful's back (a writer that finds it
    so before writing rebuilds it after, instead of stamping over the change). Asked under
    `held`."""
    return _stale(home, platform)


def _stale(home: Home, platform: str) -> bool:
    try:
        changed = _changed_at(os.stat(home.people(platform)))
    except FileNotFoundError:
        return False
    try:
        # ">=": a change in the same clock tick as the stamp counts as stale (mtimes are coarse).
        return changed >= os.stat(os.path.join(home.ids(platform), STAMP)).st_mtime_ns
    except FileNotFoundError:
        return True


def _changed_at(folder: os.stat_result) -> int:
    """When the people folder last changed. Its ctime too: `rsync -a`, `cp -a`, `tar x` and
    `touch -d` put a folder's mtime back after adding files to it, and a folder restored by
    `mv` keeps the mtime it had, but no one can set a ctime back."""
    return max(folder.st_mtime_ns, folder.st_ctime_ns)


def _header(path: Path) -> dict[str, Any] | None:
    """The header as the person file's own reader sees it (same YAML, same rules); {} for what
    is no person file (a FIFO, a device: opened without blocking); None for a file that should
    be one but cannot be read, so the map cannot say which id it holds."""
    from tactful.core.memory.personfile import header_fields, header_lines

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return {}
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            # Split as the reader splits (a text-mode read would end a line at a lone "\r"
            # and could stop at a `---` the reader never sees).
            lines = header_lines(handle.read().decode("utf-8"))
        return header_fields(lines) if lines is not None else None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def _header_id(header: dict[str, Any]) -> str | None:
    value = header.get("id")
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    try:
        return normalize_id(str(value))
    except BadInput:
        return None


def _header_links(header: dict[str, Any]) -> list[str]:
    links = header.get("aka")
    if not isinstance(links, list):
        return []
    return [link["ref"] for link in links
            if isinstance(link, dict) and isinstance(link.get("ref"), str)]


Parsed = dict[str, tuple[str | None, list[str]]]  # file name → (header id, aka refs)


@dataclass
class Scan:
    """What one platform's person files say about identity."""

    ids: dict[str, set[str]] = field(default_factory=dict)  # id → handles carrying it
    misnamed: dict[str, str] = field(default_factory=dict)  # handle → the file standing for it
    links: dict[str, set[str]] = field(default_factory=dict)  # hashed ref → handles naming it
    unreadable: list[str] = field(default_factory=list)  # files whose header cannot be read


def scan(people: Path, parsed: Parsed | None = None, names: list[str] | None = None) -> Scan:
    """Every person file's id, every file whose name is not a normalized handle (its id too:
    a misnamed file is still someone), the reverse of every aka link, and the files that
    cannot be read. `parsed` holds headers a caller already read (file name → id and aka
    refs): those files are not read again. `names`: only these files (a sweep)."""
    found = Scan()
    if names is None:
        try:
            names = os.listdir(people)
        except (FileNotFoundError, NotADirectoryError):
            return found
    for name in names:
        # An editor or a copy may save `Troll.MD` or `troll .md`: still someone's file.
        trimmed = name.strip()
        if not trimmed.lower().endswith(".md") or name.startswith("."):
            continue
        try:
            normal = normalize_handle(trimmed[:-3].strip())
        except BadInput:
            continue
        if name != f"{normal}.md":
            found.misnamed[normal] = name
        if parsed is not None and name in parsed:
            raw_id, refs = parsed[name]
            header: dict[str, Any] | None = {"id": raw_id, "aka": [{"ref": r} for r in refs]}
        else:
            header = _header(people / name)
        if header is None:
            found.unreadable.append(name)
            continue
        person_id = _header_id(header)
        if person_id is not None:
            found.ids.setdefault(person_id, set()).add(normal)
        elif header.get("id") is not None:
            # An id line that is no id (`42,`, `[42]`, `4 2`): the reader refuses the file, and
            # which id was meant nobody can say, so no lookup by id may call the id nobody's.
            found.unreadable.append(name)
        for ref in _header_links(header):
            found.links.setdefault(_link_key(ref), set()).add(normal)
    return found


def rebuild(home: Home, platform: str) -> Scan:
    with held(home, platform):
        return _rebuild(home, platform)


def rebuild_held(home: Home, platform: str) -> Scan:
    """`rebuild`, for a caller already inside `held`."""
    return _rebuild(home, platform)


def _rebuild(home: Home, platform: str, parsed: Parsed | None = None,
             read_from: int | None = None) -> Scan:
    import shutil

    # The mark counts from the first header read: a file edited in place after it was read
    # (the caller's parse of a large home takes seconds) must be newer than the mark.
    now = time.time_ns()
    start = (now if read_from is None else min(now, read_from)) - _SWEEP_MARGIN_NS
    found = scan(home.people(platform), parsed)
    # Best effort: a read-only home still gets a correct answer, just not a saved map.
    with contextlib.suppress(OSError):
        folder = home.ids(platform)
        # The stamp goes first: a reader that found it before the emptying below finds it
        # gone after its reading, and reads again under `held` (see _consult).
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            os.unlink(folder / STAMP)
        shutil.rmtree(folder, ignore_errors=True)
        for person_id, handles in found.ids.items():
            (folder / person_id).mkdir(parents=True, exist_ok=True)
            for handle in handles:
                (folder / person_id / handle).touch()
        (folder / MISNAMED).mkdir(parents=True, exist_ok=True)
        for normal, name in found.misnamed.items():
            (folder / MISNAMED / normal).write_text(name, encoding="utf-8")
        for key, handles in found.links.items():
            (folder / LINKS / key).mkdir(parents=True, exist_ok=True)
            for handle in handles:
                (folder / LINKS / key / handle).touch()
        (folder / UNREADABLE).mkdir(parents=True, exist_ok=True)
        for name in found.unreadable:
            (folder / UNREADABLE / _ref_key(name)).write_text(name, encoding="utf-8")
        touch_stamp(home, platform)
        _mark_swept(home, platform, start)
    return found


def rebuild_all(home: Home) -> None:
    try:
        platforms = os.listdir(home.root / "people")
    except FileNotFoundError:
        return
    for platform in platforms:
        if not platform.startswith(".") and (home.root / "people" / platform).is_dir():
            rebuild(home, platform)


def rebuild_from_parsed(home: Home, platform: str, parsed: Parsed, read_from: int) -> Scan:
    """`rebuild_held`, for a caller inside `held` that has just parsed most files of the
    platform (the index's rebuild): `parsed` maps a file name to the id and `aka` refs its
    header holds, and only the headers of the other files are read here. So `tactful reindex`
    parses each header once for the index and the map. `read_from`: when (time.time_ns) the
    caller began reading them; a file changed since is read again by the next sweep."""
    return _rebuild(home, platform, parsed, read_from)
