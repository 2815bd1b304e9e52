"""The Bluesky emulator on its own: the seeding API and what it refuses, over plain HTTP."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from tactful.adapters.bluesky.emulator import BlueskyEmulator

CREATE = "com.atproto.repo.createRecord"


@pytest.fixture(scope="module")
def running() -> Iterator[BlueskyEmulator]:
    emulator = BlueskyEmulator()
    emulator.start()
    yield emulator
    emulator.stop()


@pytest.fixture
def emulator(running: BlueskyEmulator) -> BlueskyEmulator:
    running.reset()
    return running


def _xrpc(emulator: BlueskyEmulator, nsid: str, body: dict[str, Any] | None = None, *,
          token: str | None = None, query: dict[str, str] | None = None
          ) -> tuple[int, dict[str, Any]]:
    url = f"{emulator.base_url}/xrpc/{nsid}" + (f"?{urlencode(query)}" if query else "")
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(  # noqa: S310 — the loopback emulator's http URL
        url, data=data, method="POST" if data else "GET",
        headers={"Content-Type": "application/json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310 — loopback
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


def _token(emulator: BlueskyEmulator) -> str:
    status, body = _xrpc(emulator, "com.atproto.server.createSession",
                         {"identifier": emulator.persona, "password": "any"})
    assert status == 200
    assert "didDoc" not in body  # a PDS endpoint there would move the client elsewhere
    return str(body["accessJwt"])


def _post(emulator: BlueskyEmulator, token: str | None,
          **record: Any) -> tuple[int, dict[str, Any]]:
    full = {"$type": "app.bsky.feed.post", "createdAt": "2026-01-01T00:00:00Z", **record}
    return _xrpc(emulator, CREATE, {"repo": emulator.persona_did,
                                    "collection": "app.bsky.feed.post", "record": full},
                 token=token)


def _strong(emulator: BlueskyEmulator, url: str) -> dict[str, str]:
    token = _token(emulator)
    uri = url.replace("https://bsky.app/profile/", "at://").replace("/post/",
                                                                    "/app.bsky.feed.post/")
    _, body = _xrpc(emulator, "app.bsky.feed.getPostThread", token=token,
                    query={"uri": uri, "parentHeight": "0"})
    return {"uri": body["thread"]["post"]["uri"], "cid": body["thread"]["post"]["cid"]}


def test_the_seeding_api(emulator: BlueskyEmulator) -> None:
    assert emulator.persona == "persona.bsky.social"
    alice = emulator.add_user("alice", display_name="Alice")
    assert alice.startswith("did:plc:") and len(alice) == len("did:plc:") + 24
    assert emulator.add_user("Alice.bsky.social") == alice  # the same account
    url = emulator.add_post("alice", f"hi @{emulator.persona}")
    assert url.startswith("https://bsky.app/profile/alice.bsky.social/post/")
    reply = emulator.add_post("bob", "hello", reply_to=url)
    assert reply != url
    with pytest.raises(ValueError, match="names no post"):
        emulator.add_post("bob", "x", reply_to="https://bsky.app/profile/bob.bsky.social/post/"
                                                 "3kq2vzxjbcs2a")
    assert emulator.sent() == []  # seeded posts are not what the persona sent


def test_a_post_through_the_api_shows_in_sent(emulator: BlueskyEmulator) -> None:
    alice = emulator.add_user("alice")
    parent = emulator.add_post("alice", "question?")
    ref = _strong(emulator, parent)
    text = "é @alice.bsky.social"
    status, body = _post(emulator, _token(emulator), text=text,
                         reply={"root": ref, "parent": ref},
                         facets=[{"index": {"byteStart": 3, "byteEnd": 21}, "features": [
                             {"$type": "app.bsky.richtext.facet#mention", "did": alice}]}])
    assert status == 200, body
    [sent] = emulator.sent()
    assert sent["text"] == text
    assert sent["reply_to"] == parent
    assert sent["mentions"] == ["alice.bsky.social"]
    assert sent["id"] == body["uri"]
    assert len(emulator.writes()) == 1


def test_writes_need_a_valid_token(emulator: BlueskyEmulator) -> None:
    assert _post(emulator, None, text="hi")[0] == 401
    assert _post(emulator, "a.b.c", text="hi")[0] == 401
    assert emulator.sent() == []


def test_a_wrong_password_is_refused_when_one_is_set() -> None:
    with BlueskyEmulator(password="right") as emulator:
        status, body = _xrpc(emulator, "com.atproto.server.createSession",
                             {"identifier": emulator.persona, "password": "wrong"})
        assert (status, body["error"]) == (401, "AuthenticationRequired")


@pytest.mark.parametrize(("facet", "why"), [
    ({"index": {"byteStart": 2, "byteEnd": 20}}, "not '@handle'"),  # off by one byte
    ({"index": {"byteStart": 3, "byteEnd": 99}}, "byte range"),
    ({"index": {"byteStart": 5, "byteEnd": 5}}, "byte range"),
])
def test_mention_facets_must_cover_the_handle(emulator: BlueskyEmulator,
                                              facet: dict[str, Any], why: str) -> None:
    alice = emulator.add_user("alice")
    facet["features"] = [{"$type": "app.bsky.richtext.facet#mention", "did": alice}]
    status, body = _post(emulator, _token(emulator), text="é @alice.bsky.social", facets=[facet])
    assert status == 400
    assert why in body["message"]


def test_replies_must_point_at_existing_posts_of_one_thread(emulator: BlueskyEmulator) -> None:
    token = _token(emulator)
    root = _strong(emulator, emulator.add_post("alice", "root"))
    other = _strong(emulator, emulator.add_post("carol", "another thread"))
    parent_url = emulator.add_post("bob", "reply", reply_to=emulator.url(root["uri"]))
    parent = _strong(emulator, parent_url)
    missing = {"uri": root["uri"][:-1] + "z", "cid": root["cid"]}
    wrong_cid = {"uri": root["uri"], "cid": other["cid"]}
    for reply, why in [({"root": missing, "parent": missing}, "no existing post"),
                       ({"root": wrong_cid, "parent": parent}, "no existing post"),
                       ({"root": other, "parent": parent}, "not the root")]:
        status, body = _post(emulator, token, text="x", reply=reply)
        assert status == 400
        assert why in body["message"]
    assert _post(emulator, token, text="x", reply={"root": root, "parent": parent})[0] == 200


def test_texts_over_the_limit_are_refused(emulator: BlueskyEmulator) -> None:
    token = _token(emulator)
    assert _post(emulator, token, text="x" * 301)[0] == 400
    assert _post(emulator, token, text="👨‍👩‍👧‍👦" * 130)[0] == 400  # 130 graphemes, 3250 bytes
    assert _post(emulator, token, text="e\u0301" * 300)[0] == 200


def test_notifications_page_newest_first(emulator: BlueskyEmulator) -> None:
    token = _token(emulator)
    urls = [emulator.add_post("alice", f"@{emulator.persona} {n}") for n in range(5)]
    emulator.add_post("alice", "not addressed to anyone")
    seen: list[str] = []
    query = {"limit": "2"}
    while True:
        status, body = _xrpc(emulator, "app.bsky.notification.listNotifications", token=token,
                             query=query)
        assert status == 200
        seen += [emulator.url(n["uri"]) for n in body["notifications"]]
        if "cursor" not in body:
            break
        query = {"limit": "2", "cursor": body["cursor"]}
    assert seen == urls[::-1]
