"""How the index stays fresh without a stat of every file (docs/search-and-desk.md, "How the
index stays fresh"): the change journal, the folders, the sweep, and what forget leaves."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from tactful.core.memory import changes
from tactful.core.memory.home import Home

NOW = "2026-11-29T12:00:00-05:00"


@pytest.fixture(autouse=True)
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TACTFUL_NOW", NOW)


def found(cli, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    result = cli("search", query, "--json")
    assert result.code == 0, result.err
    return [f"{h['platform']}/{h['handle']}" for h in json.loads(result.out)["results"]]


def last_sweep(home: Path) -> str:
    db = sqlite3.connect(home / "index.sqlite")
    try:
        return str(db.execute("SELECT value FROM meta WHERE key = 'swept'").fetchone()[0])
    finally:
        db.close()


def edit_in_place(path: Path, old: str, new: str) -> None:
    """Written into the same file, as `>>` or some editors do: same inode, folder untouched."""
    with open(path, "r+", encoding="utf-8") as f:
        text = f.read().replace(old, new)
        f.seek(0)
        f.write(text)
        f.truncate()


def test_a_person_file_written_by_remember_is_found_by_the_next_search_without_a_sweep(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    assert found(cli, "sourdough") == ["x/alpha"]
    swept = last_sweep(home)
    assert cli("remember", "x", "bravo", "--kind", "reply", "--they", "ciabatta").code == 0
    assert cli("remember", "bluesky", "carol", "--kind", "reply", "--they", "focaccia").code == 0
    assert found(cli, "ciabatta") == ["x/bravo"]
    assert found(cli, "focaccia") == ["bluesky/carol"]
    assert last_sweep(home) == swept  # found through the journal and the folders only


def test_a_file_noted_in_the_change_journal_is_reread_though_its_folder_did_not_change(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    assert found(cli, "sourdough") == ["x/alpha"]
    path = home / "people" / "x" / "alpha.md"
    edit_in_place(path, "sourdough", "pumpernickel")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    changes.note_written(Home(home), "x", "alpha")
    assert found(cli, "pumpernickel") == ["x/alpha"]
    assert found(cli, "sourdough") == []


def test_an_in_place_edit_no_one_noted_waits_for_the_sweep(  # type: ignore[no-untyped-def]
        cli, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The documented limit: no journal line, no folder change, so search sees it only when
    # the sweep is due (and `tactful hot` at once).
    from tactful.core.memory import index

    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    assert found(cli, "sourdough") == ["x/alpha"]
    path = home / "people" / "x" / "alpha.md"
    edit_in_place(path, "sourdough", "pumpernickel")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    assert found(cli, "pumpernickel") == []
    monkeypatch.setattr(index, "SWEEP_EVERY", 0.0)
    assert found(cli, "pumpernickel") == ["x/alpha"]


def test_a_journal_that_went_missing_makes_the_next_search_look_at_every_file(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    assert found(cli, "sourdough") == ["x/alpha"]
    path = home / "people" / "x" / "alpha.md"
    edit_in_place(path, "sourdough", "pumpernickel")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    changes.path_of(Home(home)).unlink()  # as a writer that could not append does
    assert found(cli, "pumpernickel") == ["x/alpha"]


def test_a_torn_journal_line_makes_the_next_search_look_at_every_file(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    assert found(cli, "sourdough") == ["x/alpha"]
    path = home / "people" / "x" / "alpha.md"
    edit_in_place(path, "sourdough", "pumpernickel")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    with open(changes.path_of(Home(home)), "ab") as journal:
        journal.write(b"x\n")  # no handle: some write is unnamed
    assert found(cli, "pumpernickel") == ["x/alpha"]


def test_a_deleted_files_entries_leave_the_results(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    assert cli("remember", "x", "bravo", "--kind", "reply", "--they", "sourdough").code == 0
    assert sorted(found(cli, "sourdough")) == ["x/alpha", "x/bravo"]
    (home / "people" / "x" / "alpha.md").unlink()
    assert found(cli, "sourdough") == ["x/bravo"]


def test_a_platform_folder_made_or_removed_by_hand_enters_or_leaves_the_results(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    assert found(cli, "sourdough") == ["x/alpha"]
    folder = home / "people" / "bluesky"
    folder.mkdir()
    (folder / "dora.md").write_text(
        "---\nplatform: bluesky\nhandle: dora\n---\n\n## Pinned\n"
        "1. loves sourdough — they said, 2026-11-01\n")
    assert sorted(found(cli, "sourdough")) == ["bluesky/dora", "x/alpha"]
    (folder / "dora.md").unlink()
    folder.rmdir()
    assert found(cli, "sourdough") == ["x/alpha"]


def test_forget_leaves_nothing_in_the_journal(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "forget_me_please", "--kind", "reply", "--they", "hi").code == 0
    assert cli("remember", "x", "bystander", "--kind", "reply", "--they", "hello").code == 0
    assert found(cli, "hello") == ["x/bystander"]
    # As a writer notes every write (whether or not this build's writers already do).
    changes.note_written(Home(home), "x", "forget_me_please")
    changes.note_written(Home(home), "x", "bystander")
    assert b"forget_me_please" in changes.path_of(Home(home)).read_bytes()
    assert cli("forget", "x", "forget_me_please").code == 0
    assert b"forget_me_please" not in changes.path_of(Home(home)).read_bytes()
    assert found(cli, "hello") == ["x/bystander"]


def test_a_write_noted_while_the_index_was_rebuilt_is_looked_at_after_it(  # type: ignore[no-untyped-def]
        home: Path) -> None:
    # A rebuild empties the journal, but keeps what was appended after it began reading.
    place = Home(home)
    changes.note_written(place, "x", "before")
    since = changes.size(place)
    changes.note_written(place, "x", "during")
    token, offset = changes.reset(place, since)
    read = changes.read_since(place, token, offset)
    assert read.complete and read.written == frozenset({("x", "during")})
    assert b"before" not in changes.path_of(place).read_bytes()


def test_reindex_maps_a_stable_id_from_the_same_reading_of_the_files(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "hi").code == 0
    (home / "people" / "x" / "troll.md").write_text(
        "---\nplatform: x\nhandle: troll\nid: '777'\ndo_not_engage: true\n---\n")
    # A body the index cannot read: the map still reads its header.
    (home / "people" / "x" / "ogre.md").write_text(
        "---\nplatform: x\nhandle: ogre\nid: '888'\ndo_not_engage: true\n---\n\nnonsense\n")
    result = cli("reindex")
    assert result.code == 0 and "ogre.md" in result.err
    assert cli("check", "x", "renamed", "--id", "777").code == 3  # the map knows id 777
    assert (home / ".ids" / "x" / "777" / "troll").exists()
    assert (home / ".ids" / "x" / "888" / "ogre").exists()


def test_a_search_catching_up_a_file_tactful_wrote_loads_no_yaml_parser_nor_openssl(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    # The file is written as a writer writes it, its tone included ("asks questions, replies
    # back"), but not caught up by that writer's desk: the next search reads it, and a header
    # of tactful's own shape must not cost it PyYAML at the command's start, nor hashing one
    # file the loading of OpenSSL (hashlib).
    import subprocess
    import sys
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from tactful.core.memory import personfile
    from tactful.core.memory.person import Entry, Person

    def search(word: str) -> subprocess.CompletedProcess[str]:
        probe = ("import sys\n"
                 "from tactful.core.cli.main import main\n"
                 f"code = main(['--home', {str(home)!r}, 'search', {word!r}, '--json'])\n"
                 "print(code, 'yaml' in sys.modules, 'hashlib' in sys.modules)")
        return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              check=True, env={**os.environ, "TACTFUL_NOW": NOW})

    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    search("sourdough")  # what a first run of a home does once (the config's view kept) is done
    tz = ZoneInfo("America/New_York")
    at = datetime(2026, 11, 20, 9, tzinfo=tz)
    person = Person(platform="x", handle="bravo", tone_notes="asks questions, replies back",
                    tone_basis=1, entries=[Entry(at=at, kind="reply", direction="inbound",
                                                 they="any ciabatta?")])
    (home / "people" / "x" / "bravo.md").write_text(personfile.dumps(person, tz))
    done = search("ciabatta")
    lines = done.stdout.strip().splitlines()
    assert '"handle": "bravo"' in done.stdout
    assert lines[-1] == "0 False False"


def test_the_index_keeps_the_sha256_of_each_file_whichever_implementation_hashed_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The first files a process hashes go through Python's own SHA-256, the rest through
    # OpenSSL's: a catch-up compares what either stored with what either computes now.
    import hashlib
    from zoneinfo import ZoneInfo

    from tactful.core.memory import index, personfile
    from tactful.core.memory.person import Person
    from tactful.core.memory.settings import MemorySettings

    folder = tmp_path / "people" / "x"
    folder.mkdir(parents=True)
    for n in range(index._SMALL_SHA_FILES + 8):
        person = Person(platform="x", handle=f"user{n:02d}", display_name=f"User {n}")
        (folder / f"user{n:02d}.md").write_text(personfile.dumps(person, ZoneInfo("UTC")))
    monkeypatch.setattr(index, "_hashed", 0)
    index.rebuild(Home(tmp_path), MemorySettings(tz=ZoneInfo("UTC")))
    db = sqlite3.connect(tmp_path / index.FILE)
    try:
        kept = dict(db.execute("SELECT handle, sha FROM files"))
    finally:
        db.close()
    assert kept == {path.stem: hashlib.sha256(path.read_bytes()).hexdigest()
                    for path in folder.glob("*.md")}
