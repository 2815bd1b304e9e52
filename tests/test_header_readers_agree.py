"""One header, one reading (docs/memory.md): the person-file reader (`personfile.loads`, with
its fast path for the headers tactful writes) and the id map (`identity._header`, reading a
header line by line) must never disagree about an id, an aka link or do_not_engage, and a
header the do-not-engage check cannot be sure of must be a refusal, never a pass.

The first two tests are holes found by attacking the header fast path; they hold on neither
side of that change (the id map and the key handling are older). The rest are the strongest
attacks tried that the fast path withstands, kept so that it keeps withstanding them."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tactful.core.errors import PersonFileCorrupt
from tactful.core.memory import identity, personfile

from . import recording_adapter as platform
from .sending import flag, refused_before_posting

TZ = ZoneInfo("America/New_York")


def put_bytes(path: Path, data: bytes) -> None:
    """Save as editors do: a new file put in place of the old one."""
    saved = path.with_name(path.name + ".swp")
    saved.write_bytes(data)
    saved.replace(path)


# ---- holes ----------------------------------------------------------------------------------

def test_a_flagged_file_hiding_its_id_past_a_carriage_return_marker_still_refuses_that_id(
        cli, recorder, keyring_log, home) -> None:
    # A lone \r (an old Mac line end) before '---': the id map reads the file in text mode,
    # where \r ends a line, so its header ends there and holds no id; the reader splits on \n
    # only, keeps the line whole, and YAML refuses the file (a second document). The file the
    # reader cannot read is readable to the map, so a lookup by the id is not refused.
    flag(cli, "mallory", "u-9")
    path = home / "people" / "recorder" / "mallory.md"
    data = path.read_bytes()
    assert b"\nid: u-9\n" in data
    put_bytes(path, data.replace(b"\nid: u-9\n", b"\nnote: x\r---\nid: u-9\n", 1))
    assert cli("check", "recorder", "mallory").code == 4  # the reader refuses the file
    platform.add_user("newname", "u-9")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))


@pytest.mark.parametrize("key", [
    "DO_NOT_ENGAGE",         # caps lock
    "Do_not_engage",         # an editor's auto-capital
    "do-not-engage",         # dashes
    "do_not_eng\u0430ge",    # a Cyrillic a
    "do_not_engage\u200b",   # a zero-width space pasted with it
])
def test_do_not_engage_written_by_hand_under_a_near_miss_key_is_not_a_pass(
        cli, home, key: str) -> None:
    # An operator flags someone by hand. A key that only looks like do_not_engage is kept as
    # an unknown key and the person reads as not flagged: a hand-written flag that does not
    # count must be a refusal (an error naming the line), never a pass.
    assert cli("remember", "x", "troll", "--kind", "reply", "--they", "hello").code == 0
    path = home / "people" / "x" / "troll.md"
    text = path.read_text(encoding="utf-8")
    assert "\ndo_not_engage: false\n" in text
    put_bytes(path, text.replace("\ndo_not_engage: false\n", f"\n{key}: true\n", 1)
              .encode("utf-8"))
    assert cli("check", "x", "troll").code in (3, 4)


@pytest.mark.parametrize("written", ["'0042'", "0089"])
def test_a_flagged_file_whose_id_is_written_with_leading_zeros_refuses_that_id(
        cli, recorder, keyring_log, home, written: str) -> None:
    # The id map reads `0042` as 42 (normalize_id: a numeric id has one spelling), the reader
    # keeps "0042", and the lookup by id then drops the file the map named, as a file whose id
    # has changed since. (Unquoted, YAML 1.1 reads 0042 as octal 34, so 0089, which is no
    # octal and stays text, is the unquoted spelling here.)
    number = written.strip("'").lstrip("0")
    flag(cli, "mallory", number)
    path = home / "people" / "recorder" / "mallory.md"
    text = path.read_text(encoding="utf-8")
    assert f"\nid: '{number}'\n" in text
    put_bytes(path, text.replace(f"\nid: '{number}'\n", f"\nid: {written}\n", 1)
              .encode("utf-8"))
    assert cli("check", "recorder", "mallory").code == 3
    platform.add_user("newname", number)
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))


@pytest.mark.parametrize(("written", "meant", "read_as"), [
    ("0042", "42", "34"),      # octal to YAML 1.1
    ("1_000", "1000", "1000"),  # underscores are dropped
    ("12:30", "1230", "750"),  # base 60
    ("0x2A", "42", "42"),      # hexadecimal
    ("+42", "42", "42"),
])
def test_a_flagged_file_whose_unquoted_id_yaml_reads_as_another_number_refuses_every_reading(
        cli, recorder, keyring_log, home, written: str, meant: str, read_as: str) -> None:
    # Written by hand without quotes, the id is a number to YAML, and not the one the operator
    # typed: looked up under either number, a renamed account must not pass for a stranger.
    # The file is refused outright (it says something its writer did not mean).
    flag(cli, "mallory", "7")
    path = home / "people" / "recorder" / "mallory.md"
    text = path.read_text(encoding="utf-8")
    assert "\nid: '7'\n" in text
    put_bytes(path, text.replace("\nid: '7'\n", f"\nid: {written}\n", 1).encode("utf-8"))
    checked = cli("check", "recorder", "mallory")
    assert checked.code == 4 and f"quote it: id: '{written}'" in checked.out + checked.err
    for number in sorted({meant, read_as}):
        platform.add_user(f"new{number}", number)
        refused_before_posting(cli("send", "recorder", "--to", f"new{number}", "--text", "hi"))


@pytest.mark.parametrize("written", ["42.0", "42.", "4.2e+1", "!!float 42"])
def test_a_flagged_file_whose_id_yaml_reads_as_a_fraction_refuses_that_id(
        cli, recorder, keyring_log, home, written: str) -> None:
    # A spreadsheet exports id 42 as 42.0, which YAML reads as written: the reader kept the id
    # "42.0" and the id map, which keys whole numbers and text only, no id at all, so the
    # renamed account with id 42 passed both.
    flag(cli, "mallory", "7")
    path = home / "people" / "recorder" / "mallory.md"
    text = path.read_text(encoding="utf-8")
    put_bytes(path, text.replace("\nid: '7'\n", f"\nid: {written}\n", 1).encode("utf-8"))
    assert cli("check", "recorder", "mallory").code == 4
    platform.add_user("newname", "42")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))


@pytest.mark.parametrize("written", ["42,", "4 2", "'42;'", "[42]", "{user: 42}", "true",
                                     "2026-01-01"])
def test_a_flagged_file_whose_id_line_is_no_id_refuses_every_lookup_by_id(
        cli, recorder, keyring_log, home, written: str) -> None:
    # The reader refuses the file (an id line that is no id), but the id map read it as a
    # file with no id: a lookup by the id that was meant (42) called it nobody's.
    flag(cli, "mallory", "7")
    path = home / "people" / "recorder" / "mallory.md"
    text = path.read_text(encoding="utf-8")
    put_bytes(path, text.replace("\nid: '7'\n", f"\nid: {written}\n", 1).encode("utf-8"))
    assert cli("check", "recorder", "mallory").code in (3, 4)
    platform.add_user("newname", "42")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))


def test_an_unquoted_id_yaml_reads_as_written_is_still_an_id(cli, recorder, home) -> None:
    # The rule refuses only a number that reads otherwise: `id: 42` by hand is id 42.
    flag(cli, "mallory", "42")
    path = home / "people" / "recorder" / "mallory.md"
    text = path.read_text(encoding="utf-8")
    put_bytes(path, text.replace("\nid: '42'\n", "\nid: 42\n", 1).encode("utf-8"))
    assert cli("check", "recorder", "mallory").code == 3
    assert cli("check", "recorder", "newname", "--id", "42").code == 3


def test_an_account_whose_own_file_pads_its_id_is_refused_when_its_old_handle_is_flagged(
        cli, recorder, keyring_log, home) -> None:
    # The other side of the same spelling: the renamed account's own file says '0042', the
    # flagged old file says '42'; the check by handle looks the padded spelling up in the map,
    # which holds only 42.
    flag(cli, "mallory", "42")
    assert cli("remember", "recorder", "newname", "--kind", "reply", "--they", "hi").code == 0
    path = home / "people" / "recorder" / "newname.md"
    text = path.read_text(encoding="utf-8")
    put_bytes(path, text.replace("\nhandle: newname\n", "\nhandle: newname\nid: '0042'\n", 1)
              .encode("utf-8"))
    assert cli("check", "recorder", "newname").code in (3, 4)


# ---- attacks the fast path withstands ------------------------------------------------------

def by_yaml(lines: list[str]) -> Any:
    return yaml.load("\n".join(lines), Loader=personfile.yaml_loader())  # noqa: S506 — a safe loader


def typed(value: Any) -> Any:
    if isinstance(value, dict):
        return {typed(k): typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


KEYS = [*personfile._HEADER_KEYS, "Do_not_engage", "do_not_engage ", "id\u200b", " id"]
WORDS = ["true", "false", "True", "yes", "No", "on", "~", "null", "[]", "0", "00", "007",
         "1e3", "1.5e3", ".inf", "2026-01-01", "2026-01-01 10:00:00", "0x1f", "1_000", "+1",
         "12:30", "9" * 19, "9" * 18, "''", "'a b'", "'a''b'", "' '", "'#'", "a", "a b",
         "a.b@c/d-e_f", "---", "...", "'x' # c", "a #b", "a:b"]
# Line ends YAML knows and `str.split("\n")` does not, look-alikes, invisible characters.
ODD = "aZ09 _.@/-'\"#:,[]{}&*!|>%`=<~+\\\t\r\x85\u2028\u2029\u00e9\u0430\u200b\ufeff\x0b\x0c"
values = st.sampled_from(WORDS) | st.text(alphabet=ODD, min_size=1, max_size=10) | st.builds(
    "{}{}{}".format, st.sampled_from(WORDS), st.sampled_from([" ", "-", ".", "\r", "\x85"]),
    st.text(alphabet=ODD, max_size=6))
lines = st.lists(st.builds("{}: {}".format, st.sampled_from(KEYS), values), min_size=1,
                 max_size=5)


@settings(max_examples=1500, deadline=None)
@given(lines)
def test_a_hand_written_header_the_fast_path_accepts_is_what_yaml_reads(
        header: list[str]) -> None:
    fast = personfile.fast_header(header)
    if fast is not None:
        assert typed(fast) == typed(by_yaml(header))


@pytest.mark.parametrize("odd", ["\r", "\x85", "\u2028", "\u2029"])
def test_a_line_end_only_yaml_knows_inside_a_header_line_cannot_unset_do_not_engage(
        tmp_path: Path, odd: str) -> None:
    # `display_name: x<odd>do_not_engage: false` after `do_not_engage: true`: to YAML a key
    # written twice (a corrupt file); the fast path must not read the line as a name.
    text = ("---\nplatform: x\nhandle: troll\ndo_not_engage: true\n"
            f"display_name: x{odd}do_not_engage: false\n---\n## Pinned\n\n## Entries\n")
    with pytest.raises(PersonFileCorrupt):
        personfile.loads(text, TZ, platform="x", handle="troll")
    path = tmp_path / "troll.md"
    path.write_bytes(text.encode("utf-8"))
    assert identity._header(path) is None  # the id map cannot read it either: a refusal
