"""A tactful adapter plugin for tests: platform `recorder`, a pretend network in a JSON file.

Installed like any third-party plugin (an entry point in a dist-info folder on the path, see
the `recorder` fixture), it records every call it receives to `$TACTFUL_TEST_PLATFORM.log`,
so a test can prove from outside what the pipeline asked of it. The platform's state (posts
and their authors, what was posted, queued failures) lives in `$TACTFUL_TEST_PLATFORM`.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from tactful.core.errors import BadInput
from tactful.core.hookspecs import hookimpl
from tactful.core.memory.handles import normalize_handle
from tactful.core.send.adapter import (
    AdapterSettings,
    Author,
    Forbidden,
    Inbound,
    Page,
    Party,
    PlatformDown,
    PostRef,
    RateLimited,
    Sent,
)


def _state_path() -> Path:
    return Path(os.environ["TACTFUL_TEST_PLATFORM"])


def load_state() -> dict[str, Any]:
    path = _state_path()
    state: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    state.setdefault("posts", {})
    state.setdefault("sent", [])
    state.setdefault("fail", [])
    return state


def save_state(state: dict[str, Any]) -> None:
    _state_path().write_text(json.dumps(state))


def record(call: str, **details: Any) -> None:
    with open(_state_path().with_suffix(".log"), "a", encoding="utf-8") as out:
        out.write(json.dumps([call, details]) + "\n")


def calls() -> list[str]:
    return [call for call, _ in calls_with_details()]


def calls_with_details() -> list[tuple[str, dict[str, Any]]]:
    log = _state_path().with_suffix(".log")
    if not log.exists():
        return []
    return [tuple(json.loads(line)) for line in log.read_text().splitlines()]  # type: ignore[misc]


def add_post(post_id: str, handle: str, *, user_id: str | None = None, is_bot: bool = False,
             thread: str | None = None,
             parties: list[tuple[str, str | None, str | None]] = ()) -> None:  # type: ignore[assignment]
    """A post by `handle`; `parties` (role, handle, id) are the others a reply to it reaches
    (the thread's root author, say), as a platform's read would name them."""
    state = load_state()
    state["posts"][post_id] = {"handle": handle, "id": user_id, "is_bot": is_bot,
                               "thread": thread or post_id, "parties": list(parties)}
    save_state(state)


def add_user(handle: str, user_id: str) -> None:
    """An account the platform knows: `resolve(handle)` answers its id."""
    state = load_state()
    state.setdefault("users", {})[handle] = user_id
    save_state(state)


def fail_reads(kind: str = "down") -> None:
    """Every read (author, resolve) fails from now on."""
    state = load_state()
    state["fail_reads"] = kind
    save_state(state)


def _read_failure() -> None:
    if load_state().get("fail_reads"):
        raise PlatformDown("recorder", "HTTP 503 on a read")


def add_inbound(post_id: str, handle: str, text: str, *, user_id: str | None = None,
                is_bot: bool = False, thread: str | None = None,
                at: str = "2026-11-30T09:00:00+00:00") -> None:
    """Someone posts at the persona: fetch_inbound will return it."""
    add_post(post_id, handle, user_id=user_id, is_bot=is_bot, thread=thread)
    state = load_state()
    state.setdefault("inbound", []).append(
        {"id": post_id, "handle": handle, "user_id": user_id, "is_bot": is_bot,
         "thread": thread or post_id, "text": text, "at": at})
    save_state(state)


def add_recent(handle: str, *texts: str) -> None:
    """What `handle` posted lately: `recent_posts` reads it (and the adapter then says it can)."""
    state = load_state()
    state.setdefault("recent", {}).setdefault(handle, []).extend(texts)
    save_state(state)


def fail_next(kind: str) -> None:
    """Queue a failure of the next send: rate, forbidden, down, maybe, crash, hold."""
    state = load_state()
    state["fail"].append(kind)
    save_state(state)


def held() -> Path:
    """Written by a send held with `fail_next("hold")` once the platform has taken the post."""
    return _state_path().with_suffix(".held")


def let_go() -> None:
    """The held send answers (its sender goes on to mark the post sent and write memory)."""
    _state_path().with_suffix(".go").touch()


def _hold() -> None:
    held().touch()
    go = _state_path().with_suffix(".go")
    deadline = time.monotonic() + 60
    while not go.exists():
        if time.monotonic() > deadline:
            raise AssertionError("a held send was never let go")
        time.sleep(0.02)


class RecorderSession:
    def __init__(self, credentials: Mapping[str, str]) -> None:
        self.posting = False
        record("open", fields=sorted(credentials))

    def author(self, post: PostRef) -> Author:
        record("author", post=post.id)
        _read_failure()
        found = load_state()["posts"].get(post.id)
        if found is None:
            raise BadInput(f"recorder: no post {post.id}")
        return Author(handle=found["handle"], id=found["id"], is_bot=found["is_bot"],
                      thread=found["thread"], url=f"https://recorder.example/p/{post.id}",
                      parties=tuple(Party(*p) for p in found.get("parties", [])))

    def resolve(self, handle: str) -> str | None:
        record("resolve", handle=handle)
        _read_failure()
        found: str | None = load_state().get("users", {}).get(handle)
        return found

    def enable_posting(self, credentials: Mapping[str, str]) -> None:
        record("enable_posting", fields=sorted(credentials))
        self.posting = True

    def send(self, text: str, *, reply_to: PostRef | None, to: str | None,
             mentions: Mapping[str, str | None]) -> Sent:
        record("send", reply_to=reply_to.id if reply_to else None, to=to,
               mentions=dict(mentions))
        if not self.posting:
            raise AssertionError("send before enable_posting")
        state = load_state()
        failure = state["fail"].pop(0) if state["fail"] else None
        save_state(state)
        if failure == "rate":
            raise RateLimited("recorder", 42)
        if failure == "forbidden":
            raise Forbidden("recorder", "replies are restricted")
        if failure == "down":
            raise PlatformDown("recorder", "HTTP 503 before the post was taken")
        number = len(state["sent"]) + 1
        state["sent"].append({"text": text, "reply_to": reply_to.id if reply_to else None,
                              "to": to, "id": str(number)})
        save_state(state)
        if failure == "maybe":
            raise PlatformDown("recorder", "timed out after sending", maybe_sent=True)
        if failure == "crash":
            os._exit(9)  # the post is out; the process dies before the ledger says so
        if failure == "hold":
            _hold()  # the post is out; the sender waits before it answers
        return Sent(id=str(number), url=f"https://recorder.example/p/{number}")

    def recent_posts(self, author: Author, limit: int) -> list[str]:
        record("recent_posts", handle=author.handle)
        _read_failure()
        return list(load_state().get("recent", {}).get(author.handle, []))[-limit:]

    def fetch_inbound(self, since: str | None, limit: int) -> Page:
        record("fetch_inbound", since=since)
        inbound = load_state().get("inbound", [])
        start = int(since or 0)
        chosen = inbound[start:start + limit]
        items = [Inbound(post=PostRef("recorder", i["id"], f"https://recorder.example/p/{i['id']}"),
                         author=Author(handle=i["handle"], id=i["user_id"], is_bot=i["is_bot"],
                                       thread=i["thread"]),
                         text=i["text"], at=datetime.fromisoformat(i["at"]), thread=i["thread"])
                 for i in chosen]
        return Page(items=items, cursor=str(start + len(chosen)))

    def close(self) -> None:
        record("close")


class RecorderAdapter:
    platform = "recorder"
    text_limit = 100
    read_fields = ("read_token",)
    post_fields = ("post_token",)
    quotas: Mapping[str, int] = {"reply": 5}
    direct_kind = "dm"  # `--to` without a reply is a direct message, as on Telegram
    resolves_handles = True

    def __init__(self, settings: AdapterSettings) -> None:
        self.settings = settings

    def parse_post(self, raw: str) -> PostRef:
        # https://recorder.example/u/<user id>/p/<n> names its author by stable id
        match = re.fullmatch(r"(?:https://recorder\.example(?:/u/([0-9]{1,20}))?/p/)?"
                             r"([0-9]{1,20})", raw.strip())
        if match is None:
            raise BadInput(f"--reply-to {raw[:60]!r} is not a recorder post; give its URL "
                           "(https://recorder.example/p/123) or its id")
        return PostRef("recorder", match.group(2), f"https://recorder.example/p/{match.group(2)}",
                       author_id=match.group(1))

    def mentions(self, text: str) -> list[str]:
        found: list[str] = []
        for name in re.findall(r"(?<![\w@])@([A-Za-z0-9_]{1,30})", text):
            handle = normalize_handle(name, self.platform)
            if handle not in found:
                found.append(handle)
        return found

    def text_length(self, text: str) -> int:
        return len(text)

    @property
    def reads_recent_posts(self) -> bool:
        """Only when a test gave someone recent posts: other tests count every session."""
        return bool(load_state().get("recent"))

    def is_private(self, to: str | None, post: PostRef | None) -> bool:
        """As on Telegram: a chat named by a number is a private one; by a name, a group."""
        return post is None and to is not None and to.isdigit()

    def open(self, credentials: Mapping[str, str]) -> RecorderSession:
        return RecorderSession(credentials)


@hookimpl
def register_adapters(register: Any) -> None:
    register("recorder", RecorderAdapter)
