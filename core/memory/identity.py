"""Stable ids: which handles have carried which platform id (SPEC §3).

Handles change, ids do not, so a renamed do-not-engage account must still be found. The map is
a folder per id under `<home>/.ids/<platform>/` holding one empty marker file per handle: adding
a marker is atomic and needs no lock. It is derived data, a hint only: every handle it names is
confirmed against the person file itself, and the whole map is rebuilt from the files whenever
the people folder changed behind tactful's back (its mtime is newer than the map's stamp).
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from tactful.core.errors import BadInput
from tactful.core.memory.handles import normalize_id
from tactful.core.memory.home import Home

STAMP = ".stamp"
_HEADER_ID = re.compile(r"""^id:\s*['"]?([A-Za-z0-9:._-]+)['"]?\s*$""")


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


def forget(home: Home, platform: str, person_id: str, handle: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        (home.ids(platform) / person_id / handle).unlink()


def handles_for(home: Home, platform: str, person_id: str) -> list[str]:
    """Handles that have carried this id, by the map, rebuilt first if it may be stale."""
    if _stale(home, platform):
        mapping = rebuild(home, platform)
        return sorted(mapping.get(person_id, ()))
    try:
        return sorted(os.listdir(home.ids(platform) / person_id))
    except (FileNotFoundError, NotADirectoryError):
        return []


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


def scan(people: Path) -> dict[str, set[str]]:
    """Read only the header of every person file for its id."""
    mapping: dict[str, set[str]] = {}
    try:
        names = os.listdir(people)
    except FileNotFoundError:
        return mapping
    for name in names:
        if not name.endswith(".md") or name.startswith("."):
            continue
        try:
            with open(people / name, encoding="utf-8", errors="replace") as handle:
                if handle.readline().rstrip("\r\n") != "---":
                    continue
                for line in handle:
                    line = line.rstrip("\r\n")
                    if line == "---":
                        break
                    match = _HEADER_ID.match(line)
                    if match:
                        if _safe_id(match.group(1)):
                            mapping.setdefault(match.group(1), set()).add(name[:-3])
                        break
        except OSError:
            continue
    return mapping


def _safe_id(value: str) -> bool:
    try:
        normalize_id(value)
    except BadInput:
        return False
    return True


def rebuild(home: Home, platform: str) -> dict[str, set[str]]:
    mapping = scan(home.people(platform))
    # Best effort: a read-only home still gets a correct answer, just not a saved map.
    with contextlib.suppress(OSError):
        for person_id, handles in mapping.items():
            for handle in handles:
                folder = home.ids(platform) / person_id
                folder.mkdir(parents=True, exist_ok=True)
                (folder / handle).touch()
        touch_stamp(home, platform)
    return mapping
