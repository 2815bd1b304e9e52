"""The change journal: which person files tactful wrote since the index last looked
(docs/search-and-desk.md, "How the index stays fresh").

`<home>/.locks/index.changes` holds one line per write, `platform/handle`, appended by the
writer right after the file takes its name. The index reads what was appended since it last
looked and re-checks only those files, instead of stat-ing every person file before each search
and desk. The journal says which files to look at, never what they hold: a line for a file that
did not really change costs one stat and one hash.

The first line is a token. The index remembers it with the offset it has read to; a journal
that no longer starts with that token (reset, deleted, replaced, cut short) tells the index it
may have missed lines, and the index then checks every file once (fail safe). Appends take a
shared lock on the journal and resets an exclusive one, so a reset never drops a line appended
while it runs. Lines name people: a rebuild of the index (which `forget` runs) empties the
journal, so no name of a forgotten person stays in it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tactful.core.memory.home import Home

FILE = "index.changes"
# Past this many bytes read, the index empties the journal (under its exclusive lock).
RESET_AFTER = 256 * 1024


def path_of(home: Home) -> Path:
    return home.lock(FILE)


def note_written(home: Home, platform: str, handle: str) -> None:
    """Note that tactful just wrote `people/<platform>/<handle>.md`. Call it after the file has
    its name (after the rename), while still holding the person's lock. Never raises: the
    write it follows stands. When the line cannot be appended, the journal is deleted, so the
    next reader of the index checks every file instead of trusting a journal with a gap."""
    path = path_of(home)
    line = f"{platform}/{handle}\n".encode()
    try:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = _create(path)
        try:
            # Shared: appenders never wait on each other, only on a reset (a moment).
            fcntl.flock(fd, fcntl.LOCK_SH)
            if os.fstat(fd).st_size == 0:
                # Created empty by someone else, or by us, and never given its token: writing
                # the line without one would make every reader sweep anyway; give it one.
                os.write(fd, _token_line())
            if os.write(fd, line) != len(line):
                raise OSError("short write to the change journal")
        finally:
            os.close(fd)  # releases the lock
    except OSError:
        with contextlib.suppress(OSError):
            path.unlink()


def _token_line() -> bytes:
    return f"#{os.urandom(8).hex()}\n".encode()


def _create(path: Path) -> int:
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                   0o600)


@dataclass(frozen=True)
class Read:
    """What the journal holds past a point: the files written, and where the reader now is.
    `complete` is False when lines may have been missed (the journal is not the one the reader
    knew, or holds a line that is not a person file's name): then check every file."""

    token: str
    offset: int
    written: frozenset[tuple[str, str]]
    complete: bool


def read_since(home: Home, token: str | None, offset: int) -> Read:
    """The lines appended after `offset` to the journal that starts with `token`."""
    path = path_of(home)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return Read("", 0, frozenset(), complete=False)
    try:
        with os.fdopen(fd, "rb") as f:
            fd = -1
            first = f.readline()
            found = _token_of(first)
            if found is None or found != token or offset < len(first):
                # Another journal than the one last read: everything may have changed.
                f.seek(0)
                rest = f.read()
                return _parsed(found or "", rest, base=0, complete=False)
            f.seek(offset)
            return _parsed(found, f.read(), base=offset, complete=True)
    except OSError:
        return Read("", 0, frozenset(), complete=False)
    finally:
        if fd >= 0:
            os.close(fd)


def _token_of(first: bytes) -> str | None:
    if first.startswith(b"#") and first.endswith(b"\n"):
        return first[1:-1].decode("ascii", "replace")
    return None


def _parsed(token: str, data: bytes, *, base: int, complete: bool) -> Read:
    end = data.rfind(b"\n") + 1  # a line still being written is read next time
    written: set[tuple[str, str]] = set()
    for raw in data[:end].split(b"\n")[:-1]:
        if raw.startswith(b"#") and base == 0 and not written:
            continue  # the token
        platform, sep, handle = raw.decode("utf-8", "replace").partition("/")
        if not sep or not platform or not handle or "/" in handle:
            complete = False  # a torn line: some write is unnamed
            continue
        written.add((platform, handle))
    return Read(token, base + end, frozenset(written), complete)


@contextlib.contextmanager
def _exclusive(home: Home) -> Iterator[int]:
    path = path_of(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)


def reset(home: Home, since: int | None = None) -> tuple[str, int]:
    """Empty the journal and give it a new token; returns (token, offset) to remember.

    With `since` (an offset of the current journal, taken before a rebuild read the files), the
    lines appended after it are kept: their writes may have come after the rebuild read those
    files. Without it, every line goes (a rebuild under the index lock, which read every file
    after every earlier write finished)."""
    with _exclusive(home) as fd:
        kept = b""
        if since is not None:
            size = os.fstat(fd).st_size
            if size > since:
                kept = os.pread(fd, size - since, since)
                kept = kept[:kept.rfind(b"\n") + 1]
        token = _token_line()
        os.ftruncate(fd, 0)
        os.pwrite(fd, token + kept, 0)
        return token[1:-1].decode("ascii"), len(token)


def size(home: Home) -> int:
    """Bytes in the journal now (0 when there is none): where a rebuild starts from."""
    try:
        return path_of(home).stat().st_size
    except OSError:
        return 0
