"""Threads, offline: post references, @mentions and text length the way Threads sees them.

Nothing here imports httpx: the send pipeline's guards use this module before any credential is
read (and `tactful check`/`card` never load it at all). `ThreadsAdapter.open` imports the session,
and with it httpx, only once a post is really going out.

A Threads post has two names. Its public URL carries a shortcode
(`https://www.threads.com/@alice/post/C8xYz...`); the Graph API only knows its numeric media id,
and offers no way to turn one into the other. So `parse_post` keeps whichever it was given: a
numeric reference becomes `PostRef(id=<media id>)`, a URL becomes `PostRef(id=<shortcode>,
url=<canonical URL>)`, and the session looks the shortcode up with one read (see session.py).
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

from tactful.adapters.meta import graph
from tactful.core.errors import BadInput
from tactful.core.send.adapter import AdapterSettings, PostRef, Session

PLATFORM = "threads"
TEXT_LIMIT = 500
API_ROOT = "https://graph.threads.net"
API_VERSION = "v1.0"  # appended to the base URL explicitly, never guessed from it

# threads.net now redirects to threads.com; both appear in permalinks the API hands out.
POST_HOSTS = frozenset({"threads.com", "www.threads.com", "threads.net", "www.threads.net"})
PUBLIC_HOST = "www.threads.com"

_MEDIA_ID = re.compile(r"[0-9]{1,25}")
_SHORTCODE = re.compile(r"[A-Za-z0-9_-]{5,64}")
_HOW_TO_REFER = ("give a post URL such as https://www.threads.com/@alice/post/C8xYzAbCdEf "
                 "or its numeric media id such as 18031234567890123")


_shown = graph.shown


# ---- post references ------------------------------------------------------------------------

def parse_post(raw: str) -> PostRef:
    """A Threads post URL or numeric media id → PostRef; BadInput when it is neither."""
    text = raw.strip()
    if not text:
        raise BadInput(f"{PLATFORM}: empty post reference; {_HOW_TO_REFER}")
    if _MEDIA_ID.fullmatch(text):
        return PostRef(PLATFORM, text)
    parsed = _parse_url(text)
    if parsed is None:
        raise BadInput(f"{PLATFORM}: {_shown(raw)} is not a Threads post reference; "
                       f"{_HOW_TO_REFER}")
    handle, code = parsed
    return PostRef(PLATFORM, code, url=public_url(code, handle), handle=handle)


def _parse_url(text: str) -> tuple[str | None, str] | None:
    """(normalized handle or None, shortcode) of a Threads post URL, else None."""
    parts = graph.post_url(text, POST_HOSTS)
    if parts is None:
        return None
    segments = parts.path.split("/")[1:]
    if segments and segments[-1] == "":
        segments.pop()  # one trailing slash
    if len(segments) == 2 and segments[0] == "t":  # the short form /t/<shortcode>
        handle, code = None, segments[1]
    elif len(segments) == 3 and segments[0].startswith("@") and segments[1] == "post":
        handle, code = graph.username_handle(segments[0][1:], PLATFORM), segments[2]
        if handle is None:
            return None
    else:
        return None
    if not _SHORTCODE.fullmatch(code):
        return None
    return handle, code


def public_url(shortcode: str, handle: str | None) -> str:
    """The canonical public URL of a post (threads.com; the short /t/ form without a handle)."""
    if handle is None:
        return f"https://{PUBLIC_HOST}/t/{shortcode}"
    return f"https://{PUBLIC_HOST}/@{handle}/post/{shortcode}"


def canonical_url(permalink: object) -> str | None:
    """A permalink from the API in canonical form, or None when it is not a post URL."""
    if not isinstance(permalink, str):
        return None
    parsed = _parse_url(permalink.strip())
    return None if parsed is None else public_url(parsed[1], parsed[0])


def shortcode_of(post: PostRef) -> str | None:
    """The shortcode a URL reference was parsed from; None for a media id."""
    if post.url is None or _MEDIA_ID.fullmatch(post.id):
        return None
    return post.id


# ---- text ----------------------------------------------------------------------------------

def mentions(text: str) -> list[str]:
    """Every @username in `text` as Threads links it: normalized, in order, each once.

    Skipped: e-mail addresses and words with '@' inside, and '@' in links. A superset of what
    Threads links, on purpose (a missed mention would skip the do-not-engage check, an extra
    one only checks more): a name followed by more name characters or by '@'
    (`@bob.art@mastodon.social`, a name over 30 characters) counts by its first 30 characters,
    and a dotted name by every part before a dot too (`@bob.art` also counts as `@bob`).
    """
    return graph.username_mentions(text, PLATFORM)


def text_length(text: str) -> int:
    """Length as Threads counts it: one per character, an emoji by its UTF-8 bytes.

    Meta documents the emoji rule without listing what it calls an emoji, so this counts
    conservatively: every symbol (category So), every character outside the Basic Multilingual
    Plane and the joiners and selectors that build emoji sequences. Counting too much only
    refuses a post earlier; counting too little would let Threads refuse it after the guards.
    """
    return sum(_weight(ch) for ch in text)


def _weight(ch: str) -> int:
    code = ord(ch)
    if (code > 0xFFFF or unicodedata.category(ch) == "So" or code in (0x200D, 0x20E3)
            or 0xFE00 <= code <= 0xFE0F):
        return len(ch.encode("utf-8", "surrogatepass"))
    return 1


# ---- the inbound cursor -----------------------------------------------------------------------

def encode_cursor(at: int, ids: Iterable[str]) -> str:
    """`<unix seconds>:<media ids seen at that second>`: where the next fetch starts."""
    return graph.encode_cursor(at, ids)


def decode_cursor(raw: str) -> tuple[int, frozenset[str]]:
    return graph.decode_cursor(PLATFORM, raw)


def api_root(base_url: str | None) -> str:
    """The API root the session talks to: `<base>/v1.0`, base defaulting to graph.threads.net.

    `platforms.threads.base_url` names a server (the emulator, a proxy), not a version; a base
    that already ends in /v1.0 is taken as it is rather than doubled."""
    return graph.api_root(base_url, API_ROOT, API_VERSION)


# ---- the adapter ---------------------------------------------------------------------------

class ThreadsAdapter:
    """Threads for the send pipeline. The settings' base_url (None: graph.threads.net) is kept
    for `open`; everything else works without network or credentials."""

    platform = PLATFORM
    text_limit = TEXT_LIMIT
    # One long-lived user token reads and posts; the persona's user id is asked of the API
    # (GET /me) when first needed rather than stored, so there is nothing to keep in sync.
    read_fields: tuple[str, ...] = ("access_token",)
    post_fields: tuple[str, ...] = ()
    # Per profile, rolling 24 hours (Meta's publishing limits); the ledger counts against them.
    quotas: Mapping[str, int] = MappingProxyType({"post": 250, "reply": 1000})
    direct_kind = "mention"  # Threads has no direct messages: --to means an @mention post
    # No: the Graph API turns no handle into a user id (profile_lookup needs advanced access
    # and answers no id), so the gate checks every party Threads names by its handle.
    resolves_handles = False

    def __init__(self, settings: AdapterSettings, *, timeout: float | None = None,
                 container_checks: int = 5, container_interval: float = 1.0,
                 recent_posts: int = 3, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self.timeout = settings.number("timeout") if timeout is None else timeout
        # After creating a post container, how often to ask whether Meta finished processing it
        # and how long to wait between asks; a text container is usually ready at once.
        self.container_checks = container_checks
        self.container_interval = container_interval
        # How many of the persona's newest posts and replies fetch_inbound reads replies under.
        self.recent_posts = recent_posts
        self.sleep = sleep

    def parse_post(self, raw: str) -> PostRef:
        return parse_post(raw)

    def mentions(self, text: str) -> list[str]:
        return mentions(text)

    def text_length(self, text: str) -> int:
        return text_length(text)

    def open(self, credentials: Mapping[str, str]) -> Session:
        token = graph.token_of(PLATFORM, self.settings.account, credentials)
        from tactful.adapters.meta.threads.session import ThreadsSession  # imports httpx

        return ThreadsSession(self, token)
