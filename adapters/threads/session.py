"""Threads, connected: the Graph API over httpx, imported here and nowhere on the offline path.

Every request carries the token in an `Authorization: Bearer` header, never in the URL, so no
log line and no error message can show it; no message text is ever logged either. httpx never
retries on its own, and nothing here retries a write: a failure after the publish request was
handed over says `maybe_sent=True` and leaves the decision to the ledger.

A failed request becomes the one tactful error of core/send/answers.py (docs/sending.md, "One
answer per HTTP answer"); Meta's own facts stay here (`_means`, `_call`): the Graph API answers
most failures HTTP 400 and says what they are in `error.code` (4, 17, 32, 613 and 80000–80099:
rate limits; 102, 190: the token; 10, 200–299: permissions; 1, 2 and `is_transient`: Meta's
side), and answers a missing object and an unreadable one alike (400, code 100).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from tactful.adapters.threads.adapter import (
    PLATFORM,
    TEXT_LIMIT,
    api_root,
    canonical_url,
    decode_cursor,
    encode_cursor,
    mentions,
    shortcode_of,
    text_length,
)
from tactful.core.errors import BadInput, Refused, TactfulError
from tactful.core.memory.handles import normalize_handle
from tactful.core.send.adapter import (
    Author,
    Forbidden,
    Inbound,
    Page,
    Party,
    PostRef,
    Sent,
)
from tactful.core.send.answers import Answer, error_for

if TYPE_CHECKING:
    from tactful.adapters.threads.adapter import ThreadsAdapter

# What a post is read with: enough for its author, its thread root and its public URL.
POST_FIELDS = "id,username,text,permalink,timestamp,shortcode,is_reply,root_post,replied_to"
ROOT_FIELDS = "id,username,permalink"  # what the read of a thread's root asks for
ROOT_AUTHOR = "thread root author"
OWN_FIELDS = "id,timestamp,has_replies"
OWN_WINDOW = 25  # how many of the persona's newest posts (and replies) are looked at for replies
PAGE_MAX = 100  # the most items one Graph list request returns
MENTIONS_EPOCH = 1688540400  # the mentions endpoint refuses an earlier `since` (July 2023)

# Graph API error codes (https://developers.facebook.com/docs/graph-api/guides/error-handling).
RATE_LIMIT_CODES = frozenset({4, 17, 32, 613})
AUTH_CODES = frozenset({102, 190})
TRANSIENT_CODES = frozenset({1, 2})


class ThreadsSession:
    """A connected Threads adapter (the `Session` protocol)."""

    def __init__(self, adapter: ThreadsAdapter, token: str) -> None:
        self._adapter = adapter
        root = api_root(adapter.settings.base_url)
        self._client = httpx.Client(
            base_url=root,
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(adapter.timeout),
            follow_redirects=False,
            # A proxy from the environment must never capture traffic meant for a loopback
            # emulator; the real platform still honours the operator's proxy settings.
            trust_env=not _is_loopback(root),
        )
        self._persona: tuple[str, str] | None = None  # (user id, username), asked once
        self._media_ids: dict[str, str] = {}  # shortcode → media id, learnt from reads
        self._items: dict[str, dict[str, Any]] = {}  # shortcode → the post as last read

    # ---- the Session protocol ---------------------------------------------------------------

    def author(self, post: PostRef) -> Author:
        """One read: GET /{media-id}, or for a URL one page of the persona's mentions; and when
        the post is itself a reply, a second read of its thread's root (GET /{root_post}),
        whose author is a party as "thread root author" (Threads shows the whole thread,
        root first, under a reply, and notifies the root's author). A root that cannot be
        read, or comes without its author's username, refuses: its author cannot be checked."""
        code = shortcode_of(post)
        if code is not None and code not in self._media_ids:
            item = self._find_by_shortcode(post, code)
        else:
            media_id = self._media_ids.get(code, post.id) if code else post.id
            item = self._read(f"/{media_id}", {"fields": POST_FIELDS}, missing=post)
        author = self._author_of(item)
        root = _thread_root(item)
        if item.get("is_reply") is True and not _named_root(item):
            raise Refused(f"{PLATFORM}: post {author.url or item.get('id')} is a reply, but "
                          "Threads did not say which thread it belongs to, so the thread's "
                          "first author cannot be checked; nothing was sent")
        if root is None or root == item.get("id"):
            return author
        return replace(author, parties=(self._root_author(root),))

    def _root_author(self, root: str) -> Party:
        why = (f"the first post of this thread ({root}) cannot be read with this token, so its "
               "author cannot be checked")
        body = self._call("GET", f"/{root}", params={"fields": ROOT_FIELDS}, unreadable=why)
        username = body.get("username")
        if not isinstance(username, str) or not username:
            # Threads gives the username of public profiles and the persona's own only.
            raise Refused(f"{PLATFORM}: {why} (Threads did not say who wrote it: a private "
                          "profile?); nothing was sent")
        return Party(ROOT_AUTHOR, handle=normalize_handle(username, PLATFORM))

    def resolve(self, handle: str) -> str | None:
        """Only the persona's own id: Threads gives no one else's (profile lookups need
        advanced access and return no id). At most one read, GET /me, once per session.
        `ThreadsAdapter.resolves_handles` is False, so the send gate never relies on this
        for anyone else: it checks the other parties by handle."""
        wanted = normalize_handle(handle, PLATFORM)
        user_id, username = self._me()
        return user_id if wanted == username else None

    def send(self, text: str, *, reply_to: PostRef | None, to: str | None,
             mentions: Mapping[str, str | None]) -> Sent:
        """Create a text container, wait until Meta processed it, publish it. Mentions are
        plain `@name` text on Threads, so `mentions` needs no translation."""
        del mentions  # Threads links @names in the text itself
        self._check_text(text, reply_to=reply_to, to=to)
        parent = self._media_id_of(reply_to) if reply_to is not None else None
        user_id, _ = self._me()
        form = {"media_type": "TEXT", "text": text}
        if parent is not None:
            form["reply_to_id"] = parent
        # A container is not a post: whatever happens to it, nothing is visible yet.
        created = self._call("POST", f"/{user_id}/threads", data=form)
        container = _id(created, "POST /threads", maybe_sent=False)
        self._await_container(container)
        published = self._call("POST", f"/{user_id}/threads_publish",
                               data={"creation_id": container}, handed_over=True)
        media_id = _id(published, "POST /threads_publish", maybe_sent=True)
        return Sent(media_id, self._permalink(media_id))

    def fetch_inbound(self, since: str | None, limit: int) -> Page:
        """Posts that @mention the persona, and replies under its newest posts and replies.

        Threads has no single "addressed to me" list, so this reads (bounded, each with the
        timeout): GET /me once per session, the persona's mentions, its newest posts and its
        newest replies (OWN_WINDOW of each), and the direct replies under the `recent_posts`
        newest of those that have any: at most 4 + recent_posts requests. Replies under older
        posts of the persona are not seen; mentions beyond the newest 100 since the cursor
        neither, so a routine should fetch more often than that many arrive.
        With a cursor, the oldest `limit` items after it come back, oldest first, and the new
        cursor points past the last one; without, the newest `limit`.
        """
        floor = decode_cursor(since) if since is not None else None
        wanted = max(1, min(limit, PAGE_MAX))
        user_id, username = self._me()
        items: dict[str, Inbound] = {}
        mention_params = {"fields": POST_FIELDS, "limit": str(PAGE_MAX)}
        if floor is not None:
            mention_params["since"] = str(max(floor[0], MENTIONS_EPOCH))
        sources = [self._list(f"/{user_id}/mentions", mention_params)]
        for parent in self._recent_with_replies(user_id):
            sources.append(self._list(f"/{parent}/replies", {
                "fields": POST_FIELDS, "reverse": "true", "limit": str(PAGE_MAX)}))
        for source in sources:
            for raw in source:
                inbound = self._inbound(raw)
                if inbound is not None and inbound.author.handle != username:
                    items.setdefault(inbound.post.id, inbound)
        return _page(list(items.values()), floor, since, wanted)

    def enable_posting(self, credentials: Mapping[str, str]) -> None:
        """Nothing to add: the token that reads also posts (post_fields is empty)."""

    def close(self) -> None:
        self._client.close()

    # ---- reading ------------------------------------------------------------------------------

    def _me(self) -> tuple[str, str]:
        if self._persona is None:
            body = self._call("GET", "/me", params={"fields": "id,username"})
            user_id, username = body.get("id"), body.get("username")
            if not isinstance(user_id, str) or not isinstance(username, str):
                raise _odd("GET /me answered without the persona's id")
            self._persona = (user_id, normalize_handle(username, PLATFORM))
        return self._persona

    def _read(self, path: str, params: dict[str, str], *, missing: PostRef) -> dict[str, Any]:
        return self._call("GET", path, params=params,
                          missing=f"post {missing.url or missing.id}")

    def _list(self, path: str, params: dict[str, str]) -> list[dict[str, Any]]:
        body = self._call("GET", path, params=params)
        data = body.get("data")
        return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []

    def _recent_with_replies(self, user_id: str) -> list[str]:
        """Up to `recent_posts` of the persona's newest posts and replies that have replies
        under them, chosen among its OWN_WINDOW newest of each (two requests)."""
        own: list[tuple[datetime, str]] = []
        if self._adapter.recent_posts < 1:
            return []
        for edge in ("threads", "replies"):
            for item in self._list(f"/{user_id}/{edge}",
                                   {"fields": OWN_FIELDS, "limit": str(OWN_WINDOW)}):
                at = _timestamp(item.get("timestamp"))
                if item.get("has_replies") is True and isinstance(item.get("id"), str) and at:
                    own.append((at, item["id"]))
        own.sort(reverse=True)
        return [media_id for _, media_id in own[:self._adapter.recent_posts]]

    def _find_by_shortcode(self, post: PostRef, code: str) -> dict[str, Any]:
        """The post a URL names, found among the persona's latest mentions (one request).

        The Graph API has no lookup by URL or shortcode, and the shortcode does not encode the
        media id; the posts an operator answers by URL are nearly always ones that mention
        the persona. `me` stands for the persona, so no GET /me is needed first."""
        for item in self._list("/me/mentions", {"fields": POST_FIELDS,
                                                "limit": str(PAGE_MAX)}):
            self._learn(item)
        if code not in self._media_ids:
            raise BadInput(
                f"{PLATFORM}: {post.url} is not among the latest {PAGE_MAX} posts that mention "
                "the persona, and the Threads API cannot look a post up by its URL; pass the "
                "post's numeric media id instead (inbound routines show it)")
        return self._items[code]

    def _learn(self, item: dict[str, Any]) -> None:
        code, media_id = item.get("shortcode"), item.get("id")
        if not isinstance(code, str):
            url = canonical_url(item.get("permalink"))
            code = url.rsplit("/", 1)[-1] if url else None
        if isinstance(code, str) and isinstance(media_id, str):
            self._media_ids[code] = media_id
            self._items[code] = item

    def _media_id_of(self, post: PostRef) -> str:
        if post.platform != PLATFORM:
            raise BadInput(f"{PLATFORM}: cannot reply to a {post.platform} post on Threads")
        code = shortcode_of(post)
        if code is None:
            return post.id
        if code not in self._media_ids:
            self._find_by_shortcode(post, code)
        return self._media_ids[code]

    def _author_of(self, item: dict[str, Any]) -> Author:
        username = item.get("username")
        if not isinstance(username, str):
            raise _odd("the post was read without its author's username")
        handle = normalize_handle(username, PLATFORM)
        owner = item.get("owner")
        # `owner` comes only with the persona's own top-level posts: Threads gives no one
        # else's user id, so other authors are matched by handle.
        user_id = owner.get("id") if isinstance(owner, dict) else None
        if user_id is None and self._persona is not None and self._persona[1] == handle:
            user_id = self._persona[0]
        self._learn(item)
        return Author(handle=handle, id=user_id if isinstance(user_id, str) else None,
                      thread=_thread_root(item), url=canonical_url(item.get("permalink")))

    def _inbound(self, item: dict[str, Any]) -> Inbound | None:
        """An API media object as Inbound; None for one that cannot be attributed."""
        media_id, text, at = item.get("id"), item.get("text"), _timestamp(item.get("timestamp"))
        if not isinstance(media_id, str) or at is None:
            return None
        try:
            author = self._author_of(item)
        except TactfulError:
            return None
        body = text if isinstance(text, str) else ""
        post = PostRef(PLATFORM, media_id, url=author.url, handle=author.handle)
        return Inbound(post=post, author=author, text=body, at=at, thread=author.thread,
                       mentions=tuple(mentions(body)))

    def _permalink(self, media_id: str) -> str | None:
        """The public URL of a post just published; the publish answer carries only its id.
        Best effort: the post stands whatever this read does."""
        try:
            body = self._call("GET", f"/{media_id}", params={"fields": "permalink,shortcode"})
        except TactfulError:
            return None
        return canonical_url(body.get("permalink"))

    # ---- writing ------------------------------------------------------------------------------

    def _check_text(self, text: str, *, reply_to: PostRef | None, to: str | None) -> None:
        if not text.strip():
            raise BadInput(f"{PLATFORM}: the text is empty; Threads needs text for a text post")
        length = text_length(text)
        if length > TEXT_LIMIT:
            raise BadInput(f"{PLATFORM}: the text is {length} characters as Threads counts them "
                           f"(an emoji counts its UTF-8 bytes); the limit is {TEXT_LIMIT}: "
                           "shorten it")
        if reply_to is None and to is not None:
            handle = normalize_handle(to, PLATFORM)
            if handle not in mentions(text):
                raise BadInput(f"{PLATFORM}: a post --to {handle} must @mention {handle} in its "
                               f"text (Threads has no direct messages); write --text "
                               f"'@{handle} ...'")

    def _await_container(self, container: str) -> None:
        """Ask until Meta finished processing the container (text: at once, as a rule).
        Still in progress after every check: publish anyway; Threads refuses an unready
        container with an error, and that refusal publishes nothing."""
        checks = self._adapter.container_checks
        for attempt in range(checks):
            body = self._call("GET", f"/{container}", params={"fields": "status,error_message"})
            status = str(body.get("status", "")).upper()
            if status == "FINISHED":
                return
            if status in ("ERROR", "EXPIRED"):
                why = _clip(str(body.get("error_message") or status.lower()))
                raise Forbidden(PLATFORM, f"Threads could not process the post ({why})")
            if attempt + 1 < checks:
                self._adapter.sleep(self._adapter.container_interval)

    # ---- one request, every failure mapped ---------------------------------------------

    def _call(self, method: str, path: str, *, params: dict[str, str] | None = None,
              data: dict[str, str] | None = None, handed_over: bool = False,
              missing: str | None = None, unreadable: str | None = None) -> dict[str, Any]:
        """One request; the JSON object it answers, or a tactful error (never an httpx one).

        The facts of a failure are read here and the one mapping decides
        (core/send/answers.py). `handed_over` marks the request that makes a post visible: a
        failure that leaves its outcome unknown (5xx, a timeout after sending) then says
        maybe_sent=True. `missing` and `unreadable` are for reads of one object, which the
        Graph API refuses with HTTP 400, code 100 whether the object does not exist or cannot
        be read with this token: `missing` names the object, so that refusal is "not found"
        (404); `unreadable` is for an object known to exist (a thread's root, which the reply
        names), so that refusal is a refusal to show it (403), with these words."""
        what = f"{method} {path.split('?')[0]}"
        try:
            response = self._client.request(method, path, params=params, data=data)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout,
                httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise error_for(Answer(PLATFORM, None, write=handed_over, failure="connect",
                                   what=what, detail=type(exc).__name__)) from exc
        except httpx.TimeoutException as exc:
            raise error_for(Answer(PLATFORM, None, write=handed_over, failure="timeout",
                                   what=what, waited=self._adapter.timeout)) from exc
        except httpx.HTTPError as exc:
            raise error_for(Answer(PLATFORM, None, write=handed_over, failure="broken",
                                   what=what, detail=type(exc).__name__)) from exc
        body = _json(response)
        if response.status_code >= 400 or (isinstance(body, dict) and "error" in body):
            raise error_for(_answer(response, body, what, handed_over=handed_over,
                                    missing=missing, unreadable=unreadable))
        if not isinstance(body, dict):
            raise _odd(f"{what}: the answer was not a JSON object", write=handed_over)
        return body


# ---- answers --------------------------------------------------------------------------------

def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _error(body: Any) -> dict[str, Any]:
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


def _code(error: Mapping[str, Any]) -> int | None:
    code = error.get("code")
    if isinstance(code, bool):
        return None
    if isinstance(code, int):
        return code
    if isinstance(code, str) and code.isdigit():
        return int(code)
    return None


def _means(status: int, error: Mapping[str, Any]) -> int | None:
    """The status a Graph API error code stands for: Meta answers most failures HTTP 400 and
    says what they are in `error.code` (https://developers.facebook.com/docs/graph-api/guides/
    error-handling). An error object in a 2xx answer is a refusal (400)."""
    code = _code(error) or 0
    if code in RATE_LIMIT_CODES or 80000 <= code < 80100:
        return 429
    if code in AUTH_CODES:
        return 401
    if code == 10 or 200 <= code <= 299:
        return 403
    if code in TRANSIENT_CODES or error.get("is_transient") is True:
        return 503
    return 400 if status < 400 else None


def _answer(response: httpx.Response, body: Any, what: str, *, handed_over: bool,
            missing: str | None, unreadable: str | None) -> Answer:
    error = _error(body)
    status = response.status_code
    means = _means(status, error)
    hint = ""
    if (means or status) in (400, 404) and _code(error) in (None, 100):
        if unreadable is not None:
            means, hint = 403, unreadable
        elif missing is not None:
            means = 404
            hint = ("Threads says the same of a post this token may not read; check the "
                    "reference")
    message = error.get("message")
    return Answer(PLATFORM, status, write=handed_over, headers=dict(response.headers),
                  detail=message if isinstance(message, str) else "", code=_code(error),
                  means=means, what=what, missing=missing, hint=hint)


def _odd(detail: str, *, write: bool = False) -> TactfulError:
    """An answer that came but cannot be used: the one mapping's "unreadable"."""
    return error_for(Answer(PLATFORM, None, write=write, failure="unreadable", detail=detail))


def _id(body: Mapping[str, Any], what: str, *, maybe_sent: bool) -> str:
    value = body.get("id")
    if isinstance(value, str) and value:
        return value
    raise _odd(f"{what} answered without an id", write=maybe_sent)


def _thread_root(item: Mapping[str, Any]) -> str | None:
    """The thread's top-level post: `root_post` of a reply, else the post itself."""
    root = item.get("root_post")
    if isinstance(root, dict):
        root = root.get("id")
    if isinstance(root, str) and root:
        return root
    media_id = item.get("id")
    return media_id if isinstance(media_id, str) else None


def _named_root(item: Mapping[str, Any]) -> bool:
    """Does the answer name the thread's top-level post (`root_post`)?"""
    root = item.get("root_post")
    if isinstance(root, dict):
        root = root.get("id")
    return isinstance(root, str) and bool(root)


def _timestamp(raw: object) -> datetime | None:
    """Graph timestamps look like 2026-10-29T13:05:00+0000."""
    if not isinstance(raw, str):
        return None
    try:
        at = datetime.strptime(raw, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None
    return at.astimezone(UTC)


def _page(found: list[Inbound], floor: tuple[int, frozenset[str]] | None,
          since: str | None, wanted: int) -> Page:
    found.sort(key=lambda item: (item.at, item.post.id))
    if floor is None:
        chosen = found[-wanted:]
    else:
        at, seen = floor
        chosen = [item for item in found if _after(item, at, seen)][:wanted]
    if not chosen:
        return Page((), since)
    last = int(chosen[-1].at.timestamp())
    ids = [item.post.id for item in chosen if int(item.at.timestamp()) == last]
    if floor is not None and floor[0] == last:
        ids.extend(floor[1])  # still the same second: remember what was delivered before
    return Page(tuple(chosen), encode_cursor(last, ids))


def _after(item: Inbound, at: int, seen: frozenset[str]) -> bool:
    second = int(item.at.timestamp())
    return second > at or (second == at and item.post.id not in seen)


def _clip(text: object, size: int = 200) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= size else flat[:size] + "…"


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
