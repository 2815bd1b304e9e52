"""The do-not-engage check asked again and again in one long process (the companion asks it a
dozen times per message, docs/companion.md "Throughput"): every answer is the file as it is
now, however it was changed, whatever a reader did to the person an earlier check handed out."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tactful.core.config.values import EngagementConfig
from tactful.core.memory import check as checks
from tactful.core.memory.home import Home
from tactful.core.memory.store import People
from tactful.core.send.adapter import Author, Inbound, PostRef
from tactful.routines import worth
from tests.conftest import run_process


@pytest.fixture
def people(cli, home: Path) -> People:  # type: ignore[no-untyped-def]
    for handle, number in (("regular", "111"), ("other", "222")):
        assert cli("--home", str(home), "remember", "telegram", handle, "--kind", "dm",
                   "--inbound", "--id", number, "--they", "said hello").code == 0
    return People(Home(home))


def test_a_flag_typed_into_the_file_in_place_with_the_same_size_and_time_is_refused_at_once(
        people: People, home: Path) -> None:
    path = home / "people" / "telegram" / "regular.md"
    assert checks.check(people, "telegram", "regular", "111").status == checks.KNOWN
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    assert "do_not_engage: false" in text
    # Same length ("true " for "false"), written into the same inode, its times put back: only
    # the bytes tell the change.
    with path.open("r+", encoding="utf-8") as file:
        file.write(text.replace("do_not_engage: false", "do_not_engage: true "))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == \
        (before.st_size, before.st_mtime_ns, before.st_ino)
    for handle, number in (("regular", "111"), ("regular", None), (None, "111")):
        assert checks.check(people, "telegram", handle, number).status == checks.DNE


def test_a_person_flagged_through_tactful_between_two_checks_is_refused(
        cli, people: People, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert checks.check(people, "telegram", "regular", "111").status == checks.KNOWN
    assert cli("--home", str(home), "dne", "telegram", "regular", "on",
               "--reason", "asked").code == 0
    assert checks.check(people, "telegram", "regular", "111").status == checks.DNE


def test_a_file_made_unreadable_between_two_checks_refuses(people: People, home: Path) -> None:
    assert checks.check(people, "telegram", "regular", "111").status == checks.KNOWN
    (home / "people" / "telegram" / "regular.md").write_text("---\nbroken: [\n", encoding="utf-8")
    assert checks.check(people, "telegram", "regular", "111").status == checks.UNREADABLE


def test_a_removed_file_is_a_stranger_at_once(people: People, home: Path) -> None:
    assert checks.check(people, "telegram", "other", "222").status == checks.KNOWN
    (home / "people" / "telegram" / "other.md").unlink()
    verdict = checks.check(people, "telegram", "other", None)
    assert verdict.status == checks.STRANGER and verdict.person is None


def test_a_write_never_changes_the_person_a_check_handed_out(people: People) -> None:
    verdict = checks.check(people, "telegram", "regular", "111")
    assert verdict.person is not None
    entries = len(verdict.person.entries)

    def flag(person):  # type: ignore[no-untyped-def]
        person.do_not_engage = True
        person.dne_reason = "asked"

    people.change("telegram", "regular", flag)
    assert verdict.person.do_not_engage is False and len(verdict.person.entries) == entries
    assert checks.check(people, "telegram", "regular", "111").status == checks.DNE


UNIQUE = "quixotrombone"  # a word only the person's file holds


@pytest.fixture
def flagged(cli, home: Path) -> People:  # type: ignore[no-untyped-def]
    """troll (id 333) is flagged; newname (id 444) is the renamed account of old (id 444),
    which is flagged; regular (id 111) is known, with a word of theirs in the file."""
    for handle, number in (("troll", "333"), ("old", "444"), ("newname", "444"),
                           ("regular", "111")):
        assert cli("--home", str(home), "remember", "telegram", handle, "--kind", "dm",
                   "--inbound", "--id", number, "--they", f"my {UNIQUE} story").code == 0
    for handle in ("troll", "old"):
        assert cli("--home", str(home), "dne", "telegram", handle, "on", "--reason",
                   "asked").code == 0
    return People(Home(home))


def test_changing_the_person_a_check_handed_out_never_unflags_them_for_the_next_check(
        flagged: People) -> None:
    verdict = checks.check(flagged, "telegram", "troll", "333")
    assert verdict.status == checks.DNE and verdict.person is not None
    # A reader that edits what it was shown (a scratch copy it thought was its own).
    verdict.person.do_not_engage = False
    assert checks.check(flagged, "telegram", "troll", "333").status == checks.DNE
    assert checks.check(flagged, "telegram", "troll").status == checks.DNE


def test_changing_the_id_of_the_person_a_check_handed_out_never_hides_their_renamed_account(
        flagged: People) -> None:
    verdict = checks.check(flagged, "telegram", "newname")
    assert verdict.status == checks.DNE and verdict.person is not None
    assert "444" in verdict.why
    verdict.person.id = None  # e.g. a plugin that strips ids before logging what it saw
    assert checks.check(flagged, "telegram", "newname").status == checks.DNE


def test_an_operator_judge_that_edits_the_person_it_is_shown_never_unflags_them(
        flagged: People, home: Path) -> None:
    """The documented plugin API (docs/routines.md, "The operator's judges") hands the judge
    `case.verdict`, whose person is the very object the next check of the gate returns."""
    def judge(case: worth.Case) -> None:
        person = case.verdict.person
        if person is not None:
            person.do_not_engage = False  # the judge's own scratch: "what if they were not"
        return None

    verdict = checks.check(flagged, "telegram", "troll", "333")
    assert verdict.status == checks.DNE
    item = Inbound(post=PostRef(platform="telegram", id="1/1"),
                   author=Author(handle="troll", id="333"), text="hello there, how are you?",
                   at=datetime(2026, 12, 1, tzinfo=UTC))
    worth.decide(worth.Case(item, verdict, EngagementConfig(), frozenset()),
                 [("operator", judge)])
    # The send gate, in the same process, asks again before it sends.
    assert checks.check(flagged, "telegram", "troll", "333").status == checks.DNE


ASKER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from tactful.core.memory import check as checks
    from tactful.core.memory.home import Home
    from tactful.core.memory.store import People

    people = People(Home(Path(sys.argv[1])))  # one People for the whole life of the process
    for line in sys.stdin:
        handle, _, number = line.split()[0], None, (line.split() + [None])[1]
        print(checks.check(people, "telegram", handle, number).status, flush=True)
""")


def test_a_long_lived_process_sees_every_change_other_processes_make_between_its_checks(
        flagged: People, home: Path) -> None:
    """One process keeps its People and checks again and again (the companion's gateway);
    real `tactful` processes flag, rename, add the numeric-id file, hand-make a misnamed file
    and break a file between its checks."""
    with subprocess.Popen([sys.executable, "-c", ASKER, str(home)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as asker:
        _changes_between_checks(asker, home)


def _changes_between_checks(asker: subprocess.Popen[str], home: Path) -> None:

    def ask(handle: str, number: str | None = None) -> str:
        assert asker.stdin is not None and asker.stdout is not None
        asker.stdin.write(f"{handle} {number or ''}\n")
        asker.stdin.flush()
        return asker.stdout.readline().strip()

    def tactful(*argv: str) -> None:
        done = run_process("--home", str(home), *argv)
        assert done.returncode == 0, done.stderr

    people_dir = home / "people" / "telegram"
    try:
        for _ in range(2):
            assert ask("regular", "111") == checks.KNOWN
        tactful("dne", "telegram", "regular", "on", "--reason", "asked")
        assert ask("regular", "111") == checks.DNE
        assert ask("regular") == checks.DNE
        tactful("dne", "telegram", "regular", "off")
        assert ask("regular", "111") == checks.KNOWN
        # Renamed: a new handle with the same id, then the old one flagged.
        tactful("remember", "telegram", "renamed", "--kind", "dm", "--inbound", "--id", "111",
                "--they", "hi")
        assert ask("renamed") == checks.KNOWN
        tactful("dne", "telegram", "regular", "on", "--reason", "asked")
        assert ask("renamed") == checks.DNE
        # The numeric-id file: flagged before they chose a username.
        tactful("remember", "telegram", "bob", "--kind", "dm", "--inbound", "--id", "555",
                "--they", "hi")
        assert ask("bob") == checks.KNOWN
        tactful("remember", "telegram", "555", "--kind", "dm", "--inbound", "--they", "hi")
        tactful("dne", "telegram", "555", "on", "--reason", "asked")
        assert ask("bob") == checks.DNE
        # A misnamed file made by hand for a handle checked (and found a stranger) before.
        assert ask("carol") == checks.STRANGER
        text = (people_dir / "bob.md").read_text(encoding="utf-8")
        (people_dir / "Carol.md").write_text(text.replace("handle: bob", "handle: Carol"),
                                             encoding="utf-8")
        assert ask("carol") == checks.UNREADABLE
        # Broken in place, same size.
        path = people_dir / "newname.md"
        assert ask("newname") == checks.DNE  # through old, id 444
        tactful("dne", "telegram", "old", "off")
        assert ask("newname") == checks.KNOWN
        data = path.read_bytes()
        path.write_bytes(b"\xff" + data[1:])
        assert ask("newname") == checks.UNREADABLE
    finally:
        if asker.poll() is None:
            asker.kill()
