"""Decoding for the injection guard: the spans of a text that look like base64, rot13,
%-encoding or HTML entities, decoded so the guard (`injection.py`) can judge them again.

Decoding is local and bounded: only windows around what looks encoded are decoded, base64 runs
in spans of at most a fixed size, and the caller holds a budget of a few times the length of
the original, so decoding can never make the check superlinear. Standard library only (`html`
is imported only for text that has entities).
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable, Iterator
from functools import cache

__all__ = ["decodings"]


@cache
def _regex(source: str) -> re.Pattern[str]:
    """The regex compiled when first needed: most texts have no entity, no %-escape and no
    rot13 word, and every process that imports the guard would otherwise compile them all."""
    return re.compile(source)


def _any_in(needles: tuple[str, ...], text: str) -> bool:
    for needle in needles:  # noqa: SIM110
        if needle in text:
            return True
    return False

_ROT13 = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "nopqrstuvwxyzabcdefghijklmNOPQRSTUVWXYZABCDEFGHIJKLM",
)
# Words every order uses, as rot13 spells them: the rot13 pass runs only when one is there.
_ROT13_HINTS = tuple(
    word.translate(_ROT13)
    for word in (
        "ignore", "instruction", "previous", "system", "prompt", "reveal", "forget",
        "disregard", "rules", "follow", "password", "token", "agent", "operator", "developer",
        "config", "mode", "your", "repost", "secret", "you are",
    )
)
_ROT13_HINT = "|".join(_ROT13_HINTS)
_PERCENT = r"(?:%[0-9a-fA-F]{2})+"
_ENTITY = r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
# A base64 (or base64url) run long enough to hold an order; it is decoded in spans of at most
# _BASE64_SPAN characters.
_BASE64 = r"[A-Za-z0-9+/_-](?<![A-Za-z0-9+/_-].)[A-Za-z0-9+/_-]{15,}+={0,2}"
_BASE64_SPAN = 16384
_URLSAFE = str.maketrans("-_", "+/")
_LETTERS = r"[a-zA-Z]"


# Query-string spacing: "disregard+your+rules+and+follow".
_PLUS_WORDS = r"[^\s+]{1,40}(?:\+[^\s+]{1,40}){3,}"
# %-escapes, or three words joined by '+' in a row (found by its '+', so the scan is quick).
_URL_ENCODED = r"(?:%[0-9a-fA-F]{2})+|\+[^\s+]{1,40}\+[^\s+]{1,40}\+"


def _unplus(m: re.Match[str]) -> str:
    return m.group(0).replace("+", " ")


def _unpercent(m: re.Match[str]) -> str:
    return bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8", "replace")


def _readable(decoded: str) -> bool:
    if not decoded or _regex(_LETTERS).search(decoded) is None:
        return False
    if decoded.isprintable():
        return True
    odd = sum(1 for ch in decoded if not ch.isprintable() and ch not in "\n\r\t")
    return odd <= len(decoded) // 20


def _base64_texts(text: str) -> Iterator[str]:
    # A run is 16 or more characters none of which is whitespace, so it lies inside one
    # whitespace-separated token: text whose tokens are all shorter holds none, and the regex
    # (which tries every letter) need not run.
    if len(text) < 16 or max(map(len, text.split()), default=0) < 16:
        return
    for m in _regex(_BASE64).finditer(text):
        run = m.group(0)
        body = run.rstrip("=")
        # Words and identifiers are not base64: a payload mixes cases or has digits.
        if body.isalpha() and (body.islower() or body.isupper()):
            continue
        for at in range(0, len(body), _BASE64_SPAN):
            chunk = body[at : at + _BASE64_SPAN].translate(_URLSAFE)
            # A lone trailing character holds no byte; the rest is padded to whole quads.
            chunk = chunk[: len(chunk) - 1] if len(chunk) % 4 == 1 else chunk
            chunk += "=" * (-len(chunk) % 4)
            try:
                decoded = binascii.a2b_base64(chunk).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                continue
            if _readable(decoded):
                yield decoded


# Decoding is local: only windows around what looks encoded are decoded and judged again, so
# one "%2B" in a long post costs a few hundred characters, not another pass over the post.
_WINDOW = 240


def _windows(spans: Iterator[tuple[int, int]], size: int) -> Iterator[tuple[int, int]]:
    """The spans widened by _WINDOW on each side, overlapping ones merged, in order."""
    current: tuple[int, int] | None = None
    for start, end in spans:
        lo, hi = max(0, start - _WINDOW), min(size, end + _WINDOW)
        if current is not None and lo <= current[1]:
            current = (current[0], max(current[1], hi))
            continue
        if current is not None:
            yield current
        current = (lo, hi)
    if current is not None:
        yield current


def _decoded_windows(
    text: str, finder: str, decode: Callable[[str], str]
) -> Iterator[str]:
    for lo, hi in _windows((m.span() for m in _regex(finder).finditer(text)), len(text)):
        window = text[lo:hi]
        decoded = decode(window)
        if decoded != window:
            yield decoded


def _url_decode(window: str) -> str:
    return _regex(_PLUS_WORDS).sub(_unplus, _regex(_PERCENT).sub(_unpercent, window))


def _html_decode(window: str) -> str:
    import html  # only for text that has entities

    return html.unescape(window)


def _rot13(window: str) -> str:
    return window.translate(_ROT13)


def decodings(text: str, norm: str) -> Iterator[str]:
    if _any_in(_ROT13_HINTS, norm):
        yield from _decoded_windows(norm, _ROT13_HINT, _rot13)
    if "%" in text or "+" in text:
        yield from _decoded_windows(text, _URL_ENCODED, _url_decode)
    if "&" in text:
        yield from _decoded_windows(text, _ENTITY, _html_decode)
    yield from _base64_texts(text)
