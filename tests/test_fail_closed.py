"""Fail closed, and never hang.

Every command runs as a real process with a timeout, so a hang fails the test instead of
hanging the suite:
- a FIFO, a symlink to /dev/zero or to a FIFO, or a folder named `<handle>.md` among the person
  files is never opened: a command that needs that person refuses (exit 4, naming the path), a
  scan skips it with a warning naming the path, and nothing else is held up;
- on a read-only home every writing command exits 4 with one line naming what it could not
  write; the readers (check, card, export) still answer;
- a lock held by a stuck process is waited on for TACTFUL_LOCK_TIMEOUT seconds, then the
  command refuses (exit 4) naming the lock and saying another tactful process holds it.

A read-only home, for root (who ignores permission bits), is made two ways: a read-only bind
mount of the home inside a private mount namespace (`unshare --mount`, so writes fail with
EROFS and nothing outside the child process sees the mount), and immutable files
(`chattr +i`, EPERM). Without root the mount runs in a user namespace
(`unshare --map-root-user --mount`) and the files are made read-only with chmod.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from tactful.core.memory.atomic import DEFAULT_LOCK_TIMEOUT, LOCK_TIMEOUT_ENV, lock_timeout
from tactful.core.memory.home import Home

from .conftest import tree

HANG = 30  # seconds: a command that takes this long is hung, and the test fails
FIXED_AT = "2026-01-15T12:00:00+00:00"
JOURNAL_MONTH = "2026-01"


def tactful(home: Path, *argv: str, env: dict[str, str] | None = None,
            wrap: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    """Run `tactful --home HOME ARGV...` in a real process, in a clean environment."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TACTFUL_")}
    environ.update(env or {})
    return subprocess.run([*wrap, sys.executable, "-m", "tactful.core.cli", "--home", str(home),
                           *argv], env=environ, cwd=home.parent, capture_output=True,
                          text=True, timeout=HANG, check=False)


def one_line(text: str) -> bool:
    return text.count("\n") == 1 and "Traceback" not in text


# --------------------------------------------------------------------------- the home

@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small home: alice (an open item), bob (a pin, a flag, id 42), a journal, an index, a
    desk, a tombstone and an engagement log. Built once; tests copy it."""
    home = tmp_path_factory.mktemp("template") / "home"
    steps: list[tuple[str, ...]] = [
        ("remember", "x", "alice", "--kind", "reply", "--they", "hello there",
         "--open", "send her the slides", "--at", FIXED_AT),
        ("remember", "x", "bob", "--kind", "reply", "--they", "hello from bob", "--id", "42",
         "--at", FIXED_AT),
        ("pin", "x", "bob", "calls it the desk", "--by", "them"),
        ("flag", "x", "bob", "watch"),
        ("journal", "first note", "--at", FIXED_AT),
        ("forget", "x", "carol"),
        ("search", "hello"),
        ("hot",),
    ]
    for argv in steps:
        done = tactful(home, *argv)
        assert done.returncode == 0, (argv, done.stderr)
    events = [{"time": FIXED_AT, "platform": "x", "handle": handle, "action": "reply",
               "text": f"a reply to {handle}", "url": f"https://x.com/me/status/{n}"}
              for n, handle in enumerate(("bob", "evil"), 1)]
    (home / "engagement.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return home


@pytest.fixture
def home(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(template, copy, symlinks=True)
    return copy


# --------------------------------------------------------------------------- non-regular files

def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _link_to_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _link_to_fifo(path: Path) -> None:
    target = path.parent.parent.parent.parent / "elsewhere.fifo"
    os.mkfifo(target)
    path.symlink_to(target)


def _folder(path: Path) -> None:
    path.mkdir()
    (path / "inside.md").write_text("---\nplatform: x\nhandle: evil\n---\n")


KINDS: dict[str, Callable[[Path], None]] = {
    "a FIFO": _fifo,
    "a symlink to /dev/zero": _link_to_zero,
    "a symlink to a FIFO": _link_to_fifo,
    "a folder named evil.md": _folder,
}


# Every kind with every command: the FIFO in the quick run, the others with the slow tests.
EACH_KIND = [pytest.param(kind, marks=() if kind == "a FIFO" else pytest.mark.slow)
             for kind in KINDS]


def make_evil(home: Path, kind: str) -> Path:
    """people/x/evil.md becomes something that is not a regular file."""
    path = home / "people" / "x" / "evil.md"
    KINDS[kind](path)
    return path


@pytest.fixture(params=list(KINDS))
def evil(request: pytest.FixtureRequest, home: Path) -> Path:
    return make_evil(home, request.param)


NEEDS_EVIL = {
    "check": ("check", "x", "evil"),
    "check (with bob)": ("check", "x", "bob", "evil"),
    "card": ("card", "x", "evil"),
    "card --json": ("card", "x", "evil", "--json"),
    "export": ("export", "x", "evil"),
    "remember": ("remember", "x", "evil", "--kind", "reply", "--they", "hi"),
    "pin": ("pin", "x", "evil", "a pin", "--by", "them"),
    "unpin": ("unpin", "x", "evil", "1"),
    "resolve": ("resolve", "x", "evil", "1"),
    "flag": ("flag", "x", "evil", "spam"),
    "unflag": ("unflag", "x", "evil", "spam"),
    "dne": ("dne", "x", "evil", "on"),
    "set": ("set", "x", "evil", "--kind", "bot"),
    "link": ("link", "x:bob", "x:evil", "--proof", "https://example.com/proof"),
}


@pytest.mark.parametrize("command", list(NEEDS_EVIL))
@pytest.mark.parametrize("kind", EACH_KIND)
def test_a_non_regular_person_file_never_hangs_and_refuses_a_command_that_needs_it(
        home: Path, kind: str, command: str) -> None:
    evil = make_evil(home, kind)
    before = tree(home / "people")
    done = tactful(home, *NEEDS_EVIL[command])
    assert done.returncode == 4, (done.returncode, done.stdout, done.stderr)
    if command.startswith("check"):
        line = next(x for x in done.stdout.splitlines() if x.startswith("x/@evil:"))
        assert line.startswith("x/@evil: REFUSED — memory unavailable:") and str(evil) in line
        assert done.stderr == ""
    else:
        assert one_line(done.stderr) and str(evil) in done.stderr, done.stderr
        assert done.stderr.startswith("tactful: memory unavailable: ")
        assert "not a regular file" in done.stderr
    assert tree(home / "people") == before  # refused: nothing written, nothing replaced
    assert os.path.lexists(evil) and not evil.is_file()


SCANS = {
    "search": ("search", "hello"),
    "reindex": ("reindex",),
    "hot": ("hot",),
}


@pytest.mark.parametrize("command", list(SCANS))
def test_a_non_regular_person_file_is_skipped_with_a_warning_by_every_scan(
        evil: Path, home: Path, command: str) -> None:
    done = tactful(home, *SCANS[command])
    assert done.returncode == 0, done.stderr
    [warning] = [x for x in done.stderr.splitlines() if str(evil) in x]
    assert warning.startswith("tactful: warning: not indexed: ") and "not a regular file" in warning
    assert "Traceback" not in done.stderr
    if command == "search":
        assert "x/@bob" in done.stdout  # everyone else is still found


ABOUT_SOMEONE_ELSE = {
    "check": ("check", "x", "bob"),
    "check --id": ("check", "x", "bob", "--id", "42"),  # walks every file for the id map
    "card": ("card", "x", "alice"),
    "remember": ("remember", "x", "bob", "--kind", "reply", "--they", "again"),
    "journal": ("journal", "another note"),
    "forget": ("forget", "x", "alice"),
}


@pytest.mark.parametrize("command", list(ABOUT_SOMEONE_ELSE))
@pytest.mark.parametrize("kind", EACH_KIND)
def test_a_non_regular_person_file_never_hangs_commands_about_someone_else(
        home: Path, kind: str, command: str) -> None:
    make_evil(home, kind)
    # The id map is stale (the folder changed behind tactful), so it is rebuilt from the files.
    os.utime(home / "people" / "x")
    done = tactful(home, *ABOUT_SOMEONE_ELSE[command])
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr


def test_a_non_regular_person_file_holds_back_only_that_persons_events_in_sync_log(
        evil: Path, home: Path) -> None:
    done = tactful(home, "sync-log")
    assert done.returncode == 4, done.stderr
    [refusal] = [x for x in done.stderr.splitlines() if str(evil) in x]
    assert "events for x/@evil wait" in refusal
    assert "https://x.com/me/status/1" in (home / "people" / "x" / "bob.md").read_text()
    assert os.path.lexists(evil) and not evil.is_file()


def test_forget_removes_a_non_regular_person_file_without_reading_it(
        evil: Path, home: Path) -> None:
    done = tactful(home, "forget", "x", "evil")
    assert done.returncode == 0, done.stderr
    assert not os.path.lexists(evil)
    assert Path("/dev/zero").exists()


@pytest.mark.parametrize(("where", "command", "code"), [
    ("engagement.jsonl", ("export", "x", "bob"), 4),
    ("engagement.jsonl", ("sync-log",), 4),
    ("engagement.jsonl", ("forget", "x", "bob"), 4),
    ("tombstones.jsonl", ("sync-log",), 4),
    ("tombstones.jsonl", ("forget", "x", "bob"), 4),
    (f"journal/{JOURNAL_MONTH}.md", ("journal", "a note", "--at", FIXED_AT), 4),
    ("rules.md", ("hot",), 0),
    (".sync-state.json", ("sync-log",), 0),
], ids=lambda v: v if isinstance(v, str) else (" ".join(v) if isinstance(v, tuple) else None))
def test_a_fifo_elsewhere_in_the_home_never_hangs_a_command(
        home: Path, where: str, command: tuple[str, ...], code: int) -> None:
    path = home / where
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    done = tactful(home, *command)
    assert done.returncode == code, (done.stdout, done.stderr)
    if code == 4:
        assert one_line(done.stderr) and str(path) in done.stderr, done.stderr
        assert done.stderr.startswith("tactful: memory unavailable: ")
    elif where == "rules.md":
        assert str(path) in done.stdout and "not a regular file" in done.stdout


def test_sync_log_refuses_a_log_that_is_a_fifo(home: Path) -> None:
    fifo = home.parent / "log.fifo"
    os.mkfifo(fifo)
    done = tactful(home, "sync-log", "--log", str(fifo))
    assert done.returncode == 2 and one_line(done.stderr)
    assert "not a regular file" in done.stderr and str(fifo) in done.stderr


# --------------------------------------------------------------------------- a read-only home

WRITERS = {
    "remember": ("remember", "x", "bob", "--kind", "reply", "--they", "again"),
    "remember a new person": ("remember", "x", "newcomer", "--kind", "reply"),
    "pin": ("pin", "x", "bob", "another pin", "--by", "me"),
    "unpin": ("unpin", "x", "bob", "1"),
    "resolve": ("resolve", "x", "alice", "1"),
    "flag": ("flag", "x", "bob", "spam"),
    "unflag": ("unflag", "x", "bob", "watch"),
    "dne": ("dne", "x", "bob", "on"),
    "set": ("set", "x", "bob", "--kind", "bot"),
    "link": ("link", "x:alice", "x:bob", "--proof", "https://example.com/proof"),
    "journal": ("journal", "a note"),
    "sync-log": ("sync-log",),
    "forget": ("forget", "x", "bob"),
    "forget someone unknown": ("forget", "x", "nobody"),
    "search": ("search", "hello"),
    "reindex": ("reindex",),
    "hot": ("hot",),
}
READERS = {
    "check": ("check", "x", "bob", "alice"),
    "card": ("card", "x", "bob"),
    "export": ("export", "x", "bob"),
}


def _mount_wrap(home: Path) -> list[str]:
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    return [unshare, *user, "--mount", "--", "sh", "-c",
            'mount --bind -o ro "$0" "$0" && exec "$@"', str(home)]


def _freeze(root: Path, on: bool) -> None:
    if os.geteuid() == 0:
        chattr = shutil.which("chattr")
        assert chattr, "chattr is needed to make a folder read-only for root"
        subprocess.run([chattr, "-R", "+i" if on else "-i", str(root)], check=on)
        return
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            mode = path.stat().st_mode
            path.chmod(mode & ~0o222 if on else mode | 0o200)


@pytest.fixture(scope="module", params=["read-only mount", "immutable files"])
def read_only_home(request: pytest.FixtureRequest, template: Path,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    """A copy of the template that no tactful process can write to, and the wrapper that
    runs a command there. The mount is made per process, in its own namespace."""
    home = tmp_path_factory.mktemp("read-only") / "home"
    shutil.copytree(template, home, symlinks=True)
    if request.param == "read-only mount":
        wrap = _mount_wrap(home)
        probe = subprocess.run([*wrap, "touch", str(home / "probe")], capture_output=True,
                               text=True, timeout=HANG, check=False) if wrap else None
        if probe is None or "Read-only file system" not in probe.stderr:
            why = probe.stderr.strip() if probe else "no unshare"
            if os.environ.get("CI"):
                # CI runs as root on a machine that has mount namespaces: a mount that cannot
                # be made there is a broken check, not a reason to check less.
                pytest.fail(f"cannot make a read-only bind mount in CI: {why}")
            # Elsewhere (a container without mount namespaces) the "immutable files" variant
            # of this fixture still runs every test against a home no process can write.
            pytest.skip(f"cannot make a read-only bind mount here (needs unshare and mount "
                        f"namespaces; the immutable-files variant still runs): {why}")
        assert not (home / "probe").exists()
        yield home, wrap
        return
    _freeze(home, True)
    try:
        with pytest.raises(OSError):
            (home / "probe").write_text("x")
        yield home, []
    finally:
        _freeze(home, False)


@pytest.mark.parametrize("command", list(WRITERS))
def test_every_writing_command_on_a_read_only_home_exits_4_with_one_line(
        read_only_home: tuple[Path, list[str]], command: str) -> None:
    home, wrap = read_only_home
    before = tree(home)
    done = tactful(home, *WRITERS[command], wrap=wrap)
    assert done.returncode == 4, (done.returncode, done.stdout, done.stderr)
    assert one_line(done.stderr), done.stderr
    assert done.stderr.startswith("tactful: memory unavailable: cannot write "), done.stderr
    assert "read-only" in done.stderr and str(home) in done.stderr
    assert tree(home) == before


@pytest.mark.parametrize("command", list(READERS))
def test_a_read_only_home_still_answers_the_readers(
        read_only_home: tuple[Path, list[str]], command: str) -> None:
    home, wrap = read_only_home
    done = tactful(home, *READERS[command], wrap=wrap)
    assert done.returncode == 0, done.stderr
    assert "x/@bob" in done.stdout or "bob" in done.stdout


# --------------------------------------------------------------------------- locks

HOLDER = """\
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


@contextmanager
def holding(lock: Path, seconds: float = 120) -> Iterator[subprocess.Popen[str]]:
    """Another process takes the flock on `lock` and sits on it (a stuck tactful)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock), str(seconds)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


def _person_lock(home: Path, handle: str) -> Path:
    return Home(home).person_lock("x", handle)


LOCKS: dict[str, tuple[Callable[[Path], Path], tuple[str, ...]]] = {
    "a person's lock, remember": (lambda h: _person_lock(h, "bob"),
                                  ("remember", "x", "bob", "--kind", "reply", "--they", "hi")),
    "a person's lock, forget": (lambda h: _person_lock(h, "bob"), ("forget", "x", "bob")),
    "the index lock, search": (lambda h: h / ".locks" / "index.lock", ("search", "hello")),
    "the index lock, reindex": (lambda h: h / ".locks" / "index.lock", ("reindex",)),
    "the desk lock, hot": (lambda h: h / ".locks" / "desk.lock", ("hot",)),
    "the sync-log lock, sync-log": (lambda h: h / ".locks" / "sync-log.lock", ("sync-log",)),
    "a journal month's lock, journal": (
        lambda h: h / ".locks" / "journal" / f"{JOURNAL_MONTH}.lock",
        ("journal", "a note", "--at", FIXED_AT)),
    "the engagement log lock, forget": (lambda h: h / ".locks" / "engagement.lock",
                                        ("forget", "x", "bob")),
    "the tombstones lock, forget": (lambda h: h / ".locks" / "tombstones.lock",
                                    ("forget", "x", "bob")),
}


@pytest.mark.parametrize("case", list(LOCKS))
def test_a_lock_held_by_a_stuck_process_is_waited_on_then_refused_with_exit_4(
        home: Path, case: str) -> None:
    lock_of, command = LOCKS[case]
    lock = lock_of(home)
    with holding(lock) as holder:
        start = time.monotonic()
        done = tactful(home, *command, env={LOCK_TIMEOUT_ENV: "1"})
        took = time.monotonic() - start
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert one_line(done.stderr), done.stderr
    assert done.stderr.startswith("tactful: memory unavailable: ")
    assert str(lock) in done.stderr and "held by another tactful process" in done.stderr
    if Path("/proc/locks").exists():
        assert f"(pid {holder.pid})" in done.stderr
    assert 1 <= took < 1 + HANG / 3, took  # waited the second, and then not much longer


def test_a_write_stands_when_only_the_index_is_held_by_a_stuck_process(home: Path) -> None:
    with holding(home / ".locks" / "index.lock"):
        done = tactful(home, "remember", "x", "bob", "--kind", "reply", "--they", "still here",
                       env={LOCK_TIMEOUT_ENV: "1"})
    assert done.returncode == 0, done.stderr
    assert "the desk was not regenerated" in done.stderr
    assert "still here" in (home / "people" / "x" / "bob.md").read_text()
    searched = tactful(home, "search", "still here")  # the index catches up afterwards
    assert searched.returncode == 0 and "x/@bob" in searched.stdout, searched.stderr


def test_check_never_waits_for_a_writers_lock(home: Path) -> None:
    with holding(_person_lock(home, "bob")), holding(home / ".locks" / "index.lock"):
        start = time.monotonic()
        done = tactful(home, "check", "x", "bob", env={LOCK_TIMEOUT_ENV: "20"})
        took = time.monotonic() - start
    assert done.returncode == 0 and "x/@bob: ok" in done.stdout, done.stderr
    assert took < 10, took


def test_a_lock_released_within_the_wait_lets_the_command_through(home: Path) -> None:
    with holding(_person_lock(home, "bob"), seconds=1) as holder:
        done = tactful(home, "remember", "x", "bob", "--kind", "reply", "--they", "waited",
                       env={LOCK_TIMEOUT_ENV: "15"})
        assert holder.wait(timeout=HANG) == 0  # it let go by itself, it was not killed
    assert done.returncode == 0, done.stderr
    assert "waited" in (home / "people" / "x" / "bob.md").read_text()


def test_the_lock_wait_is_10_seconds_unless_set_and_a_bad_setting_is_exit_2(
        home: Path) -> None:
    assert lock_timeout({}) == DEFAULT_LOCK_TIMEOUT == 10
    assert lock_timeout({LOCK_TIMEOUT_ENV: "2.5"}) == 2.5
    for bad in ("soon", "-1", "nan", "inf"):
        done = tactful(home, "remember", "x", "bob", "--kind", "reply",
                       env={LOCK_TIMEOUT_ENV: bad})
        assert done.returncode == 2 and one_line(done.stderr), (bad, done.stderr)
        assert LOCK_TIMEOUT_ENV in done.stderr


SAME_PROCESS = """\
import sys
from pathlib import Path
from tactful.core.memory.atomic import LockBusy, locked
lock = Path(sys.argv[1])
try:
    with locked(lock), locked(lock, timeout=0.2, what="it"):
        print("taken twice")
except LockBusy as exc:
    print(exc)
with locked(lock, timeout=0):  # released: taken at once, even with no wait at all
    print("taken again")
"""


def test_a_lock_held_by_another_task_of_the_same_process_is_named_as_such(
        tmp_path: Path) -> None:
    lock = tmp_path / "same.lock"
    done = subprocess.run([sys.executable, "-c", SAME_PROCESS, str(lock)], capture_output=True,
                          text=True, timeout=HANG, check=False)
    assert done.returncode == 0, done.stderr
    refused, again = done.stdout.splitlines()
    assert refused.startswith(f"the lock on it ({lock}) is held by another task of this "
                              "tactful process (pid ") or not Path("/proc/locks").exists()
    assert f"the lock on it ({lock}) is held by " in refused
    assert again == "taken again"


# --------------------------------------------------------------------------- the helper itself

OPEN_REGULAR = """\
import sys
from tactful.core.memory.atomic import NotRegularFile, open_regular, read_regular
path, mode = sys.argv[1], sys.argv[2]
try:
    if mode == "rb":
        read_regular(path)
    else:
        open_regular(path, mode, encoding="utf-8").close()
except NotRegularFile as exc:
    print(f"refused: {exc.kind}: {exc}")
else:
    print("opened")
"""


@pytest.mark.parametrize("mode", ["rb", "r", "a"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_open_regular_refuses_what_is_not_a_regular_file_without_blocking(
        tmp_path: Path, kind: str, mode: str) -> None:
    folder = tmp_path / "a" / "b" / "c"
    folder.mkdir(parents=True)
    path = folder / "evil.md"
    KINDS[kind](path)
    done = subprocess.run([sys.executable, "-c", OPEN_REGULAR, str(path), mode],
                          capture_output=True, text=True, timeout=HANG, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused: ") and str(path) in done.stdout, done.stdout


def test_open_regular_reads_and_appends_to_a_regular_file_and_its_symlink(tmp_path: Path) -> None:
    from tactful.core.memory.atomic import open_regular, read_regular

    real = tmp_path / "real.md"
    real.write_text("one\n")
    link = tmp_path / "link.md"
    link.symlink_to(real)
    with open_regular(link, "a", encoding="utf-8") as handle:
        handle.write("two\n")
    assert read_regular(link) == b"one\ntwo\n"
    with open_regular(tmp_path / "new.md", "ab") as handle:  # append creates
        handle.write(b"x")
    assert read_regular(tmp_path / "new.md") == b"x"
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing.md")
