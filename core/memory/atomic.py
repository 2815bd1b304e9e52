"""Atomic file writes and per-file locks: a crash or two writers never tear a file.

A write goes to a temporary file in the same folder, is fsynced, and replaces the old file in
one `os.replace`; a reader sees the old file or the new one, never half of either. Writers of
the same file hold an exclusive `flock` on a lock file kept apart from the data, so a
read-modify-write cycle of one process cannot lose the entry another just added.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

TEMP_PREFIX = ".tmp-"


def temp_prefix(name: str) -> str:
    """Temp files are named by a hash of the target's name: a short name whatever the length
    of the handle (file names stop at 255 bytes), and one that names no one."""
    return f"{TEMP_PREFIX}{hashlib.sha256(name.encode()).hexdigest()[:16]}."


def write_atomic(path: Path, data: str | bytes, *, durable: bool = True) -> os.stat_result:
    """Replace `path` with `data` atomically; returns the stat of exactly what was written.

    The stat is taken before the rename (which keeps inode, size and mtime), so a caller can
    tell later whether the file on disk is still this version or another writer's.
    `durable=False` skips the fsyncs: still all-or-nothing for readers, for files that are
    derived and cheap to lose in a power cut (a composed prompt).
    """
    import tempfile  # here, not above: readers (check, card) never pay for it

    payload = data.encode("utf-8") if isinstance(data, str) else data
    folder = path.parent
    fd, temp = tempfile.mkstemp(prefix=temp_prefix(path.name), dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
            written = os.fstat(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if durable:
        _fsync_folder(folder)
    return written


def _fsync_folder(folder: Path) -> None:
    # The rename itself is only durable once the folder's entry is on disk.
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive lock for the duration; released by the kernel if the process dies."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def append_line(path: Path, lock: Path, line: bytes) -> None:
    """Append one line to a JSON-lines file under `lock`, fsynced. A torn last line (a crash
    mid-write) is closed first, so it stays one bad line instead of swallowing this one."""
    with locked(lock):
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            payload = line
            if size and os.pread(fd, 1, size - 1) != b"\n":
                payload = b"\n" + payload
            while payload:
                payload = payload[os.write(fd, payload):]
            os.fsync(fd)
        finally:
            os.close(fd)
