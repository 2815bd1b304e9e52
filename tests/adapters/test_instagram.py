"""Instagram: `tactful send instagram` and the session, through httpx against the Instagram
emulator on 127.0.0.1, with the real pipeline, keyring and plugin host; nothing mocked."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tactful.adapters.meta.instagram.adapter import InstagramAdapter, parse_post
from tactful.adapters.meta.instagram.emulator import InstagramEmulator
from tactful.core.errors import BadInput
from tactful.core.send.adapter import AdapterSettings, Session

from .. import recording_keyring

PERSONA = "galatea"
IMAGE = "https://example.com/photo.jpg"


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
def session(instagram: InstagramEmulator) -> Iterator[Session]:
    adapter = InstagramAdapter(AdapterSettings("instagram", PERSONA,
                                               base_url=instagram.base_url),
                               timeout=2.0, container_interval=0.0)
    opened = adapter.open({"access_token": instagram.token})
    yield opened
    opened.close()


def _events(home: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in
            (home / "engagement.jsonl").read_text().splitlines() if line.strip()]


# ---- a reply lands, once, and memory shows it ------------------------------------------------

def test_a_reply_lands_on_the_comment_and_the_card_and_log_show_it(  # type: ignore[no-untyped-def]
        cli, home: Path, instagram: InstagramEmulator) -> None:
    comment = instagram.add_comment("alice", "@galatea which lens was this?")

    first = cli("send", "instagram", "--reply-to", comment, "--text", "a 35 mm, wide open")

    assert first.code == 0, first.err
    [posted] = instagram.sent()
    assert (posted["kind"], posted["reply_to"], posted["text"]) == (
        "reply", comment, "a 35 mm, wide open")
    [write] = instagram.writes()
    assert write.path.endswith(f"/{comment}/replies")
    [event] = _events(home)
    assert (event["handle"], event["action"]) == ("alice", "reply")
    card = cli("card", "instagram", "alice")
    assert card.code == 0 and "a 35 mm, wide open" in card.out
    assert recording_keyring.reads() == ["instagram/galatea/access_token"]


def test_a_second_identical_reply_exits_5_and_posts_nothing(  # type: ignore[no-untyped-def]
        cli, instagram: InstagramEmulator) -> None:
    comment = instagram.add_comment("alice", "nice")
    url = instagram.comment_url(comment)
    assert cli("send", "instagram", "--reply-to", url, "--text", "thanks!").code == 0
    again = cli("send", "instagram", "--reply-to", comment, "--text", "thanks!")
    assert again.code == 5, again.err
    assert len(instagram.sent()) == 1


def test_a_reply_inside_a_thread_goes_to_its_top_comment(session: Session,
                                                         instagram: InstagramEmulator) -> None:
    top = instagram.add_comment("alice", "first!")
    inner = instagram.add_comment("bob", "@alice no, me", reply_to=top)
    ref = parse_post(inner)

    author = session.author(ref)
    session.send("@bob welcome", reply_to=ref, to=None, mentions={})

    assert (author.handle, author.thread) == ("bob", top)
    assert [(p.role, p.handle) for p in author.parties] == [("thread author", "alice")]
    [write] = instagram.writes()
    assert write.path.endswith(f"/{top}/replies")


# ---- do-not-engage: refused before any request or key -------------------------------------------

def test_a_flagged_mention_exits_3_with_no_request_and_no_key_read(  # type: ignore[no-untyped-def]
        cli, instagram: InstagramEmulator) -> None:
    comment = instagram.add_comment("alice", "who else shoots film?")
    assert cli("dne", "instagram", "mallory", "on").code == 0

    result = cli("send", "instagram", "--reply-to", comment, "--text", "ask @mallory.")

    assert result.code == 3, result.err
    assert "(mention)" in result.err
    assert instagram.requests == [] and recording_keyring.reads() == []


def test_a_flagged_target_exits_3_with_no_request_and_no_key_read(  # type: ignore[no-untyped-def]
        cli, instagram: InstagramEmulator) -> None:
    assert cli("dne", "instagram", "mallory", "on").code == 0
    result = cli("send", "instagram", "--to", "mallory", "--image", IMAGE,
                 "--text", "@mallory look")
    assert result.code == 3, result.err
    assert instagram.requests == [] and recording_keyring.reads() == []


def test_a_flagged_author_found_by_one_read_is_never_answered(  # type: ignore[no-untyped-def]
        cli, instagram: InstagramEmulator) -> None:
    assert cli("dne", "instagram", "mallory", "on").code == 0
    comment = instagram.add_comment("mallory", "answer me")

    result = cli("send", "instagram", "--reply-to", comment, "--text", "hello")

    assert result.code == 3, result.err
    assert "(author)" in result.err
    assert [r.path for r in instagram.requests] == [f"/v23.0/{comment}"]
    assert instagram.writes() == []


def test_a_flagged_thread_author_stops_a_reply_inside_their_thread(  # type: ignore[no-untyped-def]
        cli, instagram: InstagramEmulator) -> None:
    assert cli("dne", "instagram", "mallory", "on").code == 0
    top = instagram.add_comment("mallory", "my thread")
    inner = instagram.add_comment("bob", "reply in it", reply_to=top)
    result = cli("send", "instagram", "--reply-to", inner, "--text", "hi bob")
    assert result.code == 3, result.err
    assert instagram.writes() == []


# ---- what Instagram cannot do -----------------------------------------------------------------

def test_a_text_only_post_exits_2_saying_instagram_has_none(  # type: ignore[no-untyped-def]
        cli, instagram: InstagramEmulator) -> None:
    result = cli("send", "instagram", "--text", "good morning")
    assert result.code == 2
    assert "no text-only posts" in result.err and "--image" in result.err
    assert instagram.requests == [] and recording_keyring.reads() == []


def test_a_post_with_an_image_is_a_container_published(  # type: ignore[no-untyped-def]
        cli, instagram: InstagramEmulator) -> None:
    result = cli("send", "instagram", "--image", IMAGE, "--text", "morning light")
    assert result.code == 0, result.err
    [posted] = instagram.sent()
    assert (posted["kind"], posted["text"], posted["image"]) == ("post", "morning light", IMAGE)
    paths = [r.path.split("/", 2)[-1] for r in instagram.writes()]
    assert paths == [f"{instagram.persona_id}/media", f"{instagram.persona_id}/media_publish"]


@pytest.mark.parametrize("argv", [
    ["--image", "ftp://example.com/a.jpg", "--text", "x"],
    ["--image", IMAGE, "--reply-to", "17890000000000001", "--text", "x"],
])
def test_an_image_instagram_cannot_take_exits_2(cli, instagram: InstagramEmulator,  # type: ignore[no-untyped-def]
                                                argv: list[str]) -> None:
    result = cli("send", "instagram", *argv)
    assert result.code == 2, result.err
    assert instagram.requests == []


@pytest.mark.parametrize("raw", ["https://www.instagram.com/p/C8xYzAbCdEf/",
                                 "https://example.com/p/C8xYzAbCdEf/c/1789/", "17a", ""])
def test_references_that_name_no_comment_are_refused(raw: str) -> None:
    with pytest.raises(BadInput):
        parse_post(raw)


def test_a_comment_url_names_the_comment_id() -> None:
    ref = parse_post("instagram.com/galatea/p/C8xYzAbCdEf/c/17890123456789012")
    assert ref.id == "17890123456789012"
    assert ref.url == "https://www.instagram.com/p/C8xYzAbCdEf/c/17890123456789012/"


# ---- dry run, rate limits ----------------------------------------------------------------------

def test_a_dry_run_makes_no_request(cli, home: Path,  # type: ignore[no-untyped-def]
                                    instagram: InstagramEmulator) -> None:
    comment = instagram.add_comment("alice", "hi")
    result = cli("send", "instagram", "--reply-to", comment, "--text", "hey", "--dry-run")
    assert result.code == 0, result.err
    assert instagram.requests == [] and recording_keyring.reads() == []
    assert (home / "outbox" / "dry-run.jsonl").exists()


def test_a_rate_limit_is_clear_and_a_rerun_posts_nothing_twice(  # type: ignore[no-untyped-def]
        cli, instagram: InstagramEmulator) -> None:
    comment = instagram.add_comment("alice", "hi")
    instagram.rate_limit_next(code=4, minutes=7, match=instagram.is_write)

    limited = cli("send", "instagram", "--reply-to", comment, "--text", "hello")
    rerun = cli("send", "instagram", "--reply-to", comment, "--text", "hello")
    third = cli("send", "instagram", "--reply-to", comment, "--text", "hello")

    assert limited.code == 5, limited.err
    assert "rate limited" in limited.err and "retry in 420 s" in limited.err
    assert rerun.code == 0, rerun.err
    assert third.code == 5, third.err
    assert [p["text"] for p in instagram.sent()] == ["hello"]


def test_the_publishing_limit_is_asked_before_a_post(session: Session,
                                                     instagram: InstagramEmulator) -> None:
    instagram.fail_next(200, {"data": [{"quota_usage": 100, "config": {
        "quota_total": 100, "quota_duration": 86400}}]},
        match=lambda r: r.path.endswith("/content_publishing_limit"))
    from tactful.core.send.adapter import RateLimited

    with pytest.raises(RateLimited, match="content_publishing_limit"):
        session.send("caption", reply_to=None, to=None, mentions={}, image=IMAGE)  # type: ignore[call-arg]
    assert instagram.writes() == []


# ---- batch replies --------------------------------------------------------------------------

def test_fetch_reads_comments_on_the_persona_s_newest_media(session: Session,
                                                            instagram: InstagramEmulator) -> None:
    old = instagram.add_media("old")
    instagram.add_comment("zed", "on the old one", media=old)
    seen = []
    for name in ("alice", "bob", "carol"):
        media = instagram.add_media("newer")
        seen.append((instagram.add_comment(name, "@galatea love it", media=media), name))

    page = session.fetch_inbound(None, 10)

    assert [(i.post.id, i.author.handle) for i in page.items] == seen
    assert page.items[0].post.url == instagram.comment_url(seen[0][0])
    assert session.fetch_inbound(page.cursor, 10).items == ()


def test_a_presigned_image_url_leaves_no_signature_in_the_outbox(  # type: ignore[no-untyped-def]
        cli, home: Path, instagram: InstagramEmulator) -> None:
    signature = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    result = cli("send", "instagram", "--image",
                 f"https://bucket.example.com/p.jpg?X-Amz-Signature={signature}",
                 "--text", "a caption", "--dry-run")
    assert result.code == 0, result.err
    outbox = (home / "outbox" / "dry-run.jsonl").read_text()
    assert "bucket.example.com/p.jpg" in outbox and signature not in outbox
