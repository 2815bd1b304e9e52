"""The one gate, on one model of who a person is (docs/sending.md): every party a message
touches is found, resolved to a stable id where the platform can, and checked by id and by
every handle, before a single posting credential is read. Shown with the recording adapter
plugin and the recording keyring; tests/adapters/test_every_party.py shows the same against
each platform's emulator with its real library."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from . import recording_adapter as platform
from . import recording_keyring
from .sending import flag, hand_edit, posting_key_read, sent

# ---- a renamed account ---------------------------------------------------------------------

def test_a_renamed_flagged_account_mentioned_by_its_new_handle_is_refused(
        cli, recorder, keyring_log) -> None:
    flag(cli, "oldname", "u-9")
    platform.add_user("newname", "u-9")  # the platform knows the new handle's id
    result = cli("send", "recorder", "--to", "alice", "--text", "hi @alice, ask @newname")
    assert result.code == 3, result.err
    assert "same account id u-9 as @oldname" in result.err
    assert not posting_key_read() and sent() == []


def test_a_renamed_flagged_account_targeted_by_its_new_handle_is_refused(
        cli, recorder, keyring_log) -> None:
    flag(cli, "oldname", "u-9")
    platform.add_user("newname", "u-9")
    result = cli("send", "recorder", "--to", "newname", "--text", "hello again")
    assert result.code == 3, result.err
    assert not posting_key_read() and sent() == []


def test_a_handle_that_cannot_be_resolved_refuses_instead_of_passing(
        cli, recorder, keyring_log) -> None:
    platform.fail_reads()
    result = cli("send", "recorder", "--to", "alice", "--text", "hi @bob")
    assert result.code == 5, result.err
    assert not posting_key_read() and sent() == []


# ---- the thread and quoted posts ---------------------------------------------------------------

def test_a_reply_in_a_thread_whose_root_author_is_flagged_is_refused(
        cli, recorder, keyring_log) -> None:
    flag(cli, "mallory", "u-66")
    platform.add_post("20", "alice", user_id="u-1",
                      parties=[("thread root author", None, "u-66")])
    result = cli("send", "recorder", "--reply-to", "20", "--text", "agreed!")
    assert result.code == 3, result.err
    assert "thread root author" in result.err
    assert not posting_key_read() and sent() == []


def test_a_reply_that_keeps_a_flagged_account_in_its_mention_set_is_refused(
        cli, recorder, keyring_log) -> None:
    flag(cli, "mallory")
    platform.add_post("21", "alice", user_id="u-1",
                      parties=[("in the thread's mention set", "mallory", None)])
    result = cli("send", "recorder", "--reply-to", "21", "--text", "agreed!")
    assert result.code == 3, result.err
    assert sent() == []


def test_a_post_that_quotes_a_flagged_persons_post_by_its_url_is_refused(
        cli, recorder, keyring_log) -> None:
    flag(cli, "mallory", "u-66")
    platform.add_post("30", "mallory", user_id="u-66")
    result = cli("send", "recorder", "--text", "look: https://recorder.example/p/30")
    assert result.code == 3, result.err
    assert "quoted post" in result.err
    assert not posting_key_read() and sent() == []


def test_a_dry_run_says_what_it_could_not_check(cli, recorder, keyring_log, home) -> None:
    platform.add_post("30", "mallory", user_id="u-66")
    result = cli("send", "recorder", "--text", "look: https://recorder.example/p/30",
                 "--dry-run")
    assert result.code == 0, result.err
    assert "not checked offline" in result.out and "quoted post" in result.out
    [line] = (home / "outbox" / "dry-run.jsonl").read_text().splitlines()
    assert any("quoted post" in u for u in json.loads(line)["unchecked"])
    assert recording_keyring.accesses() == [] and platform.calls() == []


# ---- a reference that names the author by stable id ------------------------------------------

def test_a_reference_naming_a_flagged_author_by_id_is_refused_offline(
        cli, recorder, keyring_log) -> None:
    flag(cli, "mallory", "66")
    for extra in (["--dry-run"], []):  # the dry run says what the real run does
        result = cli("send", "recorder", "--reply-to", "https://recorder.example/u/66/p/5",
                     "--text", "hi", *extra)
        assert result.code == 3, result.err
        assert "author named in the reference" in result.err
    assert recording_keyring.accesses() == [] and sent() == []


# ---- aka links and Telegram ids -----------------------------------------------------------------

def test_a_link_recorded_on_one_side_only_carries_do_not_engage(cli, home: Path) -> None:
    flag(cli, "mallory", where="x")
    assert cli("remember", "bluesky", "mallory.example", "--kind", "reply",
               "--they", "hi").code == 0
    # The link is written by hand into the flagged file only.
    path = home / "people" / "x" / "mallory.md"
    text = path.read_text()
    hand_edit(path, text.replace(
        "aka: []", "aka:\n- {ref: bluesky/mallory.example, reason: by hand, "
        "at: '2026-11-01T10:00:00-04:00'}"))
    assert cli("check", "bluesky", "mallory.example").code == 3
    # and from the other side only
    hand_edit(path, text)
    other = home / "people" / "bluesky" / "mallory.example.md"
    hand_edit(other, other.read_text().replace(
        "aka: []", "aka:\n- {ref: x/mallory, reason: by hand, at: '2026-11-01T10:00:00-04:00'}"))
    assert cli("check", "bluesky", "mallory.example").code == 3




def test_a_telegram_user_flagged_by_id_is_refused_under_their_username(cli) -> None:
    assert cli("dne", "telegram", "5551234", "on").code == 0  # flagged before any username
    result = cli("check", "telegram", "newuser", "--id", "5551234")
    assert result.code == 3, result.out
    assert cli("check", "telegram", "someone_else", "--id", "777").code == 0


# ---- preview ------------------------------------------------------------------------------------

def test_a_preview_resolves_and_guards_with_read_keys_and_never_posts(
        cli, recorder, keyring_log, home) -> None:
    platform.add_post("40", "alice", user_id="u-1")
    result = cli("send", "recorder", "--reply-to", "40", "--text", "thanks!", "--preview")
    assert result.code == 0, result.err
    assert result.out.startswith("preview:")
    assert recording_keyring.reads() == ["recorder/default/read_token"]
    assert "author" in platform.calls() and "send" not in platform.calls()
    [line] = (home / "outbox" / "dry-run.jsonl").read_text().splitlines()
    assert json.loads(line)["preview"] is True and json.loads(line)["handle"] == "alice"
    flag(cli, "mallory", "u-66")
    platform.add_post("41", "alice", parties=[("thread root author", None, "u-66")])
    refused = cli("send", "recorder", "--reply-to", "41", "--text", "thanks!", "--preview")
    assert refused.code == 3, refused.err
    assert sent() == [] and not posting_key_read()


# ---- a crash between "sent" and the memory write ------------------------------------------------

def test_a_send_whose_memory_write_failed_is_recorded_on_the_next_run(
        cli, recorder, keyring_log, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TACTFUL_NOW", "2026-11-29T12:00:00-05:00")
    # The month's journal file cannot be written: a folder stands where it goes.
    blocked = home / "journal" / "2026-11.md"
    blocked.mkdir(parents=True)
    first = cli("send", "recorder", "--text", "a post to no one")
    assert first.code == 0 and "memory was not written" in first.err
    assert unremembered(home) == 1
    blocked.rmdir()
    second = cli("send", "recorder", "--to", "alice", "--text", "hello")
    assert second.code == 0, second.err
    assert "was never written to memory" in second.err
    assert "a post to no one" in blocked.read_text()
    assert unremembered(home) == 0


def unremembered(home: Path) -> int:
    db = sqlite3.connect(home / "ledger.sqlite")
    try:
        (count,) = db.execute("SELECT count(*) FROM sends WHERE remembered = 0").fetchone()
    finally:
        db.close()
    return int(count)


@pytest.mark.parametrize("command", [["send", "recorder", "--to", "alice", "--text", "hi"]])
def test_sending_on_built_in_defaults_says_so(cli, recorder, keyring_log, command) -> None:
    result = cli(*command)
    assert "running on built-in defaults" in result.err


def test_a_lock_held_by_a_stuck_process_refuses_before_the_post_not_after(
        cli, recorder, keyring_log, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tactful.core.memory.home import Home

    from .test_fail_closed import holding

    monkeypatch.setenv("TACTFUL_LOCK_TIMEOUT", "0.5")
    with holding(Home(home).person_lock("recorder", "alice")):
        result = cli("send", "recorder", "--to", "alice", "--text", "hello")
    assert result.code == 4, result.err
    assert "held by another tactful process" in result.err
    assert sent() == [] and not posting_key_read()
    assert cli("send", "recorder", "--to", "alice", "--text", "hello").code == 0
    assert "hello" in (home / "people" / "recorder" / "alice.md").read_text()
