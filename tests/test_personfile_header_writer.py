"""The person-file header written without PyYAML (docs/memory.md): for every person, the file
`dumps` writes is byte for byte the file YAML's dumper writes, whatever the names, reasons,
links and hand-kept keys hold; a value the fast writer is not sure of goes to YAML; and the
fast reader still reads back what the fast writer writes."""

from __future__ import annotations

import sys
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tactful.core.memory import personfile
from tactful.core.memory.person import ACCOUNT_KINDS, LADDER, Aka, Flag, Person

TZ = ZoneInfo("America/New_York")


def dumps_by_yaml(person: Person, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as patched:
        patched.setattr(personfile, "fast_header_text", lambda header: None)
        return personfile.dumps(person, TZ)


def header_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[1:lines.index("---", 1)]


moments = st.builds(
    lambda d, zone: d.replace(tzinfo=UTC).astimezone(zone),
    st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2199, 1, 1)),
    st.sampled_from([UTC, TZ, timezone(timedelta(hours=5, minutes=30))]))
# Text YAML writes in some other way than plain: quoted, escaped, folded, or read as a bool,
# a null, a number or a date.
tricky = st.sampled_from([
    "yes", "No", "on", "OFF", "null", "Null", "NULL", "~", "true", "False", "y", "n", "0",
    "0042", "0089", "42", "-42", "+1", "1_000", "0x1f", "0o17", "1e3", "1.5", ".5", ".inf",
    "nan", ".NaN", "2026-10-01", "2026-1-1", "2026-10-01T09:00:00Z", "2026-10-01 09:00:00",
    "12:30", "1:20:30", "- a", "-a", "-", "--- a", "---", "...", "a: b", "a:b", "a:", "a #b",
    "a#b", "#a", "'a'", "a'b", '"a"', 'a"b', "[a]", "{a: b}", "&a", "*a", "!a", "|", ">",
    "%a", "@a", "`a", "=", "<<", "?", "? a", ":", ": a", "a  b", " a", "a ", "  ", " ",
    "O'Brien", "back\\slash", "tab\there", "new\nline", "cr\rhere", "ünï", "Zoë", "日本語",
    "😀", "Ann 😀", "a\u2028b", "a\u0085b", "\ufeffa", "a\u00a0b", "a\u200db", "\u0301a",
    "", "a,b", "x/y", "user.name", "Ann-Marie", "a_b", "warm, replies back", "a, b", "a ,b",
    "a,", "yes, no", "a, #b", "a, [b]", "a, {b}", "a, - b", "a, &b", "a, 1", "a?", "a|b",
    "a > b", "a - b", "a -", "x" * 3000, ("word " * 2500).strip(), "a" + " b" * 5000])
any_text = st.text(max_size=30) | tricky | st.text(
    st.sampled_from("ab :#'\"-,.\n 0 1é😀\t"), max_size=12)
hand_kept = (any_text | st.integers() | st.booleans() | st.none() | st.floats()
             | st.dates(min_value=date(1900, 1, 1)) | st.lists(any_text, max_size=2)
             | st.dictionaries(st.sampled_from(["a", "b"]), any_text, max_size=2))
hand_keys = (st.sampled_from(["notes", "source", "kind2", "yes", "null", "a b", "2026",
                              "_x", "x" * 200, "Zoë", "a: b", "flags2", "platform"])
             | st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True))
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
                             reason=st.none() | any_text), max_size=3),
    aka=st.lists(st.builds(Aka, ref=any_text, reason=any_text, at=moments,
                           proof=st.none() | any_text), max_size=3),
    extra=st.dictionaries(hand_keys, hand_kept, max_size=3))


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(people)
def test_every_person_file_is_written_byte_for_byte_as_yaml_writes_it(person: Person) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert personfile.dumps(person, TZ) == dumps_by_yaml(person, monkeypatch)


@settings(max_examples=1500, deadline=None)
@given(st.dictionaries(hand_keys, hand_kept, max_size=4))
def test_any_header_written_fast_is_what_yaml_writes(header: dict[str, Any]) -> None:
    fast = personfile.fast_header_text(header)
    if fast is not None:
        assert fast == personfile.yaml_header_text(header)


@settings(max_examples=400, deadline=None)
@given(people)
def test_what_the_fast_writer_writes_the_fast_reader_reads_as_yaml_does(person: Person) -> None:
    person.extra = {}
    text = personfile.dumps(person, TZ)
    lines = header_lines(text)
    fast = personfile.fast_header(lines)
    if fast is not None:
        assert fast == yaml.load("\n".join(lines), Loader=personfile.yaml_loader())  # noqa: S506


def ordinary_person() -> Person:
    return Person(platform="x", handle="user00042", display_name="Zoë O'Brien",
                  first_seen=datetime(2026, 10, 1, 9, tzinfo=TZ),
                  last_seen=datetime(2026, 11, 2, 18, 30, tzinfo=TZ), id="123456789",
                  tone_notes="asks questions, warm, replies back", tone_basis=3,
                  do_not_engage=True, dne_reason="asked us to stop: twice",
                  flags=[Flag("troll", datetime(2026, 10, 2, tzinfo=TZ), "said #rude things")],
                  aka=[Aka("bluesky/zoe", "same avatar", datetime(2026, 10, 3, tzinfo=TZ))],
                  extra={"source": "import", "checked": True, "score": 3})


def test_an_ordinary_person_is_written_without_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    # Otherwise the properties above would hold with a fast writer that is never taken.
    person = ordinary_person()
    expected = personfile.dumps(person, TZ)

    def no_yaml(header: dict[str, Any]) -> str:
        raise AssertionError("the header went to YAML")

    monkeypatch.setattr(personfile, "yaml_header_text", no_yaml)
    assert personfile.dumps(person, TZ) == expected
    assert "dne_reason: 'asked us to stop: twice'" in expected


def test_an_ordinary_person_written_fast_reads_back_fast_and_the_same() -> None:
    # The fast reader takes no list written out and no non-ASCII text: a person without them.
    person = ordinary_person()
    person.extra, person.flags, person.aka, person.display_name = {}, [], [], "Zoe OBrien"
    text = personfile.dumps(person, TZ)
    assert personfile.fast_header(header_lines(text)) is not None
    assert personfile.loads(text, TZ) == person


def test_a_remember_of_an_ordinary_person_does_not_import_yaml(tmp_path: Any) -> None:
    # The whole command, in a process of its own: a new person (whose first write also builds
    # the id map, reading the header back), then a second write to them.
    import subprocess

    code = (
        "import sys\n"
        "from tactful.core.cli.main import main\n"
        f"assert main(['--home', {str(tmp_path)!r}, 'remember', 'x', 'zoe', '--kind', 'reply',"
        " '--they', 'hi there, said: yes #1', '--display-name', 'Zoe OBrien']) == 0\n"
        f"assert main(['--home', {str(tmp_path)!r}, 'remember', 'x', 'zoe', '--kind', 'reply',"
        " '--they', 'again']) == 0\n"
        "print('yaml' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip().splitlines()[-1] == "False"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(people)
def test_the_file_is_what_pure_python_yaml_writes_too(person: Person) -> None:
    # Where PyYAML is installed without libyaml, dumps fell back to the pure-Python dumper.
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.delattr(yaml, "CSafeDumper", raising=False)
        assert personfile.dumps(person, TZ) == dumps_by_yaml(person, monkeypatch)
