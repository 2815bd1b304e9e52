"""A Threads Graph API emulator on 127.0.0.1, for tests and `tactful demo`. Standard library only.

It answers, under /v1.0, what tactful's session calls, in Meta's wire format:
  GET  /me, /{user-id}                      the persona's profile (id, username, name)
  POST /{user-id}/threads                   a text container (media_type=TEXT, text, reply_to_id)
  GET  /{container-id}?fields=status        FINISHED until published, then PUBLISHED
  POST /{user-id}/threads_publish           publish a container (creation_id) → {"id": media id}
  GET  /{media-id}?fields=...               a post, with only the fields asked for
  GET  /{user-id}/mentions|threads|replies  lists, newest first (limit, since, until, after)
  GET  /{media-id}/replies                  the direct replies (reverse=true: newest first)
  GET  /{user-id}/threads_publishing_limit  quota usage
`me` stands for the persona in every path, as on Meta's servers. Errors come as
{"error": {"message", "type", "code"}} and it refuses what Threads refuses and what matters to
tactful: a missing or wrong token (401, code 190), a reply_to_id or creation_id that names no
post or container, text over 500 (emoji counting their UTF-8 bytes), unknown fields, another
user's edges. Posts of other users are seeded with `add_post`; replies are threaded like on
Threads (root_post, replied_to), quotes name their post (is_quote_post, quoted_post), and
`delete_post` / `make_private` make a post unreadable or its author's username withheld. A
post is inbound when it @mentions the persona (the mentions list) or replies to one of the
persona's posts (the replies under it).
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tactful.adapters.emulation import Emulator, Reply, Request
from tactful.adapters.meta.graph_emulator import GraphError, authorize, graph_time, integer

VERSION_PREFIX = "/v1.0/"
TEXT_LIMIT = 500
MENTIONS_EPOCH = 1688540400  # the mentions endpoint refuses an earlier `since`
PUBLIC = "https://www.threads.com"
KNOWN_FIELDS = frozenset({
    "id", "media_product_type", "media_type", "media_url", "permalink", "owner", "username",
    "text", "timestamp", "shortcode", "thumbnail_url", "children", "is_quote_post", "alt_text",
    "link_attachment_url", "has_replies", "is_reply", "is_reply_owned_by_me", "root_post",
    "replied_to", "hide_status", "reply_audience", "quoted_post", "reposted_post", "gif_url",
    "poll_attachment", "topic_tag", "is_spoiler_media", "text_entities", "text_attachment",
    "location_id", "status", "error_message", "name", "threads_profile_picture_url",
    "threads_biography", "is_verified",
})
_SHORTCODE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
# How Threads links a mention in text: an Instagram username after '@' that is not inside a word
# or an address. Written apart from the adapter's parser on purpose, so that one checks the other.
_MENTION = re.compile(r"(?<![A-Za-z0-9_.%+@/-])@([A-Za-z0-9_](?:[A-Za-z0-9_.]{0,29}))"
                      r"(?![A-Za-z0-9_@])")
_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)


@dataclass
class _User:
    id: str
    handle: str
    display_name: str | None
    is_bot: bool  # Threads shows no such flag; kept so seeding looks the same on every platform
    private: bool = False  # a private profile: others read its posts without username/permalink


@dataclass
class _Post:
    id: str
    shortcode: str
    author: _User
    text: str
    at: int  # unix seconds, strictly increasing across posts
    parent: _Post | None
    via_api: bool  # published through the API (what `sent()` lists), not seeded
    children: list[_Post] = field(default_factory=list)
    quoted: _Post | None = None  # the post this one quotes

    @property
    def root(self) -> _Post:
        return self if self.parent is None else self.parent.root


@dataclass
class _Container:
    id: str
    text: str
    parent: _Post | None
    published: _Post | None = None


def counted_length(text: str) -> int:
    """Text length as Threads counts it: emoji (symbols, astral characters, joiners) by bytes."""
    total = 0
    for ch in text:
        emoji = (unicodedata.category(ch) == "So" or ord(ch) >= 0x10000
                 or ch in "\u200d\u20e3" or "\ufe00" <= ch <= "\ufe0f")
        total += len(ch.encode("utf-8", "surrogatepass")) if emoji else 1
    return total


def mentioned(text: str) -> list[str]:
    """The usernames Threads would link in `text`, lower-cased, in order, each once."""
    names: list[str] = []
    for match in _MENTION.finditer(_URL.sub(" ", text)):
        name = match.group(1).rstrip(".").lower()
        if name and ".." not in name and name not in names:
            names.append(name)
    return names


class ThreadsEmulator(Emulator):
    """The Threads Graph API as far as tactful uses it. Seed users and posts, then point an
    adapter's base_url at `base_url` and give it `token` as its access_token."""

    name = "threads"

    def __init__(self, persona: str = "persona", *,
                 token: str = "threads-test-token",  # noqa: S107 — a fake, for the emulator
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self.token = token
        self._clock = clock
        self._state = threading.RLock()
        self._users: dict[str, _User] = {}  # by handle
        self._posts: dict[str, _Post] = {}  # by media id
        self._by_code: dict[str, _Post] = {}
        self._containers: dict[str, _Container] = {}
        self._last_at = 0
        self._serial = 0
        self.persona = persona.lstrip("@").lower()
        self._me = self._users_get(self.persona)

    # ---- seeding and inspection (the API every platform's emulator offers) ------------------

    def add_user(self, handle: str, *, display_name: str | None = None,
                 is_bot: bool = False) -> str:
        """Make an account (or update a known one); its stable Threads user id."""
        user = self._users_get(handle)
        with self._state:
            user.display_name = display_name if display_name is not None else user.display_name
            user.is_bot = is_bot or user.is_bot
        return user.id

    def add_post(self, handle: str, text: str, *, reply_to: str | None = None,
                 quote: str | None = None) -> str:
        """A post by `handle` (the account is made if new); its public URL. `reply_to` is a
        post URL or media id, whoever wrote it; the post threads under it like a Threads
        reply (root_post: the thread's first post, replied_to: the post answered). `quote`
        is a post this one quotes (is_quote_post, quoted_post)."""
        author = self._users_get(handle)
        with self._state:
            parent = self._find(reply_to) if reply_to is not None else None
            if reply_to is not None and parent is None:
                raise ValueError(f"threads emulator: no post {reply_to!r} to reply to")
            quoted = self._find(quote) if quote is not None else None
            if quote is not None and quoted is None:
                raise ValueError(f"threads emulator: no post {quote!r} to quote")
            post = self._new_post(author, text, parent, via_api=False)
            post.quoted = quoted
            return self._url(post)

    def delete_post(self, reference: str) -> None:
        """Delete a post: reading it is then the 400 Threads answers for a missing object
        (its replies stay, still naming it as their root_post / replied_to)."""
        with self._state:
            post = self._find(reference)
            if post is None:
                raise KeyError(reference)
            del self._posts[post.id]
            del self._by_code[post.shortcode]

    def make_private(self, handle: str) -> None:
        """A private profile: its posts are read without `username` and `permalink`, which
        Threads gives only for public profiles and the app's own user."""
        with self._state:
            self._users_get(handle).private = True

    def sent(self) -> list[dict[str, Any]]:
        """What the persona published through the API, in order."""
        with self._state:
            return [{
                "id": post.id,
                "url": self._url(post),
                "text": post.text,
                "reply_to": self._url(post.parent) if post.parent is not None else None,
                "reply_to_id": post.parent.id if post.parent is not None else None,
                "root": post.root.id,
                "mentions": mentioned(post.text),
            } for post in self._posts.values() if post.via_api]

    def media_id(self, reference: str) -> str:
        """The media id of a post given by URL (or id): what the real API wants."""
        with self._state:
            post = self._find(reference)
        if post is None:
            raise KeyError(reference)
        return post.id

    @property
    def persona_id(self) -> str:
        return self._me.id

    def start(self) -> ThreadsEmulator:
        super().start()
        return self

    def __enter__(self) -> ThreadsEmulator:
        return self.start()

    # ---- the Emulator hooks -----------------------------------------------------------------

    def is_write(self, request: Request) -> bool:
        return request.method == "POST"

    def answer(self, request: Request) -> Reply:
        try:
            params = dict(request.query)
            if request.method == "POST" and request.body:
                params.update(request.form())
            authorize(request, params, self.token)
            with self._state:
                return self._route(request.method, request.path, params)
        except GraphError as answer:
            return answer.reply

    # ---- routing ------------------------------------------------------------------------------

    def _route(self, method: str, path: str, params: dict[str, str]) -> Reply:
        if not path.startswith(VERSION_PREFIX):
            raise GraphError(400, f"Unknown path components: {path} (this API lives under /v1.0)",
                          2500)
        parts = path[len(VERSION_PREFIX):].strip("/").split("/")
        node, edge = parts[0], "/".join(parts[1:])
        fields = _fields(params)
        if method == "GET" and not edge:
            return Reply(200, self._node(node, fields))
        user = self._user_node(node)
        if user is not None:
            if user is not self._me:
                raise GraphError(400, f"Unsupported request: object {node} is not yours "
                              "(only the app-scoped user's edges can be read)", 100)
            return self._user_edge(method, edge, params, fields)
        if method == "GET" and edge == "replies" and node in self._posts:
            children = list(self._posts[node].children)
            newest_first = params.get("reverse", "true").lower() != "false"
            children.sort(key=lambda p: p.at, reverse=newest_first)
            return Reply(200, self._page(children, params, fields, presorted=True))
        raise GraphError(400, f"Unsupported {method} request on /{node}/{edge}", 100)

    def _user_edge(self, method: str, edge: str, params: dict[str, str],
                   fields: list[str]) -> Reply:
        persona = self._me
        if method == "POST" and edge == "threads":
            return Reply(200, {"id": self._create_container(params)})
        if method == "POST" and edge == "threads_publish":
            return Reply(200, {"id": self._publish(params.get("creation_id", ""))})
        if method == "GET" and edge == "mentions":
            if (integer(params, "since") or MENTIONS_EPOCH) < MENTIONS_EPOCH:
                raise GraphError(400, f"Param since must be at least {MENTIONS_EPOCH}", 100)
            found = [p for p in self._posts.values()
                     if p.author is not persona and persona.handle in mentioned(p.text)]
            return Reply(200, self._page(found, params, fields))
        if method == "GET" and edge in ("threads", "replies"):
            replies = edge == "replies"
            own = [p for p in self._posts.values()
                   if p.author is persona and (p.parent is not None) == replies]
            return Reply(200, self._page(own, params, fields))
        if method == "GET" and edge == "threads_publishing_limit":
            return Reply(200, {"data": [self._usage()]})
        raise GraphError(400, f"Unsupported {method} request on edge {edge!r}", 100)

    def _node(self, node: str, fields: list[str]) -> dict[str, Any]:
        user = self._user_node(node)
        if user is not None:
            if user is not self._me:
                raise GraphError(400, f"Unsupported get request: object {node} is not yours", 100)
            profile = {"id": user.id, "username": user.handle,
                       "name": user.display_name or user.handle}
            return {"id": user.id, **{k: profile[k] for k in fields if k in profile}}
        if node in self._posts:
            return self._media(self._posts[node], fields)
        if node in self._containers:
            container = self._containers[node]
            status = {"status": "PUBLISHED" if container.published else "FINISHED"}
            return {"id": node, **{k: status[k] for k in fields if k in status}}
        raise GraphError(400, f"Unsupported get request. Object with ID '{node}' does not exist, "
                      "cannot be loaded due to missing permissions, or does not support this "
                      "operation", 100)

    # ---- writing ------------------------------------------------------------------------------

    def _create_container(self, params: Mapping[str, str]) -> str:
        if params.get("media_type") != "TEXT":
            raise GraphError(400, "Param media_type must be TEXT (the only type this emulator "
                          "and tactful post)", 100)
        text = params.get("text", "")
        if not text.strip():
            raise GraphError(400, "Param text is required for a TEXT post", 100)
        if counted_length(text) > TEXT_LIMIT:
            raise GraphError(400, f"Param text must be at most {TEXT_LIMIT} characters long", 100)
        parent = None
        if "reply_to_id" in params:
            parent = self._posts.get(params["reply_to_id"])
            if parent is None:
                raise GraphError(400, "Param reply_to_id names no Threads post", 100)
        self._serial += 1
        container = _Container(str(17_000_000_000_000_000 + self._serial), text, parent)
        self._containers[container.id] = container
        return container.id

    def _publish(self, creation_id: str) -> str:
        container = self._containers.get(creation_id)
        if container is None:
            raise GraphError(400, "Param creation_id names no media container of this user", 100)
        if container.published is not None:
            raise GraphError(400, "The media container was already published", 100)
        post = self._new_post(self._me, container.text, container.parent, via_api=True)
        container.published = post
        return post.id

    # ---- reading ------------------------------------------------------------------------------

    def _media(self, post: _Post, fields: list[str]) -> dict[str, Any]:
        full: dict[str, Any] = {
            "media_product_type": "THREADS", "media_type": "TEXT_POST", "text": post.text,
            "username": post.author.handle, "permalink": self._url(post),
            "shortcode": post.shortcode, "timestamp": graph_time(post.at),
            "is_reply": post.parent is not None, "has_replies": bool(post.children),
            "is_quote_post": post.quoted is not None,
        }
        if post.quoted is not None:
            full["quoted_post"] = {"id": post.quoted.id}
        if post.author.private and post.author is not self._me:
            del full["username"], full["permalink"]
        if post.parent is not None:
            full["root_post"] = {"id": post.root.id}
            full["replied_to"] = {"id": post.parent.id}
            full["is_reply_owned_by_me"] = post.author is self._me
        elif post.author is self._me:
            full["owner"] = {"id": self._me.id}  # Threads gives owner only on own top-level posts
        return {"id": post.id, **{k: full[k] for k in fields if k in full}}

    def _page(self, posts: list[_Post], params: Mapping[str, str], fields: list[str], *,
              presorted: bool = False) -> dict[str, Any]:
        since, until = integer(params, "since"), integer(params, "until")
        chosen = [p for p in posts if (since is None or p.at >= since)
                  and (until is None or p.at <= until)]
        if not presorted:
            chosen.sort(key=lambda p: p.at, reverse=True)
        start = integer(params, "after") or 0
        limit = max(1, min(integer(params, "limit") or 25, 100))
        window = chosen[start:start + limit]
        paging: dict[str, Any] = {"cursors": {"before": str(start),
                                              "after": str(start + len(window))}}
        if start + limit < len(chosen):
            paging["next"] = f"emulator://next?after={start + limit}"
        return {"data": [self._media(p, fields) for p in window], "paging": paging}

    def _usage(self) -> dict[str, Any]:
        day_ago = self._last_at - 86_400
        mine = [p for p in self._posts.values() if p.via_api and p.at > day_ago]
        return {"quota_usage": sum(p.parent is None for p in mine),
                "config": {"quota_total": 250, "quota_duration": 86_400},
                "reply_quota_usage": sum(p.parent is not None for p in mine),
                "reply_config": {"quota_total": 1000, "quota_duration": 86_400}}

    # ---- state --------------------------------------------------------------------------------

    def _users_get(self, handle: str) -> _User:
        key = handle.lstrip("@").lower()
        with self._state:
            user = self._users.get(key)
            if user is None:
                user = _User(str(25_000_000_000_000_000 + len(self._users) + 1), key, None, False)
                self._users[key] = user
            return user

    def _user_node(self, node: str) -> _User | None:
        if node == "me":
            return self._me
        return next((u for u in self._users.values() if u.id == node), None)

    def _new_post(self, author: _User, text: str, parent: _Post | None, *,
                  via_api: bool) -> _Post:
        self._serial += 1
        number = 18_000_000_000_000_000 + self._serial
        self._last_at = max(int(self._clock()), self._last_at + 1)
        post = _Post(str(number), _shortcode(number), author, text, self._last_at, parent,
                     via_api)
        self._posts[post.id] = post
        self._by_code[post.shortcode] = post
        if parent is not None:
            parent.children.append(post)
        return post

    def _find(self, reference: str) -> _Post | None:
        ref = reference.strip()
        if ref in self._posts:
            return self._posts[ref]
        path = urlsplit(ref).path.rstrip("/")
        if "/post/" not in path and not path.startswith("/t/"):
            return None
        return self._by_code.get(path.rsplit("/", 1)[-1])

    def _url(self, post: _Post) -> str:
        return f"{PUBLIC}/@{post.author.handle}/post/{post.shortcode}"


def _fields(params: Mapping[str, str]) -> list[str]:
    names = [name.strip() for name in params.get("fields", "").split(",") if name.strip()]
    unknown = [name for name in names if name not in KNOWN_FIELDS]
    if unknown:
        raise GraphError(400, f"Tried accessing nonexisting field ({unknown[0]})", 100)
    return names


def _shortcode(number: int) -> str:
    """An 11-character shortcode like Threads' ("D" and ten base-64 digits); it does not
    encode the media id in a way the real API would accept, just as on Threads."""
    digits = []
    for _ in range(10):
        number, rest = divmod(number, 64)
        digits.append(_SHORTCODE_ALPHABET[rest])
    return "D" + "".join(reversed(digits))
