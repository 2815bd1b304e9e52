"""The do-not-engage check asked again and again in one long process (the companion asks it a
dozen times per message, docs/companion.md "Throughput"): every answer is the file as it is
now, however it was changed, and what a check parsed is not kept past its time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tactful.core.memory import check as checks
from tactful.core.memory import store
from tactful.core.memory.home import Home
from tactful.core.memory.store import People


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
    assert cli("--home", str(home), "dne", "telegram", "regular", "on", "--reason", "asked").code == 0
    assert checks.check(people, "telegram", "regular", "111").status == checks.DNE


def test_a_file_made_unreadable_between_two_checks_refuses(people: People, home: Path) -> None:
    assert checks.check(people, "telegram", "regular", "111").status == checks.KNOWN
    (home / "people" / "telegram" / "regular.md").write_text("---\nbroken: [\n", encoding="utf-8")
    assert checks.check(people, "telegram", "regular", "111").status == checks.UNREADABLE


def test_a_removed_file_is_a_stranger_at_once_and_no_parsed_copy_is_kept(
        people: People, home: Path) -> None:
    assert checks.check(people, "telegram", "other", "222").status == checks.KNOWN
    (home / "people" / "telegram" / "other.md").unlink()
    verdict = checks.check(people, "telegram", "other", None)
    assert verdict.status == checks.STRANGER and verdict.person is None
    assert all("other.md" not in str(path) for path in people._parsed)


def test_a_parsed_person_is_parsed_again_once_its_time_is_up(
        people: People, monkeypatch: pytest.MonkeyPatch) -> None:
    first = checks.check(people, "telegram", "regular", "111").person
    again = checks.check(people, "telegram", "regular", "111").person
    assert first is not None and again is first  # the same bytes: not parsed twice
    monkeypatch.setattr(store, "SHARED_SECONDS", 0.0)
    later = checks.check(people, "telegram", "regular", "111").person
    assert later is not None and later is not first and later == first
    assert len(people._parsed) <= 1


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
