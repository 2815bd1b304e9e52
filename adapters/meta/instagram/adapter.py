"""Instagram, offline: comment references, @mentions and what an Instagram post needs.

The Instagram API with Instagram Login (graph.instagram.com) lets the persona's professional
account reply to comments on its own media and publish media; it has no text-only post. So:
- `--reply-to` names a comment: its numeric id (what inbound routines show) or its permalink
  `https://www.instagram.com/p/<shortcode>/c/<comment id>/` (the id is in the URL, so no read
  is needed to find it). A media URL without a comment is refused: a reply needs a comment.
- a new post needs an image (`--image URL`, a public JPEG Meta fetches itself); without one the
  request is refused before anything is read (`check_request`).
- @mentions are Instagram usernames (Threads shares them): `graph.username_mentions`.
Nothing here imports httpx; `InstagramAdapter.open` imports the session.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from urllib.parse import urlsplit

from tactful.adapters.meta import graph
from tactful.core.errors import BadInput
from tactful.core.send.adapter import AdapterSettings, PostRef, Session

PLATFORM = "instagram"
TEXT_LIMIT = 2200  # captions and comments alike
API_ROOT = "https://graph.instagram.com"
API_VERSION = "v23.0"  # added when base_url names no version of its own
PUBLIC_HOST = "www.instagram.com"
POST_HOSTS = frozenset({"instagram.com", "www.instagram.com", "m.instagram.com"})
MEDIA_KINDS = frozenset({"p", "reel", "tv"})

_ID = re.compile(r"[0-9]{1,25}")
_SHORTCODE = re.compile(r"[A-Za-z0-9_-]{5,64}")
_HOW_TO_REFER = ("give a comment's numeric id such as 17890123456789012 or its URL such as "
                 "https://www.instagram.com/p/C8xYzAbCdEf/c/17890123456789012/")


def parse_post(raw: str) -> PostRef:
    """A comment id or comment URL → PostRef(id=<comment id>); BadInput otherwise."""
    text = raw.strip()
    if not text:
        raise BadInput(f"{PLATFORM}: empty comment reference; {_HOW_TO_REFER}")
    if _ID.fullmatch(text):
        return PostRef(PLATFORM, text)
    parsed = _parse_url(text)
    if parsed is None:
        raise BadInput(f"{PLATFORM}: {graph.shown(raw)} is not an Instagram comment "
                       f"reference; {_HOW_TO_REFER}")
    shortcode, comment = parsed
    if comment is None:
        raise BadInput(f"{PLATFORM}: {graph.shown(raw)} names a post, not a comment; the "
                       "Instagram API replies to comments only: "
                       f"{_HOW_TO_REFER}")
    return PostRef(PLATFORM, comment, url=comment_url(shortcode, comment))


def _parse_url(text: str) -> tuple[str, str | None] | None:
    """(media shortcode, comment id or None) of an Instagram post or comment URL."""
    parts = graph.post_url(text, POST_HOSTS)
    if parts is None:
        return None
    segments = parts.path.split("/")[1:]
    if segments and segments[-1] == "":
        segments.pop()
    if len(segments) >= 3 and segments[0] not in MEDIA_KINDS:
        segments = segments[1:]  # /<username>/p/<shortcode>/… as shared from a profile
    if len(segments) not in (2, 4) or segments[0] not in MEDIA_KINDS \
            or not _SHORTCODE.fullmatch(segments[1]):
        return None
    if len(segments) == 2:
        return segments[1], None
    if segments[2] != "c" or not _ID.fullmatch(segments[3]):
        return None
    return segments[1], segments[3]


def comment_url(shortcode: str, comment: str) -> str:
    return f"https://{PUBLIC_HOST}/p/{shortcode}/c/{comment}/"


def media_url(permalink: object) -> tuple[str, str] | None:
    """(canonical media URL, shortcode) of a permalink the API gave, or None."""
    if not isinstance(permalink, str):
        return None
    parsed = _parse_url(permalink.strip())
    if parsed is None:
        return None
    return f"https://{PUBLIC_HOST}/p/{parsed[0]}/", parsed[0]


def mentions(text: str) -> list[str]:
    return graph.username_mentions(text, PLATFORM)


def api_root(base_url: str | None) -> str:
    return graph.api_root(base_url, API_ROOT, API_VERSION)


def check_image(raw: str) -> str:
    """An image Meta can fetch: an http(s) URL without credentials or spaces."""
    url = raw.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if (parts is None or parts.scheme not in ("http", "https") or not parts.hostname
            or parts.username is not None or any(ch.isspace() for ch in url)):
        raise BadInput(f"{PLATFORM}: --image {graph.shown(raw)} is not an http(s) URL; give "
                       "the public URL of a JPEG that Meta can fetch, e.g. "
                       "https://example.com/photo.jpg")
    return url


class InstagramAdapter:
    """Instagram for the send pipeline. The settings' base_url (None: graph.instagram.com) is
    kept for `open`; everything else works without network or credentials."""

    platform = PLATFORM
    text_limit = TEXT_LIMIT
    read_fields: tuple[str, ...] = ("access_token",)
    post_fields: tuple[str, ...] = ()
    # Meta allows 100 API-published posts per account in 24 hours (content_publishing_limit,
    # also asked before each post); comment replies have no published daily quota.
    quotas: Mapping[str, int] = MappingProxyType({"post": 100})
    direct_kind = "mention"  # --to without --reply-to: a post whose caption @mentions them
    resolves_handles = False  # the API turns no username into an id (docs/adapters/instagram.md)
    takes_images = True

    def __init__(self, settings: AdapterSettings, *, timeout: float | None = None,
                 container_checks: int = 10, container_interval: float = 2.0,
                 recent_posts: int = 3, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self.timeout = settings.number("timeout") if timeout is None else timeout
        # An image container takes Meta a few seconds to fetch and process.
        self.container_checks = container_checks
        self.container_interval = container_interval
        self.recent_posts = recent_posts  # how many of the persona's newest media fetch reads
        self.sleep = sleep

    def parse_post(self, raw: str) -> PostRef:
        return parse_post(raw)

    def mentions(self, text: str) -> list[str]:
        return mentions(text)

    def text_length(self, text: str) -> int:
        return len(text)

    def check_request(self, action: str, *, image: str | None) -> None:
        """What Instagram cannot carry, refused offline: a post without an image, an image
        on a comment reply."""
        if action == "reply":
            if image is not None:
                raise BadInput(f"{PLATFORM}: a comment reply carries no image; leave --image "
                               "out")
            return
        if image is None:
            raise BadInput(f"{PLATFORM}: Instagram has no text-only posts; give the image "
                           "with --image URL (the text becomes its caption), or reply to a "
                           "comment with --reply-to")
        check_image(image)

    def open(self, credentials: Mapping[str, str]) -> Session:
        token = graph.token_of(PLATFORM, self.settings.account, credentials)
        from tactful.adapters.meta.instagram.session import InstagramSession  # imports httpx

        return InstagramSession(self, token)
