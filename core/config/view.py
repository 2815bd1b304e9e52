"""The few values of the config that memory reads (the persona's time zone and owners, and
`memory.compact_after` / `memory.keep_full`), without the schema when the file was read before.

`tactful check` runs before every reply, and reading a config file (YAML with positions, then
the schema) cost it more than its own work. So once a file has been read whole and found good,
these values are kept in the memory home (`<home>/.cache/config/`), beside a copy of the file's
exact bytes. The next command that names the same home reads the file again (a few kilobytes),
compares byte for byte, and uses the kept values only when nothing differs: not the file's
path, not one byte of it, not the source of the code that judges it. Anything else (no copy, an
unreadable or malformed copy, a file that is no longer a regular file) means the file is read
whole, as if there were no copy, and an error in it is reported as always. Nothing is kept of a
file that does not load.

The copy lives in the home, so it is used only when the home is named before the config is
read (`--home` or `$TACTFUL_HOME`): a home named by `memory.home` is known only by reading the
file.
"""

from __future__ import annotations

import json
import os
import stat
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from tactful.core.memory.clock import DEFAULT_TIMEZONE

if TYPE_CHECKING:
    from .values import Config

# The defaults of `memory.*` (and, from memory's clock, of `persona.timezone`), here so that a
# run without a config file needs no `Config` to know them: values.py declares its fields
# with these.
TIMEZONE = DEFAULT_TIMEZONE
COMPACT_AFTER = 50
KEEP_FULL = 20

FORMAT = 1
MAX_BYTES = 1 << 20  # as the reader: a bigger file is refused there, never kept here
_CODE = Path(__file__).resolve().parent  # the loader, the schema and this module


class MemoryView:
    """What memory needs of a config, and no more."""

    __slots__ = ("compact_after", "keep_full", "owners", "timezone")

    def __init__(self, timezone: str = TIMEZONE, owners: tuple[str, ...] = (),
                 compact_after: int = COMPACT_AFTER, keep_full: int = KEEP_FULL) -> None:
        self.timezone, self.owners = timezone, owners
        self.compact_after, self.keep_full = compact_after, keep_full

    @classmethod
    def of(cls, config: Config) -> MemoryView:
        return cls(config.persona.timezone, tuple(config.persona.owners),
                   config.memory.compact_after, config.memory.keep_full)

    def _fields(self) -> dict[str, object]:
        return {"timezone": self.timezone, "owners": list(self.owners),
                "compact_after": self.compact_after, "keep_full": self.keep_full}


def kept(home: Path, config: Path) -> MemoryView | None:
    """The values kept for exactly this file as it is now, or None: read the file whole."""
    try:
        with open(_copy(home, config), "rb") as file:
            copy = json.loads(file.read(4 * MAX_BYTES))
        current = _read(config)
        if current is None or not isinstance(copy, dict):
            return None
        if (copy.get("format") != FORMAT or copy.get("path") != str(config)
                or copy.get("text") != current or copy.get("code") != _code()):
            return None
        values = copy["values"]
        timezone, owners = values["timezone"], values["owners"]
        compact_after, keep_full = values["compact_after"], values["keep_full"]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not (isinstance(timezone, str) and isinstance(owners, list)
            and all(isinstance(o, str) for o in owners)
            and _count(compact_after) and _count(keep_full)):
        return None  # not what `keep` writes: read the file whole
    return MemoryView(timezone, tuple(owners), compact_after, keep_full)


def keep(home: Path, config: Path, loaded: Config) -> None:
    """Keep the values of a file that just loaded, for the next command. Best effort: a home
    that cannot be written (or is not a memory home) keeps nothing, and that is no error."""
    from tactful.core.memory.atomic import write_atomic

    text = _read(config)
    if text is None or not (home / "people").is_dir():
        return
    copy = {"format": FORMAT, "path": str(config), "text": text, "code": _code(),
            "values": MemoryView.of(loaded)._fields()}
    target = _copy(home, config)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, json.dumps(copy, ensure_ascii=False), durable=False)
    except OSError:
        pass


def _copy(home: Path, config: Path) -> Path:
    # One copy per config path (a home may be used with more than one file); the name is only
    # a spread, the path itself is compared inside.
    return home / ".cache" / "config" / f"{zlib.crc32(str(config).encode()):08x}.json"


def _read(config: Path) -> str | None:
    """The file's bytes as text that round-trips exactly (a byte that is no UTF-8 included),
    or None when it is not a regular file (a pipe is never opened for reading: it could
    hang)."""
    try:
        fd = os.open(config, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb") as file:
            fd = -1
            data = file.read(MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    return data.decode("utf-8", "surrogateescape") if len(data) <= MAX_BYTES else None


def _code() -> list[list[object]]:
    """The source of what judges a config (this package): an upgrade or an edit of the schema
    makes every kept copy a stranger, so the file is judged again by the new rules."""
    found: list[list[object]] = []
    for name in sorted(os.listdir(_CODE)):
        if name.endswith(".py"):
            info = (_CODE / name).stat()
            found.append([name, info.st_mtime_ns, info.st_size])
    return found


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
