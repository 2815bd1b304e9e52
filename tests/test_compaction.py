"""Compaction at 50 → 20 full entries plus one line each, keeping what must survive."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from tactful.core.memory import personfile, recording
from tactful.core.memory.home import Home
from tactful.core.memory.person import Person
from tactful.core.memory.settings import MemorySettings
from tactful.core.memory.store import People

TZ = ZoneInfo("America/New_York")
START = datetime(2026, 1, 1, 9, 0, tzinfo=TZ)


def fill(people: People, count: int) -> None:
    for n in range(count):
        def mutate(p: Person, n: int = n) -> recording.Outcome:
            inbound = n % 2 == 1
            return recording.remember(
                p, kind="reply", direction="inbound" if inbound else "outbound",
                at=START + timedelta(hours=n), they=f"said thing {n}" if inbound else None,
                me=None if inbound else f"answer {n}",
                link=f"https://x.com/someone/status/{1000 + n}",
                open_items=["promised a demo"] if n == 3 else None)
        people.change("x", "someone", mutate)


def test_fifty_one_entries_compact_to_twenty(tmp_path: Path) -> None:
    people = People(Home(tmp_path), MemorySettings(tz=TZ))
    fill(people, 50)
    person = people.load("x", "someone")
    assert person is not None and len(person.entries) == 50 and not person.compacted
    people.change("x", "someone", lambda p: recording.flag(p, "spam", "test", START))
    people.change("x", "someone", lambda p: recording.remember(
        p, kind="reply", direction="inbound", at=START + timedelta(days=30), they="new"))
    person = people.load("x", "someone")
    assert person is not None
    assert len(person.entries) == 20
    assert len(person.compacted) == 31
    assert person.interaction_count() == 51
    # the unresolved open item of entry 3 survives, every link too, and the flag
    assert [item.text for _, item in person.open_items()] == ["promised a demo"]
    assert person.compacted[3].link == "https://x.com/someone/status/1003"
    assert all(c.link for c in person.compacted)
    assert person.flag("spam") is not None
    assert person.relationship == "regular"
    text = (tmp_path / "people" / "x" / "someone.md").read_text()
    earlier = text.split("## Earlier, compacted\n")[1].split("## Entries")[0]
    assert sum(1 for line in earlier.splitlines() if line.startswith("- 2026-")) == 31
    assert "said thing 1" in earlier


def test_a_compacted_open_item_can_still_be_resolved(tmp_path: Path) -> None:
    people = People(Home(tmp_path), MemorySettings(tz=TZ, compact_after=5, keep_full=2))
    fill(people, 6)
    people.change("x", "someone", lambda p: recording.resolve(p, 1, START + timedelta(days=9)))
    person = personfile.read(tmp_path / "people" / "x" / "someone.md", TZ, "x", "someone")
    assert person.open_items() == []
    resolved = [i for c in person.compacted for i in c.open]
    assert resolved and resolved[0].resolved_at is not None
    assert resolved[0].text == "promised a demo"


def test_compaction_settings_come_from_config(cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "tactful.yaml").write_text("memory:\n  compact_after: 4\n  keep_full: 2\n")
    for n in range(5):
        assert cli("remember", "x", "someone", "--kind", "reply", "--they", f"t{n}",
                   "--at", f"2026-01-0{n + 1}T10:00:00-05:00").code == 0
    person = personfile.read(home / "people" / "x" / "someone.md", TZ, "x", "someone")
    assert len(person.entries) == 2 and len(person.compacted) == 3
