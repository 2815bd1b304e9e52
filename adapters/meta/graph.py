"""Meta's Graph API conventions, offline: what Threads, Instagram and Facebook share.

Nothing here imports httpx (the send pipeline's guards use the adapters before any credential
is read); the connected half is `graph_session.py`. Held once here:
- the error codes the Graph API answers with (most failures come as HTTP 400 and say what they
  are in `error.code`: https://developers.facebook.com/docs/graph-api/guides/error-handling);
- the API root: a `base_url` replaces the host, and any version path prefix it carries is kept;
- the one access token each of the three reads and posts with, refused before any request when
  it cannot be sent in a header;
- the inbound cursor every Graph adapter hands the batch replier;
- Instagram usernames and how an @mention of one is found in text (Threads shares them).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from datetime import UTC, datetime
from urllib.parse import SplitResult, urlsplit

from tactful.core.errors import BadInput, MissingCredential
from tactful.core.memory.handles import normalize_handle

# Graph API error codes.
RATE_LIMIT_CODES = frozenset({4, 17, 32, 613})  # app, user, page, custom rate limits
AUTH_CODES = frozenset({102, 190})  # the session or token is invalid or expired
TRANSIENT_CODES = frozenset({1, 2})  # unknown error, temporary service issue
PERMISSION_CODE = 10  # and 200–299: a permission the token lacks
MISSING_CODE = 100  # invalid parameter, also "no such object, or not readable with this token"

_VERSION = re.compile(r"/v[0-9]{1,3}(?:\.[0-9]{1,3})?$")
_CURSOR = re.compile(r"([0-9]{1,12}):((?:[0-9_]{1,60})(?:,[0-9_]{1,60})*)?")


def shown(raw: str) -> str:
    """A reference as it may appear in a one-line message: escaped and cut short."""
    return repr(raw if len(raw) <= 60 else raw[:60] + "…")


def post_url(text: str, hosts: Collection[str]) -> SplitResult | None:
    """The parts of a post or comment URL on one of the platform's `hosts` (the scheme may be
    left out, as when copied from an address bar), or None for anything else: another host, a
    port, user info, a control character or a space."""
    if any(ch.isspace() or unicodedata.category(ch) == "Cc" for ch in text):
        return None
    if "://" not in text:
        text = "https://" + text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    if (parts.scheme not in ("http", "https") or port is not None
            or parts.username is not None or parts.password is not None
            or (parts.hostname or "") not in hosts):
        return None
    return parts


def api_root(base_url: str | None, default_root: str, version: str) -> str:
    """The root requests go to: `<base>/<version>`, the base defaulting to Meta's host.

    `base_url` names a server (an emulator, a proxy) and may carry a version of its own
    (`…/v21.0`): that one is kept, never doubled or replaced."""
    root = (base_url or default_root).rstrip("/")
    if _VERSION.search(root):
        return root
    return f"{root}/{version}"


def token_of(platform: str, account: str, credentials: Mapping[str, str]) -> str:
    """The stored `access_token`, or the error that says how to store one. A token holding
    spaces, control or non-ASCII characters is refused here and never shown: an HTTP library
    would echo it in its own error."""
    token = (credentials.get("access_token") or "").strip()
    if not token:
        raise MissingCredential(
            f"{platform}: no access_token stored for account {account!r}; "
            f"store it with `tactful credentials set {platform} access_token`")
    if not token.isascii() or any(ch.isspace() or not ch.isprintable() for ch in token):
        raise BadInput(
            f"{platform}: the stored access_token for account {account!r} holds spaces, "
            "control or non-ASCII characters; store it again with "
            f"`tactful credentials set {platform} access_token`")
    return token


def timestamp(raw: object) -> datetime | None:
    """Graph timestamps look like 2026-10-29T13:05:00+0000."""
    if not isinstance(raw, str):
        return None
    try:
        at = datetime.strptime(raw, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None
    return at.astimezone(UTC)


# ---- the inbound cursor -----------------------------------------------------------------------

def encode_cursor(at: int, ids: Iterable[str]) -> str:
    """`<unix seconds>:<object ids seen at that second>`: where the next fetch starts."""
    return f"{at}:{','.join(sorted(set(ids)))}"


def decode_cursor(platform: str, raw: str) -> tuple[int, frozenset[str]]:
    match = _CURSOR.fullmatch(raw.strip())
    if match is None:
        raise BadInput(f"{platform}: inbound cursor {shown(raw)} is not one tactful made; "
                       "pass the cursor the last fetch returned, or none to start from the latest")
    ids = match.group(2)
    return int(match.group(1)), frozenset(ids.split(",") if ids else ())


# ---- Instagram usernames, which Threads shares -----------------------------------------------

USERNAME = re.compile(r"[A-Za-z0-9._]{1,30}")
# A mention is '@' and an Instagram username: letters, digits, '_' and '.', at most 30, never
# ending with '.' and never holding '..' (so "@alice." is alice, and the period ends a sentence).
# The at sign may be the full-width one, which X links too: counting it only checks more.
_MENTION = re.compile(r"[@\uff20]([A-Za-z0-9_](?:[A-Za-z0-9_]|\.(?=[A-Za-z0-9_])){0,29})")
# Characters that, just before '@', make it part of a word or an e-mail address, not a mention:
# ASCII word characters and another at sign only. Punctuation does not: ".@bob" (the old way to
# make a reply public), "-@bob", "+@bob" and "/@bob" are linked, as on X. A mention straight
# after CJK text or an accented letter still counts, because a missed mention would skip the
# do-not-engage check, while an extra one only checks more.
_NOT_BEFORE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@\uff20")
_LINK = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)


def username_mentions(text: str, platform: str) -> list[str]:
    """Every @username in `text` as Instagram and Threads link it: normalized, in order, once.

    Skipped: e-mail addresses and words with '@' inside, and '@' in links. A superset of what
    Meta links, on purpose (a missed mention would skip the do-not-engage check, an extra one
    only checks more): a name followed by more name characters or by '@'
    (`@bob.art@mastodon.social`, a name over 30 characters) counts by its first 30 characters,
    and a dotted name by every part before a dot too (`@bob.art` also counts as `@bob`).
    """
    masked = _LINK.sub(lambda m: " " * len(m.group()), text)
    found: list[str] = []
    for match in _MENTION.finditer(masked):
        start = match.start()
        if start > 0 and masked[start - 1] in _NOT_BEFORE:
            continue
        parts = match.group(1).split(".")
        for candidate in [".".join(parts[:n]) for n in range(len(parts), 0, -1)]:
            try:
                handle = normalize_handle(candidate, platform)
            except BadInput:
                continue
            if handle not in found:
                found.append(handle)
    return found


def username_handle(name: str, platform: str) -> str | None:
    """A username from a URL, normalized; None when no real account can be called that."""
    if not USERNAME.fullmatch(name):
        return None
    try:
        return normalize_handle(name, platform)
    except BadInput:  # "..", a leading "." : no real account is called that
        return None
