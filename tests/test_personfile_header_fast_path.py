"""The person-file header read without YAML (docs/memory.md, "Reading a person file fast"):
for every header `dumps` writes it is exactly what the YAML loader makes of it, and every
header of another shape goes to the YAML loader, so do_not_engage, an id or an aka link is
never read differently."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tactful.core.errors import PersonFileCorrupt
from tactful.core.memory import personfile
from tactful.core.memory.person import ACCOUNT_KINDS, LADDER, Aka, Entry, Flag, Person

TZ = ZoneInfo("America/New_York")


def header_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[1:lines.index("---", 1)]


def by_yaml(lines: list[str]) -> Any:
    return yaml.load("\n".join(lines), Loader=personfile.yaml_loader())  # noqa: S506 — a safe loader


def typed(value: Any) -> Any:
    """The value with every scalar's type beside it: True == 1 and 1 == 1.0 in Python, but a
    do_not_engage of 1 is not a do_not_engage of true."""
    if isinstance(value, dict):
        return {typed(k): typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


def assert_same_as_yaml(lines: list[str]) -> dict[str, Any] | None:
    fast = personfile.fast_header(lines)
    if fast is not None:
        assert typed(fast) == typed(by_yaml(lines))
    return fast


moments = st.builds(
    lambda d, zone: d.replace(microsecond=0, tzinfo=UTC).astimezone(zone),
    st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2199, 1, 1)),
    st.sampled_from([UTC, TZ, timezone(timedelta(hours=5, minutes=30))]))
# Text of every kind, and text that looks like something else to YAML.
tricky = st.sampled_from([
    "yes", "No", "on", "OFF", "null", "Null", "~", "true", "False", "0", "0123", "1_000",
    "0x1f", "1e3", "1.5", ".inf", "2026-10-01", "12:30", "- a", "a: b", "a #b", "#a", "'a'",
    '"a"', "[a]", "{a: b}", "&a", "*a", "!a", "|", ">", "%a", "@a", "`a", "=", "<<", "a  b",
    " a", "a ", "O'Brien", "back\\slash", "tab\there", "ünï", "😀", "a\u2028b", "\ufeffa",
    "", "-", "?", ":", "a,b", "x/y", "user.name", "Ann-Marie", "a_b", "warm, replies back",
    "a, b", "a ,b", "a,", "a, ", "a,  b", "yes, no", "a, #b", "a, [b]", "a, {b}", "a,,b",
    "a, - b", "a, &b", "a, 1"])
any_text = st.text(max_size=30) | tricky
people = st.builds(
    Person, platform=st.sampled_from(["x", "bluesky", "telegram"]),
    handle=st.from_regex(r"[a-z0-9_]{1,15}", fullmatch=True) | tricky,
    id=st.none() | st.from_regex(r"[0-9]{1,20}", fullmatch=True) | any_text,
    display_name=st.none() | any_text, first_seen=st.none() | moments,
    last_seen=st.none() | moments, relationship=st.sampled_from(LADDER),
    kind=st.sampled_from(ACCOUNT_KINDS), collaborator=st.booleans(), tone_notes=any_text,
    tone_basis=st.integers(min_value=0, max_value=10**20), do_not_engage=st.booleans(),
    dne_reason=st.none() | any_text,
    flags=st.lists(st.builds(Flag, name=any_text, at=moments,
                             reason=st.none() | any_text), max_size=2),
    aka=st.lists(st.builds(Aka, ref=any_text, reason=any_text, at=moments,
                           proof=st.none() | any_text), max_size=2),
    extra=st.dictionaries(st.sampled_from(["notes", "source", "kind2"]),
                          any_text | st.integers() | st.booleans(), max_size=2))


@settings(max_examples=400, deadline=None)
@given(people)
def test_every_header_tactful_writes_reads_without_yaml_exactly_as_yaml_reads_it(
        person: Person) -> None:
    lines = header_lines(personfile.dumps(person, TZ))
    fast = assert_same_as_yaml(lines)
    if fast is not None:  # the fast path never says anything about a link or a flag
        assert fast.get("aka", []) == [] and fast.get("flags", []) == []


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(personfile._HEADER_KEYS), any_text | st.text(max_size=12))
def test_any_one_line_value_is_read_as_yaml_reads_it_or_left_to_yaml(key: str,
                                                                      value: str) -> None:
    assert_same_as_yaml(["platform: x", f"{key}: {value}"] if key != "platform"
                        else [f"platform: {value}"])


def test_the_header_of_an_ordinary_person_is_read_without_yaml() -> None:
    # Otherwise the properties above would hold with a fast path that is never taken.
    person = Person(platform="x", handle="user00042", display_name="User 42",
                    first_seen=datetime(2026, 10, 1, 9, tzinfo=TZ),
                    last_seen=datetime(2026, 11, 2, 18, 30, tzinfo=TZ), tone_basis=3,
                    do_not_engage=True, dne_reason="asked us to stop", id="123456789")
    lines = header_lines(personfile.dumps(person, TZ))
    fast = personfile.fast_header(lines)
    assert fast == by_yaml(lines)
    assert fast is not None and fast["do_not_engage"] is True and fast["id"] == "123456789"


def test_a_header_with_the_tone_tactful_writes_is_read_without_yaml() -> None:
    # The tone is feature words joined by commas (ladder.tone): the commonest reason a header
    # of a file tactful wrote went to the YAML loader, and the import of PyYAML with it.
    person = Person(platform="x", handle="user00042", display_name="User 42",
                    tone_notes="asks questions, warm, technical, replies back", tone_basis=12)
    lines = header_lines(personfile.dumps(person, TZ))
    fast = personfile.fast_header(lines)
    assert fast is not None and fast == by_yaml(lines)
    assert fast["tone_notes"] == "asks questions, warm, technical, replies back"


ODD_HEADERS = {
    "do_not_engage written twice": ["platform: x", "handle: a", "do_not_engage: true",
                                    "do_not_engage: false"],
    "yes is true to YAML": ["platform: x", "handle: a", "do_not_engage: yes"],
    "True capitalized": ["platform: x", "handle: a", "do_not_engage: True"],
    "on is true to YAML": ["platform: x", "handle: a", "do_not_engage: on"],
    "a number with a leading zero is octal": ["platform: x", "handle: a", "id: 0123"],
    "a number with an underscore": ["platform: x", "handle: a", "id: 1_000"],
    "a null": ["platform: x", "handle: a", "id: ~"],
    "an empty value": ["platform: x", "handle: a", "id:"],
    "an unknown key": ["platform: x", "handle: a", "note: hello"],
    "a key in quotes": ["platform: x", "handle: a", '"do_not_engage": true'],
    "a space before the colon": ["platform: x", "handle: a", "do_not_engage : true"],
    "two spaces after the colon": ["platform: x", "handle: a", "id:  '12'"],
    "a trailing space": ["platform: x", "handle: a", "do_not_engage: true "],
    "a comment after the value": ["platform: x", "handle: a", "do_not_engage: true # yes"],
    "a comment line": ["platform: x", "# do_not_engage: false", "handle: a"],
    "an empty line": ["platform: x", "", "handle: a"],
    "a tab": ["platform: x", "handle:\ta"],
    "a tab in quotes": ["platform: x", "handle: a", "id: '1\t2'"],
    "a byte-order mark": ["\ufeffplatform: x", "handle: a"],
    "double quotes": ["platform: x", "handle: a", 'id: "12"'],
    "an escaped single quote": ["platform: x", "handle: a", "display_name: 'O''Brien'"],
    "flow style list": ["platform: x", "handle: a", "aka: [{ref: x/b, reason: r, at: t}]"],
    "flow style mapping": ["platform: x", "handle: a", "flags: {}"],
    "a block list of links": ["platform: x", "handle: a", "aka:", "- ref: x/troll",
                              "  reason: same person", "  at: '2026-10-01T09:00:00-04:00'"],
    "an anchor": ["platform: x", "handle: &h a", "display_name: *h"],
    "a tag": ["platform: x", "handle: a", "do_not_engage: !!bool 'true'"],
    "a merge key": ["platform: x", "handle: a", "<<: {do_not_engage: true}"],
    "a value going on to the next line": ["platform: x", "handle: a", "display_name: Ann",
                                          "  do_not_engage: true"],
    "an indented key": ["platform: x", "handle: a", " do_not_engage: true"],
    "a document end": ["platform: x", "handle: a", "...", "do_not_engage: true"],
    "a directive": ["%YAML 1.1", "platform: x", "handle: a"],
    "a block scalar": ["platform: x", "handle: a", "tone_notes: |", "  text"],
    "a date": ["platform: x", "handle: a", "first_seen: 2026-10-01"],
    "non-ASCII text": ["platform: x", "handle: a", "display_name: Zoë"],
    "a colon in the value": ["platform: x", "handle: a", "display_name: a: b"],
    "a comma before a comment": ["platform: x", "handle: a", "tone_notes: warm, #brief"],
    "a comma and two spaces": ["platform: x", "handle: a", "tone_notes: warm,  brief"],
    "a comma at the end": ["platform: x", "handle: a", "tone_notes: warm,"],
    "a comma, then a flow list": ["platform: x", "handle: a", "tone_notes: warm, [a]"],
    "nothing": [],
}


@pytest.mark.parametrize("lines", list(ODD_HEADERS.values()), ids=list(ODD_HEADERS))
def test_a_header_of_any_other_shape_is_left_to_the_yaml_loader(lines: list[str]) -> None:
    assert personfile.fast_header(lines) is None


@pytest.mark.parametrize("lines", list(ODD_HEADERS.values()), ids=list(ODD_HEADERS))
def test_a_file_with_an_odd_header_reads_as_it_did_with_yaml_alone(
        lines: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = "\n".join(["---", *lines, "---", "## Pinned", "", "## Entries", ""]) + "\n"

    def outcome() -> object:
        try:
            return personfile.loads(text, TZ)
        except PersonFileCorrupt as exc:
            return str(exc)

    fast = outcome()
    monkeypatch.setattr(personfile, "fast_header", lambda lines: None)
    assert fast == outcome()


def test_do_not_engage_written_as_yes_still_stops_the_person() -> None:
    text = "---\nplatform: x\nhandle: a\ndo_not_engage: yes\n---\n## Pinned\n\n## Entries\n"
    assert personfile.loads(text, TZ).do_not_engage is True


def test_do_not_engage_written_twice_is_a_corrupt_file() -> None:
    text = ("---\nplatform: x\nhandle: a\ndo_not_engage: true\ndo_not_engage: false\n---\n"
            "## Pinned\n\n## Entries\n")
    with pytest.raises(PersonFileCorrupt, match="written twice"):
        personfile.loads(text, TZ)


@pytest.mark.parametrize(("written", "read"), [
    ('"plain words"', "plain words"),
    ('"a \\"quote\\" inside"', 'a "quote" inside'),
    ('"a \\\\ backslash"', "a \\ backslash"),
    ('"an escaped \\u00e9"', "an escaped é"),
    ('"a line\\nbreak"', "a line break"),
    ('"spaces  inside "', "spaces inside"),
    ('"trailing space after the quote" ', "trailing space after the quote"),
    ('"ünïcode 😀"', "ünïcode 😀"),
])
def test_they_is_read_as_json_reads_it(written: str, read: str) -> None:
    text = ("---\nplatform: x\nhandle: a\n---\n## Pinned\n\n## Entries\n\n"
            f"### 2026-10-01T09:00:00-04:00 · reply · inbound\nthey: {written}\n")
    assert personfile.loads(text, TZ).entries[0].they == read


@pytest.mark.parametrize("written", ['"a raw\ttab"', '"unclosed', 'not quoted', '"a" "b"',
                                     '"bad \\escape"'])
def test_they_that_json_refuses_makes_the_file_corrupt(written: str) -> None:
    text = ("---\nplatform: x\nhandle: a\n---\n## Pinned\n\n## Entries\n\n"
            f"### 2026-10-01T09:00:00-04:00 · reply · inbound\nthey: {written}\n")
    with pytest.raises(PersonFileCorrupt, match="they: must be one quoted string"):
        personfile.loads(text, TZ)


@pytest.mark.parametrize(("written", "topics"), [
    ("topics: eval", ["eval"]), ("topics:  eval ", ["eval"]), ("topics: a, b", ["a", "b"]),
    ("topics: a,, b,", ["a", "b"])])
def test_topics_read_as_before(written: str, topics: list[str]) -> None:
    text = ("---\nplatform: x\nhandle: a\n---\n## Pinned\n\n## Entries\n\n"
            f"### 2026-10-01T09:00:00-04:00 · reply · inbound\n{written}\n")
    assert personfile.loads(text, TZ).entries[0].topics == topics


@pytest.mark.parametrize("at", ["1969-12-31T23:00:00-05:00", "1970-01-01T03:00:00+05:00",
                                "2200-12-31T23:00:00-05:00", "2201-01-01T00:00:00+00:00"])
def test_entry_times_at_the_edges_of_the_range_are_judged_in_utc(at: str) -> None:
    text = ("---\nplatform: x\nhandle: a\n---\n## Pinned\n\n## Entries\n\n"
            f"### {at} · reply · inbound\n")
    moment = datetime.fromisoformat(at)
    if 1970 <= moment.astimezone(UTC).year <= 2200 and 1970 <= moment.year <= 2200:
        assert personfile.loads(text, TZ).entries[0].at == moment
    else:
        with pytest.raises(PersonFileCorrupt, match="entry time"):
            personfile.loads(text, TZ)


def test_a_repeated_link_is_still_an_error() -> None:
    text = ("---\nplatform: x\nhandle: a\n---\n## Pinned\n\n## Entries\n\n"
            "### 2026-10-01T09:00:00-04:00 · reply · inbound\nlink: a\nlink: b\n")
    with pytest.raises(PersonFileCorrupt, match="repeated field 'link'"):
        personfile.loads(text, TZ)


def test_an_entry_read_back_is_the_entry_written() -> None:
    entry = Entry(at=datetime(2026, 10, 1, 9, tzinfo=TZ), kind="reply", direction="inbound",
                  they='say "hi" \\ bye', me="", link="https://x.com/a/status/1",
                  topics=["eval", "gpu"])
    person = Person(platform="x", handle="a", entries=[entry])
    assert personfile.loads(personfile.dumps(person, TZ), TZ).entries == [entry]
