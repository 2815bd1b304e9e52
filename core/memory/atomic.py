"""Atomic file writes, per-file locks, and reads that cannot hang.

A write goes to a temporary file in the same folder, is fsynced, and replaces the old file in
one `os.replace`; a reader sees the old file or the new one, never half of either. Writers of
the same file hold an exclusive `flock` on a lock file kept apart from the data, so a
read-modify-write cycle of one process cannot lose the entry another just added.

Fail closed, never hang:
- A lock held by a stuck process is waited on for a bounded time (`TACTFUL_LOCK_TIMEOUT`
  seconds, default 10), then the command refuses with `LockBusy` (memory unavailable, exit 4).
- A file of the home is read through `open_regular`/`read_regular`: a FIFO, a device, a socket
  or a folder where a file should be (a symlink to one included) is refused with
  `NotRegularFile`, naming the path, without ever blocking on it. Opening a FIFO for reading
  waits for a writer, and reading /dev/zero never ends: neither may happen to a command.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import math
import os
import stat
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from tactful.core.errors import BadInput, MemoryUnavailable

TEMP_PREFIX = ".tmp-"
LOCK_TIMEOUT_ENV = "TACTFUL_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 10.0  # seconds; every lock of tactful is held for well under that
_OPEN_FLAGS = os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)


# --------------------------------------------------------------------------- regular files only

class NotRegularFile(MemoryUnavailable):
    """A FIFO, device, socket or folder stands where a file of the home should be. Exit 4.

    Not an OSError: code that skips unreadable files in a scan catches it by name (or as
    MemoryUnavailable); a command that needs the file lets it through, and it refuses."""

    def __init__(self, path: Path | str, mode: int) -> None:
        self.path = Path(path)
        self.kind = file_kind(mode)
        super().__init__(f"{path} is {self.kind}, not a regular file; tactful will not read it "
                         "(it could block or never end): move it away")


def file_kind(mode: int) -> str:
    """What a stat mode names, in words: 'a FIFO (named pipe)', 'a folder', ..."""
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def open_regular(path: Path | str, mode: str = "rb", *, encoding: str | None = None,
                 errors: str | None = None) -> IO[Any]:
    """Open a file only if it is a regular file (after symlinks), without ever blocking.

    `mode` is "rb", "r", "ab" or "a" (append creates the file, 0o666 less the umask). A path
    that is anything else raises `NotRegularFile`; a missing file raises FileNotFoundError
    (for reading), and other OSErrors propagate as `open` raises them. The file is checked
    with `stat` before it is opened (so a device is never even opened) and with `fstat` after
    (so a FIFO swapped in between is still refused); it is opened with O_NONBLOCK, so not even
    that swap can make the open itself wait.
    """
    if mode not in ("rb", "r", "ab", "a"):
        raise ValueError(f"open_regular: mode {mode!r} is not rb, r, ab or a")
    reading = mode.startswith("r")
    flags = os.O_RDONLY if reading else os.O_WRONLY | os.O_APPEND | os.O_CREAT
    try:
        before = Path(path).stat()
    except FileNotFoundError:
        if reading:
            raise
    else:
        if not stat.S_ISREG(before.st_mode):
            raise NotRegularFile(path, before.st_mode)
    fd = os.open(path, flags | _OPEN_FLAGS, 0o666)
    try:
        after = os.fstat(fd)
        if not stat.S_ISREG(after.st_mode):
            raise NotRegularFile(path, after.st_mode)
        return os.fdopen(fd, mode, encoding=encoding if "b" not in mode else None,
                         errors=errors if "b" not in mode else None)
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str) -> bytes:
    """The bytes of a regular file; `NotRegularFile` for anything else (see `open_regular`)."""
    with open_regular(path) as handle:
        data: bytes = handle.read()
    return data


def read_regular_stat(path: Path | str) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file and the stat of exactly the file they were read from."""
    with open_regular(path) as handle:
        found = os.fstat(handle.fileno())
        data: bytes = handle.read()
    return data, found


# --------------------------------------------------------------------------- writing

def sha256_hex(data: bytes) -> str:
    """The SHA-256 of a short name, by Python's own SHA-256 (named _sha256 in 3.11, _sha2
    after) where there is one: loading OpenSSL for hashlib costs a `remember` more CPU than
    all its hashing of names. The same digest as hashlib's."""
    return str(_sha256_of()(data).hexdigest())


_SHA256: list[Any] = []


def _sha256_of() -> Any:
    """The SHA-256 constructor, looked up once: a failed import is not cached by Python, and
    trying `_sha2` again for every file cost a sync-log of 10,000 people over a second."""
    if not _SHA256:
        for name in ("_sha2", "_sha256"):
            with contextlib.suppress(ImportError):
                _SHA256.append(__import__(name).sha256)
                break
        else:
            import hashlib  # an interpreter built without its own SHA-256

            _SHA256.append(hashlib.sha256)
    return _SHA256[0]


def temp_prefix(name: str) -> str:
    """Temp files are named by a hash of the target's name: a short name whatever the length
    of the handle (file names stop at 255 bytes), and one that names no one."""
    return f"{TEMP_PREFIX}{sha256_hex(name.encode())[:16]}."


# How tempfile.mkstemp opens a temp file: created here or not at all, never through a symlink.
_TEMP_FLAGS = (os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0))
_TEMP_TRIES = 10_000  # tempfile.TMP_MAX


def make_temp(folder: Path | str, prefix: str) -> tuple[int, str]:
    """A new file of mode 0600 named `prefix` + random letters in `folder`: (fd, absolute
    path), as tempfile.mkstemp makes one, without importing tempfile (with shutil and random,
    a fifth of a bare `remember`'s imports)."""
    base = f"{Path(folder).absolute()}{os.sep}{prefix}"
    for _ in range(_TEMP_TRIES):
        path = base + os.urandom(6).hex()
        try:
            return os.open(path, _TEMP_FLAGS, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no usable temporary file name found", str(folder))


def write_atomic(path: Path, data: str | bytes, *, durable: bool = True) -> os.stat_result:
    """Replace `path` with `data` atomically; returns the stat of exactly what was written.

    The stat is taken before the rename (which keeps inode, size and mtime), so a caller can
    tell later whether the file on disk is still this version or another writer's.
    `durable=False` skips the fsyncs: still all-or-nothing for readers, for files that are
    derived and cheap to lose in a power cut (a composed prompt).
    """
    staged = Staged(path, data, durable=durable)
    staged.replace()
    staged.settle()
    return staged.written


class Staged:
    """A replacement in three steps, for a caller that must do something at the very moment
    the new version takes the name (under a lock of its own) but not wait for the disk there:
    the temp file is written and fsynced here, `replace` renames it into place, `settle`
    makes the rename durable.

    `stage` puts the temp file in another folder of the same file system (a rename across
    folders is just as atomic): writing it then leaves the target's folder untouched, so the
    work before `replace`, fsync included, can run outside a lock that guards that folder.
    Should the two folders be on different file systems, `replace` writes the temp file
    beside the target instead."""

    def __init__(self, path: Path, data: str | bytes, *, durable: bool = True,
                 stage: Path | None = None) -> None:
        self.path, self.durable = path, durable
        self.payload = data.encode("utf-8") if isinstance(data, str) else data
        self.temp = self._write(stage if stage is not None else path.parent)
        self.replaced = False

    def _write(self, folder: Path) -> str:
        fd, temp = make_temp(folder, temp_prefix(self.path.name))
        try:
            try:
                # Straight to the descriptor: a buffered file object around it costs more than
                # the write (a sync-log writes thousands of files).
                view = memoryview(self.payload)
                while view:
                    view = view[os.write(fd, view):]
                if self.durable:
                    os.fsync(fd)
                self.written = os.fstat(fd)
            finally:
                os.close(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        return temp

    def replace(self) -> None:
        try:
            try:
                os.replace(self.temp, self.path)
            except OSError as exc:
                if exc.errno != errno.EXDEV:
                    raise
                self.discard()
                self.temp = self._write(self.path.parent)
                os.replace(self.temp, self.path)
        except BaseException:
            self.discard()
            raise
        self.replaced = True

    def settle(self) -> None:
        if self.durable:
            fsync_folder(self.path.parent)

    def discard(self) -> None:
        """Remove the temp file, unless it has taken its name (a name another writer's temp
        file may have been given since)."""
        if not self.replaced:
            with contextlib.suppress(OSError):
                os.unlink(self.temp)


def fsync_folder(folder: Path) -> None:
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


# --------------------------------------------------------------------------- locks

class LockBusy(MemoryUnavailable):
    """Another process (or task) held a lock past the bounded wait. Exit 4."""

    def __init__(self, lock_path: Path, waited: float, holder: int | None,
                 what: str | None) -> None:
        self.lock_path = lock_path
        self.waited = waited
        self.holder = holder
        if holder == os.getpid():  # `tactful run`: another of this process's own tasks
            who = f"another task of this tactful process (pid {holder})"
        else:
            who = "another tactful process" + (f" (pid {holder})" if holder is not None else "")
        name = f"the lock on {what} ({lock_path})" if what else f"the lock {lock_path}"
        super().__init__(
            f"{name} is held by {who}; waited {waited:g} s and gave up "
            f"— if that process is stuck, stop it, then retry ({LOCK_TIMEOUT_ENV} sets the wait "
            "in seconds)")


def lock_timeout(environ: Mapping[str, str] | None = None) -> float:
    """How long to wait for a lock: $TACTFUL_LOCK_TIMEOUT seconds, else 10."""
    raw = (os.environ if environ is None else environ).get(LOCK_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_LOCK_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise BadInput(f"{LOCK_TIMEOUT_ENV}={raw[:40]!r}: give a number of seconds "
                       f"(0 or more; default {DEFAULT_LOCK_TIMEOUT:g})")
    return value


def _holder(fd: int) -> int | None:
    """The pid holding a flock on this file, from /proc/locks (Linux), if it can be told."""
    try:
        found = os.fstat(fd)
        device = f"{os.major(found.st_dev):02x}:{os.minor(found.st_dev):02x}:{found.st_ino}"
        with open("/proc/locks", encoding="ascii", errors="replace") as locks:
            for line in locks:
                fields = line.split()
                if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
                    continue
                if fields[5] == device and fields[4].isdigit():
                    return int(fields[4])
    except (OSError, ValueError):
        pass
    return None


def _acquire(fd: int, lock_path: Path, timeout: float, what: str | None) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    start = time.monotonic()
    deadline = start + timeout
    # Short pauses first, growing slowly: the locks of a write are held for a few
    # milliseconds, and a waiter asleep long after the holder let go is pure latency (many
    # writers at once would queue on the oversleeping, not on the lock).
    pause = 0.001
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise LockBusy(lock_path, round(time.monotonic() - start, 1), _holder(fd), what)
        time.sleep(min(pause, left))
        pause = min(pause * 1.5, 0.02)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            continue


@contextlib.contextmanager
def locked(lock_path: Path, *, timeout: float | None = None,
           what: str | None = None, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive lock for the duration; released by the kernel if the process dies.

    Waits at most `timeout` seconds (default `lock_timeout()`) for another holder, then raises
    `LockBusy` naming the lock (`what` says whose, for the message). `wait=False` only tries:
    LockBusy at once, without finding out who holds it. A lock that cannot be created raises
    the OSError, as before.
    """
    limit = (lock_timeout() if timeout is None else timeout) if wait else 0.0
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | _OPEN_FLAGS, 0o600)
    except FileNotFoundError:  # the folder first, only when missing (a sync takes thousands)
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | _OPEN_FLAGS, 0o600)
    try:
        if wait:
            _acquire(fd, lock_path, limit, what)
        else:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise LockBusy(lock_path, 0.0, None, what) from None
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def append_line(path: Path, lock: Path, line: bytes, *, what: str | None = None) -> None:
    """Append one line to a JSON-lines file under `lock`, fsynced. A torn last line (a crash
    mid-write) is closed first, so it stays one bad line instead of swallowing this one.
    Anything but a regular file at `path` is refused (`NotRegularFile`), never written into."""
    with locked(lock, what=what):
        try:
            before = Path(path).stat()
        except FileNotFoundError:
            pass
        else:
            if not stat.S_ISREG(before.st_mode):
                raise NotRegularFile(path, before.st_mode)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | _OPEN_FLAGS, 0o600)
        try:
            found = os.fstat(fd)
            if not stat.S_ISREG(found.st_mode):
                raise NotRegularFile(path, found.st_mode)
            size = found.st_size
            payload = line
            if size and os.pread(fd, 1, size - 1) != b"\n":
                payload = b"\n" + payload
            while payload:
                payload = payload[os.write(fd, payload):]
            os.fsync(fd)
        finally:
            os.close(fd)
