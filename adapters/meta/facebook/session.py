"""Facebook, connected: a Page on the Graph API over httpx (the Graph family's session base).

What is Facebook's own:
- a post or comment is read with one request; a comment's read names its author (`from`: id
  and name) and, for a reply inside a comment thread, the thread's top-level comment with its
  author (`parent`), which the answer reaches too ("thread author"). Post and comment ids look
  alike (`<n>_<m>`): one the Page's id starts is a Page post; anything else is read as a
  comment first, and as a post when Facebook says it has no `parent` field (a second read);
- an answer to a comment lands on its post, whose author Facebook notifies: that post is read
  too ("post author"), and a post read for an answer names whom it tags (`message_tags`,
  "tagged in the post"), who are notified of comments on it; a comment answered, and the
  thread's top-level comment, name whom they tag too ("tagged in the comment");
- a comment or reply is `POST /{object-id}/comments`; a reply inside a thread goes to the
  thread's top-level comment, where Facebook shows it; a Page post is `POST /{page-id}/feed`;
- inbound: comments under the Page's newest posts (all of them, replies too:
  `filter=stream`) and posts that tag the Page (`/{page-id}/tagged`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from tactful.adapters.meta.facebook.adapter import (
    PLATFORM,
    TEXT_LIMIT,
    api_root,
    mentions,
    permalink,
)
from tactful.adapters.meta.graph import decode_cursor, timestamp
from tactful.adapters.meta.graph_session import PAGE_MAX, GraphSession, page_of
from tactful.core.errors import BadInput, Refused, TactfulError
from tactful.core.memory.handles import normalize_handle
from tactful.core.send.adapter import Author, Inbound, Page, Party, PostRef, Sent

if TYPE_CHECKING:
    from tactful.adapters.meta.facebook.adapter import FacebookAdapter

POST_FIELDS = "id,from,message,created_time,permalink_url"
COMMENT_FIELDS = POST_FIELDS + ",parent"
TAGGED_FIELDS = POST_FIELDS + ",message_tags"  # a post read for replying: whom it tags
REPLIED_FIELDS = COMMENT_FIELDS + ",message_tags"  # a comment read for replying: the same
OWN_WINDOW = 25  # how many of the Page's newest posts are looked at
THREAD_AUTHOR = "thread author"
POST_AUTHOR = "post author"
TAGGED = "tagged in the post"
COMMENT_TAGGED = "tagged in the comment"


class FacebookSession(GraphSession):
    """A connected Facebook Page (the `Session` protocol)."""

    platform = PLATFORM
    product = "Facebook"

    def __init__(self, adapter: FacebookAdapter, token: str) -> None:
        super().__init__(api_root(adapter.settings.base_url), token, adapter.timeout)
        self._adapter = adapter
        self._page = adapter.settings.account
        self._read: dict[str, dict[str, Any]] = {}  # object id → as last read

    # ---- the Session protocol ---------------------------------------------------------------

    def author(self, post: PostRef) -> Author:
        """The author of a post or comment. A comment's answer lands on its post too, whose
        author Facebook notifies ("post author", read once more), and inside a thread on the
        thread's top-level comment ("thread author")."""
        item, comment = self._object(post)
        author = self._author_of(item, what=f"{post.url or post.id}")
        if not comment:
            tagged = self._tagged(item)
            if not tagged:
                return author
            return Author(handle=author.handle, id=author.id, display_name=author.display_name,
                          thread=author.thread, url=author.url, parties=tuple(tagged))
        parties = self._tagged(item, COMMENT_TAGGED)
        parent = item.get("parent")
        if isinstance(parent, dict):
            try:
                top = self._author_of(parent, what=f"the comment that starts this thread "
                                      f"({parent.get('id')})")
            except TactfulError as exc:
                raise Refused(f"{PLATFORM}: {exc}; the thread's author cannot be checked, so "
                              "nothing was sent") from exc
            parties.append(Party(THREAD_AUTHOR, handle=top.handle, id=top.id))
            parties += self._thread_tags(parent)
        parties += self._post_parties(post.id, item)
        return Author(handle=author.handle, id=author.id, display_name=author.display_name,
                      thread=author.thread, url=author.url, parties=tuple(parties))

    def _thread_tags(self, parent: Mapping[str, Any]) -> list[Party]:
        """Whom the thread's top-level comment tags (one read: a comment's `parent` carries
        only its default fields); they are notified of replies in its thread."""
        parent_id = parent.get("id")
        why = (f"the comment that starts this thread ({parent_id}) cannot be read with this "
               "token, so whom it tags cannot be checked")
        if not isinstance(parent_id, str) or not parent_id:
            raise Refused(f"{PLATFORM}: {why}; nothing was sent")
        top = self._call("GET", f"/{parent_id}", params={"fields": "id,message_tags"},
                         unreadable=why)
        return self._tagged(top, COMMENT_TAGGED)

    def _tagged(self, item: Mapping[str, Any], role: str = "") -> list[Party]:
        """The people a post or comment tags (`message_tags`), whom Facebook notifies of
        comments on it or replies to it; the Page itself aside."""
        found: list[Party] = []
        tags = item.get("message_tags")
        for tag in tags if isinstance(tags, list) else []:
            tag_id = tag.get("id") if isinstance(tag, dict) else None
            if not isinstance(tag_id, str) or not tag_id.isdigit():
                raise Refused(f"{PLATFORM}: a post tags someone Facebook does not name by id, "
                              "so they cannot be checked; nothing was sent")
            handle = normalize_handle(tag_id, PLATFORM)
            if handle != normalize_handle(self._page, PLATFORM):
                found.append(Party(role or TAGGED, handle=handle, id=handle))
        return found

    def _post_parties(self, comment_id: str, item: Mapping[str, Any]) -> list[Party]:
        """The author of the post a comment is on, and whom the post tags. A comment id is
        `<post>_<comment>`; the post's full id is `<owner>_<post>`, the owner being the Page
        for its own posts, or the one its permalink names (a post that tagged the Page). A
        post that cannot be read refuses: its author could be anyone."""
        number = comment_id.split("_")[0]
        owners = [self._page]
        link = item.get("permalink_url")
        if isinstance(link, str):
            owner = _owner_in(link, number)
            if owner is not None and owner not in owners:
                owners.append(owner)
        for owner in owners:
            try:
                found = self._call("GET", f"/{owner}_{number}",
                                   params={"fields": "id,from,message_tags"},
                                   missing=f"post {owner}_{number}")
            except BadInput:
                continue  # not this owner's post
            top = self._author_of(found, what=f"the post {owner}_{number} this comment is on")
            return [Party(POST_AUTHOR, handle=top.handle, id=top.id), *self._tagged(found)]
        raise Refused(f"{PLATFORM}: the post comment {comment_id} is on could not be read, so "
                      "its author (whom an answer notifies) cannot be checked; nothing was "
                      "sent")

    def resolve(self, handle: str) -> str | None:
        """A Facebook handle is the id itself."""
        return normalize_handle(handle, PLATFORM)

    def send(self, text: str, *, reply_to: PostRef | None, to: str | None,
             mentions: Mapping[str, str | None]) -> Sent:
        del mentions, to  # tags are @[id] text; --to alone was refused offline
        self._check_text(text)
        if reply_to is None:
            body = self._call("POST", f"/{self._page}/feed", data={"message": text},
                              handed_over=True)
            post_id = self._id(body, "POST /feed", maybe_sent=True)
            return Sent(post_id, permalink(post_id))
        if reply_to.platform != PLATFORM:
            raise BadInput(f"{PLATFORM}: cannot reply to a {reply_to.platform} post on Facebook")
        parent = self._read.get(reply_to.id, {}).get("parent")
        top = parent.get("id") if isinstance(parent, dict) else None
        target = top if isinstance(top, str) and top else reply_to.id
        body = self._call("POST", f"/{target}/comments", data={"message": text},
                          handed_over=True)
        comment_id = self._id(body, "POST /comments", maybe_sent=True)
        return Sent(comment_id, permalink(comment_id))

    def fetch_inbound(self, since: str | None, limit: int) -> Page:
        """Comments under the Page's `recent_posts` newest posts, and posts that tag the Page:
        1 + recent_posts + 1 requests. Comments under older posts are not seen."""
        floor = decode_cursor(PLATFORM, since) if since is not None else None
        wanted = max(1, min(limit, PAGE_MAX))
        sources: list[list[dict[str, Any]]] = []
        if self._adapter.recent_posts > 0:
            feed = self._list(f"/{self._page}/feed", {"fields": "id,created_time",
                                                      "limit": str(OWN_WINDOW)})
            newest = sorted((timestamp(p.get("created_time")), p["id"]) for p in feed
                            if isinstance(p.get("id"), str) and timestamp(p.get("created_time")))
            for _, post_id in reversed(newest[-self._adapter.recent_posts:]):
                sources.append(self._list(f"/{post_id}/comments", {
                    "fields": COMMENT_FIELDS, "filter": "stream",
                    "order": "reverse_chronological", "limit": str(PAGE_MAX)}))
        sources.append(self._list(f"/{self._page}/tagged", {"fields": POST_FIELDS,
                                                            "limit": str(PAGE_MAX)}))
        items: dict[str, Inbound] = {}
        for source in sources:
            for raw in source:
                inbound = self._inbound(raw)
                if inbound is not None and inbound.author.handle != self._page:
                    items.setdefault(inbound.post.id, inbound)
        return page_of(list(items.values()), floor, since, wanted)

    def enable_posting(self, credentials: Mapping[str, str]) -> None:
        """Nothing to add: the Page token that reads also posts."""

    # ---- reading ------------------------------------------------------------------------------

    def _object(self, post: PostRef) -> tuple[dict[str, Any], bool]:
        """One read of a post or comment, and whether it is a comment. An id the Page's own
        starts is one of its posts; any other is read as a comment, and as a post when
        Facebook answers that the object has no `parent` (a post: a second read)."""
        name = f"post or comment {post.url or post.id}"
        if not post.id.startswith(f"{self._page}_"):
            try:
                item = self._call("GET", f"/{post.id}", params={"fields": REPLIED_FIELDS},
                                  missing=name)
            except BadInput as exc:
                if "nonexisting field (parent)" not in str(exc):
                    raise
            else:
                self._read[post.id] = item
                return item, True
        item = self._call("GET", f"/{post.id}", params={"fields": TAGGED_FIELDS},
                          missing=name)
        self._read[post.id] = item
        return item, False

    def _author_of(self, item: Mapping[str, Any], *, what: str) -> Author:
        who = item.get("from")
        user_id = who.get("id") if isinstance(who, dict) else None
        if not isinstance(user_id, str) or not user_id.isdigit():
            raise Refused(f"{PLATFORM}: Facebook did not say who wrote {what} (it names a "
                          "person only to a Page they interacted with), so they cannot be "
                          "checked; nothing was sent")
        name = who.get("name") if isinstance(who, dict) else None
        parent = item.get("parent")
        top = parent.get("id") if isinstance(parent, dict) else None
        object_id = item.get("id")
        link = item.get("permalink_url")
        return Author(handle=normalize_handle(user_id, PLATFORM), id=str(int(user_id)),
                      display_name=name if isinstance(name, str) else None,
                      thread=top if isinstance(top, str) else
                      object_id if isinstance(object_id, str) else None,
                      url=link if isinstance(link, str) and link.startswith("https://")
                      else None)

    def _inbound(self, item: dict[str, Any]) -> Inbound | None:
        object_id, text = item.get("id"), item.get("message")
        at = timestamp(item.get("created_time"))
        if not isinstance(object_id, str) or at is None:
            return None
        try:
            author = self._author_of(item, what=object_id)
        except TactfulError:
            return None
        self._read[object_id] = item
        body = text if isinstance(text, str) else ""
        post = PostRef(PLATFORM, object_id, url=permalink(object_id), handle=author.handle,
                       author_id=author.id)
        return Inbound(post=post, author=author, text=body, at=at, thread=author.thread,
                       mentions=tuple(mentions(body)))

    # ---- writing ------------------------------------------------------------------------------

    def _check_text(self, text: str) -> None:
        if not text.strip():
            raise BadInput(f"{PLATFORM}: the text is empty; give the message to post")
        if len(text) > TEXT_LIMIT:
            raise BadInput(f"{PLATFORM}: the text is {len(text)} characters; the limit is "
                           f"{TEXT_LIMIT}: shorten it")


def _owner_in(link: str, number: str) -> str | None:
    """The owner id a comment's permalink gives its post: `/<owner>_<post>`,
    `/<owner>/posts/<post>` or `?story_fbid=<post>&id=<owner>`; None when it names none."""
    parts = urlsplit(link)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    segments = [s for s in parts.path.split("/") if s]
    candidates = [query.get("id", "")] if query.get("story_fbid") == number else []
    if len(segments) == 1 and segments[0].endswith(f"_{number}"):
        candidates.append(segments[0].split("_")[0])
    if len(segments) == 3 and segments[1] == "posts" and segments[2] == number:
        candidates.append(segments[0])
    return next((c for c in candidates if c.isdigit()), None)
