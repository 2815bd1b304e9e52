"""Crashes and concurrent writers: a file is always old or new, never torn, and nothing is lost."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tactful.core.memory import personfile
from tactful.core.memory.atomic import temp_prefix

TZ = ZoneInfo("America/New_York")

RAW_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from tactful.core.memory.atomic import write_atomic
    path = Path(sys.argv[1])
    n = 0
    print("ready", flush=True)
    while True:
        n += 1
        # ~2 MB per version, so a kill lands mid-write often
        write_atomic(path, (f"version {n}\\n" * 150_000) + f"end {n}\\n")
""")

REMEMBER_WRITER = textwrap.dedent("""
    import contextlib, io, sys
    from tactful.core.cli.main import main
    home = sys.argv[1]
    n = 0
    while True:
        n += 1
        with contextlib.redirect_stdout(io.StringIO()):
            main(["--home", home, "remember", "x", "target", "--kind", "reply",
                  "--they", f"message number {n} " + "padding " * 30])
        if n == 1:
            # The handshake comes after the first write has landed: on a loaded machine a kill
            # before it would leave nothing to check, and prove nothing.
            print("ready", flush=True)
""")

CONCURRENT_WORKER = textwrap.dedent("""
    import sys
    from tactful.core.cli.main import main
    home, worker = sys.argv[1], sys.argv[2]
    for n in range(10):
        code = main(["--home", home, "remember", "x", "shared", "--kind", "reply",
                     "--they", f"w{worker}-m{n}", "--at", f"2026-10-{1 + n:02d}T10:00:00-04:00"])
        assert code == 0, code
""")


def _start(script: str, *args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


def _kill(proc: subprocess.Popen[str], delay: float) -> None:
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()


def _version_is_whole(text: str) -> bool:
    lines = text.split("\n")
    if len(lines) != 150_002 or lines[-1] != "":
        return False
    n = lines[0].removeprefix("version ")
    return all(line == f"version {n}" for line in lines[:-2]) and lines[-2] == f"end {n}"


@pytest.mark.slow
def test_killed_writer_leaves_old_or_new_never_torn(tmp_path: Path) -> None:
    path = tmp_path / "target.md"
    rng = random.Random(7)
    seen_versions = set()
    for _ in range(25):
        proc = _start(RAW_WRITER, str(path))
        _kill(proc, rng.uniform(0.02, 0.4))
        if path.exists():
            text = path.read_text()
            assert _version_is_whole(text), "torn file after a kill"
            seen_versions.add(text.split("\n", 1)[0])
    assert seen_versions, "the writer never finished a single version: the test proved nothing"
    leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
    # A temporary file may be left behind by a kill; it is hidden and never read as a person.
    assert all(p.name.startswith(temp_prefix("target.md")) for p in leftovers)


@pytest.mark.slow
def test_killed_remember_never_corrupts_the_person(tmp_path: Path) -> None:
    home = tmp_path / "home"
    rng = random.Random(11)
    counts = []
    for _ in range(20):
        proc = _start(REMEMBER_WRITER, str(home))
        _kill(proc, rng.uniform(0.05, 0.5))
        path = home / "people" / "x" / "target.md"
        if path.exists():
            person = personfile.read(path, TZ, "x", "target")
            counts.append(person.interaction_count())
    assert len(counts) == 20, "a run left no file although its first write had landed"
    assert counts == sorted(counts), "an entry was lost or the file went backwards"
    assert counts[0] >= 1


@pytest.mark.slow
def test_eight_processes_ten_entries_each_all_eighty_kept(tmp_path: Path) -> None:
    home = tmp_path / "home"
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT_WORKER, str(home), str(w)],
                              stderr=subprocess.PIPE, text=True) for w in range(8)]
    for proc in procs:
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
    path = home / "people" / "x" / "shared.md"
    person = personfile.read(path, TZ, "x", "shared")
    assert person.interaction_count() == 80
    text = path.read_text()
    for w in range(8):
        for n in range(10):
            assert f"w{w}-m{n}" in text, f"lost w{w}-m{n}"
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tmp-")]
    assert [p.name for p in (home / "people" / "x").iterdir()] == ["shared.md"]


def test_a_person_file_is_staged_outside_its_folder_and_a_leftover_is_never_a_person(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    import os

    assert cli("remember", "x", "bob", "--kind", "reply", "--they", "hi", "--id", "4242").code == 0
    staging = home / "people" / ".staging" / "x"
    assert staging.is_dir() and not list(staging.iterdir())  # the temp file took its name
    assert [p.name for p in (home / "people" / "x").iterdir()] == ["bob.md"]
    # What a writer killed before its rename leaves: a whole copy, in the staging folder.
    bob = home / "people" / "x" / "bob.md"
    left = staging / (temp_prefix("bob.md") + "k1ll3d")
    left.write_text(bob.read_text().replace("hi", "left behind"))
    os.utime(left, (1_700_000_000, 1_700_000_000))
    assert '"handle": "bob"' not in cli("search", "behind", "--json").out  # never indexed
    assert cli("check", "x", "carol", "--id", "4242").code == 0  # nor read by the id map
    assert cli("forget", "x", "bob").code == 0
    assert not left.exists()  # a copy of a forgotten person's file goes with them


def test_a_temp_file_is_made_new_private_and_named_for_its_target(tmp_path: Path) -> None:
    # What tempfile.mkstemp guaranteed before atomic made its own: a new file (never one that
    # was there, nor through a symlink planted under a likely name), mode 0600, in the folder.
    import os
    import stat

    from tactful.core.memory.atomic import make_temp

    made = set()
    for _ in range(50):
        fd, name = make_temp(tmp_path, temp_prefix("bob.md"))
        os.close(fd)
        path = Path(name)
        assert path.is_absolute() and path.parent == tmp_path
        assert path.name.startswith(temp_prefix("bob.md"))
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        made.add(name)
    assert len(made) == 50


def test_a_temp_file_is_never_one_already_there(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from tactful.core.memory import atomic

    names = iter([b"\0" * 6, b"\0" * 6, b"\1" * 6])
    monkeypatch.setattr(os, "urandom", lambda n: next(names))
    taken = tmp_path / (temp_prefix("bob.md") + (b"\0" * 6).hex())
    taken.write_text("someone else's")
    fd, name = atomic.make_temp(tmp_path, temp_prefix("bob.md"))
    os.close(fd)
    assert name == str(tmp_path / (temp_prefix("bob.md") + (b"\1" * 6).hex()))
    assert taken.read_text() == "someone else's"


def test_names_are_hashed_as_hashlib_hashes_them() -> None:
    # The lock and temp file names of a person must not change with how they are hashed: a
    # writer of another build must take the same lock.
    import hashlib

    from tactful.core.memory.atomic import sha256_hex
    from tactful.core.memory.home import Home

    for text in ("", "x/bob", "telegram/Zoë 😀" * 40):
        assert sha256_hex(text.encode()) == hashlib.sha256(text.encode()).hexdigest()
    lock = Home(Path("/h")).person_lock("x", "bob")
    assert lock.name == hashlib.sha256(b"x/bob").hexdigest()[:32] + ".lock"
    assert temp_prefix("bob.md") == ".tmp-" + hashlib.sha256(b"bob.md").hexdigest()[:16] + "."
