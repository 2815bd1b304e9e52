"""Person files edited in place (docs/memory.md): most editors save by writing over the file,
which moves no folder mtime, so the id map cannot see the edit the way it sees a new or renamed
file. Every ten seconds the first lookup stats every file and reads again the headers of those
changed since: an id, a link or a broken header written by hand in place counts within ten
seconds, and the do-not-engage check holds for every account it names."""

from __future__ import annotations

import os
from pathlib import Path

from tactful.core.memory import identity

from . import recording_adapter as platform
from .sending import refused_before_posting, sent

LINKED_AT = "'2026-11-01T10:00:00-04:00'"


def write_in_place(path: Path, text: str) -> None:
    """Save as nano, VS Code or `>` do: the same file, truncated and written again."""
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)


def a_sweep_later(home: Path, where: str = "recorder") -> None:
    """Move the last sweep back by the sweep period and a second, as if that had passed."""
    swept = home / ".ids" / where / identity.SWEPT
    at = swept.stat().st_mtime_ns - identity.SWEEP_EVERY_NS - 1_000_000_000
    os.utime(swept, ns=(at, at))


def person_file(home: Path, handle: str) -> Path:
    return home / "people" / "recorder" / f"{handle}.md"


def remembered(cli, home: Path, handle: str) -> Path:
    assert cli("remember", "recorder", handle, "--kind", "reply", "--they", "hello").code == 0
    assert cli("check", "recorder", "someone_else").code == 0  # the map is built and swept
    path = person_file(home, handle)
    assert (home / ".ids" / "recorder" / identity.SWEPT).exists()
    return path


def test_an_id_written_in_place_into_a_flagged_file_refuses_the_renamed_account(
        cli, recorder, keyring_log, home) -> None:
    path = remembered(cli, home, "mallory")
    text = path.read_text(encoding="utf-8")
    write_in_place(path, text.replace("\nhandle: mallory\n", "\nhandle: mallory\nid: '4242'\n", 1)
                   .replace("do_not_engage: false", "do_not_engage: true"))
    a_sweep_later(home)
    platform.add_user("newname", "4242")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))
    assert cli("check", "recorder", "newname", "--id", "4242").code == 3


def test_an_id_written_in_place_is_found_even_when_the_new_handle_has_a_file_of_its_own(
        cli, recorder, keyring_log, home) -> None:
    # The renamed account already has a file carrying the id: the map names that handle for
    # the id, so only a sweep can add the flagged old file beside it.
    path = remembered(cli, home, "mallory")
    assert cli("remember", "recorder", "newname", "--kind", "reply", "--they", "hi",
               "--id", "4242").code == 0
    text = path.read_text(encoding="utf-8")
    write_in_place(path, text.replace("\nhandle: mallory\n", "\nhandle: mallory\nid: '4242'\n", 1)
                   .replace("do_not_engage: false", "do_not_engage: true"))
    a_sweep_later(home)
    platform.add_user("newname", "4242")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))


def test_a_link_written_in_place_into_a_flagged_file_refuses_the_linked_account(
        cli, recorder, keyring_log, home) -> None:
    path = remembered(cli, home, "mallory")
    text = path.read_text(encoding="utf-8")
    assert "aka: []" in text
    write_in_place(path, text.replace(
        "aka: []", f"aka:\n- {{ref: 'recorder/alt', reason: by hand, at: {LINKED_AT}}}")
        .replace("do_not_engage: false", "do_not_engage: true"))
    a_sweep_later(home)
    platform.add_user("alt", "77")
    refused_before_posting(cli("send", "recorder", "--to", "alt", "--text", "hi"))


def test_a_header_broken_in_place_refuses_lookups_by_id_until_it_is_fixed_in_place(
        cli, recorder, keyring_log, home) -> None:
    path = remembered(cli, home, "mallory")
    good = path.read_text(encoding="utf-8")
    write_in_place(path, good.replace("\nhandle: mallory\n", "\nhandle: [mallory\n", 1))
    a_sweep_later(home)
    platform.add_user("newname", "4242")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))
    write_in_place(path, good)
    a_sweep_later(home)
    assert cli("send", "recorder", "--to", "newname", "--text", "hi").code == 0
    assert len(sent()) == 1


def test_a_map_from_before_sweeps_is_rebuilt_at_its_first_lookup(
        cli, recorder, keyring_log, home) -> None:
    path = remembered(cli, home, "mallory")
    (home / ".ids" / "recorder" / identity.SWEPT).unlink()
    text = path.read_text(encoding="utf-8")
    write_in_place(path, text.replace("\nhandle: mallory\n", "\nhandle: mallory\nid: '4242'\n", 1)
                   .replace("do_not_engage: false", "do_not_engage: true"))
    platform.add_user("newname", "4242")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))
