"""The few values of the config that memory reads (the persona's time zone and owners, and
`memory.compact_after` / `memory.keep_full`), without the schema when the file was read before.

`tactful check` runs before every reply, and reading a config file (YAML with positions, then
the schema) cost it more than its own work. So once a file has been read whole and found good,
these values are kept in the memory home (`<home>/.cache/config/`), beside the SHA-256 of the
file's exact bytes (never the bytes: a comment may hold a password or someone's handle, and
`forget` cannot take those from the user's own file). The next command that names the same
home reads the file again (a few kilobytes), hashes it, and uses the kept values only when
nothing differs: not the file's path, not one byte of it, not the source of the code that
judges it. Anything else (no copy, an
unreadable or malformed copy, a file that is no longer a regular file) means the file is read
whole, as if there were no copy, and an error in it is reported as always. Nothing is kept of a
file that does not load.

The copy lives in the home, so it is used only when the home is named before the config is
read (`--home` or `$TACTFUL_HOME`): a home named by `memory.home` is known only by reading the
file. Beside it, `user-folder.json` keeps where platformdirs puts the user's own config file,
for the circumstances it was asked in (`user_config_file`). Every copy is read only when it is
a regular file; a damaged one is ignored, never trusted.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from tactful.core.memory.clock import DEFAULT_TIMEZONE

if TYPE_CHECKING:
    from hashlib import sha256

    from .values import Config
else:
    try:  # the interpreter's own SHA-256: hashlib loads OpenSSL, a cost `check` would notice
        from _sha256 import sha256
    except ImportError:
        from hashlib import sha256

# The defaults of `memory.*` (and, from memory's clock, of `persona.timezone`), here so that a
# run without a config file needs no `Config` to know them: values.py declares its fields
# with these.
TIMEZONE = DEFAULT_TIMEZONE
COMPACT_AFTER = 50
KEEP_FULL = 20

FORMAT = 2  # 1 kept the file's text
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
        copy = json.loads(_regular(_copy(home, config), 4 * MAX_BYTES) or b"null")
        current = _read(config)
        if current is None or not isinstance(copy, dict):
            return None
        if (copy.get("format") != FORMAT or copy.get("path") != str(config)
                or copy.get("digest") != _digest(current) or copy.get("code") != _code()):
            return None
        values = copy["values"]
        timezone, owners = values["timezone"], values["owners"]
        compact_after, keep_full = values["compact_after"], values["keep_full"]
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        return None
    if not (isinstance(timezone, str) and isinstance(owners, list)
            and all(isinstance(o, str) for o in owners)
            and _count(compact_after) and _count(keep_full)):
        return None  # not what `keep` writes: read the file whole
    return MemoryView(timezone, tuple(owners), compact_after, keep_full)


def keep(home: Path, config: Path, loaded: Config, text: str | None = None) -> None:
    """Keep the values of a file that just loaded, for the next command. Best effort: a home
    that cannot be written (or is not a memory home) keeps nothing, and that is no error.
    `text`: the file as it was read just before it loaded (`file_text`), for a command that
    keeps only once it has succeeded: a file edited meanwhile is then a stranger to the copy."""
    from tactful.core.memory.atomic import write_atomic

    text = _read(config) if text is None else text
    if text is None or not (home / "people").is_dir():
        return
    copy = {"format": FORMAT, "path": str(config), "digest": _digest(text), "code": _code(),
            "values": MemoryView.of(loaded)._fields()}
    target = _copy(home, config)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, json.dumps(copy, ensure_ascii=False), durable=False)
    except OSError:
        pass


def user_config_file(home: Path, *, keep: bool = True) -> Path | None:
    """Where the user's own config file goes (`loader.user_config_file`), asked of platformdirs
    once per circumstance: the answer is kept in the home beside a fingerprint of everything it
    depends on (the Python, the system, the user id, the whole environment, hashed: it may hold
    secrets; and platformdirs' own source). Any difference, or a home directory named other
    than by an absolute $HOME (platformdirs then asks the password database), asks again.
    Importing platformdirs (with tempfile and shutil) cost `tactful check` a fifth of a bare
    interpreter start. With `keep` False a kept answer is read but none is written: `remember`
    keeps one only once it has succeeded (core/cli/context.py)."""
    from .loader import user_config_file as ask

    circumstances = _circumstances()
    if circumstances is None:
        return ask()
    kept = home / ".cache" / "config" / "user-folder.json"
    try:
        copy = json.loads(_regular(kept, 1 << 16) or b"null")
        if isinstance(copy, dict) and copy.get("format") == FORMAT \
                and copy.get("circumstances") == circumstances:
            answer = copy["answer"]
            if answer is None or (isinstance(answer, str) and Path(answer).is_absolute()):
                return None if answer is None else Path(answer)
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        pass
    found = ask()
    if keep and (home / "people").is_dir():
        from tactful.core.memory.atomic import write_atomic

        copy = {"format": FORMAT, "circumstances": circumstances,
                "answer": None if found is None else str(found)}
        try:
            kept.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(kept, json.dumps(copy), durable=False)
        except OSError:
            pass
    return found


def _circumstances() -> str | None:
    from importlib.util import find_spec

    if not Path(os.environ.get("HOME", "")).is_absolute():
        return None
    try:
        spec = find_spec("platformdirs")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    source = []
    for folder in spec.submodule_search_locations:
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                info = os.stat(os.path.join(folder, name))  # noqa: PTH116, PTH118
                source.append((folder, name, info.st_mtime_ns, info.st_size))
    uid = os.getuid() if hasattr(os, "getuid") else None
    described = repr((sys.version, sys.platform, uid, sorted(os.environ.items()), source))
    return sha256(described.encode("utf-8", "surrogateescape")).hexdigest()


def file_text(config: Path) -> str | None:
    """The file's bytes as `keep` hashes them, or None (not a regular file, or too big)."""
    return _read(config)


def _copy(home: Path, config: Path) -> Path:
    # One copy per config path (a home may be used with more than one file); the name is only
    # a spread, the path itself is compared inside.
    return home / ".cache" / "config" / f"{zlib.crc32(str(config).encode()):08x}.json"


def _read(config: Path) -> str | None:
    """The file's bytes as text that round-trips exactly (a byte that is no UTF-8 included),
    or None when it is not a regular file or is too big to be a config."""
    data = _regular(config, MAX_BYTES + 1)
    if data is None or len(data) > MAX_BYTES:
        return None
    return data.decode("utf-8", "surrogateescape")


def _digest(text: str) -> str:
    return sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _regular(path: Path, limit: int) -> bytes | None:
    """At most `limit` bytes of a regular file, or None: anything else is never read (a pipe
    put in the file's place would hang the reader)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb") as file:
            fd = -1
            return file.read(limit)
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)


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
