"""The Threads session: httpx against the Threads emulator on 127.0.0.1, nothing mocked."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest

from tactful.adapters.meta.threads.adapter import ThreadsAdapter
from tactful.adapters.meta.threads.emulator import ThreadsEmulator
from tactful.adapters.meta.threads.session import ThreadsSession
from tactful.core.errors import BadInput
from tactful.core.send.adapter import Adapter as AdapterProtocol
from tactful.core.send.adapter import (
    AdapterSettings,
    Forbidden,
    Page,
    PlatformDown,
    RateLimited,
    Session,
    Unauthorized,
)

PERSONA = "galatea"


def is_publish(request: object) -> bool:
    return getattr(request, "path", "").endswith("/threads_publish")


def is_container(request: object) -> bool:
    return getattr(request, "method", "") == "POST" and \
        getattr(request, "path", "").endswith("/threads")


@pytest.fixture
def emulator() -> Iterator[ThreadsEmulator]:
    emu = ThreadsEmulator(PERSONA).start()
    yield emu
    # The shared base server notices a shutdown only every 0.5 s (serve_forever's poll):
    # stopping in the background keeps each test fast, and nothing reuses this emulator.
    threading.Thread(target=emu.stop, name="threads-emulator-stop", daemon=True).start()


@pytest.fixture
def adapter(emulator: ThreadsEmulator) -> ThreadsAdapter:
    settings = AdapterSettings("threads", PERSONA, base_url=emulator.base_url)
    return ThreadsAdapter(settings, timeout=2.0, container_interval=0.0)


@pytest.fixture
def session(adapter: ThreadsAdapter, emulator: ThreadsEmulator) -> Iterator[Session]:
    opened = adapter.open({"access_token": emulator.token})
    yield opened
    opened.close()


def test_the_adapter_and_session_meet_the_contract(adapter: ThreadsAdapter,
                                                   session: Session) -> None:
    assert isinstance(adapter, AdapterProtocol)
    assert isinstance(session, Session)
    assert isinstance(session, ThreadsSession)


# ---- replies and mentions -------------------------------------------------------------------

def test_a_reply_is_threaded_with_reply_to_id_then_published(
        adapter: ThreadsAdapter, session: Session, emulator: ThreadsEmulator) -> None:
    url = emulator.add_post("alice", "what do you think, @galatea?")
    target = emulator.media_id(url)

    sent = session.send("@alice I think so", reply_to=adapter.parse_post(target), to=None,
                        mentions={"alice": None})

    create, publish = emulator.writes()
    assert create.path == f"/v1.0/{emulator.persona_id}/threads"
    assert create.form() == {"media_type": "TEXT", "text": "@alice I think so",
                             "reply_to_id": target}
    assert publish.path == f"/v1.0/{emulator.persona_id}/threads_publish"
    assert publish.form()["creation_id"] != target
    [posted] = emulator.sent()
    assert posted["reply_to"] == url
    assert (sent.id, sent.url) == (posted["id"], posted["url"])


def test_a_reply_by_url_finds_the_media_id_and_keeps_the_thread_root(
        adapter: ThreadsAdapter, session: Session, emulator: ThreadsEmulator) -> None:
    root = emulator.add_post("alice", "a thread")
    middle = emulator.add_post("bob", "@galatea over to you", reply_to=root)

    session.send("@bob agreed", reply_to=adapter.parse_post(middle), to=None,
                 mentions={"bob": None})

    create = emulator.writes()[0]
    assert create.form()["reply_to_id"] == emulator.media_id(middle)
    [posted] = emulator.sent()
    assert posted["root"] == emulator.media_id(root)


def test_a_mention_is_plain_text_that_threads_links(
        adapter: ThreadsAdapter, session: Session, emulator: ThreadsEmulator) -> None:
    emulator.add_user("bob")
    emulator.add_user("carol.x")
    text = "thanks @Bob and @carol.x. (mail me: me@example.com)"

    session.send(text, reply_to=None, to=None, mentions={"bob": None, "carol.x": None})

    [posted] = emulator.sent()
    assert posted["mentions"] == ["bob", "carol.x"]
    assert set(posted["mentions"]) <= set(adapter.mentions(text))  # the guard sees them all
    assert posted["reply_to"] is None
    assert "reply_to_id" not in emulator.writes()[0].form()


def test_a_post_to_someone_must_mention_them(session: Session,
                                             emulator: ThreadsEmulator) -> None:
    with pytest.raises(BadInput, match="must @mention bob"):
        session.send("hello there", reply_to=None, to="bob", mentions={})
    session.send("@bob hello there", reply_to=None, to="bob", mentions={"bob": None})
    assert [p["text"] for p in emulator.sent()] == ["@bob hello there"]


def test_too_long_text_never_reaches_the_platform(session: Session,
                                                  emulator: ThreadsEmulator) -> None:
    with pytest.raises(BadInput, match="limit is 500"):
        session.send("a" * 498 + "👋", reply_to=None, to=None, mentions={})
    assert emulator.writes() == []


def test_the_token_goes_in_a_header_and_nothing_secret_is_logged(
        session: Session, emulator: ThreadsEmulator, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    session.send("a private thought", reply_to=None, to=None, mentions={})
    assert emulator.requests
    for request in emulator.requests:
        assert request.headers["authorization"] == f"Bearer {emulator.token}"
        assert emulator.token not in request.path + str(dict(request.query))
    assert "private thought" not in caplog.text
    assert emulator.token not in caplog.text


# ---- the author of a post --------------------------------------------------------------------

def test_the_author_of_a_top_level_post_by_id_takes_exactly_one_request(
        adapter: ThreadsAdapter, session: Session, emulator: ThreadsEmulator) -> None:
    root = emulator.add_post("Bob_B", "a post")
    before = len(emulator.requests)

    author = session.author(adapter.parse_post(emulator.media_id(root)))

    [request] = emulator.requests[before:]
    assert request.path == f"/v1.0/{emulator.media_id(root)}"
    assert author.handle == "bob_b"
    assert author.thread == emulator.media_id(root)
    assert author.url == root
    assert author.id is None  # Threads gives no other user's id
    assert author.parties == ()  # a top-level post: nobody else is in its thread


def test_the_author_of_a_reply_takes_one_request_and_one_for_its_root(
        adapter: ThreadsAdapter, session: Session, emulator: ThreadsEmulator) -> None:
    root = emulator.add_post("alice", "root")
    reply = emulator.add_post("Bob_B", "a reply", reply_to=root)
    before = len(emulator.requests)

    author = session.author(adapter.parse_post(emulator.media_id(reply)))

    first, second = emulator.requests[before:]
    assert first.path == f"/v1.0/{emulator.media_id(reply)}"
    assert second.path == f"/v1.0/{emulator.media_id(root)}"
    assert author.handle == "bob_b"
    assert author.thread == emulator.media_id(root)
    assert author.url == reply
    assert author.id is None  # Threads gives no other user's id


def test_the_author_of_a_post_by_url_takes_exactly_one_request(
        adapter: ThreadsAdapter, session: Session, emulator: ThreadsEmulator) -> None:
    url = emulator.add_post("alice", "@galatea hello")
    before = len(emulator.requests)

    author = session.author(adapter.parse_post(url.replace("www.threads.com", "threads.net")))

    assert len(emulator.requests) == before + 1
    assert emulator.requests[-1].path == "/v1.0/me/mentions"
    assert (author.handle, author.url, author.thread) == ("alice", url, emulator.media_id(url))


def test_a_url_the_api_cannot_find_is_refused_with_the_fix(
        adapter: ThreadsAdapter, session: Session, emulator: ThreadsEmulator) -> None:
    url = emulator.add_post("alice", "no mention here")
    with pytest.raises(BadInput, match="numeric media id"):
        session.author(adapter.parse_post(url))
    with pytest.raises(BadInput, match="numeric media id"):
        session.send("hi", reply_to=adapter.parse_post(url), to=None, mentions={})
    assert emulator.writes() == []


def test_an_unknown_post_is_bad_input(adapter: ThreadsAdapter, session: Session) -> None:
    with pytest.raises(BadInput, match="18999999999999999 was not found"):
        session.author(adapter.parse_post("18999999999999999"))


def test_resolve_knows_only_the_persona(session: Session, emulator: ThreadsEmulator) -> None:
    emulator.add_user("alice")
    assert session.resolve("@Galatea") == emulator.persona_id
    assert session.resolve("alice") is None


# ---- what the platform answers ---------------------------------------------------------------

def test_429_on_publish_is_rate_limited_and_never_retried(
        session: Session, emulator: ThreadsEmulator) -> None:
    emulator.fail_next(429, {"error": {"message": "Application request limit reached",
                                       "type": "OAuthException", "code": 4}},
                       {"Retry-After": "120"}, match=is_publish)

    with pytest.raises(RateLimited) as caught:
        session.send("hello", reply_to=None, to=None, mentions={})

    assert caught.value.retry_after == 120
    assert [w.path.rsplit("/", 1)[-1] for w in emulator.writes()] == ["threads",
                                                                      "threads_publish"]
    assert is_publish(emulator.requests[-1])
    assert emulator.sent() == []


def test_a_graph_rate_limit_code_gives_the_wait_from_the_usage_header(
        session: Session, emulator: ThreadsEmulator) -> None:
    usage = '{"1234": [{"type": "threads", "estimated_time_to_regain_access": 5}]}'
    emulator.fail_next(400, {"error": {"message": "User request limit reached", "code": 17}},
                       {"X-Business-Use-Case-Usage": usage}, match=is_container)

    with pytest.raises(RateLimited) as caught:
        session.send("hello", reply_to=None, to=None, mentions={})

    assert caught.value.retry_after == 300
    assert len(emulator.writes()) == 1


def test_401_is_unauthorized(adapter: ThreadsAdapter, session: Session,
                             emulator: ThreadsEmulator) -> None:
    url = emulator.add_post("alice", "hi")
    emulator.fail_next(401, {"error": {"message": "Session has expired", "code": 190}})
    with pytest.raises(Unauthorized, match="credentials set threads"):
        session.author(adapter.parse_post(emulator.media_id(url)))


def test_a_wrong_token_is_unauthorized(adapter: ThreadsAdapter,
                                       emulator: ThreadsEmulator) -> None:
    wrong = adapter.open({"access_token": "not-the-token"})
    try:
        with pytest.raises(Unauthorized) as caught:
            wrong.send("hello", reply_to=None, to=None, mentions={})
    finally:
        wrong.close()
    assert "not-the-token" not in str(caught.value)
    assert emulator.writes() == []


def test_403_is_forbidden(session: Session, emulator: ThreadsEmulator) -> None:
    emulator.fail_next(403, {"error": {"message": "Permission denied", "code": 10}},
                       match=is_container)
    with pytest.raises(Forbidden, match="Permission denied"):
        session.send("hello", reply_to=None, to=None, mentions={})


def test_5xx_on_publish_may_have_sent(session: Session, emulator: ThreadsEmulator) -> None:
    emulator.fail_next(502, b"<html>bad gateway</html>", match=is_publish)
    with pytest.raises(PlatformDown) as caught:
        session.send("hello", reply_to=None, to=None, mentions={})
    assert caught.value.maybe_sent is True
    assert sum(is_publish(w) for w in emulator.writes()) == 1


def test_5xx_on_the_container_sent_nothing(session: Session,
                                           emulator: ThreadsEmulator) -> None:
    emulator.fail_next(500, {"error": {"message": "An unknown error occurred", "code": 1}},
                       match=is_container)
    with pytest.raises(PlatformDown) as caught:
        session.send("hello", reply_to=None, to=None, mentions={})
    assert caught.value.maybe_sent is False
    assert not any(is_publish(w) for w in emulator.writes())


def test_a_timeout_on_publish_may_have_sent(emulator: ThreadsEmulator) -> None:
    settings = AdapterSettings("threads", PERSONA, base_url=emulator.base_url)
    # Short, yet long enough that the requests before the publish never time out on a
    # loaded machine: only the stalled publish must.
    quick = ThreadsAdapter(settings, timeout=0.5, container_interval=0.0)
    session = quick.open({"access_token": emulator.token})
    emulator.stall_next(1.0, match=is_publish)
    try:
        with pytest.raises(PlatformDown, match="no answer") as caught:
            session.send("hello", reply_to=None, to=None, mentions={})
    finally:
        session.close()
    assert caught.value.maybe_sent is True
    assert sum(is_publish(w) for w in emulator.writes()) == 1


def test_an_unreachable_platform_sent_nothing(adapter: ThreadsAdapter,
                                              emulator: ThreadsEmulator) -> None:
    session = adapter.open({"access_token": emulator.token})
    emulator.stop()
    try:
        with pytest.raises(PlatformDown) as caught:
            session.send("hello", reply_to=None, to=None, mentions={})
    finally:
        session.close()
    assert caught.value.maybe_sent is False


def test_the_container_is_awaited_until_finished(emulator: ThreadsEmulator) -> None:
    waits: list[float] = []
    settings = AdapterSettings("threads", PERSONA, base_url=emulator.base_url)
    patient = ThreadsAdapter(settings, timeout=2.0, container_interval=0.5,
                             sleep=waits.append)
    emulator.fail_next(200, {"id": "x", "status": "IN_PROGRESS"},
                       match=lambda r: r.query.get("fields", "").startswith("status"))
    session = patient.open({"access_token": emulator.token})
    try:
        session.send("hello", reply_to=None, to=None, mentions={})
    finally:
        session.close()
    assert waits == [0.5]
    assert len(emulator.sent()) == 1


def test_a_failed_permalink_read_after_publishing_leaves_the_post_standing(
        session: Session, emulator: ThreadsEmulator) -> None:
    emulator.fail_next(500, {"error": {"message": "oops", "code": 2}},
                       match=lambda r: r.query.get("fields", "").startswith("permalink"))
    sent = session.send("hello", reply_to=None, to=None, mentions={})
    [posted] = emulator.sent()
    assert (sent.id, sent.url) == (posted["id"], None)


def test_any_refusal_surfaces_as_a_tactful_error_a_400_is_bad_input_on_every_platform(
        session: Session, emulator: ThreadsEmulator) -> None:
    # A plain 400 used to be Forbidden (exit 5) on Threads only; the one mapping
    # (core/send/answers.py) makes it BadInput (exit 2) as on X, Bluesky and Telegram.
    emulator.fail_next(200, b"not json")
    with pytest.raises(PlatformDown, match="not a JSON object"):
        session.resolve("someone")
    emulator.fail_next(400, {"error": {"message": "Invalid parameter", "code": 100}},
                       match=lambda r: r.query.get("fields", "").startswith("status"))
    with pytest.raises(BadInput, match="Invalid parameter"):
        session.send("hello", reply_to=None, to=None, mentions={})
    assert emulator.sent() == []


# ---- inbound ----------------------------------------------------------------------------------

def test_fetch_inbound_gets_mentions_and_replies_to_the_persona(
        session: Session, emulator: ThreadsEmulator) -> None:
    mine = emulator.add_post(PERSONA, "my thoughts")
    emulator.add_post("alice", "hey @galatea")
    emulator.add_post("bob", "nice one", reply_to=mine)
    emulator.add_post(PERSONA, "replying to myself", reply_to=mine)
    emulator.add_post("carol", "write me at carol@galatea.example")
    before = len(emulator.requests)

    page = session.fetch_inbound(None, 10)

    assert [(i.author.handle, i.text) for i in page.items] == [
        ("alice", "hey @galatea"), ("bob", "nice one")]
    assert page.items[0].mentions == ("galatea",)
    assert page.items[1].thread == emulator.media_id(mine)
    assert page.items[1].post.id == emulator.media_id(page.items[1].post.url or "")
    assert len(emulator.requests) - before <= 4 + 3  # bounded: never walks the whole history
    assert not emulator.writes()


def test_the_inbound_cursor_moves_on_without_loss_or_repeats(
        session: Session, emulator: ThreadsEmulator) -> None:
    for n in range(3):
        emulator.add_post(f"user{n}", f"@galatea number {n}")
    first = session.fetch_inbound(None, 10)
    assert len(first.items) == 3
    assert session.fetch_inbound(first.cursor, 10).items == ()

    for n in range(3, 6):
        emulator.add_post(f"user{n}", f"@galatea number {n}")
    second = session.fetch_inbound(first.cursor, 2)
    third = session.fetch_inbound(second.cursor, 2)

    assert [i.text for i in second.items] == ["@galatea number 3", "@galatea number 4"]
    assert [i.text for i in third.items] == ["@galatea number 5"]
    assert session.fetch_inbound(third.cursor, 2) == Page((), third.cursor)


def test_an_ancient_cursor_still_reads_what_the_api_allows(session: Session,
                                                          emulator: ThreadsEmulator) -> None:
    emulator.add_post("alice", "@galatea hello")
    assert [i.text for i in session.fetch_inbound("12:", 10).items] == ["@galatea hello"]


def test_a_cursor_tactful_did_not_make_is_bad_input(session: Session) -> None:
    with pytest.raises(BadInput, match="not one tactful made"):
        session.fetch_inbound("../../etc", 10)
