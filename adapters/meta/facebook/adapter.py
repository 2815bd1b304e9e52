"""Facebook, offline: a Page's post and comment references, tags, and what a Page cannot do.

The persona is a Facebook Page (`platforms.facebook.account` is its numeric id), reached with a
Page access token on graph.facebook.com. What shapes this adapter:
- a person is their numeric user id: the API names a commenter by `from.id` and a display name
  only, and names are not unique, so the handle is the id (the platform's `numeric_ids`);
- `--reply-to` names a post (`<page id>_<post id>`) or a comment (`<post id>_<comment id>`),
  or a permalink that carries them (`…/posts/<id>`, `…?story_fbid=<id>&id=<owner>`,
  `…?comment_id=<id>`); both are answered with `POST /{object-id}/comments`;
- a Page cannot @mention a person through the API: the only tag a Page can write is
  `@[<page id>]`, of another Page. `mentions` finds those ids, so the gate checks them; a
  plain "@name" links nobody. `--to` without a reply (a post that mentions someone) is refused
  offline (`check_request`): reply to one of their comments instead.
Nothing here imports httpx; `FacebookAdapter.open` imports the session.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from urllib.parse import parse_qs

from tactful.adapters.meta import graph
from tactful.core.errors import BadInput
from tactful.core.send.adapter import AdapterSettings, PostRef, Session

PLATFORM = "facebook"
TEXT_LIMIT = 8000  # a comment's limit; a Page post may be longer, one limit keeps it simple
API_ROOT = "https://graph.facebook.com"
API_VERSION = "v23.0"  # added when base_url names no version of its own
PUBLIC_HOST = "www.facebook.com"
POST_HOSTS = frozenset({"facebook.com", "www.facebook.com", "m.facebook.com",
                        "web.facebook.com"})

_NUMBER = re.compile(r"[0-9]{1,25}")
_OBJECT = re.compile(r"[0-9]{1,25}_[0-9]{1,25}")
# Any number of leading zeros: Facebook reads the id as a number, so @[000…0666] tags 666.
_TAG = re.compile(r"@\[([0-9]+)(?::[^\]]*)?\]")
_HOW_TO_REFER = ("give a post id such as 104000000000001_123456789 (the page id, '_', the "
                 "post), a comment id such as 123456789_987654321, or their permalink")


def parse_post(raw: str) -> PostRef:
    """A post or comment id or permalink → PostRef(id=<object id>); BadInput otherwise.

    A URL that names only a post number and its page (`/<page>/posts/<n>`) becomes
    `<page>_<n>` when the page is named by its id; a vanity page name cannot be turned into an
    id offline, so that URL is refused with the way to find the id."""
    text = raw.strip()
    if not text:
        raise BadInput(f"{PLATFORM}: empty post reference; {_HOW_TO_REFER}")
    if _OBJECT.fullmatch(text):
        return PostRef(PLATFORM, text, url=permalink(text))
    object_id = _from_url(text)
    if object_id is None:
        raise BadInput(f"{PLATFORM}: {graph.shown(raw)} is not a Facebook post or comment "
                       f"reference; {_HOW_TO_REFER}")
    return PostRef(PLATFORM, object_id, url=permalink(object_id))


def _from_url(text: str) -> str | None:
    parts = graph.post_url(text, POST_HOSTS)
    if parts is None:
        return None
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    segments = [s for s in parts.path.split("/") if s]
    post: str | None = None
    if "story_fbid" in query and _NUMBER.fullmatch(query.get("id", "")):
        post = _joined(query["id"], query["story_fbid"])
    elif len(segments) == 3 and segments[1] == "posts":
        post = _joined(segments[0], segments[2])
    elif len(segments) == 1 and _OBJECT.fullmatch(segments[0]):
        post = segments[0]  # facebook.com/<page>_<post>, as the API's permalink_url reads
    comment = query.get("reply_comment_id") or query.get("comment_id")
    if comment is not None:
        if _OBJECT.fullmatch(comment):
            return comment
        if not _NUMBER.fullmatch(comment) or post is None:
            return None
        return f"{post.split('_')[1]}_{comment}"  # a comment id is <post id>_<comment>
    return post


def _joined(page: str, post: str) -> str | None:
    if not _NUMBER.fullmatch(page):
        return None  # a vanity name (facebook.com/acme/posts/…) names no id offline
    if _OBJECT.fullmatch(post):
        return post
    return f"{page}_{post}" if _NUMBER.fullmatch(post) else None


def permalink(object_id: str) -> str:
    """A public URL Facebook resolves for a post or comment id."""
    return f"https://{PUBLIC_HOST}/{object_id}"


def mentions(text: str) -> list[str]:
    """The ids a Page's text tags (`@[<id>]`, the one tag form the API takes), normalized, in
    order, once each. A plain "@name" is no tag on Facebook: it links and notifies nobody."""
    found: list[str] = []
    for match in _TAG.finditer(text):
        handle = match.group(1).lstrip("0") or "0"  # int() refuses over 4300 digits
        if handle not in found:
            found.append(handle)
    return found


def api_root(base_url: str | None) -> str:
    return graph.api_root(base_url, API_ROOT, API_VERSION)


class FacebookAdapter:
    """A Facebook Page for the send pipeline. Works without network or credentials."""

    platform = PLATFORM
    text_limit = TEXT_LIMIT
    read_fields: tuple[str, ...] = ("access_token",)  # a Page access token
    post_fields: tuple[str, ...] = ()
    quotas: Mapping[str, int] = MappingProxyType({})  # Meta publishes no daily Page quota
    direct_kind = "mention"  # refused by check_request: a Page mentions no person
    resolves_handles = False  # handles are ids already

    def __init__(self, settings: AdapterSettings, *, timeout: float | None = None,
                 recent_posts: int = 3) -> None:
        self.settings = settings
        self.timeout = settings.number("timeout") if timeout is None else timeout
        self.recent_posts = recent_posts  # how many of the Page's newest posts fetch reads

    def parse_post(self, raw: str) -> PostRef:
        return parse_post(raw)

    def mentions(self, text: str) -> list[str]:
        return mentions(text)

    def text_length(self, text: str) -> int:
        return len(text)

    def check_request(self, action: str, *, image: str | None) -> None:
        del image  # refused by the gate: this adapter does not say `takes_images`
        if action == "mention":
            raise BadInput(f"{PLATFORM}: a Page cannot mention a person through the Graph API "
                           "(only other Pages, as @[page id]); answer them with --reply-to "
                           "on one of their comments, or post without --to")

    def open(self, credentials: Mapping[str, str]) -> Session:
        if not self.settings.account.isdigit():
            raise BadInput(f"{PLATFORM}: platforms.facebook.account "
                           f"{graph.shown(self.settings.account)} is not a Page id; set it to "
                           "the Page's numeric id (Page settings → Page transparency)")
        token = graph.token_of(PLATFORM, self.settings.account, credentials)
        from tactful.adapters.meta.facebook.session import FacebookSession  # imports httpx

        return FacebookSession(self, token)
