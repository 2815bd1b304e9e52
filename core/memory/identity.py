"""Stable ids: which handles have carried which platform id (SPEC §3).

Handles change, ids do not, so a renamed do-not-engage account must still be found. The map is
a folder per id under `<home>/.ids/<platform>/` holding one empty marker file per handle: adding
a marker is atomic and needs no lock. It is derived data, a hint only: every handle it names is
confirmed against the person file itself, and the whole map is rebuilt from the files whenever
the people folder changed behind tactful's back (its mtime is newer than the map's stamp), and
by `tactful reindex`.

The rebuild also notes person files whose names are not normalized handles (`Troll.md`, made
by hand): `check` cannot find them by name, so it refuses for that handle instead of calling
the person a stranger.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from tactful.core.errors import BadInput
from tactful.core.memory.handles import normalize_handle, normalize_id
from tactful.core.memory.home import Home

STAMP = ".stamp"
MISNAMED = ".misnamed"


def record(home: Home, platform: str, person_id: str, handle: str) -> None:
    folder = home.ids(platform) / person_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / handle).touch()
    touch_stamp(home, platform)


def touch_stamp(home: Home, platform: str) -> None:
    stamp = home.ids(platform) / STAMP
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()
    os.utime(stamp)


def handles_for(home: Home, platform: str, person_id: str) -> list[str]:
    """Handles that have carried this id, by the map, rebuilt first if it may be stale."""
    if _stale(home, platform):
        return sorted(rebuild(home, platform)[0].get(person_id, ()))
    try:
        return sorted(os.listdir(home.ids(platform) / person_id))
    except (FileNotFoundError, NotADirectoryError):
        return []


def misnamed_file(home: Home, platform: str, handle: str) -> str | None:
    """The name of a hand-made file that means this handle but is not `<handle>.md`."""
    if _stale(home, platform):
        return rebuild(home, platform)[1].get(handle)
    try:
        return (home.ids(platform) / MISNAMED / handle).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None


def _stale(home: Home, platform: str) -> bool:
    try:
        people_mtime = home.people(platform).stat().st_mtime_ns
    except FileNotFoundError:
        return False
    try:
        # ">=": a change in the same clock tick as the stamp counts as stale (mtimes are coarse).
        return people_mtime >= (home.ids(platform) / STAMP).stat().st_mtime_ns
    except FileNotFoundError:
        return True


def _header_id(path: Path) -> str | None:
    """The id as the person file's own reader sees it (same YAML, same rules), or None."""
    from tactful.core.memory.personfile import header_fields

    try:
        with open(path, encoding="utf-8") as handle:
            if handle.readline().rstrip("\r\n") != "---":
                return None
            lines = []
            for line in handle:
                line = line.rstrip("\r\n")
                if line == "---":
                    break
                lines.append(line)
        value = header_fields(lines).get("id")
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    try:
        return normalize_id(str(value))
    except BadInput:
        return None


def scan(people: Path) -> tuple[dict[str, set[str]], dict[str, str]]:
    """Every person file's id, and every file whose name is not a normalized handle."""
    ids: dict[str, set[str]] = {}
    misnamed: dict[str, str] = {}
    try:
        names = os.listdir(people)
    except FileNotFoundError:
        return ids, misnamed
    for name in names:
        if not name.endswith(".md") or name.startswith("."):
            continue
        stem = name[:-3]
        try:
            normal = normalize_handle(stem)
        except BadInput:
            continue
        if normal != stem:
            misnamed[normal] = name
            continue
        person_id = _header_id(people / name)
        if person_id is not None:
            ids.setdefault(person_id, set()).add(stem)
    return ids, misnamed


def rebuild(home: Home, platform: str) -> tuple[dict[str, set[str]], dict[str, str]]:
    ids, misnamed = scan(home.people(platform))
    # Best effort: a read-only home still gets a correct answer, just not a saved map.
    with contextlib.suppress(OSError):
        folder = home.ids(platform)
        shutil.rmtree(folder, ignore_errors=True)
        for person_id, handles in ids.items():
            (folder / person_id).mkdir(parents=True, exist_ok=True)
            for handle in handles:
                (folder / person_id / handle).touch()
        (folder / MISNAMED).mkdir(parents=True, exist_ok=True)
        for normal, name in misnamed.items():
            (folder / MISNAMED / normal).write_text(name, encoding="utf-8")
        touch_stamp(home, platform)
    return ids, misnamed


def rebuild_all(home: Home) -> None:
    try:
        platforms = os.listdir(home.root / "people")
    except FileNotFoundError:
        return
    for platform in platforms:
        if not platform.startswith(".") and (home.root / "people" / platform).is_dir():
            rebuild(home, platform)
