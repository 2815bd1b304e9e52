"""Who else a reply reaches: the parties each platform's author read reports, the stable ids a
post reference names offline, and handle resolution. Every platform's real library against its
emulator on 127.0.0.1; nothing is mocked.

The setting throughout: "mallory" is the person a do-not-engage flag would name, and she is
not the author of the post replied to, only somewhere in its thread.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tactful.adapters.bluesky.adapter import BlueskyAdapter
from tactful.adapters.bluesky.emulator import BlueskyEmulator
from tactful.adapters.meta.threads.adapter import ThreadsAdapter
from tactful.adapters.meta.threads.emulator import ThreadsEmulator
from tactful.adapters.telegram.adapter import TelegramAdapter
from tactful.adapters.telegram.emulator import TelegramEmulator
from tactful.adapters.x.adapter import XAdapter
from tactful.adapters.x.emulator import XEmulator
from tactful.core.errors import BadInput, Refused
from tactful.core.send.adapter import (
    AdapterSettings,
    Party,
    PlatformDown,
    RateLimited,
    Session,
    Unauthorized,
)

ROOT_AUTHOR = "thread root author"
MENTION_SET = "in the thread's mention set"
PARENT_AUTHOR = "parent author"
QUOTED_AUTHOR = "quoted author"


def _stop_later(emulator: Any) -> None:
    # http.server notices a shutdown only every poll: stop in the background, keep tests fast
    threading.Thread(target=emulator.stop, daemon=True).start()


# ==== Bluesky ====================================================================================

BSKY_PASSWORD = "abcd-efgh-ijkl-mnop"
GET_POSTS = "/xrpc/app.bsky.feed.getPosts"
GET_THREAD = "/xrpc/app.bsky.feed.getPostThread"
GET_PROFILE = "/xrpc/app.bsky.actor.getProfile"
RESOLVE = "/xrpc/com.atproto.identity.resolveHandle"


@pytest.fixture(scope="module")
def bsky_running() -> Iterator[BlueskyEmulator]:
    emulator = BlueskyEmulator(password=BSKY_PASSWORD).start()
    assert isinstance(emulator, BlueskyEmulator)
    yield emulator
    emulator.stop()


@pytest.fixture
def bsky(bsky_running: BlueskyEmulator) -> BlueskyEmulator:
    bsky_running.reset()
    return bsky_running


@pytest.fixture
def bsky_adapter(bsky: BlueskyEmulator) -> BlueskyAdapter:
    return BlueskyAdapter(AdapterSettings("bluesky", bsky.persona, base_url=bsky.base_url,
                                          options={"timeout": 2.0}))


@pytest.fixture
def bsky_session(bsky_adapter: BlueskyAdapter) -> Iterator[Session]:
    session = bsky_adapter.open({"app_password": BSKY_PASSWORD})
    yield session
    session.close()


def _did_url(bsky: BlueskyEmulator, url: str) -> str:
    """The same post as https://bsky.app/profile/<DID>/post/<rkey>."""
    handle = url.split("/")[4]
    return url.replace(f"/profile/{handle}/", f"/profile/{bsky.did_of(handle)}/")


def _requests_since(emulator: Any, start: int) -> list[str]:
    return [r.path for r in emulator.requests[start:]]


def test_the_root_author_of_a_bluesky_thread_is_a_party_of_a_reply_in_it(
        bsky: BlueskyEmulator, bsky_adapter: BlueskyAdapter, bsky_session: Session) -> None:
    mallory = bsky.add_user("mallory")
    root = bsky.add_post("mallory", "a thread of mine")
    reply = bsky.add_post("ada", "a reply in it", reply_to=root)
    start = len(bsky.requests)

    author = bsky_session.author(bsky_adapter.parse_post(_did_url(bsky, reply)))

    # one read of the post, one of the root author's profile (memory may know them by handle)
    assert _requests_since(bsky, start) == [GET_POSTS, GET_PROFILE]
    assert author.handle == "ada.bsky.social"
    assert author.parties == (Party(ROOT_AUTHOR, handle="mallory.bsky.social", id=mallory),)


def test_a_reply_deep_in_a_bluesky_thread_names_the_root_author_not_only_the_parent(
        bsky: BlueskyEmulator, bsky_adapter: BlueskyAdapter, bsky_session: Session) -> None:
    mallory = bsky.add_user("mallory")
    root = bsky.add_post("mallory", "a thread of mine")
    middle = bsky.add_post("bob", "first reply", reply_to=root)
    deep = bsky.add_post("ada", "second reply", reply_to=middle)
    start = len(bsky.requests)

    # by handle URL: getPostThread, still one request
    author = bsky_session.author(bsky_adapter.parse_post(deep))

    assert _requests_since(bsky, start) == [GET_THREAD, GET_PROFILE]
    assert author.handle == "ada.bsky.social"
    assert author.parties == (Party(ROOT_AUTHOR, handle="mallory.bsky.social", id=mallory),)
    assert author.thread is not None and author.thread.startswith(f"at://{mallory}/")


def test_a_top_level_bluesky_post_reaches_no_one_but_its_author(
        bsky: BlueskyEmulator, bsky_adapter: BlueskyAdapter, bsky_session: Session) -> None:
    bsky.add_user("mallory")
    post = bsky.add_post("ada", "hello @mallory.bsky.social")  # a mention in the post answered
    author = bsky_session.author(bsky_adapter.parse_post(_did_url(bsky, post)))
    # Bluesky carries no mention over into a reply: only the text of the reply itself counts
    assert author.parties == ()


def test_a_bluesky_reference_by_did_names_its_author_offline(
        bsky_adapter: BlueskyAdapter) -> None:
    did = "did:plc:abcdefghijklmnopqrstuvwx"
    by_uri = bsky_adapter.parse_post(f"at://{did}/app.bsky.feed.post/3kq2vzxjbcs2a")
    by_url = bsky_adapter.parse_post(f"https://bsky.app/profile/{did}/post/3kq2vzxjbcs2a")
    by_escaped = bsky_adapter.parse_post(
        f"https://bsky.app/profile/{did.replace(':', '%3A')}/post/3kq2vzxjbcs2a")
    assert by_uri.author_id == by_url.author_id == by_escaped.author_id == did
    by_handle = bsky_adapter.parse_post("https://bsky.app/profile/ada.bsky.social/post/"
                                        "3kq2vzxjbcs2a")
    assert by_handle.author_id is None  # a handle is not a stable id
    assert by_handle.handle == "ada.bsky.social"


def test_the_did_a_bluesky_reference_names_is_the_author_the_read_finds(
        bsky: BlueskyEmulator, bsky_adapter: BlueskyAdapter, bsky_session: Session) -> None:
    post = bsky.add_post("ada", "hello")
    ref = bsky_adapter.parse_post(_did_url(bsky, post))
    assert ref.author_id == bsky_session.author(ref).id == bsky.did_of("ada")


def test_bluesky_resolves_handles_to_dids_with_one_request(
        bsky: BlueskyEmulator, bsky_adapter: BlueskyAdapter, bsky_session: Session) -> None:
    assert getattr(bsky_adapter, "resolves_handles", False) is True
    mallory = bsky.add_user("mallory")
    start = len(bsky.requests)
    assert bsky_session.resolve("@Mallory.bsky.social") == mallory
    assert _requests_since(bsky, start) == [RESOLVE]


def test_a_bluesky_handle_no_account_has_resolves_to_none(
        bsky: BlueskyEmulator, bsky_session: Session) -> None:
    start = len(bsky.requests)
    assert bsky_session.resolve("nobody.example.com") is None
    assert _requests_since(bsky, start) == [RESOLVE]


@pytest.mark.parametrize(("status", "body", "error"), [
    (500, {"error": "InternalServerError", "message": "boom"}, PlatformDown),
    (502, {"error": "UpstreamFailure", "message": "down"}, PlatformDown),
    (429, {"error": "RateLimitExceeded", "message": "slow"}, RateLimited),
    (401, {"error": "AuthenticationRequired", "message": "who?"}, Unauthorized),
    # a 400 that is not "no such handle" is no answer about the handle either
    (400, {"error": "UpstreamFailure", "message": "the PLC directory is down"}, BadInput),
])
def test_a_failed_bluesky_handle_lookup_raises_and_never_answers_unknown(
        bsky: BlueskyEmulator, bsky_session: Session, status: int, body: dict[str, str],
        error: type[Exception]) -> None:
    bsky.add_user("mallory")
    bsky.fail_next(status, body, match=BlueskyEmulator.method("com.atproto.identity."
                                                              "resolveHandle"))
    with pytest.raises(error):
        bsky_session.resolve("mallory.bsky.social")
    # a failure is not remembered as "unknown": the next lookup asks again and finds her
    assert bsky_session.resolve("mallory.bsky.social") == bsky.did_of("mallory")


def test_the_bluesky_emulator_seeds_a_quote_of_another_accounts_post(
        bsky: BlueskyEmulator) -> None:
    quoted = bsky.add_post("mallory", "original")
    quote = bsky.add_post("ada", "look at this", quote=quoted)
    token = json.loads(_xrpc(bsky, "com.atproto.server.createSession",
                             {"identifier": bsky.persona, "password": BSKY_PASSWORD}))
    uri = _did_url(bsky, quote).replace("https://bsky.app/profile/", "at://").replace(
        "/post/", "/app.bsky.feed.post/")
    answer = json.loads(_xrpc(bsky, f"app.bsky.feed.getPosts?uris={uri}",
                              token=token["accessJwt"]))
    embed = answer["posts"][0]["record"]["embed"]
    assert embed["$type"] == "app.bsky.embed.record"
    assert embed["record"]["uri"].startswith(f"at://{bsky.did_of('mallory')}/")


def _xrpc(emulator: BlueskyEmulator, path: str, body: dict[str, str] | None = None, *,
          token: str | None = None) -> bytes:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(  # noqa: S310 — the loopback emulator's http URL
        f"{emulator.base_url}/xrpc/{path}", data=data, method="POST" if data else "GET",
        headers={"Content-Type": "application/json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310 — loopback
        return bytes(answer.read())


# ==== X ==========================================================================================

X_READ = {"bearer_token": "app-bearer"}


@pytest.fixture
def x() -> Iterator[XEmulator]:
    emulator = XEmulator(persona="persona").start()
    assert isinstance(emulator, XEmulator)
    yield emulator
    _stop_later(emulator)


@pytest.fixture
def x_adapter(x: XEmulator) -> XAdapter:
    return XAdapter(AdapterSettings(platform="x", account="default", base_url=x.base_url,
                                    options={"timeout": 2}))


@pytest.fixture
def x_session(x_adapter: XAdapter) -> Iterator[Session]:
    session = x_adapter.open(X_READ)
    yield session
    session.close()


def _tweet_reads(x: XEmulator, start: int) -> list[Any]:
    return [r for r in x.requests[start:] if r.path.startswith("/2/tweets/")]


def test_an_account_mentioned_in_the_x_post_replied_to_is_a_party_of_the_reply(
        x: XEmulator, x_adapter: XAdapter, x_session: Session) -> None:
    mallory = x.add_user("Mallory")
    post = x.add_post("ada", "what do you think, @persona and @Mallory?")
    start = len(x.requests)

    author = x_session.author(x_adapter.parse_post(post))

    [read] = x.requests[start:]  # still one request
    assert read.path.startswith("/2/tweets/")
    assert author.handle == "ada"
    assert Party(MENTION_SET, handle="mallory", id=mallory) in author.parties
    assert Party(MENTION_SET, handle="persona", id=x.persona_id) in author.parties


def test_the_account_an_x_post_replies_to_is_a_party_of_a_reply_to_it(
        x: XEmulator, x_adapter: XAdapter, x_session: Session) -> None:
    mallory = x.add_user("mallory")
    root = x.add_post("mallory", "a thread of mine")
    reply = x.add_post("ada", "no names in here", reply_to=root)  # no @mallory in the text
    start = len(x.requests)

    author = x_session.author(x_adapter.parse_post(reply))

    assert len(x.requests[start:]) == 1
    assert author.handle == "ada"
    assert author.parties == (Party(PARENT_AUTHOR, handle="mallory", id=mallory),)


def test_the_author_of_a_post_quoted_by_the_x_post_replied_to_is_a_party(
        x: XEmulator, x_adapter: XAdapter, x_session: Session) -> None:
    mallory = x.add_user("mallory")
    original = x.add_post("mallory", "an opinion")
    quote = x.add_post("ada", "look at this", quote=original)
    start = len(x.requests)

    author = x_session.author(x_adapter.parse_post(quote))

    assert len(x.requests[start:]) == 1
    assert author.parties == (Party(QUOTED_AUTHOR, handle="mallory", id=mallory),)


def test_the_x_author_read_asks_for_every_expansion_that_names_a_party(
        x: XEmulator, x_adapter: XAdapter, x_session: Session) -> None:
    post = x.add_post("ada", "hello")
    start = len(x.requests)
    x_session.author(x_adapter.parse_post(post))
    [read] = _tweet_reads(x, start)
    expansions = set(read.query["expansions"].split(","))
    assert {"author_id", "entities.mentions.username", "in_reply_to_user_id",
            "referenced_tweets.id", "referenced_tweets.id.author_id"} <= expansions
    fields = set(read.query["tweet.fields"].split(","))
    assert {"entities", "conversation_id", "referenced_tweets", "in_reply_to_user_id"} <= fields


def test_every_party_of_an_x_thread_is_named_once_with_its_role(
        x: XEmulator, x_adapter: XAdapter, x_session: Session) -> None:
    ids = {name: x.add_user(name) for name in ("mallory", "trent", "eve")}
    original = x.add_post("eve", "quotable")
    root = x.add_post("trent", "a thread")
    reply = x.add_post("ada", "@mallory @Mallory see this", reply_to=root, quote=original)

    author = x_session.author(x_adapter.parse_post(reply))

    assert sorted(author.parties, key=lambda p: p.role) == [
        Party(MENTION_SET, handle="mallory", id=ids["mallory"]),  # twice in the text, once here
        Party(PARENT_AUTHOR, handle="trent", id=ids["trent"]),
        Party(QUOTED_AUTHOR, handle="eve", id=ids["eve"]),
    ]


def test_a_mentioned_x_account_x_does_not_know_keeps_its_handle(
        x: XEmulator, x_adapter: XAdapter, x_session: Session) -> None:
    post = x.add_post("ada", "cc @ghost_account")  # no such user: X gives no id for it
    author = x_session.author(x_adapter.parse_post(post))
    assert author.parties == (Party(MENTION_SET, handle="ghost_account", id=None),)


def test_a_deleted_quoted_x_post_leaves_no_author_to_reach(
        x: XEmulator, x_adapter: XAdapter, x_session: Session) -> None:
    original = x.add_post("mallory", "soon gone")
    quote = x.add_post("ada", "look at this", quote=original)
    x.delete_post(original)
    author = x_session.author(x_adapter.parse_post(quote))
    assert author.handle == "ada"
    assert author.parties == ()


def test_the_x_account_replied_to_stays_a_party_when_its_post_was_deleted(
        x: XEmulator, x_adapter: XAdapter, x_session: Session) -> None:
    mallory = x.add_user("mallory")
    root = x.add_post("mallory", "soon gone")
    reply = x.add_post("ada", "a reply", reply_to=root)
    x.delete_post(root)
    author = x_session.author(x_adapter.parse_post(reply))
    # in_reply_to_user_id still names her: she is still in the reply's mention set on X
    assert author.parties == (Party(PARENT_AUTHOR, handle="mallory", id=mallory),)


def test_a_quoted_x_post_whose_author_x_withholds_refuses_the_reply(
        x: XEmulator, x_adapter: XAdapter, x_session: Session) -> None:
    original = x.add_post("mallory", "my protected thoughts")
    quote = x.add_post("ada", "look at this", quote=original)
    x.protect("mallory")
    with pytest.raises(Refused, match="cannot be checked"):
        x_session.author(x_adapter.parse_post(quote))


def test_an_x_reference_names_no_author_id_offline(x_adapter: XAdapter) -> None:
    # the handle in an X URL is only a hint (X redirects any name to the real author)
    ref = x_adapter.parse_post("https://x.com/mallory/status/1860000000000000001")
    assert ref.handle == "mallory"
    assert ref.author_id is None


def test_x_resolves_handles_to_user_ids_with_one_request(
        x: XEmulator, x_adapter: XAdapter, x_session: Session) -> None:
    assert getattr(x_adapter, "resolves_handles", False) is True
    mallory = x.add_user("Mallory")
    start = len(x.requests)
    assert x_session.resolve("@MALLORY") == mallory
    assert [r.path for r in x.requests[start:]] == ["/2/users/by/username/mallory"]


def test_an_x_handle_no_account_has_resolves_to_none(x: XEmulator, x_session: Session) -> None:
    start = len(x.requests)
    assert x_session.resolve("nobody_here") is None
    assert len(x.requests[start:]) == 1


@pytest.mark.parametrize(("status", "error"), [
    (500, PlatformDown), (503, PlatformDown), (429, RateLimited), (401, Unauthorized)])
def test_a_failed_x_handle_lookup_raises_and_never_answers_unknown(
        x: XEmulator, x_session: Session, status: int, error: type[Exception]) -> None:
    x.add_user("mallory")
    x.fail_next(status, {"title": "Error", "detail": "failed", "status": status},
                match=lambda r: r.path.startswith("/2/users/by/username/"))
    with pytest.raises(error):
        x_session.resolve("mallory")


def test_an_x_lookup_answered_without_the_user_or_a_not_found_raises(
        x: XEmulator, x_session: Session) -> None:
    x.add_user("mallory")
    x.fail_next(200, {"errors": [{"title": "Forbidden", "detail": "User has been suspended: "
                                  "[mallory].", "type": "about:blank"}]},
                match=lambda r: r.path.startswith("/2/users/by/username/"))
    with pytest.raises(Refused, match="suspended"):
        x_session.resolve("mallory")


# ==== Threads ====================================================================================

@pytest.fixture
def threads() -> Iterator[ThreadsEmulator]:
    emulator = ThreadsEmulator("galatea").start()
    yield emulator
    _stop_later(emulator)


@pytest.fixture
def threads_adapter(threads: ThreadsEmulator) -> ThreadsAdapter:
    return ThreadsAdapter(AdapterSettings("threads", "galatea", base_url=threads.base_url),
                          timeout=2.0, container_interval=0.0)


@pytest.fixture
def threads_session(threads_adapter: ThreadsAdapter, threads: ThreadsEmulator
                    ) -> Iterator[Session]:
    session = threads_adapter.open({"access_token": threads.token})
    yield session
    session.close()


def test_the_root_author_of_a_threads_thread_is_a_party_of_a_reply_in_it(
        threads: ThreadsEmulator, threads_adapter: ThreadsAdapter,
        threads_session: Session) -> None:
    root = threads.add_post("mallory", "a thread of mine")
    reply = threads.add_post("ada", "a reply in it", reply_to=root)
    start = len(threads.requests)

    author = threads_session.author(threads_adapter.parse_post(threads.media_id(reply)))

    # the post, then its root: two reads with the same token
    assert _requests_since(threads, start) == [f"/v1.0/{threads.media_id(reply)}",
                                               f"/v1.0/{threads.media_id(root)}"]
    assert author.handle == "ada"
    assert author.parties == (Party(ROOT_AUTHOR, handle="mallory"),)


def test_a_reply_deep_in_a_threads_thread_names_the_root_author_not_the_parent(
        threads: ThreadsEmulator, threads_adapter: ThreadsAdapter,
        threads_session: Session) -> None:
    root = threads.add_post("mallory", "a thread of mine")
    middle = threads.add_post("bob", "first reply", reply_to=root)
    deep = threads.add_post("ada", "second reply", reply_to=middle)
    start = len(threads.requests)

    author = threads_session.author(threads_adapter.parse_post(threads.media_id(deep)))

    assert _requests_since(threads, start)[-1] == f"/v1.0/{threads.media_id(root)}"
    assert author.parties == (Party(ROOT_AUTHOR, handle="mallory"),)
    assert author.thread == threads.media_id(root)


def test_a_threads_reply_found_by_url_also_names_its_root_author(
        threads: ThreadsEmulator, threads_adapter: ThreadsAdapter,
        threads_session: Session) -> None:
    root = threads.add_post("mallory", "a thread of mine")
    reply = threads.add_post("ada", "@galatea what do you think?", reply_to=root)
    start = len(threads.requests)

    author = threads_session.author(threads_adapter.parse_post(reply))

    assert _requests_since(threads, start) == ["/v1.0/me/mentions",
                                               f"/v1.0/{threads.media_id(root)}"]
    assert author.parties == (Party(ROOT_AUTHOR, handle="mallory"),)


def test_a_top_level_threads_post_takes_one_read_and_has_no_other_party(
        threads: ThreadsEmulator, threads_adapter: ThreadsAdapter,
        threads_session: Session) -> None:
    post = threads.add_post("ada", "hello")
    start = len(threads.requests)
    author = threads_session.author(threads_adapter.parse_post(threads.media_id(post)))
    assert len(threads.requests) == start + 1
    assert author.parties == ()


def test_a_threads_reply_that_does_not_name_its_root_refuses(
        threads: ThreadsEmulator, threads_adapter: ThreadsAdapter,
        threads_session: Session) -> None:
    root = threads.add_post("mallory", "a thread of mine")
    reply = threads.media_id(threads.add_post("ada", "a reply", reply_to=root))
    # an answer that says "a reply" without root_post (Threads documents it on every reply)
    threads.fail_next(200, {"id": reply, "username": "ada", "is_reply": True,
                            "permalink": "https://www.threads.com/@ada/post/DAAAAAAAAAA",
                            "timestamp": "2026-01-01T00:00:00+0000"},
                      match=lambda r: r.path == f"/v1.0/{reply}")
    with pytest.raises(Refused, match="which thread"):
        threads_session.author(threads_adapter.parse_post(reply))


def test_a_threads_root_that_cannot_be_read_refuses_the_reply(
        threads: ThreadsEmulator, threads_adapter: ThreadsAdapter,
        threads_session: Session) -> None:
    root = threads.add_post("mallory", "a thread of mine")
    reply = threads.add_post("ada", "a reply in it", reply_to=root)
    threads.delete_post(root)
    with pytest.raises(Refused, match="its author cannot be checked"):
        threads_session.author(threads_adapter.parse_post(threads.media_id(reply)))


def test_a_threads_root_by_a_private_profile_refuses_the_reply(
        threads: ThreadsEmulator, threads_adapter: ThreadsAdapter,
        threads_session: Session) -> None:
    root = threads.add_post("mallory", "a thread of mine")
    reply = threads.add_post("ada", "a reply in it", reply_to=root)
    threads.make_private("mallory")
    with pytest.raises(Refused, match="its author cannot be checked"):
        threads_session.author(threads_adapter.parse_post(threads.media_id(reply)))


@pytest.mark.parametrize(("status", "code", "error"), [
    (500, 2, PlatformDown), (429, 4, RateLimited), (401, 190, Unauthorized)])
def test_a_failed_read_of_a_threads_root_raises(
        threads: ThreadsEmulator, threads_adapter: ThreadsAdapter, threads_session: Session,
        status: int, code: int, error: type[Exception]) -> None:
    root = threads.add_post("mallory", "a thread of mine")
    reply = threads.add_post("ada", "a reply in it", reply_to=root)
    root_path = f"/v1.0/{threads.media_id(root)}"
    threads.fail_next(status, {"error": {"message": "failed", "type": "OAuthException",
                                         "code": code}},
                      match=lambda r: r.path == root_path)
    with pytest.raises(error):
        threads_session.author(threads_adapter.parse_post(threads.media_id(reply)))


def test_threads_cannot_resolve_handles(threads_adapter: ThreadsAdapter) -> None:
    # profile_lookup needs advanced access and answers no id: the gate checks handles
    assert getattr(threads_adapter, "resolves_handles", False) is False
    assert threads_adapter.parse_post("18031234567890123").author_id is None


def test_the_threads_emulator_seeds_a_quote_of_another_accounts_post(
        threads: ThreadsEmulator) -> None:
    original = threads.add_post("mallory", "an opinion")
    quote = threads.add_post("ada", "look at this", quote=original)
    request = urllib.request.Request(  # noqa: S310 — the loopback emulator's http URL
        f"{threads.base_url}/v1.0/{threads.media_id(quote)}?fields=is_quote_post,quoted_post",
        headers={"Authorization": f"Bearer {threads.token}"})
    with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310 — loopback
        body = json.loads(answer.read())
    assert body["is_quote_post"] is True
    assert body["quoted_post"] == {"id": threads.media_id(original)}


# ==== Telegram ===================================================================================

@pytest.fixture
def telegram() -> Iterator[TelegramEmulator]:
    with TelegramEmulator() as emulator:
        yield emulator


@pytest.fixture
def telegram_adapter(telegram: TelegramEmulator) -> TelegramAdapter:
    return TelegramAdapter(AdapterSettings("telegram", "persona", base_url=telegram.base_url,
                                           options={"timeout": 3}))


@pytest.mark.parametrize("raw", ["123456789/42", " 123456789/42 "])
def test_a_telegram_private_chat_reference_names_its_user_offline(
        telegram_adapter: TelegramAdapter, raw: str) -> None:
    assert telegram_adapter.parse_post(raw).author_id == "123456789"


@pytest.mark.parametrize("raw", [
    "-4012345/7", "-1001234567890/42", "@durov/42", "https://t.me/durov/42",
    "https://t.me/c/1234567890/42"])
def test_a_telegram_group_or_channel_reference_names_no_author(
        telegram_adapter: TelegramAdapter, raw: str) -> None:
    assert telegram_adapter.parse_post(raw).author_id is None


def test_the_id_a_telegram_private_chat_names_is_the_author_the_read_finds(
        telegram: TelegramEmulator, telegram_adapter: TelegramAdapter) -> None:
    mallory = telegram.add_user("mallory_tg")
    ref = telegram_adapter.parse_post(telegram.add_post("mallory_tg", "hello @persona"))
    session = telegram_adapter.open(telegram.credentials)
    try:
        start = len(telegram.requests)
        author = session.author(ref)
    finally:
        session.close()
    assert [TelegramEmulator.method(r) for r in telegram.requests[start:]] == ["getchat"]
    assert ref.author_id == author.id == mallory
    assert author.parties == ()  # a private chat holds the bot and this one person


def test_telegram_cannot_resolve_handles(telegram: TelegramEmulator,
                                         telegram_adapter: TelegramAdapter) -> None:
    # The Bot API has no user lookup by username: the gate checks handles as they are
    assert getattr(telegram_adapter, "resolves_handles", False) is False
    session = telegram_adapter.open(telegram.credentials)
    try:
        start = len(telegram.requests)
        assert session.resolve("mallory_tg") is None
        assert session.resolve("424242") == "424242"
    finally:
        session.close()
    assert telegram.requests[start:] == []  # nothing asked: there is nothing to ask


def test_the_telegram_emulator_seeds_a_group_reply_to_another_accounts_message(
        telegram: TelegramEmulator, telegram_adapter: TelegramAdapter) -> None:
    group = telegram.add_group("Builders")
    root = telegram.add_post("mallory_tg", "a thread of mine", chat=group)
    reply = telegram.add_post("ada_tg", "@persona what do you think?", reply_to=root)
    request = urllib.request.Request(  # noqa: S310 — the loopback emulator's http URL
        f"{telegram.base_url}/bot{telegram.token}/getUpdates", data=b"timeout=0",
        headers={"Content-Type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310 — loopback
        updates = json.loads(answer.read())["result"]
    message = updates[-1]["message"]
    assert f"{message['chat']['id']}/{message['message_id']}" == reply
    assert message["from"]["username"] == "ada_tg"
    assert message["reply_to_message"]["from"]["username"] == "mallory_tg"
    # and the Bot API cannot name a group message's author from its reference: --to is needed
    session = telegram_adapter.open(telegram.credentials)
    try:
        with pytest.raises(BadInput, match="--to"):
            session.author(telegram_adapter.parse_post(reply))
    finally:
        session.close()
