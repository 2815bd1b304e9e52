"""Who an Instagram or Facebook message reaches, through the real command line against the
emulators: every party found by the gate, however the text or the platform spells them."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tactful.adapters.meta.facebook.emulator import FacebookEmulator
from tactful.adapters.meta.instagram.emulator import InstagramEmulator

from .. import recording_keyring

PERSONA = "galatea"
PAGE = "104000000000001"
ALICE, MALLORY = "100000000000011", "100000000000666"


@pytest.fixture
def instagram(tmp_path: Path, home: Path, keyring_log: Path) -> Iterator[InstagramEmulator]:
    (home / "people").mkdir(parents=True)
    emu = InstagramEmulator(PERSONA).start()
    (tmp_path / "tactful.yaml").write_text(  # the working directory of every test
        f"platforms:\n  instagram:\n    account: {PERSONA}\n    base_url: {emu.base_url}\n")
    recording_keyring.store("instagram", PERSONA, "access_token", emu.token)
    yield emu
    threading.Thread(target=emu.stop, daemon=True).start()  # see test_threads.py


@pytest.fixture
def facebook(tmp_path: Path, home: Path, keyring_log: Path) -> Iterator[FacebookEmulator]:
    (home / "people").mkdir(parents=True)
    emu = FacebookEmulator(PAGE).start()
    emu.add_user(ALICE, display_name="Alice Example")
    emu.add_user(MALLORY, display_name="Mallory Example")
    (tmp_path / "tactful.yaml").write_text(
        f"platforms:\n  facebook:\n    account: '{PAGE}'\n    base_url: {emu.base_url}/v21.0\n")
    recording_keyring.store("facebook", PAGE, "access_token", emu.token)
    yield emu
    threading.Thread(target=emu.stop, daemon=True).start()


# ---- Instagram: a mention however the text punctuates it ---------------------------------------

@pytest.mark.parametrize("text", ["thanks.@mallory", "see -@mallory", "via /@mallory",
                                  "a+@mallory", "\uff20mallory look"])
def test_a_flagged_instagram_mention_after_punctuation_is_refused(  # type: ignore[no-untyped-def]
        cli, instagram: InstagramEmulator, text: str) -> None:
    comment = instagram.add_comment("alice", "who else shoots film?")
    assert cli("dne", "instagram", "mallory", "on").code == 0

    result = cli("send", "instagram", "--reply-to", comment, "--text", text)

    assert result.code == 3, (result.code, result.err)
    assert "(mention)" in result.err
    assert instagram.writes() == [] and recording_keyring.reads() == []


def test_an_e_mail_address_in_an_instagram_reply_is_no_mention(  # type: ignore[no-untyped-def]
        cli, instagram: InstagramEmulator) -> None:
    comment = instagram.add_comment("alice", "how do I reach you?")
    assert cli("dne", "instagram", "example", "on").code == 0
    result = cli("send", "instagram", "--reply-to", comment, "--text",
                 "write to hello@example.com")
    assert result.code == 0, result.err
    assert len(instagram.sent()) == 1


def test_a_flagged_mention_read_from_stdin_is_refused(  # type: ignore[no-untyped-def]
        cli, instagram: InstagramEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    comment = instagram.add_comment("alice", "hi")
    assert cli("dne", "instagram", "mallory", "on").code == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("ask.@mallory\n"))

    result = cli("send", "instagram", "--reply-to", comment, "--text", "-")

    assert result.code == 3, (result.code, result.err)
    assert instagram.writes() == []


# ---- Facebook: the post a comment is on, and tags however padded -------------------------------

def test_a_comment_on_a_flagged_person_s_post_is_not_answered(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    post = facebook.add_tagged_post(MALLORY, "look at this page")
    comment = facebook.add_comment(ALICE, "nice", on=post)
    assert cli("dne", "facebook", MALLORY, "on").code == 0

    result = cli("send", "facebook", "--reply-to", comment, "--text", "thanks alice")

    assert result.code == 3, (result.code, result.err)
    assert "(post author)" in result.err
    assert facebook.writes() == []


def test_a_comment_by_permalink_on_a_flagged_person_s_post_is_not_answered(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    post = facebook.add_tagged_post(MALLORY, "look at this page")
    comment = facebook.add_comment(ALICE, "nice", on=post)
    assert cli("dne", "facebook", "000" + MALLORY, "on").code == 0  # leading zeros: one id
    url = f"https://www.facebook.com/{MALLORY}/posts/{post.split('_')[1]}" \
          f"?comment_id={comment.split('_')[1]}"

    result = cli("send", "facebook", "--reply-to", url, "--text", "thanks alice")

    assert result.code == 3, (result.code, result.err)
    assert facebook.writes() == []


def test_a_reply_to_a_post_that_tags_a_flagged_person_is_refused(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    post = facebook.add_tagged_post(ALICE, "with friends at the page", tagging=(MALLORY,))
    assert cli("dne", "facebook", MALLORY, "on").code == 0

    result = cli("send", "facebook", "--reply-to", post, "--text", "lovely, thank you")

    assert result.code == 3, (result.code, result.err)
    assert "(tagged in the post)" in result.err
    assert facebook.writes() == []


def test_a_reply_to_a_comment_under_a_post_that_tags_a_flagged_person_is_refused(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    post = facebook.add_tagged_post(ALICE, "with friends at the page", tagging=(MALLORY,))
    comment = facebook.add_comment(ALICE, "and the coffee!", on=post)
    assert cli("dne", "facebook", MALLORY, "on").code == 0

    result = cli("send", "facebook", "--reply-to", comment, "--text", "glad you liked it")

    assert result.code == 3, (result.code, result.err)
    assert "(tagged in the post)" in result.err
    assert facebook.writes() == []


def test_a_reply_to_a_comment_that_tags_a_flagged_person_is_refused(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    comment = facebook.add_comment(ALICE, "you should meet her", tagging=(MALLORY,))
    assert cli("dne", "facebook", MALLORY, "on").code == 0

    result = cli("send", "facebook", "--reply-to", comment, "--text", "happy to!")

    assert result.code == 3, (result.code, result.err)
    assert "(tagged in the comment)" in result.err
    assert facebook.writes() == []


def test_a_reply_in_a_thread_whose_first_comment_tags_a_flagged_person_is_refused(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    top = facebook.add_comment(ALICE, "look who is here", tagging=(MALLORY,))
    inner = facebook.add_comment(ALICE, "and me", on=top)
    assert cli("dne", "facebook", MALLORY, "on").code == 0

    result = cli("send", "facebook", "--reply-to", inner, "--text", "welcome")

    assert result.code == 3, (result.code, result.err)
    assert facebook.writes() == []


def test_a_reply_to_a_post_that_tags_only_the_page_lands(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    post = facebook.add_tagged_post(ALICE, "at the page today")
    result = cli("send", "facebook", "--reply-to", post, "--text", "thanks for coming")
    assert result.code == 0, result.err
    assert len(facebook.sent()) == 1


def test_a_comment_on_a_post_nobody_can_read_is_not_answered(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    post = facebook.add_tagged_post(MALLORY, "look at this page")
    facebook.hide_author(MALLORY)  # the post reads without `from`
    comment = facebook.add_comment(ALICE, "nice", on=post)

    result = cli("send", "facebook", "--reply-to", comment, "--text", "thanks alice")

    assert result.code == 5, (result.code, result.err)
    assert facebook.writes() == []


def test_a_reply_to_a_comment_on_the_page_s_own_post_still_lands(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    comment = facebook.add_comment(ALICE, "hello page")
    result = cli("send", "facebook", "--reply-to", comment, "--text", "hello alice")
    assert result.code == 0, result.err
    [posted] = facebook.sent()
    assert posted["reply_to"] == comment


def test_a_flagged_tag_padded_with_leading_zeros_is_refused(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    comment = facebook.add_comment(ALICE, "who else?")
    assert cli("dne", "facebook", MALLORY, "on").code == 0

    result = cli("send", "facebook", "--reply-to", comment, "--text",
                 f"ask @[{'0' * 30}{MALLORY}:Mallory]")

    assert result.code == 3, (result.code, result.err)
    assert "(mention)" in result.err
    assert facebook.requests == [] and recording_keyring.reads() == []


def test_a_tag_of_thousands_of_zeros_is_read_not_crashed_on(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    comment = facebook.add_comment(ALICE, "who else?")
    assert cli("dne", "facebook", MALLORY, "on").code == 0
    result = cli("send", "facebook", "--reply-to", comment, "--text",
                 f"@[{'0' * 5000}{MALLORY}]")
    assert result.code == 3, (result.code, result.err)
