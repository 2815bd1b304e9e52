"""A Facebook Page Graph API emulator on 127.0.0.1, for tests and `tactful demo`.

It answers, under any version prefix, what tactful's session calls, in Meta's wire format
(`graph_emulator.py`), for one Page and a Page access token:
  GET  /me                              the Page (id, name)
  GET  /{page-id}/feed, POST …/feed     the Page's posts, newest first; a new Page post
  GET  /{page-id}/tagged                posts by others that tag the Page
  GET  /{post-id}                       a post (asking it for `parent`: 400, code 100)
  GET  /{comment-id}                    a comment: from{id,name}, parent{id,from,…}
  GET  /{object-id}/comments            a post's comments (filter=stream: replies too)
  POST /{object-id}/comments            a comment on a post, or a reply to a comment (a reply
                                        to a reply lands in its top-level comment's thread)
People are numeric user ids with a display name (`add_user`); `add_post` (the demo's word) is a
comment on the Page's newest post, `add_tagged_post` a post that tags the Page, and
`hide_author` makes someone's comments read without `from`, as when Facebook withholds it.
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

PUBLIC = "https://www.facebook.com"
POST_FIELDS = frozenset({"id", "from", "message", "created_time", "permalink_url",
                         "updated_time", "story", "status_type", "is_published",
                         "message_tags"})
COMMENT_FIELDS = frozenset({"id", "from", "message", "created_time", "permalink_url", "parent",
                            "message_tags",
                            "comment_count", "like_count", "can_reply_privately"})
PAGE_FIELDS = frozenset({"id", "name", "username", "category", "link"})


@dataclass
class _Actor:
    id: str
    name: str
    hidden: bool = False  # read without `from`


@dataclass
class _Post:
    id: str
    author: _Actor
    message: str
    at: int
    tags_page: bool
    via_api: bool
    comments: list[_Comment] = field(default_factory=list)
    tags: list[_Actor] = field(default_factory=list)  # people the post tags


@dataclass
class _Comment:
    id: str
    post: _Post
    author: _Actor
    message: str
    at: int
    parent: _Comment | None
    via_api: bool
    asked_reply_to: str | None = None  # the object the API request named
    replies: list[_Comment] = field(default_factory=list)
    tags: list[_Actor] = field(default_factory=list)  # people the comment tags


class FacebookEmulator(GraphEmulator):
    """One Facebook Page on the Graph API, as far as tactful uses it."""

    name = "facebook"

    def __init__(self, page_id: str = "104000000000001", *, page_name: str = "Galatea",
                 token: str = "facebook-page-token") -> None:  # noqa: S107 — a fake
        super().__init__(token=token)
        self.persona = page_id  # the account tactful is configured with
        self._page = _Actor(page_id, page_name)
        self._actors: dict[str, _Actor] = {page_id: self._page}
        self._posts: dict[str, _Post] = {}
        self._comments: dict[str, _Comment] = {}

    # ---- seeding and inspection -------------------------------------------------------------

    def add_user(self, handle: str, *, display_name: str | None = None,
                 is_bot: bool = False) -> str:
        """A person, by numeric user id (`handle`); Facebook shows no bot flag."""
        del is_bot
        actor = self._actor(handle)
        with self._state:
            if display_name is not None:
                actor.name = display_name
        return actor.id

    def add_page_post(self, message: str = "news from the page") -> str:
        """A post of the Page's (seeded); its id, <page id>_<n>."""
        with self._state:
            return self._new_post(self._page, message, tags_page=False, via_api=False).id

    def add_tagged_post(self, user: str, message: str, *, tagging: tuple[str, ...] = ()) -> str:
        """A post by `user` on their own timeline that tags the Page, and the people
        `tagging` names too; its id."""
        actor = self._actor(user)
        tagged = [self._actor(other) for other in tagging]
        with self._state:
            post = self._new_post(actor, message, tags_page=True, via_api=False)
            post.tags = tagged
            return post.id

    def add_comment(self, user: str, message: str, *, on: str | None = None,
                    tagging: tuple[str, ...] = ()) -> str:
        """A comment by `user` on post `on` (default: the Page's newest, made if none), or a
        reply when `on` is a comment, tagging the people `tagging` names; its id, <post n>_<m>."""
        made = self._add_comment(user, message, on=on)
        tagged = [self._actor(other) for other in tagging]
        with self._state:
            self._comments[made].tags = tagged
        return made

    def _add_comment(self, user: str, message: str, *, on: str | None) -> str:
        actor = self._actor(user)
        with self._state:
            if on is not None and on in self._comments:
                parent = self._comments[on]
                return self._new_comment(parent.post, actor, message, parent.parent or parent,
                                         via_api=False).id
            if on is not None:
                post = self._posts[on]
            else:
                mine = [p for p in self._posts.values() if p.author is self._page]
                post = max(mine, key=lambda p: p.at) if mine else \
                    self._new_post(self._page, "news from the page", tags_page=False,
                                   via_api=False)
            return self._new_comment(post, actor, message, None, via_api=False).id

    def add_post(self, handle: str, text: str, *, reply_to: str | None = None) -> str:
        """What `tactful demo` seeds on every platform: a comment on the Page's newest post
        (or a reply in a comment's thread)."""
        return self.add_comment(handle, text, on=reply_to)

    def hide_author(self, user: str) -> None:
        with self._state:
            self._actor(user).hidden = True

    @property
    def page_id(self) -> str:
        return self._page.id

    def sent(self) -> list[dict[str, Any]]:
        """What the Page published through the API, in order."""
        with self._state:
            found: list[tuple[int, dict[str, Any]]] = []
            for post in self._posts.values():
                if post.via_api:
                    found.append((post.at, {"id": post.id, "kind": "post",
                                            "text": post.message, "reply_to": None,
                                            "post": post.id, "thread": None}))
            for comment in self._comments.values():
                if comment.via_api:
                    found.append((comment.at, {
                        "id": comment.id, "kind": "comment", "text": comment.message,
                        "reply_to": comment.asked_reply_to, "post": comment.post.id,
                        "thread": comment.parent.id if comment.parent else None}))
            return [item for _, item in sorted(found, key=lambda pair: pair[0])]

    def start(self) -> FacebookEmulator:
        super().start()
        return self

    def __enter__(self) -> FacebookEmulator:
        return self.start()

    # ---- routing ------------------------------------------------------------------------------

    def route(self, method: str, node: str, edge: str, params: dict[str, str]) -> Any:
        if node in ("me", self._page.id):
            return self._page_edge(method, edge, params)
        if node in self._posts:
            post = self._posts[node]
            if method == "GET" and not edge:
                return self._post_fields(post, fields(params, POST_FIELDS, "Post"))
            if edge == "comments":
                return self._comments_edge(method, post, None, params)
        elif node in self._comments:
            comment = self._comments[node]
            if method == "GET" and not edge:
                return self._comment_fields(comment, fields(params, COMMENT_FIELDS, "Comment"))
            if edge == "comments":
                return self._comments_edge(method, comment.post, comment, params)
        else:
            raise missing(node)
        raise GraphError(400, f"Unsupported {method} request on /{node}/{edge}", 100)

    def _page_edge(self, method: str, edge: str, params: dict[str, str]) -> Any:
        page_ = self._page
        if method == "GET" and not edge:
            return chosen({"id": page_.id, "name": page_.name, "category": "Community"},
                          fields(params, PAGE_FIELDS, "Page"), ("id", "name"))
        if edge == "feed" and method == "GET":
            names = fields(params, POST_FIELDS, "Post")
            mine = sorted((p for p in self._posts.values() if p.author is page_),
                          key=lambda p: p.at, reverse=True)
            return page([self._post_fields(p, names) for p in mine], params)
        if edge == "feed" and method == "POST":
            message = self._message(params)
            return {"id": self._new_post(page_, message, tags_page=False, via_api=True).id}
        if edge == "tagged" and method == "GET":
            names = fields(params, POST_FIELDS, "Post")
            tagged = sorted((p for p in self._posts.values() if p.tags_page),
                            key=lambda p: p.at, reverse=True)
            return page([self._post_fields(p, names) for p in tagged], params)
        raise GraphError(400, f"Unsupported {method} request on edge {edge!r}", 100)

    def _comments_edge(self, method: str, post: _Post, comment: _Comment | None,
                       params: dict[str, str]) -> Any:
        if method == "POST":
            message = self._message(params)
            asked = comment.id if comment is not None else post.id
            thread = (comment.parent or comment) if comment is not None else None
            made = self._new_comment(post, self._page, message, thread, via_api=True)
            made.asked_reply_to = asked
            return {"id": made.id}
        names = fields(params, COMMENT_FIELDS, "Comment")
        if comment is not None:
            listed = list(comment.replies)
        elif params.get("filter") == "stream":
            listed = [c for c in self._comments.values() if c.post is post]
        else:
            listed = list(post.comments)
        listed.sort(key=lambda c: c.at, reverse=params.get("order") == "reverse_chronological")
        return page([self._comment_fields(c, names) for c in listed], params)

    # ---- nodes --------------------------------------------------------------------------------

    def _who(self, actor: _Actor) -> dict[str, str] | None:
        return None if actor.hidden else {"id": actor.id, "name": actor.name}

    def _post_fields(self, post: _Post, names: list[str]) -> dict[str, Any]:
        full: dict[str, Any] = {"id": post.id, "message": post.message,
                                "created_time": graph_time(post.at),
                                "permalink_url": f"{PUBLIC}/{post.id}"}
        who = self._who(post.author)
        if who is not None:
            full["from"] = who
        tags = [{"id": self._page.id, "name": self._page.name, "type": "page"}] \
            if post.tags_page else []
        tags += [{"id": a.id, "name": a.name, "type": "user"} for a in post.tags if not a.hidden]
        if tags:  # as Graph gives it: the field is absent when the post tags nobody
            full["message_tags"] = [{**tag, "offset": 0, "length": 0} for tag in tags]
        return chosen(full, names, ("id", "message", "created_time"))

    def _comment_fields(self, comment: _Comment, names: list[str]) -> dict[str, Any]:
        full: dict[str, Any] = {
            "id": comment.id, "message": comment.message,
            "created_time": graph_time(comment.at),
            "permalink_url": f"{PUBLIC}/{comment.post.id}?comment_id={comment.id}",
            "comment_count": len(comment.replies), "like_count": 0}
        who = self._who(comment.author)
        if who is not None:
            full["from"] = who
        if comment.tags:
            full["message_tags"] = [{"id": a.id, "name": a.name, "type": "user", "offset": 0,
                                     "length": 0} for a in comment.tags if not a.hidden]
        if comment.parent is not None:  # default fields of the parent comment, as Graph gives
            parent = comment.parent
            full["parent"] = {"id": parent.id, "message": parent.message,
                              "created_time": graph_time(parent.at)}
            parent_who = self._who(parent.author)
            if parent_who is not None:
                full["parent"]["from"] = parent_who
        return chosen(full, names, ("id", "message", "created_time", "from"))

    # ---- state --------------------------------------------------------------------------------

    def _message(self, params: dict[str, str]) -> str:
        message = params.get("message", "")
        if not message.strip():
            raise GraphError(400, "(#100) Param message must be non-empty", 100)
        return message

    def _actor(self, user: str) -> _Actor:
        key = str(user).strip()
        if not key.isdigit():
            raise ValueError(f"facebook emulator: a person is a numeric user id, not {user!r}")
        with self._state:
            actor = self._actors.get(key)
            if actor is None:
                actor = _Actor(key, f"User {key}")
                self._actors[key] = actor
            return actor

    def _new_post(self, author: _Actor, message: str, *, tags_page: bool,
                  via_api: bool) -> _Post:
        number = 500_000_000_000 + self._next()
        post = _Post(f"{author.id}_{number}", author, message, self._tick(), tags_page,
                     via_api)
        self._posts[post.id] = post
        return post

    def _new_comment(self, post: _Post, author: _Actor, message: str,
                     parent: _Comment | None, *, via_api: bool) -> _Comment:
        number = 900_000_000_000 + self._next()
        comment = _Comment(f"{post.id.split('_')[1]}_{number}", post, author, message,
                           self._tick(), parent, via_api)
        self._comments[comment.id] = comment
        (parent.replies if parent is not None else post.comments).append(comment)
        return comment
