"""Pacing (docs/companion.md): a reply goes out the way a person texts, short messages with typing
in between, not one block that lands the instant the model is done.

Pure arithmetic, no I/O and no clock: the gateway sleeps the delays, shows the typing indicator
and sends the parts; randomness comes in as an `rng`, so tests are exact.

Choices made here (also in docs/companion.md, "Pacing"):

- A paragraph is text between blank lines. A paragraph up to `LONG_PARAGRAPH` characters is one
  message, however many short sentences it holds ("Hey! Good to hear. How was it?" is one text).
  A longer one is cut at sentence ends into messages of one or two sentences, a second sentence
  joining only while the message stays within `LONG_PARAGRAPH`.
- At most `MAX_MESSAGES` per turn: what does not fit is joined into the last message (a blank
  line between paragraphs, the text as written within one), never dropped.
- Sentence ends are `.`, `!` and `?` (and runs such as `?!`) followed by whitespace; quotes,
  brackets and emoji right after them stay with the sentence they close. A full stop is not an
  end after a known abbreviation ("Dr.", "bzw."), a dotted one ("e.g.", "z.B.", "p.m."), a single
  letter (an initial), a number ("3." is a list item, or a German date such as "am 3. Mai"), an
  ellipsis, or when the next word starts in lower case. URLs and "3.14" have no space after
  their dots, so they are never cut. A missed cut only makes a longer message; a wrong cut
  garbles one, so every doubt keeps the text together. A reply written all in lower case is
  therefore cut at paragraphs, `!` and `?` only.
- Whitespace is tidied: runs of spaces and tabs become one space, lines lose trailing spaces,
  every part is stripped. Single line breaks inside a paragraph stay (a list stays a list).
  No other character is changed, added or removed. An empty reply gives no parts at all; what
  to say then is the gateway's business (the "failed" line).
- Typing delay before each message: `TYPING_BASE` + `TYPING_PER_CHAR` per character (code
  points), times a jitter factor drawn uniformly from 1 ± `JITTER`, clamped to
  `MIN_DELAY`..`MAX_DELAY`; the responder's own thinking time is subtracted from the first
  delay after the clamp (so a slow model's first message goes out at once, and a fast one still
  seems to type). One `rng.uniform` draw per part, in order.
"""

from __future__ import annotations

import random
import re
import unicodedata
from dataclasses import dataclass

MAX_MESSAGES = 4  # messages per turn; more reads as a wall, and spams notifications
LONG_PARAGRAPH = 160  # characters: longer paragraphs are cut at sentence ends (about a long text)
SENTENCES_PER_MESSAGE = 2  # "one or two sentences per message"

TYPING_BASE = 0.6  # seconds of typing before any message: reaching for the phone
TYPING_PER_CHAR = 0.045  # seconds per character: a brisk thumb typist
JITTER = 0.20  # each delay is scaled by a factor in [1 - JITTER, 1 + JITTER]
MIN_DELAY = 1.0  # seconds: shorter and the typing indicator only flickers
MAX_DELAY = 7.0  # seconds: longer and the user wonders whether the bot is stuck

# Words that end in a full stop without ending the sentence, lower case and without the stop.
# English, Dutch and German: the languages the companion speaks (see phrases.py).
ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "dr", "prof", "st", "sr", "jr", "vs", "approx", "dept", "fig", "vol",
    "mt", "ft", "inc", "ltd", "co",
    "bijv", "bv", "dhr", "mevr", "mw", "evt", "ca", "nr", "resp", "ong", "incl", "excl",
    "bzw", "usw", "ggf", "vgl", "inkl", "zzgl", "evtl", "bspw", "sog", "hr", "fr", "str",
})

_TERMINALS = ".!?"
_CLOSERS = "\"'”’»«)]}*_"  # quotes, brackets and markdown emphasis that close a sentence
_OPENERS = "\"'“‘«»([{*_¿¡"  # what may stand before a word
_DOTTED = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]", re.UNICODE)  # e.g / z.B / p.m / U.S
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n\s*")
_TOKEN = re.compile(r"\S+")
_HORIZONTAL_SPACE = re.compile(r"[^\S\n]+")
_SPACE_AROUND_NEWLINE = re.compile(r" ?\n ?")

_ZWJ, _VS15, _VS16, _KEYCAP = "\u200d", "\ufe0e", "\ufe0f", "\u20e3"


@dataclass(frozen=True)
class _Chunk:
    """A span of one paragraph that becomes (part of) one message."""

    paragraph: int
    start: int
    end: int


def split(reply: str) -> list[str]:
    """Cut a reply into at most `MAX_MESSAGES` messages, in order, none empty, nothing lost."""
    paragraphs = [p for p in _PARAGRAPH_BREAK.split(reply.replace("\r\n", "\n").replace("\r", "\n"))
                  if p.strip()]
    chunks: list[_Chunk] = []
    for index, paragraph in enumerate(paragraphs):
        chunks.extend(_chunks(index, paragraph))
    if len(chunks) > MAX_MESSAGES:
        chunks, rest = chunks[: MAX_MESSAGES - 1], chunks[MAX_MESSAGES - 1 :]
        return [_text(paragraphs, [c]) for c in chunks] + [_text(paragraphs, rest)]
    return [_text(paragraphs, [c]) for c in chunks]


def typing_delays(parts: list[str], *, thinking: float, rng: random.Random,
                  pace: float = 1.0) -> list[float]:
    """Seconds of typing to show before each part; the first is shortened by `thinking`, the
    seconds the responder already took, because the user has been waiting that long already.
    `pace` scales every delay after the clamp (the `typing_pace` timer; 0: no pauses)."""
    delays = []
    for part in parts:
        raw = (TYPING_BASE + TYPING_PER_CHAR * len(part)) * rng.uniform(1 - JITTER, 1 + JITTER)
        delays.append(min(MAX_DELAY, max(MIN_DELAY, raw)) * pace)
    if delays:
        delays[0] = max(0.0, delays[0] - max(0.0, thinking))
    return delays


# ---- sentences -------------------------------------------------------------------------------

def _chunks(index: int, paragraph: str) -> list[_Chunk]:
    """One chunk for a short paragraph; one or two sentences per chunk for a long one."""
    text = paragraph.strip()
    offset = len(paragraph) - len(paragraph.lstrip())
    if len(text) <= LONG_PARAGRAPH:
        return [_Chunk(index, offset, offset + len(text))]
    chunks: list[_Chunk] = []
    count = 0
    for start, end in _sentences(text):
        last = chunks[-1] if chunks else None
        if (last is not None and count < SENTENCES_PER_MESSAGE
                and offset + end - last.start <= LONG_PARAGRAPH):
            chunks[-1] = _Chunk(index, last.start, offset + end)
            count += 1
        else:
            chunks.append(_Chunk(index, offset + start, offset + end))
            count = 1
    return chunks


def _sentences(text: str) -> list[tuple[int, int]]:
    """Spans of the sentences of `text` (already stripped); together they cover all of it."""
    tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    spans: list[tuple[int, int]] = []
    start = 0
    i = 0
    while i < len(tokens):
        if not _ends_sentence(text[tokens[i][0] : tokens[i][1]]):
            i += 1
            continue
        # Emoji standing after the stop belong to the sentence they close ("Great! 🎉 See you").
        while i + 1 < len(tokens) and _all_emoji(text[tokens[i + 1][0] : tokens[i + 1][1]]):
            i += 1
        if i + 1 < len(tokens):
            word = text[tokens[i][0] : tokens[i][1]]
            following = text[tokens[i + 1][0] : tokens[i + 1][1]]
            if _stop_kind(word) == "." and _starts_lower(following):
                i += 1
                continue
            spans.append((start, tokens[i][1]))
            start = tokens[i + 1][0]
        i += 1
    spans.append((start, len(text)))
    return spans


def _core(word: str) -> str:
    """The word without what may close a sentence after its stop: quotes, brackets, emoji."""
    return _strip_emoji_tail(word.rstrip(_CLOSERS)).rstrip(_CLOSERS)


def _stop_kind(word: str) -> str:
    """The terminal punctuation a word ends with ("." or "!" for "?!" and the like), or ""."""
    core = _core(word)
    stops = len(core) - len(core.rstrip(_TERMINALS))
    if stops == 0:
        return ""
    tail = core[-stops:]
    return "." if set(tail) == {"."} else "!"


def _ends_sentence(word: str) -> bool:
    kind = _stop_kind(word)
    if kind != ".":
        return kind == "!"
    core = _core(word)
    if core.endswith("..") or core.endswith("…."):
        return False  # an ellipsis trails off; the thought goes on
    stem = core[:-1].lstrip(_OPENERS)
    if not stem:
        return False
    if stem.isdigit():
        return False  # "1." starting a list, "am 3. Mai"
    if len(stem) == 1 and stem.isalpha():
        return False  # an initial: "J. Smith"
    if _DOTTED.fullmatch(stem):
        return False  # "e.g", "z.B", "p.m"
    return stem.lower() not in ABBREVIATIONS


def _starts_lower(word: str) -> bool:
    letters = word.lstrip(_OPENERS)
    return bool(letters) and letters[0].islower()


# ---- emoji -------------------------------------------------------------------------------------

def _is_emoji_char(char: str) -> bool:
    """Pictographs, their modifiers and the glue between them: never cut from their sentence."""
    if char in (_ZWJ, _VS15, _VS16, _KEYCAP):
        return True
    return unicodedata.category(char) in ("So", "Sk") and not char.isascii()


def _all_emoji(word: str) -> bool:
    return all(_is_emoji_char(c) for c in word)


def _strip_emoji_tail(word: str) -> str:
    end = len(word)
    while end and _is_emoji_char(word[end - 1]):
        end -= 1
    return word[:end]


# ---- text --------------------------------------------------------------------------------------

def _text(paragraphs: list[str], chunks: list[_Chunk]) -> str:
    """The tidied text of consecutive chunks: spans of one paragraph as written, paragraphs
    apart by a blank line."""
    pieces: list[str] = []
    current = chunks[0]
    for chunk in chunks[1:]:
        if chunk.paragraph == current.paragraph:
            current = _Chunk(current.paragraph, current.start, chunk.end)
        else:
            pieces.append(_tidy(paragraphs[current.paragraph][current.start : current.end]))
            current = chunk
    pieces.append(_tidy(paragraphs[current.paragraph][current.start : current.end]))
    return "\n\n".join(pieces)


def _tidy(text: str) -> str:
    return _SPACE_AROUND_NEWLINE.sub("\n", _HORIZONTAL_SPACE.sub(" ", text)).strip()
