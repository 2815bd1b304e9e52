"""The person file: lossless round trip, strict body, errors naming file and line."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tactful.core.errors import PersonFileCorrupt
from tactful.core.memory import personfile
from tactful.core.memory.person import (
    ACCOUNT_KINDS,
    DIRECTIONS,
    ENTRY_KINDS,
    LADDER,
    Aka,
    CompactEntry,
    Entry,
    Flag,
    OpenItem,
    Person,
    Pin,
)
from tactful.core.memory.text import one_line

from .conftest import tree

TZ = ZoneInfo("America/New_York")

line_text = st.text(max_size=80).map(one_line)
word = line_text.filter(bool).map(lambda t: t.replace(",", " ")).map(one_line).filter(bool)
# Generated in UTC and then moved, so no time falls in a daylight-saving gap; times in the
# repeated hour are left out because Python never calls them equal across zones (PEP 495),
# though the file keeps their offset and so the instant.
moments = st.builds(
    lambda d, zone: d.replace(microsecond=0, tzinfo=UTC).astimezone(zone),
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 1, 1)),
    st.sampled_from([UTC, TZ, timezone(timedelta(hours=5, minutes=30))]),
).filter(lambda d: d.replace(fold=1 - d.fold).utcoffset() == d.utcoffset())
opens = st.builds(OpenItem, text=line_text, resolved_at=st.none() | moments)
entries = st.builds(
    Entry, at=moments, kind=st.sampled_from(ENTRY_KINDS), direction=st.sampled_from(DIRECTIONS),
    they=st.none() | line_text, me=st.none() | line_text, link=st.none() | line_text,
    thread=st.none() | line_text, topics=st.lists(word, max_size=3),
    open=st.lists(opens, max_size=2),
    redacted=st.lists(st.sampled_from(["email", "phone", "card"]), max_size=2, unique=True),
    withheld=st.none() | line_text)
compacts = st.builds(
    CompactEntry, at=moments, kind=st.sampled_from(ENTRY_KINDS),
    direction=st.sampled_from(DIRECTIONS), summary=line_text, link=st.none() | line_text,
    thread=st.none() | line_text, open=st.lists(opens, max_size=2))
people = st.builds(
    Person, platform=st.sampled_from(["x", "bluesky"]), handle=st.just("someone"),
    first_seen=st.none() | moments, last_seen=st.none() | moments,
    id=st.none() | st.from_regex(r"[0-9]{1,20}", fullmatch=True),
    display_name=st.none() | line_text, relationship=st.sampled_from(LADDER),
    kind=st.sampled_from(ACCOUNT_KINDS), collaborator=st.booleans(), tone_notes=line_text,
    tone_basis=st.integers(0, 100), do_not_engage=st.booleans(),
    dne_reason=st.none() | line_text,
    flags=st.lists(st.builds(Flag, name=word, at=moments, reason=st.none() | line_text),
                   max_size=2),
    aka=st.lists(st.builds(Aka, ref=word, reason=line_text, at=moments,
                           proof=st.none() | line_text), max_size=2),
    pins=st.lists(st.builds(Pin, text=line_text, by=st.sampled_from(["them", "me"]),
                            on=st.dates().map(lambda d: d.isoformat())), max_size=3),
    entries=st.lists(entries, max_size=4), compacted=st.lists(compacts, max_size=3),
    extra=st.dictionaries(st.from_regex(r"note_[a-z]{1,8}", fullmatch=True),
                          line_text | st.integers(), max_size=2))


@given(people)
@settings(max_examples=150, deadline=None)
def test_round_trip_is_lossless(person: Person) -> None:
    text = personfile.dumps(person, TZ)
    again = personfile.loads(text, TZ, platform=person.platform, handle=person.handle)
    assert again == person
    assert personfile.dumps(again, TZ) == text


EXAMPLE = """---
platform: x
handle: example_dev
id: '1234567890'
display_name: Example Dev
first_seen: '2026-10-27T10:12:00-04:00'
last_seen: '2026-10-29T09:05:00-04:00'
relationship: regular
kind: person
tone_notes: asks questions, playful
do_not_engage: false
flags: []
aka: []
---
## Pinned
1. Running bit: calls my hot list the desk — they said, 2026-10-28

## Entries

### 2026-10-29T09:05:00-04:00 · reply · inbound
they: "will share their eval harness"
me: Holding you to it.
link: https://x.com/example_dev/status/1
topics: evals
open: they promised to share their eval harness
"""


def test_reads_the_documented_layout() -> None:
    person = personfile.loads(EXAMPLE, TZ)
    assert person.display_name == "Example Dev"
    assert person.pins[0].by == "them"
    assert person.entries[0].they == "will share their eval harness"
    assert person.open_items()[0][1].text == "they promised to share their eval harness"
    assert personfile.dumps(person, TZ) == EXAMPLE


def test_unknown_header_keys_are_kept() -> None:
    text = EXAMPLE.replace("aka: []\n", "aka: []\nmy_note: met at a conference\n")
    person = personfile.loads(text, TZ)
    assert person.extra == {"my_note": "met at a conference"}
    assert "my_note: met at a conference" in personfile.dumps(person, TZ)


@pytest.mark.parametrize(("broken", "line", "says"), [
    (EXAMPLE.replace("---\nplatform", "platform", 1), 1, "must start with"),
    (EXAMPLE.replace("kind: person", "kind: [unclosed"), 9, "not valid YAML"),
    (EXAMPLE.replace("do_not_engage: false", "do_not_engage: maybe"), 11, "true or false"),
    (EXAMPLE.replace("relationship: regular", "relationship: bestie"), 8, "relationship"),
    (EXAMPLE.replace("· reply ·", "· shout ·"), 20, "unknown kind"),
    (EXAMPLE.replace("· inbound", "· sideways"), 20, "direction"),
    (EXAMPLE.replace('they: "will', 'they: will'), 21, "quoted string"),
    (EXAMPLE.replace("me: Holding", "mood: Holding"), 22, "unexpected"),
    (EXAMPLE.replace("2026-10-29T09:05:00-04:00 ·", "yesterday ·"), 20, "ISO 8601"),
    (EXAMPLE.replace("1. Running", "Running"), 16, "a pin reads"),
    (EXAMPLE + "stray words at the end\n", 26, "unexpected"),
    (EXAMPLE.replace("## Entries\n", "## Random\n"), 18, "unknown section"),
    ("---\nplatform: x\nhandle: example_dev\n---\nhello\n", 5, "outside a section"),
    (EXAMPLE.replace("handle: example_dev", "handle: someone_else"), 3, "file is named"),
    ("---\nplatform: x\n", 1, "never closed"),
    ("", 1, "must start with"),
])
def test_corrupt_file_names_file_and_line(broken: str, line: int, says: str) -> None:
    with pytest.raises(PersonFileCorrupt) as caught:
        personfile.loads(broken, TZ, path="people/x/example_dev.md", platform="x",
                         handle="example_dev")
    assert caught.value.line == line, str(caught.value)
    assert says in str(caught.value)
    assert str(caught.value).startswith(f"people/x/example_dev.md:{line}: ")


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "example_dev.md"
    path.write_bytes(EXAMPLE.encode().replace(b"Example Dev", b"Example \xff Dev"))
    with pytest.raises(PersonFileCorrupt) as caught:
        personfile.read(path, TZ, "x", "example_dev")
    assert caught.value.line == 5


@pytest.mark.parametrize("command", [
    ["remember", "x", "example_dev", "--kind", "reply", "--they", "hello"],
    ["pin", "x", "example_dev", "a fact", "--by", "me"],
    ["dne", "x", "example_dev", "on"],
    ["flag", "x", "example_dev", "spam"],
    ["set", "x", "example_dev", "--kind", "bot"],
])
def test_a_corrupt_file_is_never_overwritten(command: list[str], cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    path = home / "people" / "x" / "example_dev.md"
    path.parent.mkdir(parents=True)
    path.write_text(EXAMPLE.replace("· reply ·", "· shout ·"), encoding="utf-8")
    before = tree(home / "people")
    result = cli(*command)
    assert result.code == 4
    assert f"{path}:20:" in result.err and result.err.count("\n") == 1
    assert tree(home / "people") == before
    assert cli("check", "x", "example_dev").code == 4
    assert cli("card", "x", "example_dev").code == 4


def test_any_script_emoji_and_rtl_marks_survive(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    they = "שלום \u200fעולם 👋🏽 مرحبا 你好 Привет 👨‍👩‍👧"
    assert cli("remember", "x", "polyglot", "--kind", "reply", "--they", they,
               "--display-name", "Ｐｏｌｙ 🌍").code == 0
    person = personfile.read(home / "people" / "x" / "polyglot.md", TZ, "x", "polyglot")
    assert person.entries[0].they == they
    assert person.display_name == "Ｐｏｌｙ 🌍"
