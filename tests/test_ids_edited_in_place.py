"""Person files edited in place (docs/memory.md): most editors save by writing over the file,
which moves no folder mtime, so the id map cannot see the edit the way it sees a new or renamed
file. Every ten seconds the first lookup stats every file and reads again the headers of those
changed since: an id, a link or a broken header written by hand in place counts within ten
seconds, and the do-not-engage check holds for every account it names."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

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


def minutes_later(monkeypatch: pytest.MonkeyPatch, minutes: int) -> None:
    """The id map's clock that many minutes ahead, as if they had passed: a file made now is
    then older than any mark a sweep leaves (file times themselves cannot be made older)."""
    ahead = minutes * 60 * 1_000_000_000
    monkeypatch.setattr(identity, "time", SimpleNamespace(time_ns=lambda: time.time_ns() + ahead))


def flagged_with_id(text: str, person_id: str) -> str:
    return (text.replace("\nhandle: mallory\n", f"\nhandle: mallory\nid: '{person_id}'\n", 1)
            .replace("do_not_engage: false", "do_not_engage: true"))


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
    write_in_place(path, flagged_with_id(text, "4242"))
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
    write_in_place(path, flagged_with_id(text, "4242"))
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
    write_in_place(path, flagged_with_id(text, "4242"))
    platform.add_user("newname", "4242")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))



# ---- the sweep against clocks, folders put back and links ---------------------------------

def test_a_sweep_mark_ahead_of_the_clock_does_not_stop_sweeps(
        cli, recorder, keyring_log, home) -> None:
    # The clock was an hour ahead when the map was last swept, then set right (NTP, a VM
    # restored, a home copied from such a machine): a mark in the future must not put off
    # every sweep until the clock reaches it, nor hide the files changed before it does.
    path = remembered(cli, home, "mallory")
    swept = home / ".ids" / "recorder" / identity.SWEPT
    ahead = swept.stat().st_mtime_ns + 3600 * 1_000_000_000
    os.utime(swept, ns=(ahead, ahead))
    write_in_place(path, flagged_with_id(path.read_text(encoding="utf-8"), "4242"))
    platform.add_user("newname", "4242")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))


def test_a_misnamed_file_brought_in_with_the_folder_mtime_put_back_is_refused_for_its_handle(
        cli, recorder, keyring_log, home) -> None:
    # rsync -a, cp -a and tar x set a folder's mtime back to the source's after filling it.
    path = remembered(cli, home, "alice")
    folder = path.parent
    before = folder.stat().st_mtime_ns
    text = path.read_text(encoding="utf-8").replace("alice", "mallory")
    (folder / "Mallory.md").write_text(text.replace("do_not_engage: false",
                                                    "do_not_engage: true"), encoding="utf-8")
    os.utime(folder, ns=(before, before))
    assert cli("check", "recorder", "mallory").code == 4


def test_a_misnamed_file_made_while_the_map_stamp_is_ahead_of_the_clock_is_refused_for_its_handle(
        cli, recorder, keyring_log, home) -> None:
    # A tactful write stamped the map while the clock was ahead; set right, the folder's new
    # times look older than the stamp, and only a sweep sees the new file: it must note the
    # file's name too, not only its id.
    path = remembered(cli, home, "alice")
    stamp = home / ".ids" / "recorder" / identity.STAMP
    ahead = stamp.stat().st_mtime_ns + 3600 * 1_000_000_000
    os.utime(stamp, ns=(ahead, ahead))
    text = path.read_text(encoding="utf-8").replace("alice", "mallory")
    (path.parent / "Mallory.md").write_text(text.replace("do_not_engage: false",
                                                         "do_not_engage: true"),
                                            encoding="utf-8")
    a_sweep_later(home)
    assert cli("check", "recorder", "mallory").code == 4


def test_a_people_folder_restored_by_moving_an_older_copy_in_refuses_the_ids_it_holds(
        cli, recorder, keyring_log, home, tmp_path, monkeypatch) -> None:
    # `mv people/recorder broken; mv backup/recorder people/`: the folder moved in keeps its
    # old mtime and its files their old times, so neither the stamp nor a sweep sees them.
    path = remembered(cli, home, "mallory")
    backup = tmp_path / "backup"
    backup.mkdir()
    (backup / "mallory.md").write_text(flagged_with_id(path.read_text(encoding="utf-8"), "4242"),
                                       encoding="utf-8")
    old = path.parent.stat().st_mtime_ns - 86_400 * 1_000_000_000
    for made in (backup / "mallory.md", backup):
        os.utime(made, ns=(old, old))
    minutes_later(monkeypatch, 1)
    assert cli("check", "recorder", "someone_else").code == 0  # swept: the backup is older
    path.parent.rename(tmp_path / "broken")
    backup.rename(home / "people" / "recorder")
    minutes_later(monkeypatch, 2)
    platform.add_user("newname", "4242")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))


def test_a_linked_person_file_is_read_again_when_a_folder_on_its_way_is_swapped(
        cli, recorder, keyring_log, home, tmp_path, monkeypatch) -> None:
    # people/recorder/mallory.md -> shared/current/mallory.md, `current` a link to a release
    # folder: swapping `current` changes what the file says, and no time on the file it now
    # reaches, nor on the people folder, moves.
    path = remembered(cli, home, "mallory")
    shared = tmp_path / "shared"
    (shared / "one").mkdir(parents=True)
    (shared / "two").mkdir()
    text = path.read_text(encoding="utf-8")
    (shared / "one" / "mallory.md").write_text(text, encoding="utf-8")
    (shared / "two" / "mallory.md").write_text(flagged_with_id(text, "4242"), encoding="utf-8")
    (shared / "current").symlink_to("one")
    path.unlink()
    path.symlink_to(shared / "current" / "mallory.md")
    minutes_later(monkeypatch, 1)
    assert cli("check", "recorder", "mallory").code == 0  # the map is rebuilt and swept
    (shared / "next").symlink_to("two")
    (shared / "next").replace(shared / "current")  # ln -sfn two current, atomically
    minutes_later(monkeypatch, 2)
    platform.add_user("newname", "4242")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))


def test_an_id_written_in_place_with_its_time_put_back_is_still_swept(
        cli, recorder, keyring_log, home) -> None:
    # touch -d, cp -p or rsync -t over the file put its mtime back; its ctime cannot be.
    path = remembered(cli, home, "mallory")
    old = path.stat().st_mtime_ns - 86_400 * 1_000_000_000
    write_in_place(path, flagged_with_id(path.read_text(encoding="utf-8"), "4242"))
    os.utime(path, ns=(old, old))
    a_sweep_later(home)
    platform.add_user("newname", "4242")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))


def test_an_id_written_in_place_while_reindex_reads_the_folder_is_swept_after_it(
        cli, recorder, keyring_log, home, monkeypatch) -> None:
    # `tactful reindex` reads every header first and builds the id map from them after (a
    # large home: seconds later). A file edited in place after it was read holds what the map
    # does not: the mark the rebuild leaves must not say that edit was looked at.
    path = remembered(cli, home, "mallory")
    settled = path.parent.stat().st_mtime_ns - 3600 * 1_000_000_000
    os.utime(path.parent, ns=(settled, settled))  # its files made long ago, as in most homes
    from_parsed = identity.rebuild_from_parsed
    edited: list[str] = []

    def edited_while_reading(*args, **kwargs):  # type: ignore[no-untyped-def]
        write_in_place(path, flagged_with_id(path.read_text(encoding="utf-8"), "4242"))
        edited.append(path.name)
        minutes_later(monkeypatch, 1)  # the rest of a large home read since
        return from_parsed(*args, **kwargs)

    monkeypatch.setattr(identity, "rebuild_from_parsed", edited_while_reading)
    assert cli("reindex").code == 0
    assert edited == ["mallory.md"]  # the map was made from the headers reindex had read
    monkeypatch.setattr(identity, "rebuild_from_parsed", from_parsed)
    minutes_later(monkeypatch, 2)
    platform.add_user("newname", "4242")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))


def test_an_id_written_in_place_counts_when_the_map_cannot_be_written(
        cli, recorder, keyring_log, home, read_only) -> None:
    # The map's folder read-only (made by another user, a frozen backup): a sweep cannot
    # leave its mark, so a lookup whose files did not change reads the map as it is, and one
    # after a file changed reads every header, never calling the id nobody's.
    path = remembered(cli, home, "mallory")
    a_sweep_later(home)
    read_only(home / ".ids")
    assert cli("check", "recorder", "newname", "--id", "4242").code == 0
    write_in_place(path, flagged_with_id(path.read_text(encoding="utf-8"), "4242"))
    platform.add_user("newname", "4242")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))
    assert cli("check", "recorder", "newname", "--id", "4242").code == 3
