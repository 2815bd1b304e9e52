"""Threads, connected: the Graph API over httpx, imported here and nowhere on the offline path.

The request, the token in its header and every failure's mapping are the Graph family's
(`graph_session.py`); what is Threads' own is here: text containers published with
`threads_publish`, a post's thread root, shortcodes that only a read turns into media ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tactful.adapters.meta.graph import timestamp
from tactful.adapters.meta.graph_session import PAGE_MAX, GraphSession, page_of
from tactful.adapters.meta.threads.adapter import (
    PLATFORM,
    TEXT_LIMIT,
    api_root,
    canonical_url,
    decode_cursor,
    mentions,
    shortcode_of,
    text_length,
)
from tactful.core.errors import BadInput, Refused, TactfulError
from tactful.core.memory.handles import normalize_handle
from tactful.core.send.adapter import (
    Author,
    Inbound,
    Page,
    Party,
    PostRef,
    Sent,
)

if TYPE_CHECKING:
    from tactful.adapters.meta.threads.adapter import ThreadsAdapter

# What a post is read with: enough for its author, its thread root and its public URL.
POST_FIELDS = "id,username,text,permalink,timestamp,shortcode,is_reply,root_post,replied_to"
ROOT_FIELDS = "id,username,permalink"  # what the read of a thread's root asks for
ROOT_AUTHOR = "thread root author"
OWN_FIELDS = "id,timestamp,has_replies"
OWN_WINDOW = 25  # how many of the persona's newest posts (and replies) are looked at for replies
MENTIONS_EPOCH = 1688540400  # the mentions endpoint refuses an earlier `since` (July 2023)


class ThreadsSession(GraphSession):
    """A connected Threads adapter (the `Session` protocol)."""

    platform = PLATFORM
    product = "Threads"

    def __init__(self, adapter: ThreadsAdapter, token: str) -> None:
        super().__init__(api_root(adapter.settings.base_url), token, adapter.timeout)
        self._adapter = adapter
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
        container = self._id(created, "POST /threads", maybe_sent=False)
        self._await_container_of(container)
        published = self._call("POST", f"/{user_id}/threads_publish",
                               data={"creation_id": container}, handed_over=True)
        media_id = self._id(published, "POST /threads_publish", maybe_sent=True)
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
        return page_of(list(items.values()), floor, since, wanted)

    def enable_posting(self, credentials: Mapping[str, str]) -> None:
        """Nothing to add: the token that reads also posts (post_fields is empty)."""

    # ---- reading ------------------------------------------------------------------------------

    def _me(self) -> tuple[str, str]:
        if self._persona is None:
            body = self._call("GET", "/me", params={"fields": "id,username"})
            user_id, username = body.get("id"), body.get("username")
            if not isinstance(user_id, str) or not isinstance(username, str):
                raise self._odd("GET /me answered without the persona's id")
            self._persona = (user_id, normalize_handle(username, PLATFORM))
        return self._persona

    def _read(self, path: str, params: dict[str, str], *, missing: PostRef) -> dict[str, Any]:
        return self._call("GET", path, params=params,
                          missing=f"post {missing.url or missing.id}")

    def _recent_with_replies(self, user_id: str) -> list[str]:
        """Up to `recent_posts` of the persona's newest posts and replies that have replies
        under them, chosen among its OWN_WINDOW newest of each (two requests)."""
        own: list[tuple[datetime, str]] = []
        if self._adapter.recent_posts < 1:
            return []
        for edge in ("threads", "replies"):
            for item in self._list(f"/{user_id}/{edge}",
                                   {"fields": OWN_FIELDS, "limit": str(OWN_WINDOW)}):
                at = timestamp(item.get("timestamp"))
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
            raise self._odd("the post was read without its author's username")
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
        media_id, text, at = item.get("id"), item.get("text"), timestamp(item.get("timestamp"))
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

    def _await_container_of(self, container: str) -> None:
        adapter = self._adapter
        self._await_container(container, checks=adapter.container_checks,
                              interval=adapter.container_interval, sleep=adapter.sleep)


# ---- answers --------------------------------------------------------------------------------

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
