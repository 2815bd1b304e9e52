"""The send gate's refusals at the edges (docs/sending.md): links in any spelling, crowded or
dangling identities, hand-edited or unreadable memory, handles and links in the spellings
platforms accept, guards that misbehave, a session that fails after the post, people flagged
while a send is under way, and the companion's group chats and paced replies. Each test names
what must hold: nothing reaches a do-not-engage person, no posting key is read first, and no
post is left without its memory entry."""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path

import pytest

from tactful.core.errors import BadInput, DoNotEngage
from tactful.core.memory import identity

from . import recording_adapter as platform
from .recording_keyring import RecordingKeyring
from .sending import flag, guard_plugin, hand_edit, posting_key_read, sent

LINKED_AT = "'2026-11-01T10:00:00-04:00'"


def add_link(path: Path, ref: str) -> None:
    hand_edit(path, path.read_text().replace(
        "aka: []", f"aka:\n- {{ref: '{ref}', reason: by hand, at: {LINKED_AT}}}"))


def refused_on_recorder(result) -> None:  # type: ignore[no-untyped-def]
    assert result.code in (3, 4), (result.code, result.out, result.err)
    assert sent() == [] and not posting_key_read()


# ---- the identity model -------------------------------------------------------------------------

@pytest.mark.parametrize("ref", ["recorder:bob", "recorder/@bob", "recorder/Bob",
                                 "Recorder/bob"])
def test_a_one_sided_link_written_in_another_spelling_still_carries_do_not_engage(
        cli, recorder, keyring_log, home, ref) -> None:
    flag(cli, "mallory", where="x")
    add_link(home / "people" / "x" / "mallory.md", ref)
    refused_on_recorder(cli("send", "recorder", "--to", "bob", "--text", "hi"))
    assert cli("check", "recorder", "bob").code == 3


def test_a_direct_link_to_a_flagged_account_counts_however_many_links_a_file_has(
        cli, recorder, keyring_log, home) -> None:
    for i in range(70):
        assert cli("remember", "x", f"f{i:02d}", "--kind", "reply", "--they", "hi").code == 0
    flag(cli, "zed", where="x")
    assert cli("remember", "recorder", "bob", "--kind", "reply", "--they", "hi").code == 0
    path = home / "people" / "recorder" / "bob.md"
    links = "".join(f"- {{ref: x/f{i:02d}, reason: r, at: {LINKED_AT}}}\n" for i in range(70))
    links += f"- {{ref: x/zed, reason: r, at: {LINKED_AT}}}\n"
    hand_edit(path, path.read_text().replace("aka: []\n", "aka:\n" + links))
    refused_on_recorder(cli("send", "recorder", "--to", "bob", "--text", "hi"))
    assert cli("check", "recorder", "bob").code == 3


def test_a_link_to_a_platform_no_longer_installed_still_carries_do_not_engage(
        cli, recorder, keyring_log, home) -> None:
    flag(cli, "al", where="x")
    (home / "people" / "mastodon").mkdir()
    src = home / "people" / "x" / "al.md"
    (home / "people" / "mastodon" / "al.md").write_text(
        src.read_text().replace("platform: x", "platform: mastodon"))
    src.unlink()
    assert cli("remember", "recorder", "alice", "--kind", "reply", "--they", "hi").code == 0
    add_link(home / "people" / "recorder" / "alice.md", "mastodon/al")
    refused_on_recorder(cli("send", "recorder", "--to", "alice", "--text", "hi"))


def test_a_renamed_flagged_account_whose_file_is_misnamed_is_still_refused(
        cli, recorder, keyring_log, home) -> None:
    flag(cli, "mallory", "u-9")
    people = home / "people" / "recorder"
    (people / "mallory.md").rename(people / "Mallory.md")
    platform.add_user("newname", "u-9")
    assert cli("check", "recorder", "mallory").code == 4  # by name it is refused...
    refused_on_recorder(cli("send", "recorder", "--to", "newname", "--text", "hi"))  # by id not


def test_a_renamed_flagged_account_whose_file_cannot_be_decoded_is_refused(
        cli, recorder, keyring_log, home) -> None:
    flag(cli, "mallory", "u-9")
    path = home / "people" / "recorder" / "mallory.md"
    saved = path.with_name("mallory.md.swp")
    saved.write_bytes(path.read_bytes() + b"\nnote: caf\xe9\n")
    saved.replace(path)
    platform.add_user("newname", "u-9")
    assert cli("check", "recorder", "mallory").code == 4
    refused_on_recorder(cli("send", "recorder", "--to", "newname", "--text", "hi"))


def test_a_hand_edit_followed_by_any_write_on_that_platform_still_reaches_the_id_map(
        cli, recorder, keyring_log, home, monkeypatch) -> None:
    flag(cli, "mallory")
    path = home / "people" / "recorder" / "mallory.md"
    hand_edit(path, path.read_text().replace("aka: []", "aka: []\nid: u-9"))
    original = identity.touch_stamp

    def slow_stamp(home_, platform_):  # type: ignore[no-untyped-def]
        time.sleep(0.02)
        original(home_, platform_)

    monkeypatch.setattr(identity, "touch_stamp", slow_stamp)
    assert cli("set", "recorder", "alice", "--display-name", "Alice").code == 0
    monkeypatch.setattr(identity, "touch_stamp", original)
    platform.add_user("newname", "u-9")
    refused_on_recorder(cli("send", "recorder", "--to", "newname", "--text", "hi"))
    assert cli("check", "recorder", "newname", "--id", "u-9").code == 3


def test_forgetting_the_alt_account_of_a_flagged_person_keeps_it_flagged(
        cli, recorder, keyring_log) -> None:
    flag(cli, "mallory", where="x")
    assert cli("remember", "recorder", "mal", "--kind", "reply", "--they", "hi").code == 0
    assert cli("link", "x:mallory", "recorder:mal", "--proof",
               "https://example.com/proof").code == 0
    assert cli("check", "recorder", "mal").code == 3
    assert cli("forget", "recorder", "mal").code == 0
    refused_on_recorder(cli("send", "recorder", "--to", "mal", "--text", "hi again"))


# ---- plugins ------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_plugin_guard_written_as_async_def_is_not_taken_as_passed(
        cli, recorder, keyring_log) -> None:
    async def nobody_today(attempt) -> None:  # type: ignore[no-untyped-def]
        raise DoNotEngage("refused: nobody today")

    with guard_plugin(nobody_today):
        result = cli("send", "recorder", "--to", "alice", "--text", "hi")
    assert result.code != 0 and sent() == [] and not posting_key_read(), result


def test_a_plugin_guard_that_answers_false_is_not_taken_as_passed(
        cli, recorder, keyring_log) -> None:
    with guard_plugin(lambda attempt: False):
        result = cli("send", "recorder", "--to", "alice", "--text", "hi")
    assert result.code != 0 and sent() == [] and not posting_key_read(), result


def test_an_adapter_that_forgets_to_normalize_mentions_cannot_hide_a_flagged_one(
        cli, recorder, keyring_log, monkeypatch) -> None:
    flag(cli, "mallory")
    monkeypatch.setattr(platform.RecorderAdapter, "mentions",
                        lambda self, text: re.findall(r"(?<![\w@])@([A-Za-z0-9_]{1,30})", text))
    refused_on_recorder(cli("send", "recorder", "--to", "alice", "--text", "hi @Mallory"))


def test_an_adapter_that_forgets_to_normalize_thread_parties_cannot_hide_a_flagged_one(
        cli, recorder, keyring_log) -> None:
    flag(cli, "mallory")
    platform.add_post("21", "alice", user_id="u-1",
                      parties=[("thread root author", "Mallory", None)])
    refused_on_recorder(cli("send", "recorder", "--reply-to", "21", "--text", "agreed!"))


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


# ---- memory after a send ------------------------------------------------------------------------

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
