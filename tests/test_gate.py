"""The one gate, on one model of who a person is (docs/sending.md): every party a message
touches is found, resolved to a stable id where the platform can, and checked by id and by
every handle, before a single posting credential is read. Shown with the recording adapter
plugin and the recording keyring; tests/adapters/test_every_party.py shows the same against
each platform's emulator with its real library, and tests/test_identity.py the model of who a
person is (ids, aka links, hand edits) that the gate checks against."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from tactful.core.cli.main import main
from tactful.core.errors import BadInput, Refused
from tactful.core.send.gate import Gate
from tactful.core.send.pipeline import Pipeline, SendRequest

from . import recording_adapter as platform
from . import recording_keyring
from .recording_keyring import RecordingKeyring
from .sending import flag, hand_edit, posting_key_read, refused_before_posting, sent

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


def test_a_renamed_flagged_author_is_refused_when_the_url_names_the_new_handle(
        cli, bluesky_emulator) -> None:
    # The handle the URL names is checked first, with no id; the author read then brings the
    # id, and that id must be checked too, not the verdict already given for the handle.
    bluesky = bluesky_emulator
    did = bluesky.add_user("mallory")
    assert cli("remember", "bluesky", "mallory.bsky.social", "--kind", "reply",
               "--they", "hi", "--id", did).code == 0
    assert cli("dne", "bluesky", "mallory.bsky.social", "on").code == 0
    bluesky.rename_user("mallory", "mallory2")
    url = bluesky.add_post("mallory2", f"@{bluesky.persona} hello again")
    result = cli("--config", str(bluesky.config), "send", "bluesky", "--reply-to", url,
                 "--text", "thanks!")
    assert result.code == 3, (result.code, result.err)
    assert bluesky.sent() == []


def test_a_handle_that_cannot_be_resolved_refuses_instead_of_passing(
        cli, recorder, keyring_log) -> None:
    platform.fail_reads()
    result = cli("send", "recorder", "--to", "alice", "--text", "hi @bob")
    assert result.code == 5, result.err
    assert not posting_key_read() and sent() == []


# ---- the author of the post replied to, whoever --to names ------------------------------------

def test_a_reply_under_a_flagged_authors_post_is_refused_even_when_to_names_someone_else(
        cli, recorder, keyring_log) -> None:
    # The platform notifies the author of the parent, and the reply sits in their thread.
    cli("dne", "recorder", "mallory", "on")
    platform.add_post("77", "mallory", user_id="u-9")
    result = cli("send", "recorder", "--to", "alice", "--reply-to", "77", "--text", "hi alice")
    assert result.code == 3, (result.code, result.err)
    assert sent() == []


def test_a_reply_whose_author_cannot_be_read_is_refused_even_with_to(
        cli, recorder, keyring_log, monkeypatch) -> None:
    flag(cli, "mallory", "u-66")
    platform.add_post("50", "mallory", user_id="u-66")
    original = platform.RecorderSession.author

    def hidden(self, post):  # type: ignore[no-untyped-def]
        if post.id == "50":
            platform.record("author", post=post.id)
            raise BadInput("recorder: post 50 is not visible to this token")
        return original(self, post)

    monkeypatch.setattr(platform.RecorderSession, "author", hidden)
    result = cli("send", "recorder", "--reply-to", "50", "--to", "alice", "--text", "thanks!")
    assert result.code != 0 and sent() == [] and not posting_key_read(), result


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


@pytest.mark.parametrize("spelling", ["Reply", " REPLY ", "reply"])
def test_a_kind_in_any_spelling_is_one_kind_so_a_second_reply_is_refused(
        cli, recorder, keyring_log, home: Path, spelling: str) -> None:
    platform.add_post("40", "alice", user_id="u-1")
    assert cli("send", "recorder", "--reply-to", "40", "--text", "thanks!").code == 0
    gate = Gate.for_home(home)
    try:
        with pytest.raises(Refused, match="already"):
            Pipeline(gate).send(SendRequest("recorder", "thanks!", reply_to="40",
                                            action=spelling))
    finally:
        gate.close()
    assert len(sent()) == 1


def test_a_kind_tactful_does_not_send_is_refused_before_anything(
        recorder, keyring_log, home: Path) -> None:
    platform.add_post("40", "alice", user_id="u-1")
    gate = Gate.for_home(home)
    try:
        with pytest.raises(BadInput, match="not a kind tactful sends"):
            Pipeline(gate).send(SendRequest("recorder", "thanks!", reply_to="40",
                                            action="reply2"))
    finally:
        gate.close()
    assert sent() == [] and not posting_key_read()


def test_a_plugin_s_direct_kind_in_capitals_still_needs_the_mention_in_the_text(
        cli, recorder, keyring_log, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform.RecorderAdapter, "direct_kind", "Mention")
    result = cli("send", "recorder", "--to", "alice", "--text", "hello there")
    assert result.code == 2, result.err
    assert "has no @alice" in result.err
    assert sent() == [] and not posting_key_read()


def test_a_renamed_flagged_author_whose_id_a_plugin_spells_with_zeros_is_refused(
        cli, recorder, keyring_log) -> None:
    flag(cli, "mallory_old", "666")
    platform.add_post("50", "mallory_new", user_id="000666")
    refused_before_posting(cli("send", "recorder", "--reply-to", "50", "--text", "hi"))


def test_a_renamed_flagged_mention_a_plugin_resolves_to_a_padded_id_is_refused(
        cli, recorder, keyring_log) -> None:
    flag(cli, "mallory_old", "666")
    platform.add_user("mallory_new", "0666")
    refused_before_posting(cli("send", "recorder", "--text", "hi @mallory_new"))


def test_a_party_the_platform_names_by_neither_handle_nor_id_refuses(
        cli, recorder, keyring_log) -> None:
    platform.add_post("22", "alice", user_id="u-1",
                      parties=[("thread root author", None, None)])
    result = cli("send", "recorder", "--reply-to", "22", "--text", "agreed!")
    assert result.code == 5, result.err
    assert "thread root author" in result.err
    assert not posting_key_read() and sent() == []


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


# ---- adapters that hand back handles as the platform spells them --------------------------------

def test_an_adapter_that_returns_an_unnormalized_author_handle_cannot_hide_a_flagged_one(
        cli, recorder, keyring_log) -> None:
    cli("dne", "recorder", "mallory", "on")
    platform.add_post("77", "Mallory", user_id=None)
    result = cli("send", "recorder", "--reply-to", "77", "--text", "thanks!")
    assert result.code == 3, (result.code, result.out, result.err)
    assert sent() == []


def test_an_adapter_that_forgets_to_normalize_mentions_cannot_hide_a_flagged_one(
        cli, recorder, keyring_log, monkeypatch) -> None:
    flag(cli, "mallory")
    monkeypatch.setattr(platform.RecorderAdapter, "mentions",
                        lambda self, text: re.findall(r"(?<![\w@])@([A-Za-z0-9_]{1,30})", text))
    refused_before_posting(cli("send", "recorder", "--to", "alice", "--text", "hi @Mallory"))


def test_an_adapter_that_forgets_to_normalize_thread_parties_cannot_hide_a_flagged_one(
        cli, recorder, keyring_log) -> None:
    flag(cli, "mallory")
    platform.add_post("21", "alice", user_id="u-1",
                      parties=[("thread root author", "Mallory", None)])
    refused_before_posting(cli("send", "recorder", "--reply-to", "21", "--text", "agreed!"))


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


# ---- after the post is out: its memory entry is always written ---------------------------------

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


def test_a_post_that_went_out_gets_its_memory_entry_even_if_the_session_fails_to_close(
        cli, recorder, keyring_log, home, monkeypatch) -> None:
    def broken_close(self) -> None:  # type: ignore[no-untyped-def]
        raise RuntimeError("socket already gone")

    monkeypatch.setattr(platform.RecorderSession, "close", broken_close)
    platform.add_post("40", "alice", user_id="u-1")
    cli("send", "recorder", "--reply-to", "40", "--text", "thanks!")
    assert len(sent()) == 1  # the post is out
    monkeypatch.setattr(platform.RecorderSession, "close", lambda self: None)
    assert cli("send", "recorder", "--to", "bob", "--text", "hello").code == 0  # the next run
    person = home / "people" / "recorder" / "alice.md"
    db = sqlite3.connect(home / "ledger.sqlite")
    try:
        states = db.execute("SELECT state FROM sends WHERE reply_to = '40'").fetchall()
    finally:
        db.close()
    assert person.exists() and "thanks!" in person.read_text(), states


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


# ---- races --------------------------------------------------------------------------------------

def test_a_person_flagged_while_the_posting_key_is_read_is_not_sent_to(
        cli, recorder, keyring_log, home, monkeypatch) -> None:
    assert cli("remember", "recorder", "alice", "--kind", "reply", "--they", "hi").code == 0
    path = home / "people" / "recorder" / "alice.md"
    original = RecordingKeyring.get_password

    def unlocking(self, service, username):  # type: ignore[no-untyped-def]
        if username.endswith("post_token"):
            hand_edit(path, path.read_text().replace("do_not_engage: false",
                                                     "do_not_engage: true"))
        return original(self, service, username)

    monkeypatch.setattr(RecordingKeyring, "get_password", unlocking)
    result = cli("send", "recorder", "--to", "alice", "--text", "hi")
    assert "do_not_engage: true" in path.read_text()
    assert result.code == 3 and sent() == [], result


# ---- a claim whose commit waits ---------------------------------------------------------------

def test_someone_flagged_while_the_claim_waits_for_its_commit_is_not_sent_to(
        cli, recorder, keyring_log, home: Path) -> None:
    assert cli("send", "recorder", "--to", "alice", "--text", "first hello").code == 0
    reader = sqlite3.connect(home / "ledger.sqlite", timeout=15, isolation_level=None)
    codes: list[int] = []
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM sends").fetchone()  # its commit must wait
        sender = threading.Thread(target=lambda: codes.append(
            main(["send", "recorder", "--to", "alice", "--text", "second hello"])))
        sender.start()
        time.sleep(1.5)  # checked and claimed; the commit waits on the reader
        assert cli("dne", "recorder", "alice", "on", "--reason", "asked").code == 0
    finally:
        reader.execute("ROLLBACK")
        reader.close()
    sender.join(30)
    assert codes == [3]
    assert [m["text"] for m in sent()] == ["first hello"]
