"""Text hygiene shared by every field: one line, no control characters, safe length cuts."""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")
# Categories that never belong in a stored line: controls, line/paragraph separators, surrogates.
_DROP_CATEGORIES = frozenset({"Cc", "Zl", "Zp", "Cs"})
_JOINERS = frozenset({"\u200d", "\ufe0e", "\ufe0f"})


def one_line(text: str) -> str:
    """Collapse a field to one clean line. Idempotent; keeps every script, emoji and RTL mark."""
    if text.isprintable() and "\n" not in text and "  " not in text:
        return text.strip()
    cleaned = "".join(
        " " if unicodedata.category(ch) in _DROP_CATEGORIES else ch for ch in text
    )
    return _SPACES.sub(" ", cleaned).strip()


def cut(text: str, limit: int) -> str:
    """Cut to at most `limit` characters at a word boundary, ending in '…' when cut.

    Never splits a combining mark, a variation selector or a zero-width joiner from its base,
    so an emoji sequence or an accented letter is either whole or gone.
    """
    if len(text) <= limit:
        return text
    end = limit - 1
    while end > 0 and (unicodedata.combining(text[end]) or text[end] in _JOINERS
                       or text[end - 1] in _JOINERS):
        end -= 1
    space = text.rfind(" ", 0, end)
    if space >= limit * 2 // 3:
        end = space
    return text[:end].rstrip() + "…"
