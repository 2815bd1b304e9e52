"""Bluesky, offline: post references, @mentions and text length, as the platform sees them.

Nothing here imports atproto or httpx: `tactful check`, `card` and every guard of the send
pipeline run on this module alone. `open` imports the session (and with it the SDK) only once
every guard has passed and the app password was read.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import unquote, urlsplit

from tactful.core.errors import BadInput, MissingCredential
from tactful.core.memory.handles import normalize_handle
from tactful.core.send.adapter import AdapterSettings, PostRef

if TYPE_CHECKING:
    from tactful.adapters.bluesky.session import BlueskySession

PLATFORM = "bluesky"
WEB = "https://bsky.app"
POST_COLLECTION = "app.bsky.feed.post"
TEXT_LIMIT = 300  # graphemes (app.bsky.feed.post lexicon: maxGraphemes)
TEXT_MAX_BYTES = 3000  # the same lexicon also caps the UTF-8 size (maxLength)
INVALID_HANDLE = "handle.invalid"  # what the AppView shows when a handle no longer verifies

_FORMS = (f"{WEB}/profile/HANDLE/post/ID or at://DID/{POST_COLLECTION}/ID "
          f"(e.g. {WEB}/profile/alice.bsky.social/post/3kq2vzxjbcs2a)")

# atproto handle syntax: a domain name of 2+ labels whose last label starts with a letter.
_HANDLE = re.compile(
    r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+"
    r"[a-zA-Z](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?")
_HANDLE_MAX = 253
# Only the two DID methods Bluesky accepts; stricter than the DID spec on purpose, so that an id
# is always path-safe (no '%', no port) when memory stores it.
_DID = re.compile(r"did:plc:[a-z2-7]{24}|did:web:" + _HANDLE.pattern)
# A post's record key is a TID (the lexicon says `key: tid`): 13 base32-sortable characters.
_TID = re.compile(r"[2-7a-j][2-7a-z]{12}")

# What the Bluesky app links as a mention: '@' at the start, after whitespace or '(', then
# [a-zA-Z0-9.-]+ up to an ASCII word boundary (so a trailing '.' or ',' is left out).
# The app also requires a known TLD; we accept every syntactically valid handle instead, a
# superset, so that a guard never misses a mention the app would make (see mentions()).
_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_MENTION = re.compile(rf"(?:^|(?<=[{_SPACE}(]))@([a-zA-Z0-9.-]+)\b", re.ASCII)


class Mention(NamedTuple):
    """One @handle in a text: the normalized handle and where '@handle' sits in UTF-8 bytes."""

    handle: str
    byte_start: int  # inclusive
    byte_end: int  # exclusive


def is_handle(text: str) -> bool:
    return len(text) <= _HANDLE_MAX and _HANDLE.fullmatch(text) is not None


def is_did(text: str) -> bool:
    return _DID.fullmatch(text) is not None


def post_url(actor: str, rkey: str) -> str:
    return f"{WEB}/profile/{actor}/post/{rkey}"


def post_uri(actor: str, rkey: str) -> str:
    return f"at://{actor}/{POST_COLLECTION}/{rkey}"


def split_post_uri(uri: str) -> tuple[str, str]:
    """at://ACTOR/app.bsky.feed.post/RKEY -> (actor, rkey); ValueError for anything else."""
    actor, collection, rkey = uri.removeprefix("at://").split("/")
    if not uri.startswith("at://") or collection != POST_COLLECTION:
        raise ValueError(uri)
    return actor, rkey


def mention_spans(text: str) -> list[Mention]:
    """Every @handle in text, in order (repeats kept: each occurrence becomes a facet)."""
    spans: list[Mention] = []
    for match in _MENTION.finditer(text):
        raw = match.group(1)
        if not is_handle(raw):
            continue  # '@bob' or '@1.2' is plain text on Bluesky
        try:
            handle = normalize_handle(raw, PLATFORM)
        except BadInput:
            continue  # cannot name a person file, so memory cannot hold anyone by it
        start = len(text[:match.start()].encode("utf-8"))
        spans.append(Mention(handle, start, start + len(match.group(0).encode("utf-8"))))
    return spans


# ---- graphemes ---------------------------------------------------------------------------------
# Bluesky counts user-perceived characters (Unicode extended grapheme clusters). The standard
# library has no segmenter, so this follows the rules of UAX #29 that matter in posts: combining
# marks, variation selectors, skin tones, emoji tags and ZWJ sequences join the character before;
# regional indicators pair into flags; CR LF and Hangul jamo sequences are one cluster each.

_EXTEND_CATEGORIES = frozenset({"Mn", "Me", "Mc"})
_CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def _extends(code: int, char: str) -> bool:
    return (unicodedata.category(char) in _EXTEND_CATEGORIES
            or code in (0x200C, 0x200D)
            or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF  # variation selectors
            or 0x1F3FB <= code <= 0x1F3FF  # skin tones
            or 0xE0020 <= code <= 0xE007F)  # emoji tag sequences (subdivision flags)


def _control(code: int, char: str) -> bool:
    return unicodedata.category(char) in _CONTROL_CATEGORIES and not _extends(code, char)


def _pictographic(code: int, char: str) -> bool:
    return 0x1F000 <= code <= 0x1FAFF or unicodedata.category(char) == "So"


def _regional(code: int) -> bool:
    return 0x1F1E6 <= code <= 0x1F1FF


def _jamo(code: int) -> str:
    if 0x1100 <= code <= 0x115F or 0xA960 <= code <= 0xA97C:
        return "L"
    if 0x1160 <= code <= 0x11A7 or 0xD7B0 <= code <= 0xD7C6:
        return "V"
    if 0x11A8 <= code <= 0x11FF or 0xD7CB <= code <= 0xD7FB:
        return "T"
    if 0xAC00 <= code <= 0xD7A3:
        return "LV" if (code - 0xAC00) % 28 == 0 else "LVT"
    return ""


_JAMO_JOINS = {"L": {"L", "V", "LV", "LVT"}, "V": {"V", "T"}, "LV": {"V", "T"},
               "T": {"T"}, "LVT": {"T"}}


def _joins(previous: int, code: int, char: str, *, after_zwj: bool, open_flag: bool,
           previous_jamo: str) -> bool:
    """Does `char` continue the cluster that `previous` belongs to?"""
    if previous == 0x0D:
        return code == 0x0A  # CR LF is one cluster; anything else breaks after CR
    if _control(previous, chr(previous)) or _control(code, char):
        return False
    if _extends(code, char):
        return True
    if after_zwj and _pictographic(code, char):
        return True  # an emoji ZWJ sequence (family, profession, rainbow flag)
    if open_flag and _regional(code):
        return True  # the second regional indicator of a flag
    return bool(previous_jamo) and _jamo(code) in _JAMO_JOINS[previous_jamo]


def count_graphemes(text: str) -> int:
    count = 0
    previous = -1
    after_zwj = open_flag = False
    previous_jamo = ""
    for char in text:
        code = ord(char)
        joins = previous >= 0 and _joins(previous, code, char, after_zwj=after_zwj,
                                         open_flag=open_flag, previous_jamo=previous_jamo)
        if not joins:
            count += 1
        # an unpaired regional indicator waits for its partner; a pair is complete
        open_flag = _regional(code) and not (joins and open_flag)
        after_zwj = code == 0x200D
        previous_jamo = _jamo(code)
        previous = code
    return count


# ---- the adapter -------------------------------------------------------------------------------

def _shown(raw: str) -> str:
    return repr(raw if len(raw) <= 80 else raw[:80] + "…")


class BlueskyAdapter:
    """Bluesky through atproto: the login is the account's handle, the secret an app password."""

    platform = PLATFORM
    text_limit = TEXT_LIMIT
    # The app password both reads and posts: there is no separate posting credential.
    read_fields: tuple[str, ...] = ("app_password",)
    post_fields: tuple[str, ...] = ()
    quotas: Mapping[str, int] = {}  # Bluesky limits by points per hour, not posts per day
    direct_kind = "mention"  # a post --to someone is a public post that @mentions them
    # com.atproto.identity.resolveHandle turns any handle into its DID (an unknown handle is
    # a 400 InvalidRequest, which `BlueskySession.resolve` answers as None).
    resolves_handles = True

    def __init__(self, settings: AdapterSettings) -> None:
        self.settings = settings

    def parse_post(self, raw: str) -> PostRef:
        text = raw.strip()
        if not text:
            raise BadInput(f"{PLATFORM}: empty post reference; give {_FORMS}")
        if any(ch.isspace() or unicodedata.category(ch) == "Cc" for ch in text):
            raise BadInput(f"{PLATFORM}: post reference {_shown(raw)} holds whitespace or a "
                           f"control character; give {_FORMS}")
        if text.lower().startswith("at://"):
            actor, rkey = self._parse_at_uri(raw, text)
        else:
            actor, rkey = self._parse_url(raw, text)
        if is_did(actor):
            # The DID names the author offline: the gate checks it before any credential.
            return PostRef(PLATFORM, post_uri(actor, rkey), post_url(actor, rkey), None,
                           author_id=actor)
        if not is_handle(actor):
            raise BadInput(f"{PLATFORM}: {_shown(actor)} in post reference {_shown(raw)} is "
                           f"neither a handle (alice.bsky.social) nor a DID (did:plc:…); "
                           f"give {_FORMS}")
        handle = normalize_handle(actor, PLATFORM)  # handles are case-insensitive: one id each
        return PostRef(PLATFORM, post_uri(handle, rkey), post_url(handle, rkey), handle)

    def _parse_at_uri(self, raw: str, text: str) -> tuple[str, str]:
        parts = text[len("at://"):].split("/")
        if len(parts) != 3 or parts[1] != POST_COLLECTION:
            raise BadInput(f"{PLATFORM}: {_shown(raw)} is not the at:// URI of a post; "
                           f"give {_FORMS}")
        return parts[0], self._rkey(raw, parts[2])

    def _parse_url(self, raw: str, text: str) -> tuple[str, str]:
        with_scheme = text if "://" in text else f"https://{text}"
        try:
            parts = urlsplit(with_scheme)
            host = (parts.hostname or "").lower()
            port = parts.port
        except ValueError:
            host, port = "", None
        if parts.scheme.lower() not in ("http", "https") or host != "bsky.app" or port \
                or parts.username or parts.password:
            raise BadInput(f"{PLATFORM}: {_shown(raw)} is not a Bluesky post link; "
                           f"give {_FORMS}")
        segments = parts.path.split("/")
        if segments and segments[-1] == "":
            segments.pop()  # one trailing slash, as some apps add
        if len(segments) != 5 or segments[0] != "" or segments[1] != "profile" \
                or segments[3] != "post":
            raise BadInput(f"{PLATFORM}: {_shown(raw)} is a Bluesky link but not to a post; "
                           f"give {_FORMS}")
        # Browsers may copy a DID's colons percent-encoded; decode, then validate strictly.
        return unquote(segments[2]), self._rkey(raw, segments[4])

    def _rkey(self, raw: str, rkey: str) -> str:
        if not _TID.fullmatch(rkey):
            raise BadInput(f"{PLATFORM}: post id {_shown(rkey)} in {_shown(raw)} is not a "
                           f"Bluesky post id (13 characters such as 3kq2vzxjbcs2a); "
                           f"give {_FORMS}")
        return rkey

    def mentions(self, text: str) -> list[str]:
        """Handles @mentioned in text, normalized, in order, each once.

        E-mail addresses never match ('@' must start the text or follow whitespace or '(').
        Every syntactically valid handle counts, even one whose top-level domain the app would
        not link, so the guards see a superset of the platform's mentions; when posting, only
        handles that resolve to a DID become mention facets."""
        seen: dict[str, None] = {}
        for span in mention_spans(text):
            seen.setdefault(span.handle, None)
        return list(seen)

    def text_length(self, text: str) -> int:
        """Graphemes, as Bluesky counts them; a text over the 3000-byte cap counts as too long
        whatever its graphemes, so the pipeline's length guard refuses it before sending."""
        graphemes = count_graphemes(text)
        if len(text.encode("utf-8")) > TEXT_MAX_BYTES:
            return max(graphemes, TEXT_LIMIT + 1)
        return graphemes

    def open(self, credentials: Mapping[str, str]) -> BlueskySession:
        account = self.settings.account
        if not (is_handle(account) or is_did(account) or "@" in account):
            # createSession would answer a bare name with "invalid identifier or password"
            raise BadInput(f"{PLATFORM}: platforms.bluesky.account is {_shown(account)}, but "
                           "Bluesky logs in with the persona's full handle (e.g. "
                           "galatea.bsky.social) or DID; set it in the config")
        password = credentials.get("app_password", "")
        if not password:
            raise MissingCredential(
                f"{PLATFORM}: no app password for account {self.settings.account!r}; store one "
                f"with `tactful credentials set {PLATFORM} app_password`")
        from tactful.adapters.bluesky.session import BlueskySession  # imports atproto

        return BlueskySession.connect(self, password)
