"""The X adapter, offline: post references, @mentions and text length the way X sees them.

Nothing here imports tweepy or touches the network, so the guards (and `tactful check`/`card`)
run before any SDK is loaded; `open` imports the session module, which imports tweepy.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from tactful.core.errors import BadInput, MissingCredential
from tactful.core.memory.handles import normalize_handle
from tactful.core.send.adapter import AdapterSettings, PostRef

if TYPE_CHECKING:
    from tactful.core.send.adapter import Session

PLATFORM = "x"
TEXT_LIMIT = 280

# ---- post references ------------------------------------------------------------------------

_HOSTS = frozenset({"x.com", "www.x.com", "mobile.x.com",
                    "twitter.com", "www.twitter.com", "mobile.twitter.com"})
_OTHER_PLATFORMS = {"bsky.app": "Bluesky", "threads.net": "Threads", "threads.com": "Threads",
                    "t.me": "Telegram", "telegram.me": "Telegram"}
# X post ids are positive 64-bit integers (at most 19 digits), never with a leading zero.
_POST_ID = r"[1-9][0-9]{0,18}"
_URL = re.compile(r"(?:https?://)?(?P<host>[A-Za-z0-9.-]+)(?P<path>/[^?#]*)"
                  r"(?:\?(?P<query>[^#]*))?(?:#(?P<fragment>.*))?", re.ASCII)
# /<handle>/status/<id>, or the handle-less /i/web/status/<id> and /i/status/<id>; a photo or
# video suffix is what the share menu appends. Anything else (.., %2e, extra segments) refuses.
_PATH = re.compile(rf"/(?:i/web|i|(?P<handle>[A-Za-z0-9_]{{1,15}}))/status(?:es)?/"
                   rf"(?P<id>{_POST_ID})(?:/(?:photo|video)/[1-4])?/?", re.ASCII)
# Share links carry tracking queries (?s=20&t=...); they are dropped, but only plain ones pass.
_SAFE_QUERY = re.compile(r"[A-Za-z0-9_.~%&=+-]*", re.ASCII)
_BARE_ID = re.compile(_POST_ID, re.ASCII)
_RESERVED_PATHS = frozenset({"i", "home", "search", "settings", "explore", "intent"})


def post_url(post_id: str, handle: str | None = None) -> str:
    """The public URL of a post. Without the handle, X's /i/web/ form redirects to the post."""
    if handle:
        return f"https://x.com/{handle}/status/{post_id}"
    return f"https://x.com/i/web/status/{post_id}"


def _shown(raw: str) -> str:
    return repr(raw if len(raw) <= 80 else raw[:80] + "…")


def parse_post(raw: str) -> PostRef:
    text = raw.strip()
    how = ("give https://x.com/<handle>/status/<id> (twitter.com and mobile links work too) "
           "or the post's numeric id")
    if not text:
        raise BadInput(f"x: empty post reference; {how}")
    if _BARE_ID.fullmatch(text):
        return PostRef(platform=PLATFORM, id=text, url=post_url(text))
    match = _URL.fullmatch(text)
    host = match.group("host").lower() if match else ""
    other = next((name for domain, name in _OTHER_PLATFORMS.items()
                  if host == domain or host.endswith("." + domain)), None)
    if other is not None:
        raise BadInput(f"x: post reference {_shown(raw)} is a {other} link, not an X post; {how}")
    if match is None or host not in _HOSTS:
        raise BadInput(f"x: post reference {_shown(raw)} is not an X post link; {how}")
    path = _PATH.fullmatch(match.group("path"))
    query, fragment = match.group("query") or "", match.group("fragment") or ""
    if path is None or not _SAFE_QUERY.fullmatch(query) or not _SAFE_QUERY.fullmatch(fragment):
        raise BadInput(f"x: post reference {_shown(raw)} does not name a post "
                       f"(expected /<handle>/status/<id>); {how}")
    name = path.group("handle")
    if name and name.lower() in _RESERVED_PATHS:
        name = None
    # The handle in a URL is only a hint: X redirects any name to the post's real author. The
    # URL keeps the name as written (X shows it that way); the handle is normalized.
    post_id = path.group("id")
    return PostRef(platform=PLATFORM, id=post_id, url=post_url(post_id, name),
                   handle=normalize_handle(name, PLATFORM) if name else None)


# ---- @mentions --------------------------------------------------------------------------------

# X's own rules (twitter-text, which the API's entities follow): an @ (or the full-width ＠)
# starts a mention unless an ASCII word character or one of ! # $ % & * @ comes right before
# it -- which is what skips e-mail addresses -- except after "RT" / "RT:". It is no mention
# when another @, a Latin accented letter or "://" follows the name.
_AT_NAME = re.compile(r"[@\uff20]([A-Za-z0-9_]+)")
_BAD_BEFORE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        "_!#$%&*@\uff20")
_RETWEET_BEFORE = re.compile(r"(?:^|[^A-Za-z0-9_+~.-])[rR][tT]:?\Z")
_BAD_AFTER = re.compile(
    "[@\uff20\xc0-\xd6\xd8-\xf6\xf8-\xff\u0100-\u024f\u0253\u0254\u0256\u0257\u0259\u025b"
    "\u0263\u0268\u026f\u0272\u0289\u028b\u02bb\u0300-\u036f\u1e00-\u1eff]|://")
MAX_USERNAME = 15  # X usernames: 1-15 of A-Z a-z 0-9 _


def _starts_mention(text: str, at: int) -> bool:
    if at == 0 or text[at - 1] not in _BAD_BEFORE:
        return True
    return _RETWEET_BEFORE.search(text, 0, at) is not None


def mentions(text: str) -> list[str]:
    """Every account @mentioned in `text`, normalized, in order, each once.

    One deliberate difference from X: "@name/list" (a list link, not a mention for X) counts as
    naming @name, because the guards would rather check one account too many than one too few.
    A name longer than 15 characters is skipped: no X account can have it.
    """
    found: list[str] = []
    for match in _AT_NAME.finditer(text):
        name = match.group(1)
        if len(name) > MAX_USERNAME or not _starts_mention(text, match.start()):
            continue
        if _BAD_AFTER.match(text, match.end()):
            continue
        handle = normalize_handle(name, PLATFORM)
        if handle not in found:
            found.append(handle)
    return found


# ---- text length ------------------------------------------------------------------------------

# X weighs text (twitter-text config v3): code points in these ranges count 1, every other one
# counts 2 (CJK, emoji), and every link counts 23 whatever its length, limit 280, after NFC.
_LIGHT = ((0x0000, 0x10FF), (0x2000, 0x200D), (0x2010, 0x201F), (0x2032, 0x2037))
LINK_LENGTH = 23
_LINK = re.compile(r"https?://\S+"
                   r"|(?<![\w@.\-/])(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?![\w-])(?:/\S*)?")
_LINK_TAIL = re.compile(r"[.,:;!?'\"()\[\]{}<>]+\Z")
_LINK_SCAN_LIMIT = 4 * TEXT_LIMIT  # beyond this the text is over the limit whatever links hold


def _weight(text: str) -> int:
    return sum(1 if any(lo <= ord(ch) <= hi for lo, hi in _LIGHT) else 2 for ch in text)


def text_length(text: str) -> int:
    """The length X would give `text`, rounded up where we cannot know X's exact answer.

    Conservative by design, so that nothing passes here that X refuses: an emoji sequence
    counts 2 per code point (X: 2 in all), anything that looks like a domain (`node.js`) counts
    as a link, and a link counts its own length when that is more than 23.
    """
    text = unicodedata.normalize("NFC", text)
    if len(text) > _LINK_SCAN_LIMIT:
        return _weight(text)
    total, last = 0, 0
    for link in _LINK.finditer(text):
        total += _weight(text[last:link.start()])
        tail = _LINK_TAIL.search(link.group())
        core = link.group()[:tail.start()] if tail else link.group()
        total += max(LINK_LENGTH, _weight(core)) + (_weight(tail.group()) if tail else 0)
        last = link.end()
    return total + _weight(text[last:])


# ---- the adapter ------------------------------------------------------------------------------

class XAdapter:
    """X through tweepy's API v2 client: app bearer token to read, OAuth 1.0a user keys to post."""

    platform = PLATFORM
    text_limit = TEXT_LIMIT
    # The author lookup reads with the app's bearer token, so a do-not-engage author is found
    # before the keys that can post are even read.
    read_fields: tuple[str, ...] = ("bearer_token",)
    post_fields: tuple[str, ...] = ("consumer_key", "consumer_secret",
                                    "access_token", "access_token_secret")
    # X publishes no per-account allowance for the lower tiers beyond its 429 answers.
    quotas: Mapping[str, int] = MappingProxyType({})
    direct_kind = "mention"
    # Mentions of the persona are read in user context (GET /2/users/me, then its mentions):
    # the batch replier adds the posting keys before it fetches.
    fetch_needs_posting = True
    # GET /2/users/by/username/{name} turns any username into its stable user id.
    resolves_handles = True

    def __init__(self, settings: AdapterSettings) -> None:
        self.settings = settings

    def parse_post(self, raw: str) -> PostRef:
        return parse_post(raw)

    def mentions(self, text: str) -> list[str]:
        return mentions(text)

    def text_length(self, text: str) -> int:
        return text_length(text)

    def open(self, credentials: Mapping[str, str]) -> Session:
        missing = [f for f in self.read_fields if not credentials.get(f)]
        if missing:
            raise MissingCredential(f"x: no credential {missing[0]!r} was given; store it with: "
                                    f"tactful credentials set x {missing[0]}")
        timeout = self.settings.number("timeout")
        from tactful.adapters.x.session import XSession

        return XSession(credentials["bearer_token"], base_url=self.settings.base_url,
                        timeout=timeout)
