"""Who holds a ledger row, and whether they are certainly gone (docs/sending.md, "The ledger").

Every open ledger that claims or repairs a send holds an exclusive `flock` on a lock file of its
own, `<home>/.locks/ledger/<token>.lock`, until it closes; the row it claims carries the token.
The kernel drops the lock when the process dies, `kill -9` included, and a lock is held per
open file, so two ledgers open in one process (two routines of `tactful run` in threads) each
see the other as alive. A row whose holder still holds its lock is never repaired by anyone
else: its own sender writes the memory. Anything unclear (a token that is not ours to read, a
lock file that cannot be opened) counts as alive: a repair that waits costs one run's delay, a
repair that doubles writes memory twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import uuid
from pathlib import Path

FOLDER = Path(".locks") / "ledger"
_TOKEN = re.compile(r"[0-9a-f]{32}")
_FLAGS = os.O_RDWR | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


class Holder:
    """This ledger's lock, taken on first use and held until `close`."""

    def __init__(self, root: Path) -> None:
        self.folder = root / FOLDER
        self.folder.mkdir(parents=True, exist_ok=True)
        sweep(root)
        token = uuid.uuid4().hex
        # Locked under a name no sweeper looks at, then renamed into view: a sweeper that found
        # the file before it was locked would take it for a dead holder's.
        staging = self.folder / f"{token}.new"
        fd = os.open(staging, _FLAGS | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            staging.rename(self.folder / f"{token}.lock")
        except OSError:
            os.close(fd)
            raise
        self.token, self._fd = token, fd

    def close(self) -> None:
        # Unlinked while still locked: a checker that opens it afterwards finds no file, and
        # one that opened it before finds the lock held until this very moment.
        with contextlib.suppress(OSError):
            os.unlink(self.folder / f"{self.token}.lock")
        os.close(self._fd)


def gone(root: Path, token: str) -> bool:
    """Whether the holder of `token` is certainly gone: its lock file is missing or lockable.
    A lock found free is taken and its file removed, so it is found gone only once."""
    if not _TOKEN.fullmatch(token):
        return False
    path = root / FOLDER / f"{token}.lock"
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        return True  # closed cleanly (or swept after dying)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # held: the holder is alive
        with contextlib.suppress(OSError):
            os.unlink(path)
        return True
    finally:
        os.close(fd)


def sweep(root: Path) -> None:
    """Remove the lock files that dead holders left (a process killed while its ledger was
    open): each is found free and unlinked by `gone`."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(root / FOLDER):
            if entry.name.endswith(".lock"):
                gone(root, entry.name.removesuffix(".lock"))
