"""The Telegram adapter, offline: post references, @mentions and text length as Telegram has them.

Nothing here imports aiogram: the guards, `tactful check` and `tactful card` use this module, and
the SDK is imported only by `open` (through session.py), once every guard has passed.

Choices where Telegram differs from the other platforms:
- A post is a message in a chat: "<chat_id>/<message_id>". Private chats have the user's id as
  chat id (positive); groups are negative, supergroups and channels "-100<internal>". A public
  chat's links name it by username, which the Bot API accepts as a chat id: "@username/<id>".
- Mentions follow the rule Telegram's servers apply (tdlib's `match_mentions`/`find_mentions`):
  '@' not preceded by a letter, digit or '_', then 4-32 ASCII letters, digits or '_' (or one of
  the short inline-bot names), not followed by a letter, digit or '_'. Account usernames have at
  least 5 characters, but 4-character collectible usernames exist and Telegram links them too,
  so the guards check them as well.
- Text is counted in code points, as the Bot API limits messages (4096 "characters").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from tactful.core.errors import BadInput
from tactful.core.memory.handles import normalize_handle
from tactful.core.send.adapter import AdapterSettings, PostRef, Unauthorized

from . import platform as facts

if TYPE_CHECKING:
    from tactful.core.send.adapter import Session

PLATFORM = facts.NAME
TEXT_LIMIT = facts.TEXT_LIMIT  # in one message, counted as Telegram does (facts.TEXT_UNIT)
TEXT_UNIT = facts.TEXT_UNIT
text_length = facts.text_length

# Inline bots whose usernames are shorter than Telegram's minimum and still become mentions.
SHORT_MENTIONS = frozenset({"gif", "vid", "pic"})
_USERNAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")

_CHAT_ID = r"-?[1-9][0-9]{0,15}"  # Bot API chat ids fit in 52 bits
_MESSAGE_ID = r"[1-9][0-9]{0,9}"  # message ids are 32-bit
_USERNAME = r"[A-Za-z][A-Za-z0-9_]{3,31}"
_POST_ID = re.compile(rf"(?P<chat>{_CHAT_ID}|@{_USERNAME})/(?P<message>{_MESSAGE_ID})")
_TOKEN = re.compile(r"[0-9]{1,20}:[A-Za-z0-9_-]{1,200}")

_HOSTS = frozenset({"t.me", "www.t.me", "telegram.me", "www.telegram.me", "telegram.dog"})
# First path segments of t.me links that name a feature, not a chat.
_NOT_CHATS = frozenset({
    "joinchat", "addstickers", "addemoji", "addlist", "addtheme", "share", "proxy", "socks",
    "login", "boost", "contact", "setlanguage", "invoice", "confirmphone", "giftcode", "nft",
    "iv", "bg",
})

HOW_TO_WRITE = ("give CHAT_ID/MESSAGE_ID (e.g. 123456789/42 or -1001234567890/42), "
                "https://t.me/USERNAME/42 or https://t.me/c/1234567890/42")


def _shown(raw: str) -> str:
    """A reference as it may appear in a one-line message: escaped and cut short."""
    return repr(raw if len(raw) <= 60 else raw[:60] + "…")


def _refused(raw: str, why: str) -> BadInput:
    return BadInput(f"telegram post reference {_shown(raw)} does not parse: {why}; "
                    f"{HOW_TO_WRITE}")


# ---- post references ----------------------------------------------------------------------

def post_url(chat: str, message_id: int | str) -> str | None:
    """The public link of a message, when one exists without a read.

    Private chats and basic groups have no message links; a supergroup or channel has a
    members-only /c/ link; a public one is linked by its username."""
    if chat.startswith("@"):
        return f"https://t.me/{chat[1:]}/{message_id}"
    if chat.startswith("-100") and len(chat) > 4:
        return f"https://t.me/c/{chat[4:]}/{message_id}"
    return None


def split_post_id(post_id: str) -> tuple[str, int]:
    """'<chat>/<message_id>' -> (chat, message_id); chat is digits, -digits or @username."""
    match = _POST_ID.fullmatch(post_id)
    if match is None:
        raise _refused(post_id, "not CHAT_ID/MESSAGE_ID")
    return match["chat"], int(match["message"])


def parse_post(raw: str) -> PostRef:
    """A message reference or t.me link -> PostRef with id '<chat>/<message_id>'."""
    text = raw.strip()
    if not text:
        raise _refused(raw, "it is empty")
    if any(ch.isspace() or unicodedata.category(ch)[0] == "C" for ch in text):
        raise _refused(raw, "it holds whitespace or control characters")
    if "%" in text or ".." in text or "\\" in text:
        raise _refused(raw, "it holds '%', '..' or '\\' (escaped or relative paths are refused)")
    if _POST_ID.fullmatch(text):
        chat, message_id = split_post_id(text)
        chat = chat.lower()  # usernames are case-insensitive: one post, one id, one ledger key
        # A positive chat id is a private chat, whose id is its user's id: the reference names
        # the person a reply reaches, so the gate can check them before any credential.
        private = chat.isdigit()
        return PostRef(PLATFORM, f"{chat}/{message_id}", url=post_url(chat, message_id),
                       author_id=chat if private else None)
    return _parse_link(raw, text)


def _parse_link(raw: str, text: str) -> PostRef:
    has_scheme = "://" in text
    if not has_scheme and "." not in text.split("/")[0]:
        raise _refused(raw, "it is neither a t.me link nor two whole numbers CHAT_ID/MESSAGE_ID "
                            "(message above 0)")
    try:
        parts = urlsplit(text if has_scheme else f"https://{text}")
        port = parts.port
    except ValueError:
        raise _refused(raw, "it is not a well-formed link") from None
    if parts.scheme not in ("http", "https"):
        raise _refused(raw, f"scheme {parts.scheme!r} is not http(s)")
    if parts.username is not None or parts.password is not None or port is not None:
        raise _refused(raw, "a t.me link has no user name, password or port")
    host = (parts.hostname or "").lower()
    if host not in _HOSTS:
        raise _refused(raw, f"host {_shown(host)} is not Telegram's (t.me)")
    if parts.fragment or parts.query not in ("", "single"):
        # ?comment=, ?thread= point at a different message than the path: refuse, not guess.
        raise _refused(raw, "drop the '?...' or '#...' part of the link")
    segments = parts.path.split("/")[1:]
    if segments and segments[-1] == "":
        segments.pop()  # one trailing slash is harmless
    if segments and segments[0] == "s":
        segments = segments[1:]  # t.me/s/<name>/<id> is the web preview of the same post
    # <chat>/<message> or, in a forum topic, <chat>/<topic>/<message>: the message is last.
    if len(segments) >= 2 and segments[0] == "c":
        internal, numbers = segments[1], segments[2:]
        if not re.fullmatch(r"[1-9][0-9]{0,12}", internal):
            raise _refused(raw, "t.me/c/ must be followed by the chat's number")
        chat = f"-100{internal}"
    elif segments and re.fullmatch(_USERNAME, segments[0]) and \
            segments[0].lower() not in _NOT_CHATS:
        chat, numbers = f"@{segments[0].lower()}", segments[1:]
    else:
        raise _refused(raw, "the link names no chat (expected t.me/USERNAME/... or t.me/c/...)")
    if len(numbers) not in (1, 2) or not all(re.fullmatch(_MESSAGE_ID, n) for n in numbers):
        raise _refused(raw, "the link must end with the message number")
    message_id = int(numbers[-1])
    return PostRef(PLATFORM, f"{chat}/{message_id}", url=post_url(chat, message_id))


# ---- mentions -----------------------------------------------------------------------------

def _is_word(ch: str) -> bool:
    return ch == "_" or unicodedata.category(ch)[0] in ("L", "N")


def mention_spans(text: str) -> list[tuple[int, int]]:
    """Where Telegram sees @mentions: (start, end) in code points, '@' included."""
    spans: list[tuple[int, int]] = []
    at = text.find("@")
    while at != -1:
        if at > 0 and _is_word(text[at - 1]):
            at = text.find("@", at + 1)  # e-mail addresses and the like
            continue
        end = at + 1
        while end < len(text) and text[end] in _USERNAME_CHARS:
            end += 1
        name = text[at + 1:end]
        followed_by_word = end < len(text) and _is_word(text[end])
        if not followed_by_word and (4 <= len(name) <= 32 or name.lower() in SHORT_MENTIONS):
            spans.append((at, end))
        at = text.find("@", end)
    return spans


def mentions(text: str) -> list[str]:
    """Every handle @mentioned in `text`, normalized, in order, each once."""
    found: list[str] = []
    for start, end in mention_spans(text):
        handle = normalize_handle(text[start + 1:end], PLATFORM)
        if handle not in found:
            found.append(handle)
    return found


# ---- the adapter --------------------------------------------------------------------------

class TelegramAdapter:
    """Telegram through the Bot API (aiogram 3). One credential, the bot token, for both
    reading and posting: Telegram has no read-only token."""

    platform = PLATFORM
    text_limit = TEXT_LIMIT
    text_unit = TEXT_UNIT
    read_fields: tuple[str, ...] = ("token",)
    post_fields: tuple[str, ...] = ()
    quotas: Mapping[str, int] = MappingProxyType({})  # Telegram answers 429 instead
    direct_kind = "dm"  # `--to` names a chat: a private message, or a post in a group
    # No: the Bot API looks up no user by username (getChat takes public chats' usernames
    # only), so the gate checks every party Telegram names by its handle or numeric id.
    resolves_handles = False

    def __init__(self, settings: AdapterSettings) -> None:
        self.settings = settings
        self.base_url = settings.base_url
        self.timeout = settings.number("timeout")

    def parse_post(self, raw: str) -> PostRef:
        return parse_post(raw)

    def mentions(self, text: str) -> list[str]:
        return mentions(text)

    def text_length(self, text: str) -> int:
        return text_length(text)

    def open(self, credentials: Mapping[str, str]) -> Session:
        token = credentials.get("token", "")
        if not _TOKEN.fullmatch(token):
            # Never echo the token: say only what shape was expected.
            raise Unauthorized(PLATFORM, "the stored token does not look like 123456:ABC..., "
                                         "the form @BotFather gives")
        from .session import TelegramSession  # the SDK is imported here, never above

        return TelegramSession(token, base_url=self.base_url, timeout=self.timeout)
