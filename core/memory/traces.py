"""What marks a forgotten person in text that is not theirs (see docs/memory.md, "Forgetting").

A trace is built from everything known of the person before it is deleted: every handle their
account has had on the platform (a rename keeps the stable id), their ids, their display
names, and what they wrote (their side of entries, their pins, their inbox posts, the log's
paraphrases). A text names them when it holds any handle (with or without `@`; a bare handle
only from 4 characters, or it would match ordinary words), any id of 5 characters or more, a
display name of 4 characters or more as whole words, or three consecutive words of theirs
(a quote), at least two of them of 4 letters or more so that "I think so" quotes no one.

This errs towards forgetting: a stranger's entry that happens to share such three words loses
its text too. That is the price of "no byte of the person left".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

SHINGLE = 3
_WORD = re.compile(r"\w+")
BARE_HANDLE_MIN = 4
ID_MIN = 5
NAME_MIN = 4


def fold(text: str) -> str:
    """One form for every way of writing the same letters: NFD or NFC accents, fullwidth or
    styled letters (NFKC), any case. Matched in this form, `José` written with a combining
    accent, or `＠ＡＤＡ`, still names them."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def words(text: str) -> list[str]:
    return _WORD.findall(fold(text))


def _quotable(window: tuple[str, ...]) -> bool:
    return sum(1 for w in window if len(w) >= 4) >= 2


def _shingles(text: str) -> set[tuple[str, ...]]:
    found = words(text)
    return {w for w in (tuple(found[i:i + SHINGLE]) for i in range(len(found) - SHINGLE + 1))
            if _quotable(w)}


@dataclass(frozen=True)
class Trace:
    platform: str
    handles: frozenset[str]
    ids: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    phrases: frozenset[tuple[str, ...]] = frozenset()
    _pattern: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, platform: str, handles: Iterable[str], *, ids: Iterable[str] = (),
           names: Iterable[str | None] = (), texts: Iterable[str | None] = ()) -> Trace:
        handle_set = frozenset(h for h in handles if h)
        id_set = frozenset(str(i) for i in ids if i)
        name_set = frozenset(" ".join(words(n)) for n in names if n and len(n.strip()) >= NAME_MIN)
        name_set = frozenset(n for n in name_set if len(n) >= NAME_MIN)
        phrases: set[tuple[str, ...]] = set()
        for text in texts:
            if text:
                phrases |= _shingles(text)
        folded = {fold(h) for h in handle_set}
        alternatives = [rf"@{re.escape(h)}" for h in folded]
        alternatives += [re.escape(h) for h in folded if len(h) >= BARE_HANDLE_MIN]
        # A numeric id has one spelling in memory, but a URL or a tool may pad it with zeros.
        alternatives += [("0*" if i.isdigit() else "") + re.escape(fold(i))
                         for i in id_set if len(i) >= ID_MIN]
        alternatives += [r"\W+".join(re.escape(w) for w in n.split()) for n in name_set]
        pattern = re.compile(r"(?<![\w])(?:" + "|".join(sorted(alternatives, key=len,
                                                                reverse=True)) + r")(?![\w])",
                             re.IGNORECASE) if alternatives else None
        return cls(platform, handle_set, id_set, name_set, frozenset(phrases), pattern)

    def names_them(self, text: str | None) -> bool:
        if not text:
            return False
        if self._pattern is not None and self._pattern.search(fold(text)):
            return True
        if self.phrases:
            found = words(text)
            return any(tuple(found[i:i + SHINGLE]) in self.phrases
                       for i in range(len(found) - SHINGLE + 1))
        return False

    @cached_property
    def anchors(self) -> frozenset[str]:
        """Words of which at least one appears in any text that names them: a cheap test
        before a file is parsed."""
        out = {w for h in self.handles for w in words(h)}
        out |= {w for i in self.ids for w in words(i)}
        out |= {w for n in self.names for w in n.split()}
        out |= {max(p, key=len) for p in self.phrases}
        return frozenset(out)

    def may_name_them(self, text: str) -> bool:
        found = words(text)
        return not self.anchors.isdisjoint(found) or not self.anchors.isdisjoint(
            w.lstrip("0") for w in found if w.startswith("0"))
