"""The X session: tweepy itself, against the X emulator on 127.0.0.1 (nothing is mocked)."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tactful.adapters.x.adapter import XAdapter
from tactful.adapters.x.emulator import XEmulator
from tactful.adapters.x.session import XSession
from tactful.core.errors import BadInput, MissingCredential
from tactful.core.send.adapter import (
    AdapterSettings,
    Forbidden,
    PlatformDown,
    RateLimited,
    Session,
    Unauthorized,
)

from ..recording_keyring import accesses

READ = {"bearer_token": "app-bearer-SECRET"}
POST = {"consumer_key": "ck-SECRET", "consumer_secret": "cs-SECRET",
        "access_token": "1500000001-at-SECRET", "access_token_secret": "ats-SECRET"}


@pytest.fixture(scope="module")
def stopped_later() -> Iterator[list[XEmulator]]:
    """Emulators to stop together at the end: each stop waits out http.server's 0.5 s poll."""
    running: list[XEmulator] = []
    yield running
    stoppers = [threading.Thread(target=e.stop) for e in running]
    for stopper in stoppers:
        stopper.start()
    for stopper in stoppers:
        stopper.join(timeout=5)


@pytest.fixture
def x(stopped_later: list[XEmulator]) -> XEmulator:
    """A fresh emulator for every test."""
    emulator = XEmulator(persona="persona").start()
    stopped_later.append(emulator)
    return emulator


def adapter_for(x: XEmulator, **options: object) -> XAdapter:
    return XAdapter(AdapterSettings(platform="x", account="default", base_url=x.base_url,
                                    options=options))


@pytest.fixture
def session(x: XEmulator) -> Iterator[Session]:
    opened = adapter_for(x, timeout=2).open(READ)
    yield opened
    opened.close()


@pytest.fixture
def poster(session: Session) -> Session:
    session.enable_posting(POST)
    return session


def is_post(request: object) -> bool:
    return getattr(request, "method", "") == "POST"


# ---- reading -------------------------------------------------------------------------------

def test_author_lookup_is_one_request_and_finds_the_thread_root(
        x: XEmulator, session: Session) -> None:
    ada_id = x.add_user("Ada_Builds", display_name="Ada Builds")
    root = x.add_post("grace", "a thread")
    reply = x.add_post("Ada_Builds", "@grace nice", reply_to=root)
    post = adapter_for(x).parse_post(reply)
    before = len(x.requests)
    author = session.author(post)
    assert len(x.requests) == before + 1
    assert (author.handle, author.id, author.display_name) == ("ada_builds", ada_id, "Ada Builds")
    assert author.thread == adapter_for(x).parse_post(root).id
    assert author.url == reply  # as X shows it; the handle above is normalized
    assert x.requests[-1].headers["authorization"] == "Bearer app-bearer-SECRET"  # app-only


def test_author_of_a_missing_post_is_bad_input(session: Session, x: XEmulator) -> None:
    with pytest.raises(BadInput, match="does not exist or was deleted"):
        session.author(adapter_for(x).parse_post("1860000000000009999"))


def test_resolve_finds_the_stable_id_and_none_for_unknown(x: XEmulator, session: Session) -> None:
    ada_id = x.add_user("ada")
    assert session.resolve("@ADA") == ada_id
    assert session.resolve("nobody_here") is None
    before = len(x.requests)
    assert session.resolve("ada.bsky.social") is None  # not an X username: no request at all
    assert len(x.requests) == before


# ---- writing -------------------------------------------------------------------------------

def test_a_reply_lands_threaded_under_the_post(x: XEmulator, poster: Session) -> None:
    root = x.add_post("grace", "what do you think @persona?")
    parent = x.add_post("ada", "@grace agreed", reply_to=root)
    post = adapter_for(x).parse_post(parent)
    sent = poster.send("@ada thanks!", reply_to=post, to=None, mentions={"ada": None})
    [write] = x.writes()
    assert write.json() == {"text": "@ada thanks!", "reply": {"in_reply_to_tweet_id": post.id}}
    assert write.headers["authorization"].startswith("OAuth ")  # user context, not the app
    [mine] = x.sent()
    assert (mine["id"], mine["reply_to"], mine["text"]) == (sent.id, parent, "@ada thanks!")
    assert mine["conversation_id"] == adapter_for(x).parse_post(root).id
    assert sent.url == f"https://x.com/i/web/status/{sent.id}"


def test_a_mention_becomes_the_platforms_mention(x: XEmulator, poster: Session) -> None:
    x.add_user("Ada_Builds")
    text = "hello @Ada_Builds and @grace, mail me at me@example.com"
    adapter = adapter_for(x)
    found = adapter.mentions(text)
    poster.send(text, reply_to=None, to="ada_builds", mentions=dict.fromkeys(found))
    [mine] = x.sent()
    assert mine["mentions"] == found == ["ada_builds", "grace"]
    assert "reply" not in x.writes()[0].json()  # a mention is a plain post naming them


def test_a_post_to_someone_not_named_in_the_text_is_refused_unsent(
        x: XEmulator, poster: Session) -> None:
    before = len(x.requests)
    with pytest.raises(BadInput, match="put @ada in --text"):
        poster.send("hello there", reply_to=None, to="ada", mentions={})
    assert len(x.requests) == before


def test_posting_needs_all_four_user_keys(session: Session) -> None:
    with pytest.raises(MissingCredential, match="access_token_secret"):
        session.enable_posting({k: v for k, v in POST.items() if k != "access_token_secret"})


def test_text_over_the_limit_is_refused_by_x_as_bad_input(x: XEmulator, poster: Session) -> None:
    with pytest.raises(BadInput, match="HTTP 400"):
        poster.send("a" * 281, reply_to=None, to=None, mentions={})
    assert x.sent() == []


def test_a_reply_to_a_deleted_post_is_bad_input(x: XEmulator, poster: Session) -> None:
    gone = adapter_for(x).parse_post("1860000000000009999")
    with pytest.raises(BadInput, match="HTTP 400"):
        poster.send("hi", reply_to=gone, to=None, mentions={})
    assert x.sent() == []


# ---- errors --------------------------------------------------------------------------------

def test_429_is_rate_limited_with_the_retry_time_and_no_retry(
        x: XEmulator, poster: Session) -> None:
    post = adapter_for(x).parse_post(x.add_post("ada", "hi @persona"))
    reset = int(time.time()) + 120
    x.fail_next(429, {"title": "Too Many Requests", "detail": "Too Many Requests",
                      "type": "about:blank", "status": 429},
                {"x-rate-limit-limit": "100", "x-rate-limit-remaining": "0",
                 "x-rate-limit-reset": str(reset)}, match=is_post)
    with pytest.raises(RateLimited) as caught:
        poster.send("thanks", reply_to=post, to=None, mentions={})
    assert caught.value.retry_after is not None and 110 <= caught.value.retry_after <= 121
    assert "retry in" in str(caught.value)
    assert len(x.writes()) == 1 and x.sent() == []  # refused once, never tried again


def test_401_is_unauthorized_naming_the_credential(x: XEmulator) -> None:
    x.bearer_token = "the-right-one"
    session = adapter_for(x).open(READ)
    try:
        with pytest.raises(Unauthorized, match="bearer_token"):
            session.author(adapter_for(x).parse_post(x.add_post("ada", "hi")))
        session.enable_posting(POST)
        x.fail_next(401, {"title": "Unauthorized", "detail": "Unauthorized", "status": 401},
                    match=is_post)
        with pytest.raises(Unauthorized, match="access_token_secret"):
            session.send("hi", reply_to=None, to=None, mentions={})
    finally:
        session.close()


def test_5xx_on_the_write_may_have_sent(x: XEmulator, poster: Session) -> None:
    x.fail_next(503, {"title": "Service Unavailable"}, match=is_post)
    with pytest.raises(PlatformDown) as caught:
        poster.send("hello", reply_to=None, to=None, mentions={})
    assert caught.value.maybe_sent is True
    assert len(x.writes()) == 1  # not retried


def test_5xx_on_a_read_sent_nothing(x: XEmulator, session: Session) -> None:
    x.fail_next(500, {"title": "Internal Error"})
    with pytest.raises(PlatformDown) as caught:
        session.resolve("ada")
    assert caught.value.maybe_sent is False


def test_a_timeout_on_the_write_may_have_sent(x: XEmulator) -> None:
    session = adapter_for(x, timeout=0.3).open(READ)
    session.enable_posting(POST)
    x.stall_next(0.8, match=is_post)
    started = time.monotonic()
    try:
        with pytest.raises(PlatformDown, match=r"no answer within 0\.3 s") as caught:
            session.send("late", reply_to=None, to=None, mentions={})
    finally:
        session.close()
    assert time.monotonic() - started < 0.8  # the timeout, not the platform, decided
    assert caught.value.maybe_sent is True
    deadline = time.monotonic() + 3
    while not x.sent() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(x.sent()) == 1  # and indeed it went out


def test_a_refused_connection_sent_nothing() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nobody listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    session = XAdapter(AdapterSettings(platform="x", account="default",
                                       base_url=f"http://127.0.0.1:{port}")).open(READ)
    session.enable_posting(POST)
    try:
        with pytest.raises(PlatformDown, match="could not connect") as caught:
            session.send("hi", reply_to=None, to=None, mentions={})
    finally:
        session.close()
    assert caught.value.maybe_sent is False


def test_a_garbled_success_on_the_write_may_have_sent(x: XEmulator, poster: Session) -> None:
    x.fail_next(201, b"<html>oops</html>", match=is_post)
    with pytest.raises(PlatformDown) as caught:
        poster.send("hello", reply_to=None, to=None, mentions={})
    assert caught.value.maybe_sent is True


def test_a_restricted_reply_is_forbidden_and_says_why(x: XEmulator, poster: Session) -> None:
    post = adapter_for(x).parse_post(
        x.add_post("ada", "only people I mention may reply", reply_settings="mentionedUsers"))
    with pytest.raises(Forbidden, match="X restricts replies") as caught:
        poster.send("hi", reply_to=post, to=None, mentions={})
    assert "nothing was sent" in str(caught.value)
    assert x.sent() == []


def test_posting_with_the_app_token_alone_is_refused_by_x(x: XEmulator) -> None:
    # What X answers when only the bearer token reaches a user-context endpoint.
    session = adapter_for(x).open(READ)
    try:
        with pytest.raises(Forbidden, match="user-context credentials"):
            session.fetch_inbound(None, 10)
    finally:
        session.close()


# ---- inbound -------------------------------------------------------------------------------

def test_fetch_inbound_pages_from_a_cursor_without_gaps(x: XEmulator, poster: Session) -> None:
    mine = x.add_post("persona", "my thoughts")
    first = x.add_post("ada", "hey @persona")
    x.add_post("grace", "talking to myself")  # not addressed to the persona
    second = x.add_post("bob", "I disagree", reply_to=mine)  # a reply counts, mention or not
    third = x.add_post("Cy", "@Persona and @ada, look")
    page = poster.fetch_inbound(None, 2)  # the latest two
    assert [i.post.url for i in page.items] == [second, third]
    assert page.items[1].mentions == ("persona", "ada")
    assert page.items[0].thread == adapter_for(x).parse_post(mine).id
    assert page.cursor == page.items[-1].post.id
    older = adapter_for(x).parse_post(first).id
    page = poster.fetch_inbound(str(int(older) - 1), 1)  # from a cursor: oldest first
    assert [i.post.id for i in page.items] == [older]
    page = poster.fetch_inbound(page.cursor, 10)
    assert [i.author.handle for i in page.items] == ["bob", "cy"]
    assert poster.fetch_inbound(page.cursor, 10).items == ()
    assert sum(r.path == "/2/users/me" for r in x.requests) == 1  # own id looked up once


def test_fetch_inbound_refuses_a_bad_cursor(poster: Session) -> None:
    with pytest.raises(BadInput, match="cursor"):
        poster.fetch_inbound("../1", 10)


# ---- what never happens ----------------------------------------------------------------------

def test_no_text_and_no_secret_reaches_the_log(
        x: XEmulator, poster: Session, caplog: pytest.LogCaptureFixture) -> None:
    post = adapter_for(x).parse_post(x.add_post("ada", "hi @persona"))
    with caplog.at_level(logging.DEBUG):
        poster.author(post)
        poster.send("a very private reply text", reply_to=post, to=None, mentions={})
    logged = caplog.text + " ".join(str(r.args) for r in caplog.records)
    assert "private reply" not in logged
    assert "SECRET" not in logged and "ck-" not in logged


def test_the_session_never_touches_the_keyring(keyring_log: object, x: XEmulator) -> None:
    session = adapter_for(x).open(READ)
    try:
        session.author(adapter_for(x).parse_post(x.add_post("ada", "hi")))
        session.enable_posting(POST)
        session.send("hello", reply_to=None, to=None, mentions={})
    finally:
        session.close()
    assert accesses() == []  # credentials come only from the pipeline, in its order


def test_the_session_is_a_session(session: Session) -> None:
    assert isinstance(session, Session) and isinstance(session, XSession)


def test_an_answer_of_the_wrong_shape_is_platform_down(x: XEmulator, session: Session) -> None:
    post = adapter_for(x).parse_post(x.add_post("ada", "hi"))
    x.fail_next(200, {"data": {"id": post.id}})  # no text, no author: tweepy cannot read it
    with pytest.raises(PlatformDown, match="unexpected answer") as caught:
        session.author(post)
    assert caught.value.maybe_sent is False


def test_a_timeout_on_a_read_is_not_retried(x: XEmulator) -> None:
    session = adapter_for(x, timeout=0.3).open(READ)
    x.stall_next(0.6)
    try:
        with pytest.raises(PlatformDown, match="no answer") as caught:
            session.resolve("ada")
    finally:
        session.close()
    assert caught.value.maybe_sent is False
    assert len(x.requests) == 1
