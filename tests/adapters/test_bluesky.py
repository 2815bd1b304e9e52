"""The Bluesky session: atproto's real Client against the emulator on 127.0.0.1."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tactful.adapters.bluesky.adapter import BlueskyAdapter
from tactful.adapters.bluesky.emulator import BlueskyEmulator
from tactful.adapters.bluesky.session import MAX_PAGES, BlueskySession
from tactful.core.errors import BadInput, Refused
from tactful.core.send.adapter import (
    Forbidden,
    PlatformDown,
    RateLimited,
    Session,
    Unauthorized,
)

PASSWORD = "abcd-efgh-ijkl-mnop"
CREATE = "com.atproto.repo.createRecord"
GET_POSTS = "app.bsky.feed.getPosts"
GET_THREAD = "app.bsky.feed.getPostThread"
RESOLVE = "com.atproto.identity.resolveHandle"
NOTIFICATIONS = "app.bsky.notification.listNotifications"


def _adapter(emulator: BlueskyEmulator, timeout: float = 2.0) -> BlueskyAdapter:
    from tactful.core.send.adapter import AdapterSettings

    return BlueskyAdapter(AdapterSettings("bluesky", emulator.persona, base_url=emulator.base_url,
                                          options={"timeout": timeout}))


@pytest.fixture(scope="module")
def running() -> Iterator[BlueskyEmulator]:
    # one server for the module: stopping one takes half a second (the serve loop's poll)
    emulator = BlueskyEmulator(password=PASSWORD)
    emulator.start()
    yield emulator
    emulator.stop()


@pytest.fixture
def emulator(running: BlueskyEmulator) -> BlueskyEmulator:
    running.reset()
    return running


@pytest.fixture
def adapter(emulator: BlueskyEmulator) -> BlueskyAdapter:
    return _adapter(emulator)


@pytest.fixture
def session(adapter: BlueskyAdapter) -> Iterator[BlueskySession]:
    session = adapter.open({"app_password": PASSWORD})
    yield session
    session.close()


def _paths_since(emulator: BlueskyEmulator, start: int) -> list[str]:
    return [r.path.removeprefix("/xrpc/") for r in emulator.requests[start:]]


def _did_form(emulator: BlueskyEmulator, adapter: BlueskyAdapter, url: str) -> str:
    """The same post as https://bsky.app/profile/<DID>/post/<rkey>."""
    ref = adapter.parse_post(url)
    assert ref.handle is not None
    return url.replace(ref.handle, emulator.did_of(ref.handle))


# ---- login -----------------------------------------------------------------------------------

def test_login_is_one_request_to_the_emulator(emulator: BlueskyEmulator,
                                              adapter: BlueskyAdapter) -> None:
    session = adapter.open({"app_password": PASSWORD})
    try:
        assert isinstance(session, Session)
        assert _paths_since(emulator, 0) == ["com.atproto.server.createSession"]
        assert emulator.requests[0].json()["identifier"] == emulator.persona
        assert (session.did, session.handle) == (emulator.persona_did, emulator.persona)
    finally:
        session.close()


def test_a_refused_app_password_is_unauthorized(emulator: BlueskyEmulator,
                                                adapter: BlueskyAdapter) -> None:
    with pytest.raises(Unauthorized) as caught:
        adapter.open({"app_password": "wrong-password-here"})
    assert caught.value.exit_code == 2
    assert "tactful credentials set bluesky" in str(caught.value)
    assert "wrong-password-here" not in str(caught.value)


def test_an_unreachable_server_is_platform_down(emulator: BlueskyEmulator) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    from tactful.core.send.adapter import AdapterSettings

    adapter = BlueskyAdapter(AdapterSettings("bluesky", emulator.persona,
                                             base_url=f"http://127.0.0.1:{port}",
                                             options={"timeout": 1}))
    with pytest.raises(PlatformDown) as caught:
        adapter.open({"app_password": PASSWORD})
    assert caught.value.maybe_sent is False


# ---- the author, with one read ---------------------------------------------------------------

def test_author_of_a_did_reference_is_one_getposts_and_the_roots_author_one_more(
        emulator: BlueskyEmulator,
                                                   adapter: BlueskyAdapter,
                                                   session: BlueskySession) -> None:
    root = emulator.add_post("carol", "a thread starts here")
    bot = emulator.add_user("Newsbot.example.com", display_name="News Bot", is_bot=True)
    url = emulator.add_post("newsbot.example.com", "breaking", reply_to=root)
    ref = adapter.parse_post(_did_form(emulator, adapter, url))
    start = len(emulator.requests)
    author = session.author(ref)
    assert _paths_since(emulator, start) == [GET_POSTS, "app.bsky.actor.getProfile"]
    assert author.handle == "newsbot.example.com"
    assert author.id == bot
    assert author.display_name == "News Bot"
    assert author.is_bot is True
    assert author.thread == adapter.parse_post(_did_form(emulator, adapter, root)).id
    assert author.url == url


def test_author_of_a_handle_reference_is_one_request(emulator: BlueskyEmulator,
                                                     adapter: BlueskyAdapter,
                                                     session: BlueskySession) -> None:
    alice = emulator.add_user("alice", display_name="Alice")
    url = emulator.add_post("alice", "top-level post")
    ref = adapter.parse_post(url.replace("alice.bsky.social", "Alice.Bsky.Social"))
    start = len(emulator.requests)
    author = session.author(ref)
    # getPosts does not resolve handles in at:// URIs; getPostThread does, in the same request
    assert _paths_since(emulator, start) == [GET_THREAD]
    assert emulator.requests[-1].query["depth"] == "0"
    assert emulator.requests[-1].query["parentHeight"] == "0"
    assert (author.handle, author.id, author.display_name) == ("alice.bsky.social", alice,
                                                               "Alice")
    assert author.is_bot is False
    assert author.thread is not None and author.thread.startswith(f"at://{alice}/")
    assert author.url == url


@pytest.mark.parametrize("form", ["did", "handle"])
def test_author_of_a_missing_post_is_bad_input(emulator: BlueskyEmulator,
                                               adapter: BlueskyAdapter,
                                               session: BlueskySession, form: str) -> None:
    emulator.add_user("alice")
    actor = emulator.did_of("alice") if form == "did" else "alice.bsky.social"
    ref = adapter.parse_post(f"https://bsky.app/profile/{actor}/post/3kq2vzxjbcs2a")
    with pytest.raises(BadInput, match="not found"):
        session.author(ref)


def test_an_author_whose_handle_no_longer_verifies_is_refused(
        emulator: BlueskyEmulator, adapter: BlueskyAdapter, session: BlueskySession) -> None:
    url = emulator.add_post("mallory", "hello")
    did_url = _did_form(emulator, adapter, url)
    emulator.rename_user("mallory", "handle.invalid")
    with pytest.raises(Refused, match="no longer verifies"):
        session.author(adapter.parse_post(did_url))


# ---- replies ---------------------------------------------------------------------------------

def test_a_reply_carries_root_and_parent_and_reads_nothing_more(
        emulator: BlueskyEmulator, adapter: BlueskyAdapter, session: BlueskySession) -> None:
    root_url = emulator.add_post("alice", "what do you all think?")
    parent_url = emulator.add_post("bob", "I think it's fine", reply_to=root_url)
    ref = adapter.parse_post(_did_form(emulator, adapter, parent_url))
    session.author(ref)
    start = len(emulator.requests)
    sent = session.send("Agreed, thanks!", reply_to=ref, to=None, mentions={})
    assert _paths_since(emulator, start) == [CREATE]  # the post read by author() is reused
    record = emulator.writes()[0].json()["record"]
    root_id = adapter.parse_post(_did_form(emulator, adapter, root_url)).id
    assert record["reply"]["root"]["uri"] == root_id
    assert record["reply"]["parent"]["uri"] == ref.id
    assert record["reply"]["root"]["cid"] != record["reply"]["parent"]["cid"]
    assert record["text"] == "Agreed, thanks!"
    [posted] = emulator.sent()
    assert (posted["reply_to"], posted["root"]) == (parent_url, root_url)
    assert (sent.id, sent.url) == (posted["id"], posted["url"])
    assert sent.url.startswith(f"https://bsky.app/profile/{emulator.persona}/post/")


def test_a_reply_to_a_top_level_post_uses_it_as_root_with_one_read(
        emulator: BlueskyEmulator, adapter: BlueskyAdapter, session: BlueskySession) -> None:
    url = emulator.add_post("alice", "a post")
    ref = adapter.parse_post(url)
    start = len(emulator.requests)
    session.send("hello", reply_to=ref, to=None, mentions={})
    assert _paths_since(emulator, start) == [GET_THREAD, CREATE]
    reply = emulator.writes()[0].json()["record"]["reply"]
    assert reply["root"] == reply["parent"]
    assert emulator.sent()[0]["reply_to"] == url


def test_a_threadgate_refuses_before_anything_is_written(
        emulator: BlueskyEmulator, adapter: BlueskyAdapter, session: BlueskySession) -> None:
    url = emulator.add_post("alice", "only my friends may reply", replies_disabled=True)
    with pytest.raises(Forbidden, match="threadgate"):
        session.send("hi", reply_to=adapter.parse_post(url), to=None, mentions={})
    assert emulator.writes() == []


# ---- mentions ------------------------------------------------------------------------------

def test_mentions_become_facets_at_utf8_byte_offsets(
        emulator: BlueskyEmulator, session: BlueskySession) -> None:
    alice = emulator.add_user("alice")
    bob = emulator.add_user("bob")
    text = "Café ☕🏳️‍🌈 merci @Alice.bsky.social & @bob.bsky.social, not @nobody.example.com"
    start = len(emulator.requests)
    session.send(text, reply_to=None, to=None, mentions={
        "alice.bsky.social": alice, "bob.bsky.social": None, "nobody.example.com": None})
    # only the handles without an id were resolved; the unknown one stays plain text
    resolved = [r.query["handle"] for r in emulator.requests[start:] if r.path.endswith(RESOLVE)]
    assert resolved == ["bob.bsky.social", "nobody.example.com"]
    record = emulator.writes()[0].json()["record"]
    data = text.encode("utf-8")
    mentions = [(data[f["index"]["byteStart"]:f["index"]["byteEnd"]].decode(),
                 f["features"][0]["did"]) for f in record["facets"]
                if f["features"][0]["$type"] == "app.bsky.richtext.facet#mention"]
    assert mentions == [("@Alice.bsky.social", alice), ("@bob.bsky.social", bob)]
    first = record["facets"][0]["index"]["byteStart"]
    assert first == len(text[:text.index("@")].encode()) != text.index("@")
    assert emulator.sent()[0]["mentions"] == ["alice.bsky.social", "bob.bsky.social"]


def test_a_post_to_someone_mentions_them(emulator: BlueskyEmulator,
                                         session: BlueskySession) -> None:
    alice = emulator.add_user("alice")
    session.send("@alice.bsky.social your talk was great", reply_to=None,
                 to="alice.bsky.social", mentions={})
    record = emulator.writes()[0].json()["record"]
    assert "reply" not in record
    assert record["facets"][0]["index"] == {
        "byteStart": 0, "byteEnd": 18, "$type": "app.bsky.richtext.facet#byteSlice"}
    assert record["facets"][0]["features"][0]["did"] == alice
    assert emulator.sent()[0]["mentions"] == ["alice.bsky.social"]


def test_a_post_to_someone_who_is_not_mentioned_is_refused(emulator: BlueskyEmulator,
                                                            session: BlueskySession) -> None:
    emulator.add_user("alice")
    with pytest.raises(BadInput, match="must @mention"):
        session.send("your talk was great", reply_to=None, to="alice.bsky.social", mentions={})
    assert emulator.writes() == []


def test_an_overlong_post_is_refused_before_any_request(emulator: BlueskyEmulator,
                                                       session: BlueskySession) -> None:
    start = len(emulator.requests)
    with pytest.raises(BadInput, match="301 graphemes"):
        session.send("x" * 301, reply_to=None, to=None, mentions={})
    assert len(emulator.requests) == start


def test_sending_needs_no_enable_posting(emulator: BlueskyEmulator,
                                         adapter: BlueskyAdapter) -> None:
    # post_fields is empty, so the pipeline never calls enable_posting for Bluesky
    session = adapter.open({"app_password": PASSWORD})
    try:
        session.send("hello", reply_to=None, to=None, mentions={})
        assert [s["text"] for s in emulator.sent()] == ["hello"]
    finally:
        session.close()


# ---- errors ----------------------------------------------------------------------------------

def test_429_on_the_write_is_rate_limited_and_not_retried(
        emulator: BlueskyEmulator, session: BlueskySession) -> None:
    emulator.fail_next(429, {"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"},
                       {"retry-after": "42", "ratelimit-remaining": "0"},
                       match=BlueskyEmulator.method(CREATE))
    with pytest.raises(RateLimited) as caught:
        session.send("hello", reply_to=None, to=None, mentions={})
    assert caught.value.retry_after == 42
    assert caught.value.exit_code == 5
    time.sleep(0.2)  # a retry, if any, would have landed by now
    assert len(emulator.writes()) == 1
    assert emulator.sent() == []


def test_429_without_retry_after_uses_the_reset_time(emulator: BlueskyEmulator,
                                                     session: BlueskySession) -> None:
    reset = int(datetime.now(UTC).timestamp()) + 120
    emulator.fail_next(429, {"error": "RateLimitExceeded"}, {"ratelimit-reset": str(reset)},
                       match=BlueskyEmulator.method(CREATE))
    with pytest.raises(RateLimited) as caught:
        session.send("hello", reply_to=None, to=None, mentions={})
    assert caught.value.retry_after is not None
    assert 100 < caught.value.retry_after <= 120
    assert len(emulator.writes()) == 1


def test_401_on_a_read_is_unauthorized(emulator: BlueskyEmulator, adapter: BlueskyAdapter,
                                       session: BlueskySession) -> None:
    url = emulator.add_post("alice", "hi")
    emulator.fail_next(401, {"error": "AuthenticationRequired", "message": "Bad token"})
    with pytest.raises(Unauthorized):
        session.author(adapter.parse_post(url))


def test_403_on_the_write_is_forbidden(emulator: BlueskyEmulator,
                                       session: BlueskySession) -> None:
    emulator.fail_next(403, {"error": "Forbidden", "message": "account is suspended"},
                       match=BlueskyEmulator.method(CREATE))
    with pytest.raises(Forbidden, match="suspended"):
        session.send("hello", reply_to=None, to=None, mentions={})
    assert len(emulator.writes()) == 1


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_on_the_write_may_have_sent(emulator: BlueskyEmulator, session: BlueskySession,
                                        status: int) -> None:
    emulator.fail_next(status, {"error": "InternalServerError", "message": "oops"},
                       match=BlueskyEmulator.method(CREATE))
    with pytest.raises(PlatformDown) as caught:
        session.send("hello", reply_to=None, to=None, mentions={})
    assert caught.value.maybe_sent is True
    assert len(emulator.writes()) == 1


def test_5xx_on_a_read_has_not_sent(emulator: BlueskyEmulator, adapter: BlueskyAdapter,
                                    session: BlueskySession) -> None:
    url = emulator.add_post("alice", "hi")
    emulator.fail_next(503, {"error": "UpstreamFailure"}, match=BlueskyEmulator.method(GET_THREAD))
    with pytest.raises(PlatformDown) as caught:
        session.send("hello", reply_to=adapter.parse_post(url), to=None, mentions={})
    assert caught.value.maybe_sent is False
    assert emulator.writes() == []


def test_a_timeout_on_the_write_may_have_sent(emulator: BlueskyEmulator) -> None:
    session = _adapter(emulator, timeout=0.3).open({"app_password": PASSWORD})
    try:
        emulator.stall_next(1.5, match=BlueskyEmulator.method(CREATE))
        began = time.monotonic()
        with pytest.raises(PlatformDown) as caught:
            session.send("hello", reply_to=None, to=None, mentions={})
        assert time.monotonic() - began < 1.2
        assert caught.value.maybe_sent is True
    finally:
        session.close()


def test_a_malformed_answer_is_platform_down_not_an_sdk_error(
        emulator: BlueskyEmulator, adapter: BlueskyAdapter, session: BlueskySession) -> None:
    url = emulator.add_post("alice", "hi")
    emulator.fail_next(200, {"unexpected": True}, match=BlueskyEmulator.method(GET_POSTS))
    with pytest.raises(PlatformDown):
        session.author(adapter.parse_post(_did_form(emulator, adapter, url)))


def test_an_expired_token_while_resolving_is_unauthorized_not_unknown(
        emulator: BlueskyEmulator, session: BlueskySession) -> None:
    emulator.add_user("alice")
    emulator.fail_next(400, {"error": "ExpiredToken", "message": "Token has expired"},
                       match=BlueskyEmulator.method(RESOLVE))
    with pytest.raises(Unauthorized):
        session.resolve("alice.bsky.social")


def test_an_unknown_handle_resolves_to_none(emulator: BlueskyEmulator,
                                            session: BlueskySession) -> None:
    alice = emulator.add_user("alice")
    assert session.resolve("@Alice.bsky.social") == alice
    assert session.resolve("nobody.example.com") is None


# ---- inbound ----------------------------------------------------------------------------------

def test_fetch_inbound_returns_mentions_and_replies_once_each(
        emulator: BlueskyEmulator, session: BlueskySession) -> None:
    mine = emulator.add_post(emulator.persona, "my own post")
    emulator.add_post("alice", f"hey @{emulator.persona} look")
    emulator.add_post("carol", "talking to nobody in particular")
    first = session.fetch_inbound(None, 10)
    assert [i.author.handle for i in first.items] == ["alice.bsky.social"]
    assert first.items[0].mentions == (emulator.persona,)
    assert first.items[0].text == f"hey @{emulator.persona} look"
    reply_url = emulator.add_post("bob", "nice post", reply_to=mine)
    emulator.add_post("dave", f"cc @{emulator.persona}")
    second = session.fetch_inbound(first.cursor, 10)
    assert [i.author.handle for i in second.items] == ["bob.bsky.social", "dave.bsky.social"]
    reply = second.items[0]
    assert reply.post.url == reply_url
    assert reply.thread == reply.author.thread
    assert reply.thread is not None and reply.thread.startswith(f"at://{emulator.persona_did}/")
    assert second.items[0].at <= second.items[1].at
    third = session.fetch_inbound(second.cursor, 10)
    assert third.items == ()
    assert third.cursor == second.cursor


def test_fetch_inbound_neither_repeats_nor_skips_when_times_tie(
        emulator: BlueskyEmulator, session: BlueskySession) -> None:
    emulator.add_post("alice", f"@{emulator.persona} first")
    start = session.fetch_inbound(None, 10)
    frozen = datetime(2030, 1, 1, tzinfo=UTC)
    emulator.clock = lambda: frozen  # five posts indexed at the very same instant
    expected = {emulator.add_post(f"user{n}", f"@{emulator.persona} n{n}") for n in range(5)}
    seen: list[str] = []
    cursor = start.cursor
    for _ in range(4):
        page = session.fetch_inbound(cursor, 2)
        seen += [item.post.url or "" for item in page.items]
        cursor = page.cursor
    assert sorted(seen) == sorted(expected)  # all five, none twice


def test_fetch_inbound_is_bounded(emulator: BlueskyEmulator, session: BlueskySession,
                                  caplog: pytest.LogCaptureFixture) -> None:
    emulator.add_post("alice", f"@{emulator.persona} old")
    cursor = session.fetch_inbound(None, 1).cursor
    for n in range(MAX_PAGES * 100 + 20):
        emulator.add_post("bob", f"@{emulator.persona} {n}")
    start = len(emulator.requests)
    with caplog.at_level(logging.WARNING):
        page = session.fetch_inbound(cursor, 5)
    assert _paths_since(emulator, start) == [NOTIFICATIONS] * MAX_PAGES
    assert len(page.items) == 5
    assert "older ones were not read" in caplog.text
    assert f"@{emulator.persona}" not in caplog.text  # no message text in the log


def test_fetch_inbound_refuses_a_foreign_cursor(session: BlueskySession) -> None:
    with pytest.raises(BadInput, match="cursor"):
        session.fetch_inbound("not-a-cursor", 5)
