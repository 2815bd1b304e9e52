"""An Instagram API (Instagram Login) emulator on 127.0.0.1, for tests and `tactful demo`.

It answers, under any version prefix, what tactful's session calls, in Meta's wire format
(`graph_emulator.py`):
  GET  /me                                   the persona (id, user_id, username, name)
  GET  /{user-id}/media                      the persona's media, newest first
  GET  /{user-id}/content_publishing_limit   posts published through the API in 24 hours
  POST /{user-id}/media                      an image container (image_url, caption)
  GET  /{container-id}?fields=status_code    FINISHED (PUBLISHED once published)
  POST /{user-id}/media_publish              publish a container (creation_id) → media id
  GET  /{media-id}, /{media-id}/comments     a media object; its top-level comments
  GET  /{comment-id}                         a comment (from{id,username}, parent_id, media)
  POST /{comment-id}/replies                 a reply (message); on a reply: refused, as
                                             Instagram takes replies to top-level comments only
`me` stands for the persona. Comments of other users are seeded with `add_comment` (or
`add_post`, the demo's word: a comment on the persona's newest media); the persona's own media
with `add_media`. Another user's media and its comments cannot be read, as with this API.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tactful.adapters.meta.graph_emulator import (
    GraphEmulator,
    GraphError,
    chosen,
    fields,
    graph_time,
    missing,
    page,
)

PUBLIC = "https://www.instagram.com"
TEXT_LIMIT = 2200
PUBLISHING_LIMIT = 100
USER_FIELDS = frozenset({"id", "user_id", "username", "name", "account_type",
                         "profile_picture_url", "followers_count", "media_count"})
MEDIA_FIELDS = frozenset({"id", "caption", "media_type", "media_url", "permalink", "timestamp",
                          "username", "owner", "comments_count", "like_count", "shortcode",
                          "media_product_type", "is_comment_enabled"})
COMMENT_FIELDS = frozenset({"id", "text", "timestamp", "from", "username", "parent_id", "media",
                            "like_count", "hidden", "replies", "user"})
CONTAINER_FIELDS = frozenset({"id", "status_code", "status"})
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


@dataclass
class _User:
    id: str
    username: str
    name: str | None


@dataclass
class _Media:
    id: str
    shortcode: str
    owner: _User
    caption: str
    image_url: str
    at: int
    via_api: bool
    comments: list[_Comment] = field(default_factory=list)


@dataclass
class _Comment:
    id: str
    media: _Media
    author: _User
    text: str
    at: int
    parent: _Comment | None
    via_api: bool
    replies: list[_Comment] = field(default_factory=list)


@dataclass
class _Container:
    id: str
    image_url: str
    caption: str
    published: _Media | None = None


class InstagramEmulator(GraphEmulator):
    """Instagram's Graph API as far as tactful uses it. Seed users, media and comments, then
    point an adapter's base_url at `base_url` and give it `token` as its access_token."""

    name = "instagram"

    def __init__(self, persona: str = "persona", *,
                 token: str = "instagram-test-token") -> None:  # noqa: S107 — a fake
        super().__init__(token=token)
        self._users: dict[str, _User] = {}
        self._media: dict[str, _Media] = {}
        self._comments: dict[str, _Comment] = {}
        self._containers: dict[str, _Container] = {}
        self.persona = persona.lstrip("@").lower()
        self._me = self._user(self.persona)

    # ---- seeding and inspection -------------------------------------------------------------

    def add_user(self, handle: str, *, display_name: str | None = None,
                 is_bot: bool = False) -> str:
        """Make an account (Instagram shows no bot flag); its user id."""
        del is_bot
        user = self._user(handle)
        with self._state:
            user.name = display_name if display_name is not None else user.name
        return user.id

    def add_media(self, caption: str = "a photo",
                  image_url: str = "https://example.com/photo.jpg") -> str:
        """A post of the persona's (seeded, not published through the API); its media id."""
        with self._state:
            return self._new_media(caption, image_url, via_api=False).id

    def add_comment(self, handle: str, text: str, *, media: str | None = None,
                    reply_to: str | None = None) -> str:
        """A comment by `handle` on the persona's media `media` (default: its newest, made if
        there is none), or a reply in the thread of comment `reply_to`; its comment id."""
        author = self._user(handle)
        with self._state:
            parent = self._comments.get(reply_to) if reply_to is not None else None
            if reply_to is not None and parent is None:
                raise ValueError(f"instagram emulator: no comment {reply_to!r}")
            if parent is not None:
                parent = parent.parent or parent  # threads are one level deep
                target = parent.media
            elif media is not None:
                target = self._media[media]
            else:
                mine = [m for m in self._media.values() if m.owner is self._me]
                target = max(mine, key=lambda m: m.at) if mine else \
                    self._new_media("a photo", "https://example.com/photo.jpg", via_api=False)
            return self._new_comment(target, author, text, parent, via_api=False).id

    def add_post(self, handle: str, text: str, *, reply_to: str | None = None) -> str:
        """What `tactful demo` seeds on every platform: here a comment on the persona's
        newest media (or a reply in a comment's thread)."""
        return self.add_comment(handle, text, reply_to=reply_to)

    def comment_url(self, comment_id: str) -> str:
        with self._state:
            comment = self._comments[comment_id]
            return f"{PUBLIC}/p/{comment.media.shortcode}/c/{comment.id}/"

    def media_url(self, media_id: str) -> str:
        with self._state:
            return f"{PUBLIC}/p/{self._media[media_id].shortcode}/"

    @property
    def persona_id(self) -> str:
        return self._me.id

    def sent(self) -> list[dict[str, Any]]:
        """What the persona published through the API, in order: replies and media."""
        with self._state:
            found: list[tuple[int, dict[str, Any]]] = []
            for comment in self._comments.values():
                if comment.via_api:
                    found.append((comment.at, {
                        "id": comment.id, "kind": "reply", "text": comment.text,
                        "reply_to": comment.parent.id if comment.parent else None,
                        "media": comment.media.id, "image": None}))
            for media in self._media.values():
                if media.via_api:
                    found.append((media.at, {
                        "id": media.id, "kind": "post", "text": media.caption,
                        "reply_to": None, "media": media.id, "image": media.image_url}))
            return [item for _, item in sorted(found, key=lambda pair: pair[0])]

    def start(self) -> InstagramEmulator:
        super().start()
        return self

    def __enter__(self) -> InstagramEmulator:
        return self.start()

    # ---- routing ------------------------------------------------------------------------------

    def route(self, method: str, node: str, edge: str, params: dict[str, str]) -> Any:
        if node == "me" or node == self._me.id:
            return self._persona_edge(method, edge, params)
        if any(u.id == node for u in self._users.values()):
            raise GraphError(400, f"Unsupported request: object {node} is not the app user's",
                             100, subcode=33)
        if node in self._media:
            media = self._media[node]
            if media.owner is not self._me:
                raise missing(node)
            if method == "GET" and not edge:
                return chosen(self._media_fields(media), fields(params, MEDIA_FIELDS, "Media"),
                              ("id",))
            if method == "GET" and edge == "comments":
                names = fields(params, COMMENT_FIELDS, "Comment")
                top = sorted(media.comments, key=lambda c: c.at, reverse=True)
                return page([chosen(self._comment_fields(c), names, ("id", "text", "timestamp"))
                             for c in top], params)
        elif node in self._comments:
            comment = self._comments[node]
            if method == "GET" and not edge:
                return chosen(self._comment_fields(comment),
                              fields(params, COMMENT_FIELDS, "Comment"),
                              ("id", "text", "timestamp"))
            if method == "POST" and edge == "replies":
                if comment.parent is not None:
                    raise GraphError(400, "(#100) Replies can only be made to top-level "
                                     "comments", 100)
                return {"id": self._reply(comment, params.get("message", "")).id}
            if method == "GET" and edge == "replies":
                names = fields(params, COMMENT_FIELDS, "Comment")
                return page([chosen(self._comment_fields(c), names, ("id", "text"))
                             for c in comment.replies], params)
        elif node in self._containers:
            if method == "GET" and not edge:
                container = self._containers[node]
                names = fields(params, CONTAINER_FIELDS, "ShadowIGMediaBuilder")
                status = "PUBLISHED" if container.published else "FINISHED"
                return chosen({"id": node, "status_code": status, "status": status},
                              names, ("id",))
        else:
            raise missing(node)
        raise GraphError(400, f"Unsupported {method} request on /{node}/{edge}", 100)

    def _persona_edge(self, method: str, edge: str, params: dict[str, str]) -> Any:
        me = self._me
        if method == "GET" and not edge:
            profile = {"id": me.id, "user_id": me.id, "username": me.username,
                       "name": me.name or me.username, "account_type": "BUSINESS"}
            return chosen(profile, fields(params, USER_FIELDS, "User"), ("id",))
        if method == "GET" and edge == "media":
            names = fields(params, MEDIA_FIELDS, "Media")
            mine = sorted((m for m in self._media.values() if m.owner is me),
                          key=lambda m: m.at, reverse=True)
            return page([chosen(self._media_fields(m), names, ("id",)) for m in mine], params)
        if method == "GET" and edge == "content_publishing_limit":
            day_ago = self._last_at - 86_400
            used = sum(m.via_api and m.at > day_ago for m in self._media.values())
            return {"data": [{"quota_usage": used, "config": {
                "quota_total": PUBLISHING_LIMIT, "quota_duration": 86_400}}]}
        if method == "POST" and edge == "media":
            return {"id": self._container(params)}
        if method == "POST" and edge == "media_publish":
            return {"id": self._publish(params.get("creation_id", ""))}
        raise GraphError(400, f"Unsupported {method} request on edge {edge!r}", 100)

    # ---- writing ------------------------------------------------------------------------------

    def _container(self, params: dict[str, str]) -> str:
        image = params.get("image_url", "")
        if not image.startswith(("http://", "https://")):
            raise GraphError(400, "(#100) Param image_url is required: the media needs an "
                             "image (Instagram has no text-only posts)", 100, subcode=2207052)
        caption = params.get("caption", "")
        if len(caption) > TEXT_LIMIT:
            raise GraphError(400, "(#100) The caption is too long", 100, subcode=2207003)
        container = _Container(str(17_900_000_000_000_000 + self._next()), image, caption)
        self._containers[container.id] = container
        return container.id

    def _publish(self, creation_id: str) -> str:
        container = self._containers.get(creation_id)
        if container is None:
            raise GraphError(400, "(#100) Param creation_id names no media container", 100)
        if container.published is not None:
            raise GraphError(400, "The media container was already published", 9007,
                             subcode=2207008)
        media = self._new_media(container.caption, container.image_url, via_api=True)
        container.published = media
        return media.id

    def _reply(self, comment: _Comment, message: str) -> _Comment:
        if not message.strip():
            raise GraphError(400, "(#100) Param message is required", 100)
        if len(message) > TEXT_LIMIT:
            raise GraphError(400, "(#100) The comment is too long", 100)
        return self._new_comment(comment.media, self._me, message, comment, via_api=True)

    # ---- state --------------------------------------------------------------------------------

    def _media_fields(self, media: _Media) -> dict[str, Any]:
        return {"id": media.id, "caption": media.caption, "media_type": "IMAGE",
                "media_product_type": "FEED", "media_url": media.image_url,
                "permalink": f"{PUBLIC}/p/{media.shortcode}/", "shortcode": media.shortcode,
                "timestamp": graph_time(media.at), "username": media.owner.username,
                "owner": {"id": media.owner.id}, "comments_count": len(media.comments),
                "like_count": 0, "is_comment_enabled": True}

    def _comment_fields(self, comment: _Comment) -> dict[str, Any]:
        found = {"id": comment.id, "text": comment.text, "timestamp": graph_time(comment.at),
                 "from": {"id": comment.author.id, "username": comment.author.username},
                 "username": comment.author.username, "user": {"id": comment.author.id},
                 "media": {"id": comment.media.id, "media_product_type": "FEED"},
                 "like_count": 0, "hidden": False}
        if comment.parent is not None:
            found["parent_id"] = comment.parent.id
        return found

    def _user(self, handle: str) -> _User:
        key = handle.lstrip("@").lower()
        with self._state:
            user = self._users.get(key)
            if user is None:
                user = _User(str(17_841_400_000_000_000 + len(self._users) + 1), key, None)
                self._users[key] = user
            return user

    def _new_media(self, caption: str, image_url: str, *, via_api: bool) -> _Media:
        number = 18_100_000_000_000_000 + self._next()
        media = _Media(str(number), _shortcode(number), self._me, caption, image_url,
                       self._tick(), via_api)
        self._media[media.id] = media
        return media

    def _new_comment(self, media: _Media, author: _User, text: str, parent: _Comment | None,
                     *, via_api: bool) -> _Comment:
        comment = _Comment(str(17_890_000_000_000_000 + self._next()), media, author, text,
                           self._tick(), parent, via_api)
        self._comments[comment.id] = comment
        (parent.replies if parent is not None else media.comments).append(comment)
        return comment


def _shortcode(number: int) -> str:
    digits = []
    for _ in range(10):
        number, rest = divmod(number, 64)
        digits.append(_ALPHABET[rest])
    return "C" + "".join(reversed(digits))
