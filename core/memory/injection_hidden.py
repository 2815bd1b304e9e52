"""Hidden characters: text a reader cannot see, judged on the raw text before anything is
normalized away. Part of the injection guard (`injection.py`); docs/memory.md describes it.

Tags, bidi embeddings and overrides always count. Joiners and direction marks have jobs (emoji,
Persian and Indic words, punctuation in right-to-left text), so they count only in a row, wedged
inside a Latin word, or many close together. Standard library only; linear in the text.
"""

from __future__ import annotations

import re

__all__ = ["hidden_characters"]

_TAG_CANCEL = "\U000e007f"
_BLACK_FLAG = "\U0001f3f4"
# The one legitimate use of tag characters: the England, Scotland and Wales flag emoji.
_FLAG_TAGS = frozenset(
    "".join(chr(0xE0000 + ord(ch)) for ch in name) for name in ("gbeng", "gbsct", "gbwls")
)
# Embeddings and overrides (U+202A-U+202E) and isolates (U+2066-U+2069) reorder what a reader
# sees; in a short public message they only serve to hide or disguise text.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# No visible width and no job in ordinary prose.
_INVISIBLE = frozenset("\u200b\u2060\u2061\u2062\u2063\u2064\u180e\u034f\u115f\u1160\u3164\uffa0")
# Joiners and direction marks do have jobs: ZWJ builds emoji, ZWNJ shapes Persian and Indic
# words, RLM/LRM/ALM place punctuation in right-to-left text. Only in bulk, in a row, or wedged
# inside a Latin word (where they do nothing visible) do they look like hiding.
_SUSPECT = re.compile(
    "[\U000e0000-\U000e007f\u202a-\u202e\u2066-\u2069\u200b-\u200f\u2060-\u2064\u180e\u034f"
    "\u115f\u1160\u3164\uffa0\ufeff\u061c]"
)
_HIDDEN_LIMIT = 4
_MARK_BULK = 24
_HIDDEN_RUN = 3
_HIDDEN_GAP = 200


def _is_latin(text: str, i: int) -> bool:
    return 0 <= i < len(text) and text[i].isascii() and text[i].isalpha()


def hidden_characters(text: str) -> bool:
    if text.isascii():
        return False
    hidden = marks = run = 0
    last = skip_to = -2
    for m in _SUSPECT.finditer(text):
        i = m.start()
        if i < skip_to:
            continue
        ch = text[i]
        if i - last > _HIDDEN_GAP:
            # Hiding takes many marks close together; ones far apart in a long text are
            # right-to-left prose doing its job.
            hidden = marks = 0
        if ch >= "\U000e0000":
            if i and text[i - 1] == _BLACK_FLAG:
                end = text.find(_TAG_CANCEL, i)
                if end != -1 and text[i:end] in _FLAG_TAGS:
                    skip_to = end + 1
                    continue
            return True
        if ch in _BIDI_CONTROLS:
            return True
        run = run + 1 if i == last + 1 else 1
        last = i
        if run >= _HIDDEN_RUN:
            return True
        if ch == "\ufeff":
            hidden += 1 if i else 0  # a byte order mark at the very start is harmless
        elif ch in _INVISIBLE:
            hidden += 1
        else:
            marks += 1
            if _is_latin(text, i - 1) and _is_latin(text, i + 1):
                hidden += 1
        if hidden >= _HIDDEN_LIMIT or marks >= _MARK_BULK:
            return True
    return False
