"""Facebook Pages: `tactful send facebook` and the session, through httpx against the Facebook
emulator on 127.0.0.1, with the real pipeline, keyring and plugin host; nothing mocked."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tactful.adapters.meta.facebook.adapter import FacebookAdapter, mentions, parse_post
from tactful.adapters.meta.facebook.emulator import FacebookEmulator
from tactful.core.errors import BadInput, Refused
from tactful.core.send.adapter import AdapterSettings, Session

from .. import recording_keyring

PAGE = "104000000000001"
ALICE, BOB, MALLORY = "100000000000011", "100000000000012", "100000000000666"


@pytest.fixture
def facebook(tmp_path: Path, home: Path, keyring_log: Path) -> Iterator[FacebookEmulator]:
    (home / "people").mkdir(parents=True)
    emu = FacebookEmulator(PAGE).start()
    emu.add_user(ALICE, display_name="Alice Example")
    emu.add_user(BOB, display_name="Bob Example")
    emu.add_user(MALLORY, display_name="Alice Example")  # names are not unique
    (tmp_path / "tactful.yaml").write_text(  # the working directory of every test
        f"platforms:\n  facebook:\n    account: '{PAGE}'\n    base_url: {emu.base_url}/v21.0\n")
    recording_keyring.store("facebook", PAGE, "access_token", emu.token)
    yield emu
    threading.Thread(target=emu.stop, daemon=True).start()  # see test_threads.py


@pytest.fixture
def session(facebook: FacebookEmulator) -> Iterator[Session]:
    adapter = FacebookAdapter(AdapterSettings("facebook", PAGE, base_url=facebook.base_url),
                              timeout=2.0)
    opened = adapter.open({"access_token": facebook.token})
    yield opened
    opened.close()


def _events(home: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in
            (home / "engagement.jsonl").read_text().splitlines() if line.strip()]


# ---- replies land, once, and memory shows them ---------------------------------------------

def test_a_reply_lands_on_the_comment_and_the_card_and_log_show_it(  # type: ignore[no-untyped-def]
        cli, home: Path, facebook: FacebookEmulator) -> None:
    comment = facebook.add_comment(ALICE, "when is the next meetup?")

    first = cli("send", "facebook", "--reply-to", comment, "--text", "next Tuesday")

    assert first.code == 0, first.err
    [posted] = facebook.sent()
    assert (posted["reply_to"], posted["text"]) == (comment, "next Tuesday")
    [write] = facebook.writes()
    assert write.path == f"/v21.0/{comment}/comments"  # the version in base_url is kept
    [event] = _events(home)
    assert (event["handle"], event["action"]) == (ALICE, "reply")
    card = cli("card", "facebook", ALICE)
    assert card.code == 0 and "next Tuesday" in card.out and "Alice Example" in card.out
    again = cli("send", "facebook", "--reply-to", comment, "--text", "next Tuesday")
    assert again.code == 5, again.err
    assert len(facebook.sent()) == 1


def test_a_comment_on_a_post_by_permalink_lands_on_the_post(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    post = facebook.add_tagged_post(BOB, "great talk by @[104000000000001]")
    owner, number = post.split("_")
    url = f"https://www.facebook.com/permalink.php?story_fbid={number}&id={owner}"

    result = cli("send", "facebook", "--reply-to", url, "--text", "thank you!")

    assert result.code == 0, result.err
    [posted] = facebook.sent()
    assert (posted["reply_to"], posted["post"]) == (post, post)


def test_a_page_post_goes_to_the_feed(session: Session, facebook: FacebookEmulator) -> None:
    sent = session.send("open house on Friday", reply_to=None, to=None, mentions={})
    [posted] = facebook.sent()
    assert (posted["kind"], posted["id"]) == ("post", sent.id)
    assert sent.id.startswith(f"{PAGE}_")


def test_a_reply_inside_a_thread_goes_to_its_top_comment_and_checks_its_author(
        session: Session, facebook: FacebookEmulator) -> None:
    top = facebook.add_comment(ALICE, "first")
    inner = facebook.add_comment(BOB, "second", on=top)
    ref = parse_post(inner)

    author = session.author(ref)
    session.send("welcome both", reply_to=ref, to=None, mentions={})

    assert (author.handle, author.display_name, author.thread) == (BOB, "Bob Example", top)
    assert [(p.role, p.id) for p in author.parties] == [("thread author", ALICE),
                                                        ("post author", PAGE)]
    [posted] = facebook.sent()
    assert posted["reply_to"] == top


def test_a_post_id_that_is_not_the_page_s_is_read_as_a_post_after_one_refusal(
        session: Session, facebook: FacebookEmulator) -> None:
    post = facebook.add_tagged_post(BOB, "hello page")
    author = session.author(parse_post(post))
    assert (author.handle, author.parties) == (BOB, ())
    assert len(facebook.requests) == 2


def test_an_author_facebook_withholds_is_never_answered(session: Session,
                                                        facebook: FacebookEmulator) -> None:
    facebook.hide_author(MALLORY)
    comment = facebook.add_comment(MALLORY, "who am I?")
    with pytest.raises(Refused, match="did not say who wrote"):
        session.author(parse_post(comment))


# ---- do-not-engage: by id, refused before any request or key ----------------------------------

def test_a_flagged_tag_exits_3_with_no_request_and_no_key_read(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    comment = facebook.add_comment(ALICE, "who else?")
    assert cli("dne", "facebook", MALLORY, "on").code == 0

    result = cli("send", "facebook", "--reply-to", comment, "--text",
                 f"ask @[{MALLORY}:Mallory]")

    assert result.code == 3, result.err
    assert "(mention)" in result.err
    assert facebook.requests == [] and recording_keyring.reads() == []


def test_a_flagged_target_exits_3_with_no_request_and_no_key_read(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    comment = facebook.add_comment(MALLORY, "hi")
    assert cli("dne", "facebook", MALLORY, "on").code == 0
    result = cli("send", "facebook", "--reply-to", comment, "--to", MALLORY, "--text", "hello")
    assert result.code == 3, result.err
    assert facebook.requests == [] and recording_keyring.reads() == []


def test_a_flagged_author_found_by_reading_the_comment_is_never_answered(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    assert cli("dne", "facebook", MALLORY, "on").code == 0
    comment = facebook.add_comment(MALLORY, "answer me")

    result = cli("send", "facebook", "--reply-to", comment, "--text", "hello")

    assert result.code == 3, result.err
    assert "(author)" in result.err
    # the comment, then the post it is on (whose author an answer notifies): reads only
    assert [r.path for r in facebook.requests] == [
        f"/v21.0/{comment}", f"/v21.0/{PAGE}_{comment.split('_')[0]}"]
    assert facebook.writes() == []


def test_the_same_name_is_not_the_same_person(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    assert cli("dne", "facebook", MALLORY, "on").code == 0  # also called "Alice Example"
    comment = facebook.add_comment(ALICE, "hello")
    assert cli("send", "facebook", "--reply-to", comment, "--text", "hi Alice").code == 0


# ---- what a Page cannot do --------------------------------------------------------------------

def test_a_post_to_a_person_exits_2_since_a_page_mentions_no_one(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    result = cli("send", "facebook", "--to", ALICE, "--text", f"@[{ALICE}] hi")
    assert result.code == 2, result.err
    assert "cannot mention a person" in result.err
    assert facebook.requests == [] and recording_keyring.reads() == []


def test_an_image_exits_2(cli, facebook: FacebookEmulator) -> None:  # type: ignore[no-untyped-def]
    result = cli("send", "facebook", "--image", "https://example.com/a.jpg", "--text", "x")
    assert result.code == 2 and "posts no images" in result.err
    assert facebook.requests == []


def test_only_bracket_tags_are_mentions() -> None:
    assert mentions("hi @alice and @[0100000000000011] and @[104000000000001:Galatea]") == [
        "100000000000011", "104000000000001"]


@pytest.mark.parametrize(("raw", "object_id"), [
    ("104000000000001_500", "104000000000001_500"),
    ("https://www.facebook.com/104000000000001/posts/500", "104000000000001_500"),
    ("https://www.facebook.com/104000000000001/posts/500?comment_id=900",
     "500_900"),
    ("https://m.facebook.com/permalink.php?story_fbid=500&id=104000000000001",
     "104000000000001_500"),
    ("https://www.facebook.com/104000000000001_500?comment_id=500_900", "500_900"),
])
def test_post_and_comment_references(raw: str, object_id: str) -> None:
    assert parse_post(raw).id == object_id


@pytest.mark.parametrize("raw", ["500", "https://www.facebook.com/acme/posts/500",
                                 "https://evil.example/104_500", "alice"])
def test_references_that_name_no_object_are_refused(raw: str) -> None:
    with pytest.raises(BadInput):
        parse_post(raw)


def test_a_page_named_by_a_name_instead_of_its_id_is_refused_before_any_request() -> None:
    adapter = FacebookAdapter(AdapterSettings("facebook", "galatea"))
    with pytest.raises(BadInput, match="not a Page id"):
        adapter.open({"access_token": "t"})


# ---- dry run, rate limits, batch replies --------------------------------------------------------

def test_a_dry_run_makes_no_request(cli, home: Path,  # type: ignore[no-untyped-def]
                                    facebook: FacebookEmulator) -> None:
    comment = facebook.add_comment(ALICE, "hi")
    result = cli("send", "facebook", "--reply-to", comment, "--text", "hey", "--dry-run")
    assert result.code == 0, result.err
    assert facebook.requests == [] and recording_keyring.reads() == []
    assert (home / "outbox" / "dry-run.jsonl").exists()


def test_a_page_rate_limit_is_clear_and_a_rerun_posts_nothing_twice(  # type: ignore[no-untyped-def]
        cli, facebook: FacebookEmulator) -> None:
    comment = facebook.add_comment(ALICE, "hi")
    facebook.rate_limit_next(code=32, minutes=3, match=facebook.is_write)

    limited = cli("send", "facebook", "--reply-to", comment, "--text", "hello")
    rerun = cli("send", "facebook", "--reply-to", comment, "--text", "hello")
    third = cli("send", "facebook", "--reply-to", comment, "--text", "hello")

    assert limited.code == 5, limited.err
    assert "rate limited" in limited.err and "retry in 180 s" in limited.err
    assert (rerun.code, third.code) == (0, 5), (rerun.err, third.err)
    assert [p["text"] for p in facebook.sent()] == ["hello"]


def test_fetch_reads_comments_on_recent_posts_and_posts_that_tag_the_page(
        session: Session, facebook: FacebookEmulator) -> None:
    facebook.add_page_post("news")
    top = facebook.add_comment(ALICE, "question")
    inner = facebook.add_comment(BOB, "same question", on=top)
    tagged = facebook.add_tagged_post(MALLORY, "look @[104000000000001]")
    session.send("answer", reply_to=parse_post(top), to=None, mentions={})  # the Page's own

    page = session.fetch_inbound(None, 10)

    assert [(i.post.id, i.author.handle) for i in page.items] == [
        (top, ALICE), (inner, BOB), (tagged, MALLORY)]
    assert page.items[1].thread == top
    assert page.items[0].author.display_name == "Alice Example"
    assert session.fetch_inbound(page.cursor, 10).items == ()


def test_a_person_is_named_by_their_id_and_never_by_a_name(  # type: ignore[no-untyped-def]
        cli, home: Path, facebook: FacebookEmulator) -> None:
    for argv in (["dne", "facebook", "alice", "on"],
                 ["remember", "facebook", "Alice", "--kind", "reply", "--they", "hi"],
                 ["check", "facebook", "alice"]):
        result = cli(*argv)
        assert result.code == 2, (argv, result.err)
        assert "numeric user id" in result.err
    assert list((home / "people").rglob("*.md")) == []
    assert cli("remember", "facebook", "0100000000000011", "--kind", "reply",
               "--they", "hi").code == 0
    assert (home / "people" / "facebook" / f"{ALICE}.md").exists()


def test_a_page_account_that_is_not_an_id_is_refused_when_the_config_loads(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, facebook: FacebookEmulator) -> None:
    (tmp_path / "tactful.yaml").write_text(
        f"platforms:\n  facebook:\n    account: galatea\n    base_url: {facebook.base_url}\n")
    result = cli("send", "facebook", "--text", "hello", "--dry-run")
    assert result.code == 2, result.err
    assert "platforms.facebook.account" in result.err and "numeric id" in result.err
    assert facebook.requests == [] and recording_keyring.reads() == []
