"""Instagram, connected: the Instagram API with Instagram Login over httpx (Graph family base).

What is Instagram's own:
- a comment's author is read with one request (`GET /{comment-id}`: `from{id,username}`); a
  reply inside a comment thread goes under the thread's top-level comment (Instagram takes
  replies to top-level comments only), whose author is read too and checked as a party;
- a reply is `POST /{comment-id}/replies` (one request: it is visible at once);
- a post is an image container (`POST /{user-id}/media`), processed by Meta, then
  `POST /{user-id}/media_publish`, after `content_publishing_limit` says the account may post;
- inbound: the comments under the persona's newest media. Mentions of the persona elsewhere
  reach an app only through webhooks, which tactful does not run (docs/adapters/instagram.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tactful.adapters.meta.graph import decode_cursor, timestamp
from tactful.adapters.meta.graph_session import PAGE_MAX, GraphSession, page_of
from tactful.adapters.meta.instagram.adapter import (
    PLATFORM,
    TEXT_LIMIT,
    api_root,
    check_image,
    comment_url,
    media_url,
    mentions,
)
from tactful.core.errors import BadInput, Refused, TactfulError
from tactful.core.memory.handles import normalize_handle
from tactful.core.send.adapter import (
    Author,
    Inbound,
    Page,
    Party,
    PostRef,
    RateLimited,
    Sent,
)

if TYPE_CHECKING:
    from tactful.adapters.meta.instagram.adapter import InstagramAdapter

COMMENT_FIELDS = "id,text,timestamp,from,username,parent_id,media"
MEDIA_FIELDS = "id,permalink,timestamp,comments_count"
OWN_WINDOW = 25  # how many of the persona's newest media are looked at for comments
THREAD_AUTHOR = "thread author"


class InstagramSession(GraphSession):
    """A connected Instagram adapter (the `Session` protocol)."""

    platform = PLATFORM
    product = "Instagram"

    def __init__(self, adapter: InstagramAdapter, token: str) -> None:
        super().__init__(api_root(adapter.settings.base_url), token, adapter.timeout)
        self._adapter = adapter
        self._persona: tuple[str, str] | None = None  # (user id, username), asked once
        self._comments: dict[str, dict[str, Any]] = {}  # comment id → as last read
        self._shortcodes: dict[str, str] = {}  # media id → shortcode, learnt from reads

    # ---- the Session protocol ---------------------------------------------------------------

    def author(self, post: PostRef) -> Author:
        """One read of the comment; a comment inside a thread also reads the thread's
        top-level comment, whose author the reply reaches (a party, "thread author")."""
        item = self._comment(post.id, missing=f"comment {post.url or post.id}")
        author = self._author_of(item)
        parent = item.get("parent_id")
        if not isinstance(parent, str) or not parent:
            return author
        why = (f"the comment that starts this thread ({parent}) cannot be read with this token, "
               "so its author cannot be checked")
        top = self._comment(parent, unreadable=why)
        try:
            thread_author = self._author_of(top)
        except TactfulError as exc:
            raise Refused(f"{PLATFORM}: {why}; nothing was sent") from exc
        party = Party(THREAD_AUTHOR, handle=thread_author.handle, id=thread_author.id)
        return Author(handle=author.handle, id=author.id, thread=parent, url=author.url,
                      parties=(party,))

    def resolve(self, handle: str) -> str | None:
        """Only the persona's own id (GET /me once): Instagram turns no other username into
        an id for this API, so the gate checks everyone else by username."""
        user_id, username = self._me()
        return user_id if normalize_handle(handle, PLATFORM) == username else None

    def send(self, text: str, *, reply_to: PostRef | None, to: str | None,
             mentions: Mapping[str, str | None], image: str | None = None) -> Sent:
        """A comment reply (one request), or an image post (container, wait, publish)."""
        del mentions  # Instagram links @names in the text itself
        self._check_text(text, reply_to=reply_to, to=to)
        if reply_to is not None:
            if reply_to.platform != PLATFORM:
                raise BadInput(f"{PLATFORM}: cannot reply to a {reply_to.platform} post on "
                               "Instagram")
            known = self._comments.get(reply_to.id, {})
            parent = known.get("parent_id")
            target = parent if isinstance(parent, str) and parent else reply_to.id
            body = self._call("POST", f"/{target}/replies", data={"message": text},
                              handed_over=True)
            reply_id = self._id(body, "POST /replies", maybe_sent=True)
            return Sent(reply_id, self._reply_url(known, reply_id))
        if image is None:
            raise BadInput(f"{PLATFORM}: Instagram has no text-only posts; give the image "
                           "with --image URL")
        return self._publish(text, check_image(image))

    def fetch_inbound(self, since: str | None, limit: int) -> Page:
        """Comments under the persona's newest media: GET /me once per session, its newest
        media (one request), and the comments of the `recent_posts` newest that have any
        (one request each): at most 2 + recent_posts requests. Comments under older media
        are not seen; neither are mentions of the persona elsewhere (webhooks only)."""
        floor = decode_cursor(PLATFORM, since) if since is not None else None
        wanted = max(1, min(limit, PAGE_MAX))
        user_id, username = self._me()
        items: dict[str, Inbound] = {}
        for media_id in self._recent_with_comments(user_id):
            for raw in self._list(f"/{media_id}/comments", {
                    "fields": COMMENT_FIELDS, "limit": str(PAGE_MAX)}):
                inbound = self._inbound(raw)
                if inbound is not None and inbound.author.handle != username:
                    items.setdefault(inbound.post.id, inbound)
        return page_of(list(items.values()), floor, since, wanted)

    def enable_posting(self, credentials: Mapping[str, str]) -> None:
        """Nothing to add: the token that reads also posts (post_fields is empty)."""

    # ---- reading ------------------------------------------------------------------------------

    def _me(self) -> tuple[str, str]:
        if self._persona is None:
            body = self._call("GET", "/me", params={"fields": "user_id,username"})
            user_id = body.get("user_id") or body.get("id")
            username = body.get("username")
            if not isinstance(user_id, str) or not isinstance(username, str):
                raise self._odd("GET /me answered without the persona's id")
            self._persona = (user_id, normalize_handle(username, PLATFORM))
        return self._persona

    def _comment(self, comment_id: str, *, missing: str | None = None,
                 unreadable: str | None = None) -> dict[str, Any]:
        item = self._call("GET", f"/{comment_id}", params={"fields": COMMENT_FIELDS},
                          missing=missing, unreadable=unreadable)
        self._comments[comment_id] = item
        return item

    def _recent_with_comments(self, user_id: str) -> list[str]:
        if self._adapter.recent_posts < 1:
            return []
        own: list[tuple[datetime, str]] = []
        for item in self._list(f"/{user_id}/media", {"fields": MEDIA_FIELDS,
                                                     "limit": str(OWN_WINDOW)}):
            at, media_id = timestamp(item.get("timestamp")), item.get("id")
            count = item.get("comments_count")
            if isinstance(media_id, str) and at is not None and isinstance(count, int) \
                    and count > 0:
                own.append((at, media_id))
                found = media_url(item.get("permalink"))
                if found is not None:
                    self._shortcodes[media_id] = found[1]
        own.sort(reverse=True)
        return [media_id for _, media_id in own[:self._adapter.recent_posts]]

    def _author_of(self, item: Mapping[str, Any]) -> Author:
        who = item.get("from")
        username = who.get("username") if isinstance(who, dict) else None
        username = username or item.get("username")
        if not isinstance(username, str) or not username:
            raise self._odd("the comment was read without its author's username")
        user_id = who.get("id") if isinstance(who, dict) else None
        comment_id = str(item.get("id", ""))
        return Author(handle=normalize_handle(username, PLATFORM),
                      id=user_id if isinstance(user_id, str) else None,
                      thread=self._thread_of(item), url=self._reply_url(item, comment_id))

    def _thread_of(self, item: Mapping[str, Any]) -> str | None:
        parent = item.get("parent_id")
        if isinstance(parent, str) and parent:
            return parent
        comment_id = item.get("id")
        return comment_id if isinstance(comment_id, str) else None

    def _reply_url(self, item: Mapping[str, Any], comment_id: str) -> str | None:
        media = item.get("media")
        media_id = media.get("id") if isinstance(media, dict) else None
        code = self._shortcodes.get(media_id) if isinstance(media_id, str) else None
        return comment_url(code, comment_id) if code and comment_id else None

    def _inbound(self, item: dict[str, Any]) -> Inbound | None:
        comment_id, text = item.get("id"), item.get("text")
        at = timestamp(item.get("timestamp"))
        if not isinstance(comment_id, str) or at is None:
            return None
        try:
            author = self._author_of(item)
        except TactfulError:
            return None
        self._comments[comment_id] = item
        body = text if isinstance(text, str) else ""
        post = PostRef(PLATFORM, comment_id, url=author.url, handle=author.handle)
        return Inbound(post=post, author=author, text=body, at=at, thread=author.thread,
                       mentions=tuple(mentions(body)))

    # ---- writing ------------------------------------------------------------------------------

    def _check_text(self, text: str, *, reply_to: PostRef | None, to: str | None) -> None:
        if not text.strip():
            raise BadInput(f"{PLATFORM}: the text is empty; give a caption or a comment")
        if len(text) > TEXT_LIMIT:
            raise BadInput(f"{PLATFORM}: the text is {len(text)} characters; the limit is "
                           f"{TEXT_LIMIT}: shorten it")
        if reply_to is None and to is not None:
            handle = normalize_handle(to, PLATFORM)
            if handle not in mentions(text):
                raise BadInput(f"{PLATFORM}: a post --to {handle} must @mention {handle} in "
                               f"its caption; write --text '@{handle} ...'")

    def _publish(self, caption: str, image: str) -> Sent:
        user_id, _ = self._me()
        self._within_publishing_limit(user_id)
        # A container is not a post: whatever happens to it, nothing is visible yet.
        created = self._call("POST", f"/{user_id}/media",
                             data={"image_url": image, "caption": caption})
        container = self._id(created, "POST /media", maybe_sent=False)
        adapter = self._adapter
        self._await_container(container, checks=adapter.container_checks,
                              interval=adapter.container_interval, sleep=adapter.sleep,
                              field="status_code")
        published = self._call("POST", f"/{user_id}/media_publish",
                               data={"creation_id": container}, handed_over=True)
        media_id = self._id(published, "POST /media_publish", maybe_sent=True)
        return Sent(media_id, self._permalink(media_id))

    def _within_publishing_limit(self, user_id: str) -> None:
        body = self._call("GET", f"/{user_id}/content_publishing_limit",
                          params={"fields": "quota_usage,config"})
        data = body.get("data")
        usage = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
        used, config = usage.get("quota_usage"), usage.get("config")
        total = config.get("quota_total") if isinstance(config, dict) else None
        if isinstance(used, int) and isinstance(total, int) and used >= total:
            raise RateLimited(PLATFORM, None, f"content_publishing_limit: {used} of {total} "
                              "posts in the last 24 hours")

    def _permalink(self, media_id: str) -> str | None:
        """The public URL of a post just published. Best effort: the post stands whatever
        this read does."""
        try:
            body = self._call("GET", f"/{media_id}", params={"fields": "permalink"})
        except TactfulError:
            return None
        found = media_url(body.get("permalink"))
        return found[0] if found else None
