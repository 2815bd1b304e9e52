"""The memory home: one folder that holds everything a persona remembers (docs/memory.md)."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from pathlib import Path

from tactful.core.errors import MemoryUnavailable


def resolve_home(cli_home: str | None, environ: Mapping[str, str],
                 config_home: Path | None) -> Path:
    """--home, then $TACTFUL_HOME, then memory.home in the config, then the user data dir."""
    if cli_home:
        return Path(cli_home).expanduser()
    if environ.get("TACTFUL_HOME"):
        return Path(environ["TACTFUL_HOME"]).expanduser()
    if config_home is not None:
        return config_home
    import platformdirs  # only here: most runs name their home

    return Path(platformdirs.user_data_dir("tactful", appauthor=False))


class Home:
    """A memory home, by its root folder. Immutable, equal by root. A plain class, not a
    dataclass: `check` starts before every reply, and generating a frozen dataclass's methods
    at import cost it more than all of what this class does."""

    __slots__ = ("_folders", "root")
    root: Path
    _folders: dict[tuple[str, str], Path]

    def __init__(self, root: Path) -> None:
        object.__setattr__(self, "root", root)
        # The folders of each platform, made once: the do-not-engage check asks for them a
        # few dozen times per check, and building a Path costs more than the check's stat.
        object.__setattr__(self, "_folders", {})

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Home is read-only (cannot set {name})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Home is read-only (cannot delete {name})")

    def __eq__(self, other: object) -> bool:
        return other.__class__ is self.__class__ and other.root == self.root

    def __hash__(self) -> int:
        return hash((self.root,))

    def __repr__(self) -> str:
        return f"Home(root={self.root!r})"

    def __reduce__(self) -> tuple[type[Home], tuple[Path]]:  # copy and pickle, read-only too
        return (Home, (self.root,))

    def people(self, platform: str) -> Path:
        return self._folder("people", platform)

    def person_path(self, platform: str, handle: str) -> Path:
        return self.people(platform) / f"{handle}.md"

    def _folder(self, top: str, platform: str) -> Path:
        found = self._folders.get((top, platform))
        if found is None:
            found = self._folders[(top, platform)] = self.root / top / platform
        return found

    def person_lock(self, platform: str, handle: str) -> Path:
        # Named by a hash, so the lock file (which must outlive a forgotten person: removing a
        # lock another process may be waiting on would let two writers in) names no one.
        from tactful.core.memory.atomic import sha256_hex  # only writers lock a person

        digest = sha256_hex(f"{platform}/{handle}".encode())[:32]
        return self._folder(".locks/people", platform) / f"{digest}.lock"

    def ids(self, platform: str) -> Path:
        return self._folder(".ids", platform)

    def lock(self, name: str) -> Path:
        """`<home>/.locks/<name>`, made once (writers take a few locks for every file)."""
        return self._folder(".locks", name)

    @property
    def engagement_log(self) -> Path:
        return self.root / "engagement.jsonl"

    def require_readable(self) -> None:
        """Fail closed when the home is missing: a wrong path must never read as 'no one known'."""
        if not self.root.exists():
            raise MemoryUnavailable(
                f"memory home {self.root} does not exist; point --home or TACTFUL_HOME at it, "
                "or record someone first with `tactful remember`"
            )
        if not self.root.is_dir():
            raise MemoryUnavailable(f"memory home {self.root} is not a folder; fix --home")
        if not os.access(self.root, os.R_OK | os.X_OK):
            raise MemoryUnavailable(f"memory home {self.root} is not readable; fix its permissions")

    def require_people(self) -> None:
        """For `check` and `card`: a home with no people/ folder is the wrong folder, not an
        empty memory, until proven otherwise; answering "stranger" there would be a lie."""
        self.require_readable()
        if not (self.root / "people").is_dir():
            raise MemoryUnavailable(
                f"{self.root} holds no people/ folder, so it does not look like a memory home; "
                "check --home / TACTFUL_HOME (a new home gets one with its first `remember`)"
            )

    def prepare_folder(self, folder: Path) -> None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise unwritable(folder, exc) from exc


class Unwritable(MemoryUnavailable):
    """A write the system refused (read-only home, no permission, full disk). Exit 4.

    Unlike a file that does not parse, this is about the home, not one person: a command
    that carries on past one person's bad file stops here."""


def unwritable(path: Path, exc: OSError) -> Unwritable:
    """The one-line refusal for a write that failed: which path, and why in plain words."""
    if exc.errno == errno.EROFS:
        why = "read-only file system"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        why = "read-only or not permitted"
    elif exc.errno in (errno.ENOSPC, errno.EDQUOT):
        why = "the disk is full"
    elif exc.errno in (errno.ENOTDIR, errno.EEXIST):
        why = "a file stands where a folder should be"
    elif exc.errno == errno.EISDIR:
        why = "a folder stands where a file should be"
    else:
        why = exc.strerror or str(exc)
    return Unwritable(
        f"cannot write {path}: {why}; that file was not changed — fix the home or choose "
        "another --home"
    )
