"""The Threads emulator refuses what Threads refuses, so the adapter's tests mean something."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime

import httpx
import pytest

from tactful.adapters.meta.threads.emulator import ThreadsEmulator


@pytest.fixture
def emulator() -> Iterator[ThreadsEmulator]:
    emu = ThreadsEmulator("galatea").start()
    yield emu
    threading.Thread(target=emu.stop, daemon=True).start()  # see test_threads.py


@pytest.fixture
def api(emulator: ThreadsEmulator) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=emulator.base_url + "/v1.0", trust_env=False, timeout=2,
                      headers={"Authorization": f"Bearer {emulator.token}"}) as client:
        yield client


def error_code(response: httpx.Response) -> int:
    return int(response.json()["error"]["code"])


def test_a_missing_or_wrong_token_is_refused(emulator: ThreadsEmulator) -> None:
    with httpx.Client(base_url=emulator.base_url, trust_env=False, timeout=2) as bare:
        missing = bare.get("/v1.0/me")
        wrong = bare.get("/v1.0/me", headers={"Authorization": "Bearer nope"})
    assert (missing.status_code, error_code(missing)) == (401, 190)
    assert (wrong.status_code, error_code(wrong)) == (401, 190)


def test_threading_fields_must_name_existing_posts(api: httpx.Client,
                                                   emulator: ThreadsEmulator) -> None:
    me = emulator.persona_id
    bad_reply = api.post(f"/{me}/threads", data={"media_type": "TEXT", "text": "hi",
                                                 "reply_to_id": "18999999999999999"})
    bad_publish = api.post(f"/{me}/threads_publish", data={"creation_id": "17999"})
    assert (bad_reply.status_code, bad_publish.status_code) == (400, 400)
    assert emulator.sent() == []


def test_text_is_limited_to_500_with_emoji_counting_their_bytes(
        api: httpx.Client, emulator: ThreadsEmulator) -> None:
    me = emulator.persona_id
    at_limit = api.post(f"/{me}/threads", data={"media_type": "TEXT",
                                               "text": "a" * 496 + "👋"})
    over = api.post(f"/{me}/threads", data={"media_type": "TEXT", "text": "a" * 497 + "👋"})
    empty = api.post(f"/{me}/threads", data={"media_type": "TEXT", "text": " "})
    assert at_limit.status_code == 200
    assert (over.status_code, empty.status_code) == (400, 400)


def test_a_container_publishes_once_and_threads_like_threads(
        api: httpx.Client, emulator: ThreadsEmulator) -> None:
    me = emulator.persona_id
    root = emulator.add_post("alice", "root")
    reply = emulator.add_post("bob", "@galatea reply", reply_to=root)
    created = api.post(f"/{me}/threads", data={"media_type": "TEXT", "text": "@bob yes",
                                              "reply_to_id": emulator.media_id(reply)})
    container = created.json()["id"]
    assert api.get(f"/{container}", params={"fields": "status"}).json()["status"] == "FINISHED"
    published = api.post(f"/{me}/threads_publish", data={"creation_id": container})
    again = api.post(f"/{me}/threads_publish", data={"creation_id": container})

    assert again.status_code == 400
    post = api.get(f"/{published.json()['id']}",
                   params={"fields": "username,root_post,replied_to,is_reply"}).json()
    assert post == {"id": published.json()["id"], "username": "galatea", "is_reply": True,
                    "root_post": {"id": emulator.media_id(root)},
                    "replied_to": {"id": emulator.media_id(reply)}}
    assert [(s["reply_to"], s["mentions"]) for s in emulator.sent()] == [(reply, ["bob"])]


def test_reads_check_fields_paths_and_owners(api: httpx.Client,
                                             emulator: ThreadsEmulator) -> None:
    other = emulator.add_user("alice")
    assert api.get("/me", params={"fields": "id,nonsense"}).status_code == 400
    assert api.get(f"/{other}/threads").status_code == 400
    assert api.get(f"{emulator.base_url}/me").status_code == 400  # no /v1.0
    assert api.get("/me", params={"fields": "id,username"}).json() == {
        "id": emulator.persona_id, "username": "galatea"}


def test_lists_are_newest_first_and_honour_since_and_limit(
        api: httpx.Client, emulator: ThreadsEmulator) -> None:
    urls = [emulator.add_post(f"user{n}", f"@galatea {n}") for n in range(4)]
    emulator.add_post("user9", "not for the persona")
    page = api.get("/me/mentions", params={"fields": "text,timestamp", "limit": "2"}).json()
    assert [item["text"] for item in page["data"]] == ["@galatea 3", "@galatea 2"]
    assert "next" in page["paging"]

    second = api.get(f"/{emulator.media_id(urls[2])}", params={"fields": "timestamp"}).json()
    since = int(datetime.strptime(second["timestamp"], "%Y-%m-%dT%H:%M:%S%z").timestamp())
    newer = api.get("/me/mentions", params={"fields": "text", "since": str(since)}).json()
    assert [item["text"] for item in newer["data"]] == ["@galatea 3", "@galatea 2"]
    assert api.get("/me/mentions", params={"since": "12"}).status_code == 400


def test_seeding_refuses_a_reply_to_nothing(emulator: ThreadsEmulator) -> None:
    with pytest.raises(ValueError, match="no post"):
        emulator.add_post("alice", "hi", reply_to="https://www.threads.com/@x/post/DAAAAAAAAAA")
