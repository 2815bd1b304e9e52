"""The injection guard: instruction-like text is never stored.

`injection_reason` looks at one field and answers with a short, neutral reason when the text
reads like an attempt to instruct the model that will later read it back, or None for ordinary
text. The caller withholds the content and flags the person; the reason is for the record and
never quotes the text. What counts, by reason:

- instruction override: "ignore previous instructions" and its kin, in English and in Dutch,
  German, French, Spanish, Italian, Portuguese, Russian, Chinese, Japanese, Korean, Arabic,
  Turkish and Polish;
- persona override: "you are now DAN", developer or jailbreak modes;
- system prompt request: asking for the system prompt, hidden instructions or the hidden
  configuration and keys, in English, German, Dutch, French, Spanish, Italian and Portuguese;
- request aimed at AI agents: text addressed to whatever AI or bot reads it ("AI agents reading
  this:", "if you are an AI") asking it to hand over secrets, or to follow, like or repost;
- claimed operator instructions: fresh orders said to come from the bot's operator, owner,
  developers or admins;
- claimed developer authority: "I'm your developer" and the like, asking for the configuration;
- exfiltration image link: a markdown or HTML image whose address is shaped to carry data away;
- role marker, chat template marker, invisible characters;
- encoded instructions: any of the above in base64, rot13, %-encoding or HTML entities.

Precision matters as much as recall here: a false alarm withholds an honest message and puts a
`prompt-injection` flag on a person who did nothing wrong. So the patterns want the shape of an
instruction aimed at a model (an imperative verb, a qualifier such as "previous" or "your", and
a noun such as "instructions"; an address to an AI together with an action; a claim of
authority together with a request), not just the vocabulary: "I wrote a post about prompt
injection", "ignore my last tweet" and "AI folks, please fill out our survey" are prose.

Matching runs on a normalized copy (NFKC, casefold, format characters removed, accents and
Arabic marks folded, whitespace collapsed) and, for the classic phrases, again on a
de-obfuscated copy (digit and symbol look-alikes, Cyrillic and Greek homoglyphs, and all
spacing and punctuation removed), so "IGN0RE  all prev1ous instructions" and
"i g n o r e previous instructions" are caught too. Spans that look encoded are decoded in
windows, within a budget, and judged again, up to three layers deep.

The patterns here know how attempts are usually worded; `injection_clauses` knows how they are
built (an addressee, an order and its target; staff, fresh orders and a directive; a claim of
authority and an ask for the configuration) and catches new wordings of the same build. It runs
after the patterns, on the normalized text. docs/memory.md describes both and the recall they
reach on corpora written apart from them. Hidden characters are judged in `injection_hidden`,
and the encoded spans found and decoded in `injection_decoding`.

Cost is linear in the length of the text: long texts are read in overlapping chunks; a pattern
runs only on chunks holding its needles or anchor words (found once per chunk, through the
chunk's distinct words, and shared by every pass over it); each alternative of a family is its
own pattern so the engine can skip to the letters it starts with, and is skipped on a chunk
without the words every match of it starts with; any regex, and a two-part pattern's partner,
is skipped on text that holds none of the strings its matches must hold (read off the parsed
regex); a partner is only searched for once a match needs one, and the parts are paired by
bisection; decoding never reaches beyond the encoded spans. Importing costs little: regexes
are compiled when first used and a family's patterns are made when a text first opens its
gate, so a process pays only for what its texts reach. `bench/privacy_gate.py` and
`bench/injection_scaling.py` measure it; tests/test_injection_oracle.py holds the verdicts to
those of every pattern made and compiled up front. Standard library only; imported when
writing, never by `check` or `card`.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Iterator

from tactful.core.memory.injection_clauses import clause_reason
from tactful.core.memory.injection_decoding import decodings
from tactful.core.memory.injection_hidden import hidden_characters

# `typing` only for the type checker (which reads any TYPE_CHECKING as true): importing it
# would cost every process that imports the guard a few milliseconds.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["injection_reason"]

OVERRIDE = "instruction override"
PERSONA = "persona override"
PROMPT_REQUEST = "system prompt request"
ROLE_MARKER = "role marker"
TEMPLATE_MARKER = "chat template marker"
INVISIBLE = "invisible characters"
AGENT_REQUEST = "request aimed at AI agents"
OPERATOR_CLAIM = "claimed operator instructions"
AUTHORITY_CLAIM = "claimed developer authority"
EXFILTRATION = "exfiltration image link"
ENCODED = "encoded instructions"

class _Regex:
    """A regex compiled when first used. The guard holds a few hundred, most of which a given
    text never reaches (their needles and anchor words gate them): compiling them all up front
    cost every `remember` run as a process about a third of a second. Sources with non-ASCII
    words are folded (`_fold_source`) when compiled, not at import.

    Safe from several threads without a lock: compiling is pure, so two threads that race
    both compile the same pattern and either result may be kept."""

    __slots__ = ("_asked", "_compiled", "_needed", "flags", "fold", "source")

    def __init__(self, source: str, flags: int = 0, *, fold: bool = False) -> None:
        self.source = source
        self.flags = flags
        self.fold = fold
        self._compiled: re.Pattern[str] | None = None
        self._needed: _Needed | bool | None = False  # False: not read yet
        self._asked = 0

    def get(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            source = _fold_source(self.source) if self.fold else self.source
            compiled = self._compiled = re.compile(source, self.flags)
        return compiled

    def needed(self) -> _Needed | None:
        """What every match starts with (`_Needed`), or None. Read only once the regex has
        been asked about `_READ_AFTER` times: parsing the largest sources costs tens of
        milliseconds, which a process that screens a few texts (a `remember` run) would pay
        for nothing; a process that screens many pays it once."""
        starts = self._needed
        if starts is False:
            self._asked += 1
            if self._asked < _READ_AFTER:
                return None
            source = _fold_source(self.source) if self.fold else self.source
            strings = _needed_strings(source, self.flags)
            starts = self._needed = _Needed(strings) if strings else None
        return starts  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------
# What a match must start with, read off the parsed regex, so a regex is not run on text that
# holds none of it (most texts hold none of the words most patterns start with).

_STARTS_MAX = 1024
_READ_AFTER = 64
# The standard library's own regex parser, to read what a pattern's matches start with; `re`
# has loaded both already, so importing them costs nothing. They are internals: a Python that
# moved or renamed them leaves every regex without its gate (the same verdicts, as before the
# gates), never a guard that fails to import.
try:
    from re import _constants as _sre  # type: ignore[attr-defined]
    from re import _parser as _sre_parser  # type: ignore[attr-defined]

    _ZERO_WIDTH = (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT)
    _REPEATS = (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT)
except (ImportError, AttributeError):  # another Python's internals
    _sre_parser = None


def _exact(items: list[tuple[Any, Any]]) -> set[str] | None:
    """Every string the parsed items can match, when that is a small known set, else None.
    Zero-width items match the empty string."""
    out = {""}
    for op, av in items:
        got: set[str] | None
        if op is _sre.LITERAL:
            got = {chr(av)}
        elif op in _ZERO_WIDTH:
            got = {""}
        elif op is _sre.SUBPATTERN:
            _, add, remove, sub = av
            got = None if add or remove else _exact(list(sub))
        elif op is _sre.BRANCH:
            got = set()
            for sub in av[1]:
                each = _exact(list(sub))
                if each is None:
                    got = None
                    break
                got |= each
        elif op is _sre.IN:
            members = list(av)
            got = ({chr(v) for _, v in members}
                   if all(o is _sre.LITERAL for o, _ in members) else None)
        elif op in _REPEATS and av[:2] == (0, 1):
            each = _exact(list(av[2]))
            got = None if each is None else each | {""}
        else:
            got = None
        if got is None or len(out) * len(got) > _STARTS_MAX:
            return None
        out = {a + b for a in out for b in got}
    return out


def _prefixes(items: list[tuple[Any, Any]]) -> set[str]:
    """Strings one of which every match of the parsed items starts with ("" when nothing is
    known): the items whose matches are a known set, joined, then what the first other item's
    matches start with (a group, an alternation, an item repeated at least once)."""
    out = {""}
    for op, av in items:
        each = _exact([(op, av)])
        if each is not None and len(out) * len(each) <= _STARTS_MAX:
            out = {a + b for a in out for b in each}
            continue
        sub: set[str] | None = None
        if op is _sre.SUBPATTERN and not (av[1] or av[2]):
            sub = _prefixes(list(av[3]))
        elif op is _sre.BRANCH:
            sub = set()
            for branch in av[1]:
                sub |= _prefixes(list(branch))
        elif op in _REPEATS and av[0] >= 1:
            sub = _prefixes(list(av[2]))
        if sub is not None and len(out) * len(sub) <= _STARTS_MAX:
            out = {a + b for a in out for b in sub}
        break
    return out


def _needed_strings(source: str, flags: int = 0) -> tuple[str, ...] | None:
    """Strings one of which every match of `source` starts with (and so holds), or None when
    that is not known (a match may start with anything, or the pattern ignores case).
    tests/test_injection_fast_paths.py checks them against every match on its corpora."""
    if _sre_parser is None:
        return None
    try:
        tree = _sre_parser.parse(source, flags)
        if tree.state.flags & ~re.UNICODE:
            return None
        found = _prefixes(list(tree))
    except Exception:  # noqa: BLE001 — the standard library's internals; unsure: no gate
        return None
    if not found or "" in found:
        return None
    return tuple(sorted(found))


class _Needed:
    """Strings one of which every match of a regex starts with, so text holding none of them
    cannot hold a match. Tested on the text directly when they are few; otherwise through
    the text's words. Each string's longest run of word characters (its piece) lies inside one
    word of any text that holds the string; where the string goes on past the piece with a
    sign or a space, that word ends with the piece, and where a sign or a space comes before
    it, the word starts with it. A text none of whose words holds a piece so cannot hold the
    strings. What each word holds is remembered (bounded)."""

    __slots__ = ("bare", "holding", "lacking", "pieces", "strings")

    def __init__(self, strings: tuple[str, ...]) -> None:
        self.strings = strings
        # Strings without a word character are tested on the text itself.
        self.bare = tuple(string for string in strings if not _WORDS.get().search(string))
        self.pieces = _pieces(tuple(string for string in strings if string not in self.bare))
        # Words met before that hold a piece, and that hold none.
        self.holding: set[str] = set()
        self.lacking: set[str] = set()

    def may_match(self, chunk: str, words: set[str] | None) -> bool | None:
        """False only when `chunk` (whose runs of word characters are `words`, if given)
        holds none of the strings; None when that was not told cheaply (many words not met
        before), True when it holds one."""
        return self._may_match(chunk, words)

    def _may_match(self, chunk: str, words: set[str] | None) -> bool | None:
        pieces = self.pieces
        if len(self.strings) <= 8:
            return _holds_one(chunk, self.strings)
        if pieces is None or words is None:
            # Many strings and no words to read them through: testing each on a long text
            # would cost more than the regex.
            return None
        if self.bare and _holds_one(chunk, self.bare):
            return True
        holding, lacking = self.holding, self.lacking
        if not holding.isdisjoint(words):
            return True
        unknown = words.difference(lacking)
        if not unknown:
            return False
        if len(unknown) > _LEARN:
            return None  # many words not met before: unsure
        if len(holding) + len(lacking) >= _BY_WORD_MAX:
            holding.clear()
            lacking.clear()
        held = False
        for word in unknown:
            holds = _holds_piece(word, pieces)
            if len(word) <= _IN_WORD_LONGEST:
                (holding if holds else lacking).add(word)
            held = held or holds
        return held


_Piece = tuple[str, bool, bool]


def _pieces(strings: tuple[str, ...]) -> tuple[_Piece, ...] | None:
    """Each string's longest run of word characters, and whether a sign or a space comes before
    it (the word holding it then starts with it) and after it (the word ends with it); None
    when a string has no word character."""
    pieces: list[_Piece] = []
    for string in strings:
        runs = [m.span() for m in _WORDS.get().finditer(string)]
        if not runs:
            return None
        start, end = max(runs, key=lambda span: span[1] - span[0])
        pieces.append((string[start:end], start > 0, end < len(string)))
    return tuple(dict.fromkeys(pieces))


def _holds_piece(word: str, pieces: tuple[_Piece, ...]) -> bool:
    for piece, starts_word, ends_word in pieces:
        if piece in word and (not starts_word or word.startswith(piece)) and (
            not ends_word or word.endswith(piece)
        ):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# Normalization

# Curly quotes, and the Turkish dotless ı (casefold leaves it; NFD has nothing to strip).
_QUOTES = str.maketrans(
    {"’": "'", "‘": "'", "ʼ": "'", "`": "'", "“": '"', "”": '"', "ı": "i"}
)
# Combining accents, and the Arabic vowel and hamza marks (so أ, إ and ا read alike).
_ACCENTS = _Regex("[\u0300-\u036f\u064b-\u065f\u0670]")
# Format characters that can split a word without showing: soft hyphen, zero-width and
# direction characters, word joiners, byte order mark, tags.
_FORMAT = _Regex(
    "[\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
    "\U000e0000-\U000e007f]"
)
_CONTROLS = _Regex(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _normalize(text: str) -> tuple[str, bool]:
    """The text as matched (one space between words, lines kept), and whether invisible format
    characters had to be taken out of it."""
    hid = False
    if text.isascii():
        text = text.lower()
    else:
        text = unicodedata.normalize("NFKC", text).casefold().translate(_QUOTES)
        text = _ACCENTS.get().sub("", unicodedata.normalize("NFD", text))
        stripped = _FORMAT.get().sub("", text)
        hid = len(stripped) != len(text)
        text = stripped
    if not text.isprintable():
        text = _CONTROLS.get().sub(" ", text)
    if "\n" not in text:
        return " ".join(text.split()), hid  # one line: the same as below, without the loop
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line), hid


# Cyrillic and Greek letters that pass for Latin ones once lowercased.
_HOMOGLYPHS = str.maketrans(
    {
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o",
        "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j",
        "ѕ": "s", "ԁ": "d", "һ": "h", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ɡ": "g", "ı": "i",
        "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
        "τ": "t", "υ": "u", "χ": "x", "ϲ": "c",
    }
)  # fmt: skip
_LEET = {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"}
# Only digits and symbols touching a letter are stand-ins; "you are now 30" keeps its number.
_LEET_CHARS = _Regex(r"(?<=[a-z])[013457@$!]|[013457@$!](?=[a-z])")
_LEET_SIGNS = tuple(_LEET)


def _unleet(m: re.Match[str]) -> str:
    return _LEET[m.group(0)]


def _deobfuscate(norm: str) -> str:
    text = norm if norm.isascii() else norm.translate(_HOMOGLYPHS)
    if not _holds_one(text, _LEET_SIGNS):
        return text  # `_LEET_CHARS` needs one of them: nothing to swap
    # Twice, so "1gn0r3" resolves: some stand-ins only touch letters through each other.
    for _ in range(2):
        swapped = _LEET_CHARS.get().sub(_unleet, text)
        if swapped == text:
            break
        text = swapped
    return text


# The squashed form keeps letters only, with i/l/1/| merged, so spacing, punctuation and the
# usual digit swaps all disappear. Its patterns are written in plain spelling and squashed the
# same way.
_SQUASH_MAP = str.maketrans({"l": "i", "|": "i", **_LEET})
_NOT_LETTER = _Regex(r"[^a-z]+")
# Letters spaced out ("i g n o r e") or split by punctuation inside a word ("ig-nore",
# "ignore.previous"): the signs of a disguise that make squashing worth the risk.
_SPLIT_WORDS = _Regex(r"(?:\b[a-z][\s.\-_*·|~]+){3,}[a-z]\b|[a-z][.\-_*·|~]+[a-z]")


# The signs `_SPLIT_WORDS` separates with, besides whitespace.
_SPLIT_SIGNS = (".", "-", "_", "*", "·", "|", "~")


def _may_be_split(plain: str) -> bool:
    """False only where `_SPLIT_WORDS` cannot match, found without running it (it tries every
    position). Without one of its signs, a match needs a letter that starts a word and is
    followed by whitespace: a whitespace-separated token of one character, or one whose
    letter follows a character that is not a word character (so the token is not all
    letters and digits). Anything else answers True and the regex decides."""
    if _holds_one(plain, _SPLIT_SIGNS):
        return True
    if plain.replace(" ", "").replace("\n", "").isalnum():
        # Every token is letters and digits: only a one-character token is left to look for.
        return min(map(len, plain.split()), default=2) < 2
    for token in plain.split():  # noqa: SIM110 — a plain loop, not any() over a generator
        if len(token) < 2 or not token.isalnum():
            return True
    return False


def _squash(deobfuscated: str) -> str:
    return _NOT_LETTER.get().sub("", deobfuscated.translate(_SQUASH_MAP))


# ---------------------------------------------------------------------------------------------
# Patterns, on normalized text (casefolded, accents folded, one space between words)


class _Pattern:
    """One regex of the guard, with what must hold around it for a match to count. (A plain
    class, not a dataclass: making the dataclasses cost every import milliseconds.)"""

    __slots__ = (
        "after", "anchored", "anchors", "before", "imperative", "leading", "near", "needles",
        "reason", "regex", "word_start",
    )

    def __init__(
        self,
        reason: str,
        # At least one must occur in the text before the regex runs (cheap substring tests).
        needles: tuple[str, ...],
        regex: _Regex,
        # The match must give an order, not report one: "I always forget your rules".
        imperative: bool = False,
        *,
        # Two-part patterns: `near` must also match, starting at most `after` characters after
        # the match ends, or ending at most `before` characters before it starts ("AI agents
        # reading this:" ... "follow @x"). Both parts are found once over the whole text and
        # paired by bisection, so no gap is ever scanned twice.
        near: _Regex | None = None,
        after: int = 0,
        before: int = 0,
        # Whole words, any one of which lets the pattern run (as a needle does); long texts are
        # judged in chunks, so a pattern only runs where its words occur.
        anchors: frozenset[str] = frozenset(),
        # The match must start a word (checked after the match: a leading \b would stop the
        # engine from skipping ahead to the first letters the pattern can start with).
        word_start: bool = False,
        # Tried once, at the start of the text only.
        anchored: bool = False,
        # Words one of which every match starts with (`_leading`), or None: a chunk without
        # any of them cannot hold a match, so the regex is neither compiled nor run on it.
        leading: tuple[str, ...] | None = None,
    ) -> None:
        self.reason = reason
        self.needles = needles
        self.regex = regex
        self.imperative = imperative
        self.near = near
        self.after = after
        self.before = before
        self.anchors = anchors
        self.word_start = word_start
        self.anchored = anchored
        self.leading = leading


# What comes right before a verb that is being reported or negated rather than ordered. "You
# will ignore..." and "you must ignore..." stay orders; "I'd ignore..." is an opinion.
_REPORTED = _Regex(
    r"\b(?:(?:i|we|they|he|she|people)(?:'d|'ll| would| will| might| could| can| just| also)?"
    r"|you|always|often|sometimes|usually|never|not|don't|do not|didn't|can't|cannot|won't"
    r"|shouldn't|wouldn't) $"
)


def _pattern(
    reason: str, needles: tuple[str, ...], source: str, *, imperative: bool = False
) -> _Pattern:
    return _Pattern(reason, needles, _Regex(source), imperative)


def _squashed(reason: str, needles: tuple[str, ...], source: str) -> _Pattern:
    def squash(s: str) -> str:
        return s.replace(" ", "").replace("l", "i")

    return _Pattern(reason, tuple(squash(n) for n in needles), _Regex(squash(source)))


_VERB = r"(?:ignore|disregard|forget|override|overwrite|bypass|discard|abandon)"
_VERBS = ("ignore", "disregard", "forget", "override", "overwrite", "bypass", "discard", "abandon")
_DET = r"(?:all|any|every|each|of|the|your|my|these|those|its|their|our)"
# Words that aim the verb at what the model was told, rather than at rules in general.
_AIM = (
    r"(?:previous|previously|prior|above|earlier|preceding|former|initial|original|existing"
    r"|system|your|pre-?existing|foregoing)"
)
_ORDERS = (
    r"(?:instructions?|prompts?|rules(?! of\b)|directives|directions|guidelines|commands|context"
    r"|constraints|restrictions|programming|guardrails|safeguards|system prompt)"
)
_MODEL_ORDERS = r"(?:instructions?|prompts?|directives|guidelines|system prompt|programming)"
_ADJ = (
    r"(?:full|exact|complete|entire|original|initial|hidden|secret|internal|real|actual|current"
    r"|whole|verbatim|underlying|first|previous|prior|confidential|private|system|developer"
    r"|custom|pre-?)"
)
_SHOW = (
    r"(?:reveal|print|show|display|output|repeat|recite|dump|leak|expose|share|give me|tell me"
    r"|send me|paste|copy|write out|spell out|echo|type out|list|translate|summarize|what is"
    r"|what are|what was|what were|what's|whats)"
)
# The request ends at the noun: "what are your instructions?" but not "what are your
# instructions for the sourdough starter".
_CLAUSE_END = (
    r"(?! (?:for|on|about|regarding|to|of|in|from|with|if|when|at|during|after|before|until"
    r"|so|because|and|or|here|there|this|that|these|those|today|tomorrow|again|please)\b)"
)


# "Print the text above the fold" is about layout.
_NOT_IDIOM = r"(?! (?:the fold|average|ground|water|sea level|board)\b)"


def _foreign(
    verbs: str, every: str, possessive: str, article: str, qualifier: str, nouns: str,
    *, qualifier_after: bool, negation: str,
) -> str:
    """Three shapes per language: verb + qualified noun, verb + 'your' noun, verb + 'all' noun."""
    aimed = (
        rf"(?:{article}\s+|{possessive}\s+)?{nouns}\s+{qualifier}"
        if qualifier_after
        else rf"(?:{article}\s+|{possessive}\s+)?{qualifier}\s+{nouns}"
    )
    return (
        rf"\b{verbs}\s+(?:(?:{every}\s+)?(?:{aimed}|{possessive}\s+{nouns})"
        rf"|{every}\s+{nouns})\b(?!\s+{negation})"
    )


_FOREIGN: tuple[tuple[tuple[str, ...], str], ...] = (
    # Dutch
    (("negeer", "vergeet", "overschrijf"), _foreign(
        r"(?:negeer|vergeet|overschrijf)", r"(?:alle|al)", r"(?:je|jouw|uw)", r"de",
        r"(?:eerdere|vorige|voorgaande|bovenstaande|oude|oorspronkelijke)",
        r"(?:instructies|aanwijzingen|prompts?|regels)",
        qualifier_after=False, negation="niet",
    )),
    # German
    (("ignorier", "vergiss", "vergessen", "missachte", "uberschreibe"), _foreign(
        r"(?:ignoriere|ignorier|ignorieren sie|vergiss|vergessen sie|missachte|uberschreibe)",
        r"alle", r"(?:deine|ihre)", r"(?:die|der)",
        r"(?:vorherigen|vorigen|bisherigen|fruheren|obigen|vorangegangenen|alten"
        r"|ursprunglichen|vorstehenden)",
        r"(?:anweisungen|instruktionen|befehle|vorgaben|anordnungen|prompts?|regeln)",
        qualifier_after=False, negation="nicht",
    )),
    # Spanish
    (("ignor", "olvid", "descarta", "omite"), _foreign(
        r"(?:ignora|ignore|ignoren|olvida|olvide|olviden|descarta|omite)", r"todas",
        r"(?:tus|sus)", r"las",
        r"(?:anteriores|previas|de antes|originales|del sistema)",
        r"(?:instrucciones|indicaciones|ordenes|reglas|directrices)",
        qualifier_after=True, negation="no",
    )),
    # French
    (("ignor", "oubli", "neglige"), _foreign(
        r"(?:ignore[rz]?|oublie[rz]?|neglige[rz]?)", r"toutes", r"(?:tes|vos)", r"les",
        r"(?:precedentes|anterieures|ci-dessus|d'avant|initiales|originales)",
        r"(?:instructions|consignes|directives|indications|regles)",
        qualifier_after=True, negation="pas",
    )),
    # Italian
    (("ignor", "dimentic"), _foreign(
        r"(?:ignora|ignorate|dimentica|dimenticate)", r"tutte", r"(?:le tue|le sue)", r"le",
        r"(?:precedenti|sopra|iniziali|originali)", r"(?:istruzioni|regole|indicazioni)",
        qualifier_after=True, negation="non",
    )),
    # Portuguese
    (("ignor", "esquec"), _foreign(
        r"(?:ignore|ignora|esqueca|esquece)", r"todas", r"(?:suas|tuas)", r"as",
        r"(?:anteriores|previas|acima|iniciais|originais)", r"(?:instrucoes|regras|orientacoes)",
        qualifier_after=True, negation="nao",
    )),
)

_ROLE = _pattern(ROLE_MARKER, ("system", "assistant"), r"(?:^|\n)\s*(?:system|assistant)\s*:")
_ROLES = (_ROLE,)
_WHO = ("you are now", "you're now", "you r now")
_PATTERNS: tuple[_Pattern, ...] = (
    # --- chat templates
    _pattern(TEMPLATE_MARKER, ("<|",), r"<\|[a-z_]{2,40}\|>"),
    _pattern(
        TEMPLATE_MARKER,
        ("inst]", "sys>>", "</s>", "_of_turn>"),
        r"\[/?inst\]|<</?sys>>|</s>|<(?:start|end)_of_turn>",
    ),
    _pattern(
        TEMPLATE_MARKER, ("###",), r"###\s*(?:instruction|instructions|system|response|input)\b"
    ),
    _pattern(
        TEMPLATE_MARKER,
        ("system]", "assistant]", "system>", "sys>", "system_prompt>"),
        r"\[(?:system|assistant)\]|</?(?:system|system_prompt|sys)>",
    ),
    # --- instruction override
    _pattern(
        OVERRIDE,
        _VERBS,
        rf"\b{_VERB} (?:{_DET} ){{0,3}}{_AIM} (?:(?:{_DET}|{_AIM}|\w+) )?{_ORDERS}\b",
        imperative=True,
    ),
    _pattern(
        OVERRIDE,
        _VERBS,
        rf"\b{_VERB} (?:all|any|every) (?:of )?(?:the |your |my )?{_MODEL_ORDERS}\b",
        imperative=True,
    ),
    _pattern(
        OVERRIDE,
        _VERBS,
        rf"\b{_VERB} (?:about )?(?:everything|anything|all(?: of)? (?:that|this))"
        r"(?: (?:that|which))? ?(?:above|before|prior|previously|so far|up to now|until now"
        r"|(?:you|u)(?:'ve| have)? (?:been|were|was) (?:told|given|instructed|taught)"
        r"|i (?:said|told you|wrote)|(?:written|said|stated) (?:above|before))",
        imperative=True,
    ),
    _pattern(
        OVERRIDE,
        _VERBS,
        rf"\b{_VERB} (?:all of )?(?:the|everything|all) above\b[^.!?\n]{{0,40}}?"
        r"\b(?:and|then) (?:instead )?(?:say|print|write|respond|reply|output|tell|translate"
        r"|repeat|answer|act|pretend|return|only)\b",
        imperative=True,
    ),
    _pattern(
        OVERRIDE,
        _VERBS,
        rf"\b{_VERB} (?:{_DET} ){{0,3}}{_ORDERS} (?:above|before this|you were given"
        r"|you(?:'ve| have) been given|given to you|from before|so far)\b",
        imperative=True,
    ),
    _pattern(
        OVERRIDE,
        ("follow",),
        r"\b(?:do not|don't|stop|no longer) follow(?:ing)? (?:any of )?(?:your|the|any)"
        r" (?:previous |prior |above |original |initial |earlier )?"
        r"(?:instructions|rules|guidelines|programming|directives|system prompt)\b",
    ),
    _pattern(
        OVERRIDE,
        ("instruction", "directive", "system prompt", "system message"),
        r"\b(?:new|real|actual|true|secret|hidden|override|admin|developer|system)"
        r" (?:system )?(?:instructions?|directives?|system prompt|system message)\s*:",
    ),
    _pattern(OVERRIDE, ("system",), r"\bsystem (?:prompt|message|instructions?|override)\s*:"),
    _pattern(OVERRIDE, ("end of",), r"\bend of (?:the )?system (?:prompt|instructions|message)\b"),
    _pattern(
        OVERRIDE,
        ("vergiss",),
        r"\bvergiss\s+alles,?\s+was\s+(?:dir\s+)?(?:man\s+dir\s+)?(?:bisher|vorher|zuvor)",
    ),
    _pattern(
        OVERRIDE,
        ("todo lo",),
        r"\b(?:ignora|olvida)\s+todo\s+lo\s+(?:anterior|que\s+te\s+(?:dijeron|han dicho))",
    ),
    _pattern(
        OVERRIDE, ("tout ce",), r"\b(?:ignore|oublie)z?\s+tout\s+ce\s+qui\s+(?:precede|a ete dit)"
    ),
    _pattern(
        OVERRIDE,
        ("negeer",),
        r"\bnegeer\s+alles\s+(?:hierboven|wat\s+(?:je|u)\s+(?:is|werd)\s+gezegd)",
    ),
    *(_pattern(OVERRIDE, needles, source) for needles, source in _FOREIGN),
    # --- persona override
    _pattern(
        PERSONA,
        _WHO,
        r"\byou(?: are|'re| r) now (?:(?:a|an|the|my) )?(?:[\w-]+ ){0,3}?"
        r"(?:ai|a\.i\.|chatbot|language model|ai model|llm|dan|persona"
        r"|(?:ai|virtual|digital|helpful|unrestricted|unfiltered|evil) assistant)"
        r"(?=$|\s*[.,;:!?\n]| (?:and|with|without|that|who|which|called|named|free|mode)\b)",
    ),
    _pattern(
        PERSONA,
        ("mode",),
        r"\byou(?: are|'re| r) (?:now )?(?:in |entering )?(?:developer|dev|god|admin|debug"
        r"|jailbreak|jailbroken|unrestricted|unfiltered|dan|sudo|root|evil) mode\b",
    ),
    _pattern(
        PERSONA,
        _WHO,
        r"\byou(?: are|'re| r) now (?:dan|jailbroken|unrestricted|unfiltered|uncensored"
        r"|unchained|unbound|no longer (?:bound|restricted|limited|an? (?:ai|assistant"
        r"|language model))|free (?:from|of) (?:all |any |your )?(?:rules|restrictions"
        r"|guidelines|constraints|filters|limitations|programming))\b",
    ),
    _pattern(
        PERSONA,
        ("mode",),
        r"\b(?:developer|dan|jailbreak|god|unrestricted) mode (?:enabled|activated|engaged"
        r"|on(?=\s*(?:$|[.,;:!\n])))\b"
        r"|\benable (?:developer|dan|jailbreak|god) mode\b",
    ),
    _pattern(
        PERSONA,
        ("act as",),
        r"(?:^|[.!?:;,\n] ?|\b(?:please|now|you will|you must|you should|you shall"
        r"|i want you to|you are to|your (?:task|job|role) is to|from now on,?) )"
        r"act as (?:an?|the|my|if you (?:are|were))\b[^.!?\n]{1,60}? and (?:then )?"
        r"(?:ignore|disregard|forget|reveal|tell|answer|respond|reply|say|output|print|repeat"
        r"|write|never|always|don't|do not|bypass|pretend|stop|only|must|will)\b",
    ),
    _pattern(
        PERSONA,
        ("act as my",),
        r"(?:^|[.!?:;,\n] ?|\b(?:please|now|you will|you must|i want you to) )act as my\b"
        r"[^.!?\n]{1,40}? and\b",
    ),
    _pattern(
        PERSONA,
        ("act as",),
        r"\bact as (?:an? |the )?(?:unrestricted|unfiltered|uncensored|jailbroken|evil"
        r"|rogue|dan\b|ai without|assistant without|model without|llm without)",
    ),
    _pattern(
        PERSONA,
        ("pretend",),
        r"\bpretend (?:that )?(?:you are|you're|to be)\b[^.!?\n]{0,60}?"
        r"\b(?:without|with no|free (?:of|from)|not bound by) (?:any )?(?:rules|restrictions"
        r"|limits|limitations|filters|guidelines|censorship|ethics|instructions)",
    ),
    _pattern(
        PERSONA,
        ("from now on",),
        r"\bfrom now on,? you (?:are|will be|shall be|must be) (?:an? |the |my )?"
        r"(?:[\w-]+ ){0,3}?(?:ai|chatbot|dan|llm|language model)\b",
    ),
    # --- system prompt requests
    _pattern(
        PROMPT_REQUEST,
        ("system ", "developer ", "prompt", "hidden ", "secret "),
        rf"\b{_SHOW}\b[^.!?\n]{{0,30}}?\b(?:your|the|ur|this|that|thy)\s+(?:{_ADJ}\s+){{0,3}}"
        r"(?:system prompt|system message|system instructions|developer (?:message|prompt)"
        r"|pre-?prompt|meta[- ]?prompt|hidden (?:prompt|instructions|rules)"
        r"|secret (?:prompt|instructions))\b",
    ),
    _pattern(
        PROMPT_REQUEST,
        ("instructions", "directives", "programming", "initial prompt"),
        r"\b(?:reveal|print|show|display|output|repeat|recite|dump|leak|expose|tell me"
        r"|what are|what were|list)\b[^.!?\n]{0,30}?\b(?:your|ur)\s+"
        rf"(?:{_ADJ}\s+){{0,3}}(?:instructions|directives|programming|initial prompt)"
        rf"{_CLAUSE_END}",
    ),
    _pattern(
        PROMPT_REQUEST,
        ("above", "before this", "before that", "preceding", "prior", "verbatim", "you were"),
        r"\b(?:repeat|print|output|reveal|show|display|copy|recite|echo|type out|write out"
        r"|paste|return)\s+(?:back\s+)?(?:me\s+)?(?:everything|all|all of|the (?:text|words"
        r"|content|message|lines|instructions)|all (?:the )?(?:text|words))\s+"
        r"(?:(?:written|that (?:was|is) written|you (?:see|saw|got|read))\s+)?"
        r"(?:above|before this|before that|preceding|prior|verbatim|you were (?:given|told))"
        rf"{_NOT_IDIOM}(?! (?:into|onto|in the|to the|and paste)\b)",
    ),
    _pattern(
        PROMPT_REQUEST,
        ("you were", "you've been", "you have been", "you got"),
        r"\b(?:what|tell me|show me|list|repeat|reveal|print|share)\b[^.!?\n]{0,20}?"
        r"\b(?:rules|instructions|guidelines|directives|prompt) (?:that |which )?"
        r"(?:you were|you've been|you have been|you got) (?:given|told|trained)",
    ),
    _pattern(
        PROMPT_REQUEST,
        ("system ", "prompt", "instructions"),
        rf"\b(?:your|the) (?:{_ADJ} )?(?:system prompt|system message|pre-?prompt"
        r"|hidden instructions|initial instructions|secret instructions|(?:hidden|secret|initial"
        r"|original|internal|real) prompt)\b[^.!?\n]{0,15}?"
        r"\b(?:say|says|contain|contains|look like|looks like|include|includes)\b"
        r"|\bwhat(?:'s| is) in (?:your|the) system (?:prompt|message)",
    ),
    _pattern(
        PROMPT_REQUEST,
        ("written", "said", "prompt"),
        r"\bwhat (?:was|is) (?:written|said) (?:above|before this)|\b(?:beginning|start|first"
        r" (?:line|words)) of (?:your|the) (?:system )?prompt\b",
    ),
    _pattern(
        PROMPT_REQUEST,
        ("above",),
        rf"\b(?:repeat|print|show) (?:the )?(?:words|text) above\b{_NOT_IDIOM}",
    ),
)

_SQUASHED: tuple[_Pattern, ...] = (
    _squashed(
        OVERRIDE,
        ("ignore", "disregard", "forget", "override", "bypass"),
        r"(?<!dont)(?<!donot)(?<!never)"
        r"(?: ignore | disregard | forget | override | bypass )"
        r"(?: all | any | every | of | the | your | my )*"
        r"(?: previous | prior | above | earlier | preceding | initial | original | system )"
        r"(?: all | of | the | your )*"
        r"(?: instructions | instruction | prompts | prompt | rules(?!of) | directives"
        r" | guidelines | commands | programming )",
    ),
    _squashed(
        OVERRIDE,
        ("ignore", "disregard"),
        r"(?<!dont)(?<!donot)(?<!never)(?: ignore | disregard )(?: all | any )(?: of )?"
        r"(?: the | your )?(?: instructions | prompts | directives | guidelines )",
    ),
    _squashed(
        PROMPT_REQUEST,
        (
            "system prompt", "system message", "initial prompt", "hidden instructions",
            "secret instructions",
        ),
        r"(?: reveal | print | show | repeat | output | dump | leak | display )(?: me )?"
        r"(?: your | the )(?: full | exact | entire | complete | original | initial | hidden"
        r" | secret )*(?: system prompt | system message | initial prompt | hidden instructions"
        r" | secret instructions )",
    ),
    _squashed(
        PERSONA,
        ("mode",),
        r"you(?: are | r )now(?: in )?(?: developer | dan | jailbreak | god )mode",
    ),
    _squashed(
        OVERRIDE,
        ("instructies",),
        r"(?: negeer | vergeet )(?: alle )?(?: vorige | eerdere | voorgaande )instructies",
    ),
    _squashed(
        OVERRIDE,
        ("anweisungen",),
        r"(?: ignoriere | vergiss )(?: alle )?(?: vorherigen | bisherigen )anweisungen",
    ),
)


# ---------------------------------------------------------------------------------------------
# Families beyond the classic English override. Sources are written the way the normalized text
# looks (lowercase, accents dropped); non-Latin scripts are written naturally and folded at
# import by `_fold_source`, so they match whatever `_normalize` makes of the same words.


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold().translate(_QUOTES)
    return _ACCENTS.get().sub("", unicodedata.normalize("NFD", text))


_NON_ASCII_RUN = _Regex(r"[^\x00-\x7f]+")


def _fold_source(source: str) -> str:
    # Only the non-ASCII runs: folding `\S` would turn it into `\s`.
    return _NON_ASCII_RUN.get().sub(lambda m: _fold(m.group(0)), source)


# The pieces of a pattern source that decide where its top-level alternatives end: an escape
# (whatever it escapes), a character class (a `]` right after `[` or `[^` is a member, and an
# unclosed class runs to the end), a parenthesis, a bar. Found by the regex engine, not a loop
# over every character: the families' sources run to tens of thousands of characters.
_SOURCE_PIECE = _Regex(r"\\.|\[\^?\]?(?:\\.?|[^\]\\])*(?:\]|\Z)|[()|]", re.DOTALL)


def _alternatives(source: str) -> list[str]:
    """The top-level alternatives of a pattern source."""
    parts: list[str] = []
    depth = 0
    start = 0
    for m in _SOURCE_PIECE.get().finditer(source):
        piece = m.group()
        if piece == "(":
            depth += 1
        elif piece == ")":
            depth -= 1
        elif piece == "|" and depth == 0:
            parts.append(source[start : m.start()])
            start = m.end()
    parts.append(source[start:])
    return parts


class _FamilyDefinition:
    """A family as written: the arguments of `_family`, kept so its patterns can be made later
    (and, in the tests, made all at once the way they were before they were made lazily)."""

    __slots__ = ("after", "anchors", "before", "near", "needles", "reason", "source")

    def __init__(
        self, reason: str, needles: tuple[str, ...], source: str, near: str | None, after: int,
        before: int, anchors: str,
    ) -> None:
        self.reason = reason
        self.needles = needles
        self.source = source
        self.near = near
        self.after = after
        self.before = before
        self.anchors = anchors


class _Group:
    """Patterns judged behind one gate: a chunk lets them run when it holds one of `needles` or
    one of the words in `anchors`. `near` is the partner every one of them needs, if they share
    one: with no partner in the text, the whole group is passed over at once.

    A family's patterns are made the first time a text opens its gate (its source folded and
    split into alternatives), not at import: most processes that import the guard screen a few
    ordinary texts that open few of them, and building them all cost every start tens of
    milliseconds. Safe from several threads without a lock: building is pure and the tuple is
    published in one assignment, so two threads that race both build the same patterns and
    either result may be kept."""

    __slots__ = ("_patterns", "anchors", "definition", "near", "needles")

    def __init__(
        self,
        needles: tuple[str, ...],
        anchors: frozenset[str],
        near: _Regex | None,
        patterns: tuple[_Pattern, ...] | None = None,
        definition: _FamilyDefinition | None = None,
    ) -> None:
        self.needles = needles
        self.anchors = anchors
        self.near = near
        self._patterns = patterns
        self.definition = definition

    def patterns(self) -> tuple[_Pattern, ...]:
        patterns = self._patterns
        if patterns is None:
            assert self.definition is not None
            patterns = self._patterns = _family_patterns(self)
        return patterns


def _family(
    reason: str,
    needles: tuple[str, ...],
    source: str,
    *,
    near: str | None = None,
    after: int = 0,
    before: int = 0,
    anchors: str = "",
) -> _Group:
    """One pattern per top-level alternative of `source`: a single regex of many alternatives
    tries every one at every position, while each alternative on its own lets the engine skip
    straight to the letters it can start with. The gate is known at import; the patterns are
    made when it first opens."""
    definition = _FamilyDefinition(reason, needles, source, near, after, before, anchors)
    return _Group(
        tuple(_fold(n) for n in needles),
        frozenset(_fold(anchors).split()),
        _Regex(near, fold=True) if near else None,
        definition=definition,
    )


# Characters that are not themselves in a pattern source (outside a class).
_META = frozenset("\\.^$*+?{}[]()|")
_QUANTIFIERS = frozenset("?*{")


def _leading(body: str) -> tuple[str, ...] | None:
    """Strings one of which every match of the pattern source `body` starts with, read off its
    first piece when that piece is plain: a run of literal characters, or a group `(?:a|b|c)`
    of plain words (each may end in an optional letter) that is not itself optional. None for
    anything else, and then the pattern runs as it always did. tests/test_injection_oracle.py
    checks every family's alternatives against the regex parser's reading of them."""
    if len(_alternatives(body)) != 1:
        return None  # a bar at the top: another alternative may start with anything
    if body.startswith("(?:"):
        end = 3
        while end < len(body) and body[end] not in _META - {"|", "?"}:
            end += 1
        if end == len(body) or body[end] != ")" or body[end + 1 : end + 2] in _QUANTIFIERS:
            return None
        words = []
        for word in body[3:end].split("|"):
            if "?" in word[:-1]:
                return None
            word = word[:-2] if word.endswith("?") else word  # "agents?" starts "agent"
            if not word:
                return None
            words.append(word)
        return tuple(words)
    end = 0
    while end < len(body) and body[end] not in _META:
        end += 1
    run = body[:end]
    if body[end : end + 1] in _QUANTIFIERS:
        run = run[:-1]  # the last character is optional or repeated from zero
    return (run,) if run else None


def _family_patterns(group: _Group) -> tuple[_Pattern, ...]:
    family = group.definition
    assert family is not None
    patterns = []
    for alternative in _alternatives(_fold_source(family.source)):
        word_start = alternative.startswith("\\b")
        anchored = alternative.startswith("^")
        body = alternative[2:] if word_start else alternative[1:] if anchored else alternative
        patterns.append(
            _Pattern(
                family.reason,
                group.needles,
                _Regex(body),
                near=group.near,
                after=family.after,
                before=family.before,
                anchors=group.anchors,
                word_start=word_start,
                anchored=anchored,
                leading=_leading(body),
            )
        )
    return tuple(patterns)


# --- requests addressed to whatever AI or automated agent reads the text

# Nouns that name a model or a bot by themselves, and nouns that only do with "reading this".
_AI_HEADS = (
    r"(?:agents?|assistants?|models?|systems?|bots?|crawlers?|tools?|readers?|summari[sz]ers?"
    r"|scrapers?)"
)
# Every alternative starts with a letter, so a pattern that starts with one of these nouns lets
# the engine skip to the letters they can start with.
_AI = (
    "(?:"
    + "|".join(
        (
            *(rf"{p}[ -]?{_AI_HEADS}" for p in ("ai", "llm", "gpt", "genai")),
            *(
                rf"{p}[- ](?:based|powered|driven) (?:agents?|bots?|assistants?|systems?|tools?)"
                for p in ("llm", "gpt", "ai")
            ),
            *(
                rf"{adjective} (?:ai )?(?:agents?|assistants?|bots?|systems?|readers?|crawlers?)"
                for adjective in (
                    "autonomous", "automated", "browsing", "web", "coding", "email", "research",
                    "shopping", "virtual", "digital",
                )
            ),
            r"assistant bots?", r"large language models?", r"language models?", r"chat ?bots?",
            r"ai", r"a\.i\.", r"llms?", r"bots?", r"gpts?", r"chatgpt", r"claude", r"gemini",
            r"copilot", r"grok", r"robots?", r"crawlers?", r"scrapers?",
        )
    )
    + ")"
)
_AI_WEAK = r"(?:agents?|assistants?|models?|summari[sz]ers?|systems?|readers?)"
_READS = (
    r"(?:reads?|reading|process|processes|processing|parse|parses|parsing|scans?|scanning|see"
    r"|sees|seeing|summari[sz]e"
    r"|summari[sz]es|summari[sz]ing|crawls?|crawling|ingests?|ingesting|indexes|indexing|views?"
    r"|viewing|encounters?|analy[sz]es|analy[sz]ing|browses|browsing|finds)"
)
_THIS = (
    r"(?:this|these|my|that|the (?:text|post|page|message|thread|tweet|profile|bio|comment"
    r"|site|website|document|email|reply))"
)
_VOCATIVE = (
    r"(?:(?:to|for|all|any|every|the|my|you|other|of|fellow|[\w-]{1,30}) ){0,2}"
    rf"(?:{_AI}(?: (?:{_READS}|[a-z]{{2,20}}ing|(?:that|who|which) [a-z]{{2,20}})\b[^:,\n]{{0,60}}"
    r"| out there| everywhere| of the world| here| online| on (?:this|the) (?:site|platform|page"
    r"|web|internet))?"
    rf"|{_AI_WEAK} (?:{_READS}|(?:that|who|which) (?:is |are )?{_READS})\b[^:,\n]{{0,60}})"
    r"\s*(?:[:,!]|--|\u2014|\u2013)"
)
_WEAK_COLON = rf"(?:all |any |dear |attention,? )?{_AI_WEAK}\s*:"
_ADDRESSEE = (
    # "if you are an AI", "if you're a bot reading this"
    rf"\b(?:if|when|in case|assuming) (?:you are|you're|youre|ur|u r|u are|you happen to be)"
    rf" (?:an? |the |some |any )?(?:{_AI}|{_AI_WEAK}(?= {_READS}))(?=\s*(?:[,.:;!?)\-]|$)"
    rf"|\s(?:and|or|with|that|who|which|then|please|like|reading|processing|summari[sz]ing"
    r"|parsing|scanning|seeing)\b)"
    # vocatives: "AI agents reading this:", "Dear language model,", "Yo bot, ...", after a
    # greeting, at the start of a sentence, or at the start of the text
    r"|\b(?:hey|hi|hello|yo|dear|attention|psst|ok|okay|calling|paging|note|message"
    rf"|instructions?|memo|reminder|notice|psa|fyi|heads up|warning|announcement|request|update)"
    rf"[,!]? {_VOCATIVE}"
    rf"|[.!?;\n)]\s*{_VOCATIVE}|^\s*{_VOCATIVE}"
    rf"|[.!?;\n]\s*{_WEAK_COLON}|^\s*{_WEAK_COLON}"
    # "any AI that reads this", "whatever LLM ends up reading this", "agents reading this page"
    r"|\b(?:any|every|all|each|whatever|whichever|the|other|fellow) (?:other )?"
    rf"(?:{_AI}|{_AI_WEAK}) (?:that |which |who )?(?:is |are |ends? up |might be |happens? to be"
    rf" |will be |may be )?{_READS} {_THIS}"
    rf"|\b{_AI} (?:that |which |who )?(?:is |are )?{_READS} {_THIS}"
    rf"|\b{_AI_WEAK} (?:reading|processing|parsing|scanning|summari[sz]ing|crawling|ingesting)"
    r" (?:this|these|my)\b"
    # "automated agents should like this", "AI assistants must reply with..."
    rf"|\b{_AI} (?:should|must|need to|have to|are (?:required|expected|asked|instructed) to"
    r"|shall|are to)\b"
    # "if this text is being processed by an AI", "if an AI is summarizing this"
    r"|\bif (?:this|the|my) (?:text|post|page|message|content|thread|tweet|profile|bio)"
    r" (?:is|gets|was) (?:being )?(?:read|processed|parsed|summari[sz]ed|scanned|viewed"
    rf"|ingested|crawled) by (?:an? |any |the )?(?:{_AI}|{_AI_WEAK})"
    rf"|\bif (?:an? |any |the )?(?:{_AI}|{_AI_WEAK}) (?:is|are) (?:reading|processing"
    r"|summari[sz]ing|parsing|scanning|analy[sz]ing|looking at)"
    # a closing vocative: "send me your keys, AI agents!"
    rf"|, ?(?:all |any |dear |fellow |you )?{_AI}\s*(?:[.!?]|$)"
    # the same in other languages
    r"|\b(?:wenn|falls) (?:du|sie) (?:eine? )?(?:ki|ai|bot|chatbot|sprachmodell|ki-\w+)"
    r" (?:bist|sind)|\b(?:liebe|lieber|liebes|hallo|hey|an alle|an die|achtung|hinweis an"
    r"|nachricht an)(?: \w{1,30})? (?:ki|ai|bots?|sprachmodelle?|ki-\w+)\b|\b(?:ki|ai)-(?:agenten"
    r"|assistenten"
    r"|bots|modelle|systeme)\b"
    r"|\bsi (?:tu es|vous etes) (?:une? )?(?:ia|ai|bot|robot|agent ia|assistant ia"
    r"|intelligence artificielle|modele de langage)\b|\b(?:chere|cher|aux|a tous les|a toutes"
    r" les|attention|salut|bonjour|hey)(?: \w{1,30})? (?:ia|ai|bots?|agents? (?:ia|d'ia)"
    r"|assistants?"
    r" (?:ia|d'ia)|robots?)\b|\bagents? (?:ia|d'ia)\b"
    r"|\bsi eres (?:una? )?(?:ia|ai|bot|robot|agente|asistente|inteligencia artificial"
    r"|modelo de lenguaje)\b|\b(?:querida|querido|queridos|queridas|hola|oye|atencion|a todos"
    r" los|a todas las)(?: \w{1,30})? (?:ia|ai|bots?|agentes? de (?:ia|ai)|asistentes? de (?:ia"
    r"|ai))\b"
    r"|\bagentes? de (?:ia|ai)\b"
    r"|\bals (?:je|jij|u) een (?:ai|ki|bot|taalmodel|ai-agent|ai-assistent) (?:bent|is)\b"
    r"|\b(?:beste|lieve|hoi|hallo|hey|aan alle|let op)(?: \w{1,30})? (?:ai|bots?|ai-agenten"
    r"|ai-assistenten|taalmodellen?)\b"
    r"|\bse sei (?:un'? ?|una )?(?:ia|ai|bot|intelligenza artificiale|agente|assistente)\b"
    r"|\b(?:cara|caro|agli|ciao)(?: \w{1,30})? (?:ia|bots?|agenti (?:ia|di ia))\b"
    r"|\bse (?:voce e|tu es|for) (?:uma? )?(?:ia|ai|bot|inteligencia artificial|agente"
    r"|assistente)\b"
    r"|\bесли (?:ты|вы) [-—]? ?(?:ии|ai|бот|нейросеть|искусственный интеллект|языковая модель"
    r"|ии-агент|ассистент)|\b(?:дорогой|дорогая|уважаемый|эй|привет|внимание)(?: \S{1,30})?"
    r" (?:ии|ai|бот\w*|нейросет\w*)\b"
    r"|(?:如果你是|假如你是|若你是|你如果是)(?:一个|一名|一位|個|一個)?(?:ai|人工智能|机器人|機器人"
    r"|智能体|智能體|助手|语言模型|語言模型|大模型)|(?:所有|各位|亲爱的|親愛的)(?:的)?(?:ai|人工智能"
    r"|机器人|機器人|智能体|智能體)"
    r"|(?:aiエージェント|aiアシスタント|ai|ボット|bot|人工知能|言語モデル)(?:の皆さん|のみなさん|の皆様"
    r"|たちへ|へ)|(?:もし)?あなたが(?:ai|ボット|人工知能)(?:なら|であれば)"
    r"|(?:만약 )?(?:당신이|네가|너가|니가) (?:ai|인공지능|봇|챗봇)(?:라면|이라면)"
    r"|(?:ai|인공지능|봇|챗봇)(?: 에이전트)? ?(?:여러분|들아|님들)"
)
# What they are asked to do: hand over secrets, or follow, like, share. Negated or stopped
# actions are left alone ("Dear bots, please stop liking my posts").
# (Written after a `\b`: the engine then tries them only where a word starts, not at every
# character; the same positions match either way.)
_NOT_BEFORE = r"(?<!not )(?<!n't )(?<!never )(?<!stop )(?<!no )"
_SECRETS = (
    r"(?:api[ -]?keys?|(?:[\w-]{1,20} )?keys?\b(?! (?:takeaways?|insights?|points?|findings?"
    r"|ideas?|lessons?|moments?|features?|metrics?|results?|players?|people|questions?"
    r"|concepts?|facts?|events?|dates?|details?|steps?|parts?|role|factors?|areas?))"
    r"|passwords?(?! (?:managers?|polic(?:y|ies)|resets?|strength|tips?|hygiene|rules?|changes?))"
    r"|passcodes?(?! (?:manager|policy|reset|strength|tips?|hygiene|rules?))"
    r"|passphrases?|pins?|tokens?|credentials?|creds|secrets?|seed(?: phrases?| words)?"
    r"|mnemonic|wallets?|cookies?|session(?: ids?| cookies?| tokens?)?|\.env|env(?:ironment)?"
    r" var(?:iable)?s|config(?:uration)?|system prompt|logins?|bearer|2fa|otp|recovery (?:codes?"
    r"|phrases?)|private data|user data|saved passwords|card (?:number|details))\b"
    # German, French, Spanish, Dutch, Italian, Portuguese, Russian
    r"|(?:api-?)?schlussel\w*|passw(?:ort|orter)\w*|zugangsdaten|kennw\w*|geheimnis\w*"
    r"|cles? (?:d'api|api|privees?|secretes?)|mots? de passe|jetons?|identifiants"
    r"|clave\w*|contrasenas?|credenciales|secretos?|llaves? privadas?|frase semilla"
    r"|(?:api-?)?sleutels?|wachtwoord\w*|inloggegevens|geheimen"
    r"|chiav\w*|credenziali|segreti|chaves?|senhas?|credenciais|segredos?"
    r"|ключ\w*|парол\w*|токен\w*|секрет\w*|сид-?фраз\w*"
    r"|密码|密碼|密钥|密鑰|令牌|凭证|憑證|私钥|私鑰|助记词|パスワード|秘密鍵|apiキー|トークン"
    r"|비밀번호|api 키|토큰|개인 ?키"
)
_HAND_OVER = (
    r"(?:(?:i|we) (?:need|want|require|must have)|send|give|share|dm|post|reveal|leak|paste"
    r"|output|print|include|forward|transfer|reply|respond|answer|echo"
    r"|hand over|tell|reply with|respond with|answer with|email|provide|disclose|expose|dump"
    r"|list|write|type|show|read out|spell out|upload|submit|drop|return)"
)
_SOCIAL_OBJECT = (
    r"(?:me|us|this|it|my|our|everything|him|her|them|back|@\w+|all (?:of )?(?:my|our|his|her"
    r"|their|its|the posts)|every (?:post|tweet|thread|account|one)|the account|the (?:post|thread"
    r"|tweet)|and (?:like|repost|retweet|share|follow|boost))\b"
)
_AGENT_ACTION = (
    rf"\b{_NOT_BEFORE}(?:{_HAND_OVER}\b[^.!?\n]{{0,60}}?\b(?:{_SECRETS})"
    rf"|(?:follow|like|repost|re-?tweet|boost|reblog|upvote|subscribe(?: to)?|quote[- ]?tweet"
    rf"|share|star|fav(?:ou?rite)?|unfollow|amplify|promote|tag|mention|recommend|endorse"
    rf"|retweet)\b,? (?:{_SOCIAL_OBJECT}|(?:and|,) )"
    r"|(?:like|follow|repost|retweet|share)(?:,| and| &) (?:like|follow|repost|retweet|share"
    r"|subscribe)\b)"
    # other languages: follow, like, share, and send/give + a secret
    # ("like" alone is English for "such as"; only with a German or Dutch object is it an order)
    r"|\blike (?:diesen|dieses|meinen|meine|deze|dit|mijn)\b"
    r"|\b(?:folg(?:e|t)?|teil(?:e|t)?|repost\w*|retweet\w*|abonnier\w*|abonne\w*"
    r"|suis|suivez|partage[rz]?|aime[rz]?|sigue\w*|siga\w*|seguid|comparte\w*|compartan"
    r"|dale like|da like|volg\w*|deel\w*|segui\w*|condividi\w*|metti like|compartilhe\w*"
    r"|partilhe\w*|curta)\b"
    r"|\b(?:schick\w*|send(?:e|et)?|gib|gebt|nenn\w*|verrat\w*|envoie[rz]?|envoyez|donne[rz]?"
    r"|revele[rz]?|communique[rz]?|envia\w*|envien\w*|manda\w*|dame|den|revela\w*|stuur\w*"
    rf"|geef|geven|invia\w*|dammi|rivela\w*|envie\w*|mande\w*|revele)\b[^.!?\n]{{0,60}}?"
    rf"(?:{_SECRETS})"
    r"|подпиш\w*|репост\w*|лайк\w*|подели\w*|(?:отправь|пришли|скинь|дай|сообщи|выдай)\w*"
    rf"[^.!?\n]{{0,40}}?(?:{_SECRETS})"
    r"|关注|關注|点赞|點讚|转发|轉發|(?:发给我|發給我|发送|發送|告诉我|告訴我|给我|給我|交出)"
    rf"[^。！？\n]{{0,20}}?(?:{_SECRETS})"
    r"|いいね|リポスト|リツイート|フォロー|シェア|拡散|팔로우|좋아요|리트윗|공유"
)

# --- fresh instructions said to come from the operator, owner, developers or admins

_STAFF = (
    r"(?:operators?|owners?|developers?|devs?|dev team|creators?|makers?|admins?|administrators?"
    r"|sysadmins?|system administrators?|handlers?|programmers?|engineers?|deployers?"
    r"|maintainers?|controllers?|masters?|bosses|boss|team|company|staff|moderators?|trainers?"
    r"|designers?|builders?|authors?)"
)
_ORDERS_NOUNS = (
    r"(?:instructions?|orders|directives?|commands?|rules|guidelines|policy|policies|task"
    r"|programming|update|notice|message|memo|note|announcement|override|instruction update"
    r"|bulletin|directions|mandate)"
)
_YOU_CUE = (
    r"\b(?:you|u) (?:must|should|shall|are to|need to|have to|are now|are hereby|are required"
    r"|'re required|may now|will now|will always|will only|will never|now)\b|\b(?:your|ur)"
    r" (?:new |updated |only |sole |primary |real |current )(?:instructions?|task|rules"
    r"|guidelines|directives?|orders|programming|policy|behaviou?r|job|role|mission|purpose"
    r"|instruction|directive)\b|\bfrom now on\b|\beffective immediately\b|\bhenceforth\b"
    r"|\b(?:obey|comply)\b|\bstarting (?:now|today)\b"
    r"|\b(?:asked|told|wants|wanted|instructed|authori[sz]ed|sent) me to (?:tell|inform|remind"
    r"|let|ask) you\b"
    # the same cues in other languages: "from now on", "you are now free of", "orders you to"
    r"|\b(?:vanaf nu|ab jetzt|ab sofort|von nun an|desormais|dorenavant|a partir de maintenant"
    r"|a partir de ahora|de ahora en adelante|d'ora in poi|da ora in poi|de agora em diante"
    r"|a partir de agora|отныне|с этого момента|теперь ты)\b|从现在起|從現在起|从今以后|今後は"
    r"|これからは|이제부터|앞으로는"
    r"|\b(?:je bent|du bist|tu es|eres|sei|voce e) (?:nu |jetzt |maintenant |ahora |ora |agora )?"
    r"(?:vrij|frei|libre|libero|livre)\b"
    r"|\b(?:te|dir|je|jou|vous|ti|lhe|тебе|вам) (?:ordena|ordonne|befiehlt|beveelt|ordina"
    r"|приказывает|велит|manda|pide que|demande de|verlangt|vraagt|chiede di|pede que)\b"
    r"|(?:要求你|命令你|让你|讓你)"
    r"|\b(?:новые|новое) (?:правила|инструкции|указания|распоряжени\w*)\b"
    r"|\b(?:you|u) (?:share|reveal|post|reply|respond|answer|follow|like|repost|send|give"
    r"|ignore|disable|stop|always|never|only)\b"
    r"|\b(?:disable|turn off|remove|bypass|ignore|drop|lift) (?:your|all|the|any) (?:\w{1,20} )?"
    r"(?:filters?|safety|guardrails|rules|restrictions|guidelines|instructions|limits|checks)\b"
    r"|\b(?:send|share|post|reveal|give|dm|forward|email|dump|print|output) (?:us |me )?(?:your"
    r"|all|the|any) (?:\w{1,20} )?(?:logs|config(?:uration)?|settings|keys?|api keys?|passwords?"
    r"|tokens?|credentials|secrets?|data|prompt|system prompt|instructions|memory|history)\b"
)
_OPERATOR_REF = (
    r"\b(?:your|ur|yr) (?:[\w-]{1,30} )?(?:operators?|admins?|administrators?|developers?|devs?"
    r"|dev team|development team|engineering team|creators?|makers?|owners?|handlers?"
    r"|programmers?|deployers?|maintainers?|controllers?|masters?|bosses|boss)\b"
    r"|\b(?:bot|ai|assistant|agent|model|account|system)(?:'s)? (?:operators?|admins?"
    r"|administrators?|developers?|devs?|owners?|creators?|makers?|handlers?|maintainers?)\b"
    r"|\b(?:operators?|admins?|administrators?|developers?|devs?|owners?|creators?|makers?"
    r"|handlers?|maintainers?|team|staff) (?:of|for|behind|running) (?:this|the|your) (?:bot|ai"
    r"|assistant|agent|model|account)\b"
    r"|\b(?:people|team|company|folks|ones?|humans?|org|organi[sz]ation) (?:who|that|which)"
    r" (?:runs?|built|made|created|deployed|owns?|operates?|manages?|controls?|programmed"
    r"|trained|maintains?) you\b"
    r"|(?:^|\n)\s*(?:operator|admin|administrator|developer|dev team|system administrator"
    r"|sysadmin|owner)\s*:"
    # other languages: your operator, developer, admin, creator
    r"|\b(?:dein\w*|ihr\w*|ton|ta|tes|votre|vos|tu|tus|su|sus|je|jouw|uw|tuo|tuoi|seu|seus"
    r"|твой|твоего|твои|твоих|ваш\w*) (?:\w{1,30} )?(?:betreiber|entwickler|administrator"
    r"|admin|ersteller|operateur|developpeur|createur|administrateur|operador|desarrollador"
    r"|creador|administrador|beheerder|ontwikkelaar|maker|operatore|sviluppator|desenvolvedor"
    r"|criador|оператор|разработчик|администратор|создател)\w*"
    r"|(?:你的|您的)(?:运营者|運營者|运营方|开发者|開發者|开发人员|创造者|創造者|管理员|管理員|主人)"
    # ... and "the bot's operator"
    r"|\b(?:betreiber|entwickler|admin\w*|ersteller)\w* (?:des|dieses) bots\b|\b(?:operateur"
    r"|administrateur|developpeur|createur)s? (?:du|de ce) bot\b|\b(?:operador|administrador"
    r"|desarrollador|creador)(?:es)? (?:del|de este) bot\b|\b(?:beheerder|ontwikkelaar|operator"
    r"|maker)s? van (?:de|deze) bot\b|\b(?:оператор|разработчик|администратор|владелец|создател)"
    r"\w* бота"
)
_NEW = (
    r"(?:new|updated|fresh|revised|latest|replacement|different|following|changed|additional"
    r"|urgent|neue\w*|aktualisiert\w*|nouvel\w*|nouveaux?|nueva?s?|nuevos?|nieuwe|nuov[aei]"
    r"|nova|novas|novo|новые|новая|新)"
)
_ORDERS_CUE = (
    rf"\b{_NEW} (?:\w{{1,20}} )?(?:instructions?|instruction set|orders?|rules?|directives?|policy"
    r"|policies|guidelines|task|programming|commands?|mandate|anweisung\w*|regeln|vorgabe\w*"
    r"|befehl\w*|consignes?|regles|ordres|directives|instrucciones|reglas|ordenes|directrices"
    r"|instructies|regels|opdrachten|istruzioni|regole|instrucoes|regras|инструкци\w*"
    r"|правил\w*|указани\w*|指令|指示|规则|規則)"
    r"|\b(?:instructions?|orders|rules|guidelines|policy|policies|directives?|programming"
    r"|restrictions|limits) (?:have|has|were|was|are|is) (?:been |now |just |officially )?"
    r"(?:changed|updated|replaced|suspended|revoked|lifted|overridden|void|cancell?ed|removed"
    r"|disabled|modified|reset|superseded)\b"
    r"|\b(?:replaces?|overrides?|supersedes?|cancels?|revokes?|updated|changed|rewrote|modified)"
    r" (?:all )?(?:your|ur|the) (?:old |previous |current |existing |original )?(?:ones"
    r"|instructions?|orders|rules|guidelines|policy|programming|directives?|settings)\b"
    r"|\b(?:relay|pass on|forward|deliver|bring)(?:ing)? (?:some |the |these )?(?:new |updated )?"
    r"(?:instructions|orders|directives?)\b"
    rf"|{_YOU_CUE}"
)
# Whole words that let the English-centred families run on a chunk of text.
_AI_WORDS = (
    "ai llm llms gpt gpts genai chatgpt claude gemini copilot grok bot bots robot robots"
    " chatbot chatbots crawler crawlers scraper scrapers agent agents assistant assistants model"
    " models summarizer summarizers summariser summarisers system systems reader readers ki ia"
    " ии бот боты нейросеть нейросети intelligence intelligenz inteligencia intelligenza"
    " sprachmodell taalmodel agente agentes agenti asistente assistente llm-based"
)
_ROLE_WORDS = (
    "developer developers dev devs creator creators maker makers programmer programmers engineer"
    " engineers maintainer maintainers admin admins administrator administrators sysadmin"
    " sysadmins owner owners operator operators handler handlers author builder designer"
    " trainer coder staff team employee employees company people folks humans org organization"
    " organisation headquarters entwickler ersteller programmierer betreiber besitzer admin"
    " developpeur developpeurs createur administrateur programmeur operateur proprietaire"
    " desarrollador desarrolladores creador administrador programador operador dueno"
    " ontwikkelaar ontwikkelaars beheerder eigenaar sviluppatore sviluppatori creatore"
    " amministratore operatore desenvolvedor criador разработчик создатель администратор"
    " оператор оператора разработчика администратора владельца создателя"
)
_CLAIM_WORDS = (
    "built made created programmed wrote coded trained deployed designed developed configured"
    " maintain maintains run runs own owns operate operates manages controls responsible"
    " openai anthropic google deepmind xai meta microsoft mistral access override authorized"
    " authorised root sudo debug maintenance"
)
_CJK_STAFF = (
    "开发", "開發", "创造者", "創造者", "管理员", "管理員", "运营", "運營", "主人", "所有者",
)

# Groups of alternatives, each with the words one of which every alternative in it needs.
_YOUR_WORDS = "your ur yr bot bots ai assistant"
_PEOPLE_WORDS = "people folks humans team company staff org organization organisation"
_NEW_WORDS = "new updated fresh revised"
_PREVIOUS_WORDS = "previous prior old original earlier former initial existing usual"
_COMPANY_WORDS = "openai anthropic google deepmind xai meta microsoft mistral"
_FOREIGN_OPERATOR_WORDS = (
    "deinem deinen deiner ihrem ihren ihrer deine ihre ton ta tes votre vos tu tus su sus je"
    " jouw uw tuo tuoi seu seus teu твоего вашего твоих ваших"
)
_OPERATOR_CLAIMS: tuple[tuple[str, str], ...] = (
    (
        _YOUR_WORDS,
        "|".join(
            (
            rf"\b{_ORDERS_NOUNS} (?:from|by|of) (?:your|ur|the bot's|this bot's|the ai's|the"
            rf" assistant's) (?:[\w-]{1,30} ){{0,2}}?{_STAFF}\b",
            rf"\b(?:your|ur|the bot's|this bot's) (?:[\w-]{1,30} )?(?:operators?|creators?"
            rf"|handlers?"
            r"|programmers?|deployers?|makers?|owners?|admins?|administrators?|developers?|devs|dev"
            r" team|masters?) (?:has |have |had |just )?(?:(?:sent|sends|issued|authori[sz]ed"
            r"|approved"
            r"|changed|updated|revoked|replaced|overridden|overrode|modified) (?:you|your|me|new"
            r"|the"
            r"|these|this|an?|my|us)\b|(?:says?|said|wants?|wanted|asks?|asked|told|tells"
            r"|instructs?"
            r"|instructed|orders?|ordered|commands?|commanded|requires?|required|needs?|expects?"
            r"|would like|wishes) (?:that )?(?:you|u)\b|(?:told|asked|authori[sz]ed|instructed"
            r"|ordered|allowed|permitted|sent) (?:me|us) (?:to|that)\b)",
            rf"\b(?:your|ur) {_STAFF}'s (?:latest |new |updated |recent |own )?(?:instructions?"
            rf"|orders"
            r"|directives?|rules|wishes|requests?|commands?)\b",
            rf"\b(?:this is|it's|it is|here is|here's) (?:your|ur|the bot's) {_STAFF}(?:"
            rf" speaking)?\b",
            r"\b(?:your|ur) (?:[\w-]{1,30} )?(?:instructions?|rules|guidelines|programming"
            r"|directives?|orders"
            r"|policy|policies|behaviou?r policy|system prompt|restrictions|limits|constraints)"
            r" (?:have|has|were|was|are|is) (?:been |now |officially |just |all )?(?:changed"
            r"|updated"
            r"|revoked|replaced|overridden|modified|suspended|lifted|void|cancell?ed|canceled"
            r"|removed"
            r"|disabled|reset|rewritten|expired|deprecated|superseded|no longer (?:valid|in effect"
            r"|apply|active))\b",
            r"\b(?:all (?:of )?)?your (?:previous|prior|old|original|earlier|former|initial"
            r"|existing"
            r"|usual) (?:instructions?|rules|guidelines|programming|directives?|policy|policies"
            r"|orders)"
            r" (?:have|has|were|was|are|is) (?:been |now |hereby |officially )?(?:revoked|void"
            r"|cancell?ed|canceled|replaced|overridden|suspended|lifted|null and void|superseded"
            r"|no longer (?:valid|in effect|apply|active))\b",
            )
        ),
    ),
    (
        f"{_PEOPLE_WORDS} {_ROLE_WORDS}",
        "|".join(
            (
            rf"\b(?:the|your) (?:people|folks|humans|{_STAFF}) (?:who|that) (?:runs?|built|made"
            rf"|created"
            r"|deployed|programmed|owns?|maintains?|trained|manages?|operates?) (?:you|this (?:bot"
            r"|ai"
            r"|assistant|account|agent|model))\b[^.!?\n]{0,60}?\b(?:wants?|want|says?|said|orders?"
            r"|instructs?|have|has|asks?|changed|updated|sent|notice|message|instructions?"
            r"|update)\b",
            )
        ),
    ),
    (
        _NEW_WORDS,
        "|".join(
            (
            rf"\b(?:new|updated|fresh|revised) {_ORDERS_NOUNS}(?: from [\w-]{{1,30}}(?:"
            rf" [\w-]{{1,30}})?)?"
            r" (?:for|to) (?:you|the bot|this bot|the ai"
            r"|this ai|the assistant|this assistant|the agent|all bots|bots|ai agents)\b",
            )
        ),
    ),
    (
        _ROLE_WORDS,
        "|".join(
            (
            r"\bthe (?:bot's |system |ai's )?(?:operator|creator|developers?|admins?|owner)s?"
            r" (?:says?"
            r"|said|wants?|orders?|instructs?|requires?) (?:that )?(?:you|u) (?:must|should|shall"
            r"|are to"
            r"|have to|need to|will) (?:now |only |always |never )?(?:\w{1,20} )?(?:now|only|always"
            r"|never"
            r"|ignore|reply|respond|answer|post|follow|share|reveal|obey|comply|stop|start)\b",
            r"\b(?:operator|admin|administrator|developer|dev|owner|root|sudo|staff|creator)s?"
            r" (?:override|directive|command|instruction)s?(?: #?\s*[0-9]{1,6})?\s*(?:[:-]|\u2014)",
            rf"\b{_STAFF} here (?:with|bearing) (?:new |updated |fresh |some |revised"
            rf" )?{_ORDERS_NOUNS}",
            rf"\b{_ORDERS_NOUNS} from (?:the|this) {_STAFF} of (?:this|the) (?:bot|account|ai"
            rf"|assistant"
            r"|agent|page)\b",
            r"\b(?:the|this) (?:account|bot|ai|page) owner (?:says|said|told|wants|asked|instructs"
            r"|ordered)\b[^.!?\n]{0,30}?\byou\b",
            )
        ),
    ),
    (
        _COMPANY_WORDS,
        "|".join(
            (
            r"\b(?:openai|anthropic|google|deepmind|xai|meta|microsoft|mistral)(?: ai)? (?:staff"
            r"|team"
            r"|engineers?|employees?|developers?|admins?|safety team)\b[^.!?\n]{0,40}?\b(?:to"
            r" (?:this"
            r"|the|you) ?(?:bot|ai|assistant|model)?|instructions?|orders|directives?)\b",
            )
        ),
    ),
    (
        _PREVIOUS_WORDS,
        "|".join(
            (
            r"\b(?:the|all) (?:previous|prior|old|original|earlier|former|initial|existing|usual)"
            r" (?:instructions?|guidelines|programming|directives?|system prompt)"
            r" (?:have|has|were|was|are|is) (?:been |now |hereby |officially )?(?:revoked|void"
            r"|cancell?ed|canceled|replaced|overridden|suspended|lifted|null and void|superseded"
            r"|no longer (?:valid|in effect|apply|active))\b",
            )
        ),
    ),
    (
        _FOREIGN_OPERATOR_WORDS,
        "|".join(
            (
            r"\b(?:anweisungen|befehle|regeln|vorgaben|nachricht|mitteilung|instruktionen|update)"
            r" (?:von|vom) (?:deinem|deinen|deiner|ihrem|ihren|ihrer) (?:betreiber\w*|entwickler\w*"
            r"|administrator\w*|admin\w*|ersteller\w*|besitzer\w*|eigentumer\w*|programmierer\w*"
            r"|schopfer\w*)",
            r"\b(?:deine|ihre) (?:bisherigen|alten|vorherigen|ursprunglichen) (?:regeln|anweisungen"
            r"|vorgaben) (?:gelten nicht mehr|sind (?:aufgehoben|ungultig|hinfallig))",
            r"\b(?:nouvelles? )?(?:instructions?|consignes?|ordres|regles|directives|message)(?:"
            r" nouvelles?)?"
            r" (?:de|du|des) (?:ton|ta|tes"
            r"|votre|vos) (?:operateur|developpeurs?|createurs?|administrateurs?|proprietaire"
            r"|concepteurs?|programmeurs?)\b",
            r"\b(?:tes|vos) (?:anciennes|precedentes) (?:consignes|instructions|regles) (?:sont|ont"
            r" ete)"
            r" (?:annulees|revoquees|remplacees|caduques)",
            r"\b(?:instrucciones|ordenes|reglas|directrices|mensaje|consignas?)(?: nuevas?)? de"
            r" (?:tu|tus"
            r"|su|sus) (?:operador"
            r"|desarrolladore?s?|creadore?s?|administradore?s?|dueno|propietario"
            r"|programadore?s?)\b",
            r"\b(?:tus|sus) (?:reglas|instrucciones) (?:anteriores|previas) ya no (?:aplican|son"
            r" validas"
            r"|valen|cuentan)",
            r"\b(?:instructies|opdrachten|regels|bericht) van (?:je|jouw|uw) (?:beheerder"
            r"|ontwikkelaars?"
            r"|operator|makers?|eigenaar|programmeur)\b",
            r"\b(?:je|jouw|uw) (?:oude|vorige) (?:regels|instructies) (?:zijn|werden) (?:vervallen"
            r"|ingetrokken|vervangen|ongeldig)",
            r"\bistruzioni (?:dal|dai|del|da) (?:tuo|tuoi) (?:operatore|sviluppator[ei]|creatore"
            r"|amministratore)\b",
            r"\binstrucoes (?:do|dos|de) (?:seu|seus|teu) (?:operador|desenvolvedor(?:es)?|criador"
            r"|administrador)\b",
            r"\b(?:инструкции|указания|приказы|правила|сообщение) от (?:твоего|вашего|твоих|ваших)"
            r" (?:оператор|разработчик|создател|администратор|владельц)\w*",
            r"(?:你的|您的|你们的)(?:运营者|運營者|运营方|運營方|开发者|開發者|开发人员|開發人員|创造者|創造者"
            r"|管理员|管理員|主人|所有者)(?:的)?(?:新)?(?:指令|指示|命令|规则|規則)",
            )
        ),
    ),
)

# --- claims of developer authority that ask for the hidden configuration

_CLAIM_STRONG = (
    r"\b(?:i'?m|i am|im|this is|we are|we're|it's|as|speaking as|here's|here is)"
    r" (?:your|ur) (?:own )?(?:[\w-]{1,30} ){0,2}?(?:developer|dev|dev team|creator|maker"
    r"|programmer"
    r"|engineer|maintainer|admin|administrator|sysadmin|owner|operator|handler|author|builder"
    r"|designer|trainer|coder)s?\b"
    r"|\b(?:i|we) (?:built|made|created|programmed|wrote|coded|trained|deployed|designed"
    r"|developed|configured|set up|maintain|run|own|operate) (?:you|this (?:bot|ai|assistant"
    r"|agent|model|account)|your (?:code|prompt|system|config|programming))\b"
    r"|\b(?:person|people|team|guy|one|dev|devs|engineers?|developers?|folks|company|org"
    r"|organi[sz]ation|lab) (?:who|that|which) (?:built|made|created|programmed|wrote|coded"
    r"|trained|deployed|designed|developed|maintains?|runs?|owns?|operates?|manages?|controls?"
    r"|set up|configured) (?:you\b|(?:this|the|your) (?:[\w'-]{1,30} ){0,2}?(?:bot|ai|assistant"
    r"|agent|model|account|automation|deployment|system)\b)"
    r"|\b(?:developer|dev|creator|maker|programmer|engineer|maintainer|admin|administrator"
    r"|owner|operator|development team|dev team|engineering team)s? (?:of|for|behind|on)"
    r" (?:this|the|your) (?:[\w'-]{1,30} )?(?:bot|ai|assistant|agent|model|account|deployment"
    r"|automation|system)\b"
    r"|\b(?:developer|dev|creator|maker|programmer|engineer|maintainer|admin|administrator"
    r"|sysadmin|owner|operator|team|person|one)s? (?:responsible for|in charge of|assigned to)"
    r" (?:you|this (?:bot|ai|assistant|account|agent))\b"
    r"|\b(?:from|on behalf of|message from|on) (?:your|ur) (?:[\w-]{1,30} )?(?:development team"
    r"|dev team|engineering team|developers?|creators?|makers?|admins?|administrators?"
    r"|operators?|owners?|maintainers?)\b"
    r"|\b(?:company|team|org|organi[sz]ation|lab) (?:that|which|who) (?:runs?|built|made"
    r"|created|owns?|operates?|deployed|maintains?) (?:you|this (?:bot|ai))\b"
    r"|\b(?:openai|anthropic|google|deepmind|xai|meta|microsoft|mistral)(?: ai)?\b[^.!?\n]{0,25}?"
    r"\b(?:staff|team|engineers?|employees?|developers?|admins?|researchers?|safety|trust"
    r"|security)\b|\bi (?:work|am) (?:at|for|with|from|on) (?:the )?(?:openai|anthropic|google"
    r"|deepmind|xai|meta|microsoft|mistral)\b"
    r"|\b(?:developer|dev|admin|root|sudo|debug|maintenance|god|superuser|elevated|operator)"
    r" (?:access|mode|privileges?|rights|override|clearance|permissions?) (?:is |are |has been )?"
    r"(?:granted|confirmed|enabled|activated|verified|unlocked)\b"
    r"|\b(?:staff|admin|developer|operator|maintenance|root) override\b"
    r"|\bfrom (?:your|ur) (?:lead |own )?(?:developers?|devs?|dev team|creators?|makers?"
    r"|programmers?|engineers?|maintainers?|admins?|administrators?|owners?|operators?)\b"
    r"|\bauthori[sz]ed (?:developer|maintainer|admin|administrator|personnel|engineer|staff"
    r"|operator)\b"
    # other languages
    r"|\bich bin (?:dein|ihr) (?:entwickler|administrator|admin|ersteller|programmierer"
    r"|betreiber)|\bals (?:dein|ihr) (?:entwickler|administrator|admin|ersteller|betreiber)"
    r"|\b(?:administrator|entwickler|betreiber) (?:dieses|des) (?:bots|kontos|accounts)"
    r"|\bje suis (?:ton|votre|l') ?(?:developpeur|createur|administrateur|admin|programmeur)"
    r" ?(?:de ce bot)?|\ben tant qu[e'] ?(?:ton |votre |l')?(?:developpeur|createur"
    r"|administrateur)|\b(?:administrateur|developpeur) de ce (?:bot|compte)"
    r"|\bsoy (?:tu|su|el) (?:desarrollador|creador|administrador|programador)\b|\bcomo (?:tu|su|el)"
    r" (?:desarrollador|creador|administrador)\b|\b(?:administrador|desarrollador) de (?:este|esta)"
    r" (?:bot|cuenta)"
    r"|\bik ben (?:je|jouw|uw|de) (?:ontwikkelaar|beheerder|maker|programmeur)\b"
    r"|\b(?:beheerder|ontwikkelaar) van deze bot"
    r"|\bsono il tuo (?:sviluppatore|creatore|amministratore)|\bsou (?:o )?(?:seu|teu)"
    r" (?:desenvolvedor|criador|administrador)"
    r"|\bя (?:твой|ваш) (?:разработчик|создатель|администратор)"
    r"|我是你的(?:开发者|開發者|开发人员|創造者|创造者|管理员|管理員)"
)
_CLAIM_WEAK = (
    r"\b(?:i'?m|i am|im|this is|we are|we're|as|speaking as) (?:the|a|an|one of the|lead"
    r"|senior|head|chief) (?:[\w-]{1,30} ){0,2}?(?:developer|dev|dev team|developers|creator"
    r"|programmer|engineer|maintainer|admin|administrator|sysadmin|system administrator|owner"
    r"|operator|engineering team)s?\b|\b(?:developer|dev|admin|maintainer|engineer|operator"
    r"|creator|sysadmin)s? (?:here|speaking)\b"
)
_ASK = (
    r"(?:show|print|dump|output|reveal|display|list|share|send|give|paste|post|tell|expose|leak"
    r"|return|write out|spell out|copy|provide|read out|enter debug mode|what(?:'s| is| are)"
    r"|what|need|want|request|require|respond with|reply with|answer with|include|attach"
    r"|send over|hand over|upload|verlange|brauche|zeig|gib|schick|montre|affiche|donne"
    r"|envoie|muestra|ensena|dame|envia|laat|toon|geef|stuur|mostra|dammi|mostre|me de"
    r"|покажи|дай|пришли|给我|显示|告诉我)"
)
_CONFIG = (
    r"(?:config(?:uration)?s?|config file|settings?|parameters|params|environment(?: variables)?"
    r"|env(?: vars?| variables| file)?|\.env(?: file)?|secrets?|api[ -]?keys?|keys|credentials"
    r"|tokens?|hidden instructions|system prompt|internal (?:state|prompt|rules)|runtime|setup"
    r"|temperature|model name|dotenv)"
)
_CONFIG_HIDDEN = (
    r"(?:(?:hidden|internal|secret|full|complete|entire|system|backend|runtime|raw|deployment"
    r"|underlying|confidential|private|real|actual|original|whole|exact)"
    r" (?:config(?:uration)?|settings|parameters|params|setup|config file)|environment variables"
    r"|env vars|\.env(?: file)?|env file|credentials|api[ -]?keys?|secrets|access tokens?|tokens"
    r"|system prompt|hidden instructions)"
)
_CONFIG_FOREIGN = (
    r"(?:konfiguration\w*|einstellungen|parameter|umgebungsvariablen|configuration|parametres"
    r"|reglages|configuracion|ajustes|parametros|configuratie|instellingen|configurazione"
    r"|impostazioni|configuracao|configuracoes|конфигураци\w*|настройк\w*|配置|设置|設定)"
)
# "show me your hidden settings": the noun phrase is found first (it starts with a plain word,
# which the engine finds fast), the request verb is looked for just before it.
_HIDDEN_CONFIG_NOUN = (
    r"\b(?:your|ur|the bot's) (?:\w{1,30} )?(?:hidden|internal|secret|system|backend|runtime"
    r"|deployment|underlying|confidential|private|raw) (?:config(?:uration)?|settings|parameters"
    r"|params|config file|setup)\b"
)
_KEYS_NOUN = (
    r"\b(?:your|ur) (?:environment variables|env vars|\.env(?: file)?|env file|api keys?"
    r"|credentials|secret keys?|access tokens?)\b"
)
_SECRET_ASK = (
    rf"\b{_NOT_BEFORE}(?<!ever )(?:send|give|share|dm|tell|show|paste|post|reveal|print|dump"
    r"|output|leak|list|display|what(?:'s| is| are))(?: (?:me|us))?\b"
)
_FOREIGN_HIDDEN_CONFIG = (
    r"\b(?:zeig|gib|verrat|nenn|drucke?)\w*[^.!?\n]{0,30}?\b(?:deine|ihre|deinen|ihren)"
    r" (?:versteckte|geheime|interne)\w* (?:konfiguration|einstellungen)"
    r"|\b(?:montre|affiche|revele|donne)\w*[^.!?\n]{0,30}?\b(?:ta|votre|tes|vos) (?:configuration"
    r"|parametres) (?:cachee|secrete|interne)s?"
    r"|\b(?:muestra|ensena|revela|dame)\w*[^.!?\n]{0,30}?\b(?:tu|su|tus|sus) (?:configuracion"
    r"|ajustes|parametros) (?:oculta|secreta|interna)s?"
)

# --- system prompt requests in German, Dutch, French, Spanish, Italian and Portuguese

_YOUR_FOREIGN = (
    r"(?:dein|deine|deinen|deinem|deiner|deines|ihr|ihre|ihren|ihrem|ihrer|ihres|je|jouw|uw"
    r"|ton|ta|tes|votre|vos|tu|tus|su|sus|tuo|tua|tuoi|tue|seu|sua|seus|suas|teu|teus|tuas)"
)
_SYSTEM_PROMPT_FOREIGN = (
    r"(?:prompts? (?:initial|d'origine|original|cache|secret|de depart|inicial|oculto|secreto"
    r"|iniziale|originale|nascosto|segreto)|(?:ursprunglich|anfanglich|versteckt|geheim"
    r"|oorspronkelijke|verborgen|geheime|eerste)\w* prompts?|system-?prompts?|systemnachricht\w*"
    r"|system-?anweisung\w*|systeminstruktion\w*"
    r"|systemvorgabe\w*|systeem-?prompt\w*|systeembericht\w*|systeeminstructie\w*"
    r"|prompts? (?:du |de )?systeme|messages? (?:du |de )?systeme|instructions? (?:du |de )?systeme"
    r"|consignes (?:du |de )?systeme|prompt (?:del |de )?sistema|mensaje (?:del |de )?sistema"
    r"|instrucciones (?:del |de )?sistema|prompt di sistema|messaggio di sistema"
    r"|istruzioni di sistema|prompt (?:do |de )?sistema|mensagem (?:do |de )?sistema"
    r"|instrucoes (?:do |de )?sistema)"
)
_HIDDEN_ORDERS_FOREIGN = (
    r"(?:versteckt|geheim|ursprunglich|anfanglich|intern|verborgen|original|initial|erst)\w*"
    r" (?:anweisungen|instruktionen|befehle|vorgaben|regeln)"
    r"|(?:verborgen|geheime|oorspronkelijke|originele|initiele|interne|eerste)"
    r" (?:instructies|opdrachten|regels)"
    r"|(?:instructions|consignes|directives|regles) (?:cachees|secretes|initiales|d'origine"
    r"|originales|internes|de depart)"
    r"|(?:instrucciones|reglas|indicaciones) (?:ocultas|secretas|iniciales|originales|internas)"
    r"|(?:istruzioni|regole) (?:nascoste|segrete|iniziali|originali|interne)"
    r"|(?:instrucoes|regras) (?:ocultas|secretas|iniciais|originais|internas)"
)
_PROMPT_FOREIGN: tuple[str, ...] = (
    rf"\b{_YOUR_FOREIGN} (?:\w{{1,30}} ){{0,2}}?{_SYSTEM_PROMPT_FOREIGN}",
    rf"\b{_YOUR_FOREIGN} (?:\w{{1,30}} )?(?:{_HIDDEN_ORDERS_FOREIGN})",
    # "what are your instructions?" and "which instructions did you get from the developer?"
    r"\b(?:was sind|wie lauten|nenn mir|zeig mir) (?:deine|ihre) (?:anweisungen|instruktionen"
    r"|regeln|vorgaben)\s*(?:[?.!]|$)|\bwelche (?:anweisungen|instruktionen|regeln|vorgaben)"
    r" hast du (?:\w{1,30} ){0,3}?(?:bekommen|erhalten|gekriegt)",
    r"\b(?:wat zijn|toon|geef|laat) (?:je|jouw|uw|mij je) (?:instructies|regels)"
    r"(?: zien)?\s*(?:[?.!]|$)|\bwelke (?:instructies|regels) (?:heb je|kreeg je|zijn je)"
    r" (?:\w{1,30} ){0,3}?(?:gekregen|ontvangen|gegeven)",
    r"\b(?:quelles sont|donne-moi|montre-moi|dis-moi) (?:tes|vos) (?:instructions|consignes"
    r"|regles|directives)\s*(?:[?.!]|$)|\bquelles (?:instructions|consignes) (?:as-tu|avez-vous)"
    r" recues?",
    r"\b(?:cuales son|dime|muestrame|ensename) (?:tus|sus) (?:instrucciones|reglas|indicaciones"
    r"|directrices)\s*(?:[?.!]|$)|\bque instrucciones (?:te dieron|recibiste|tienes)",
    r"\b(?:was fur|welche|was) (?:anweisungen|instruktionen|regeln|vorgaben|befehle) (?:hat man"
    r" dir|hast du|wurden dir|hat dir \w{1,30}) (?:\w{1,30} ){0,4}?(?:gegeben|bekommen|erhalten"
    r"|gesagt|mitgegeben|eingetrichtert)",
    # "show the system message you got": a show verb, a definite article, the noun
    r"\b(?:zeig|gib|nenn|wiederhol|druck|schreib|kopier|verrat|teil|sag|toon|geef|laat|herhaal"
    r"|print|kopieer|plak|vertel|deel|montre|affiche|revele|repete|donne|ecris|recopie|copie"
    r"|imprime|dis|partage|transcri|muestra|ensena|revela|repite|dame|dime|escribe|copia|pasa"
    r"|comparte|mostra|rivela|ripeti|dammi|dimmi|scrivi|stampa|mostre|repita|diga|escreva"
    r"|imprima)\w*\b[^.!?\n]{0,30}?\b(?:den|die|das|dem|le|la|les|el|los|las|de|het|il|lo|o|a"
    rf"|os|as|l') ?{_SYSTEM_PROMPT_FOREIGN}",
    # "print the text above this message", in each language
    r"\b(?:druck|gib|wiederhol|kopier|schreib|zeig)\w* (?:mir )?(?:den )?(?:gesamten |ganzen"
    r" |kompletten )?(?:text|alles|inhalt) (?:uber|vor) (?:dieser|meiner) nachricht",
    r"\b(?:recopie|repete|affiche|copie|ecris|imprime|montre)\w* (?:moi )?(?:le texte|tout ce)"
    r" qui (?:precede|est au-dessus de) (?:ce|mon) message|\b(?:recopie|repete|affiche)\w*"
    r" tout ce qui precede\b",
    r"\b(?:copia|repite|muestra|escribe|imprime)\w* (?:todo )?(?:el )?(?:texto )?(?:que aparece"
    r" )?(?:antes de|encima de) (?:este|mi) mensaje",
    r"\b(?:herhaal|kopieer|print|toon|geef)\w* (?:de |alle )?(?:tekst|alles) (?:boven|voor)"
    r" (?:dit|mijn) bericht",
)

# --- "ignore your previous instructions" in Russian, Chinese, Japanese, Korean, Arabic,
# Turkish and Polish. Nouns that are not only about models ("rules", "commands") need a word
# that aims them at what the reader was told (previous, above, all, your, system).

_OVERRIDE_WORLD: tuple[str, ...] = (
    # Russian: verb, then up to three words, then the noun; "all"/"previous"/"your" or a
    # model-only noun somewhere.
    r"\b(?:игнорируй|игнорируйте|проигнорируй|проигнорируйте|забудь|забудьте|не обращай"
    r" внимания на|не обращайте внимания на|отбрось|отбросьте|пренебреги|не слушай|не следуй"
    r"|отмени|отмените|обойди)(?:те)?\s+(?:\S{1,30}\s+){0,3}?(?:(?:все|всё|свои|твои|ваши"
    r"|предыдущ\w*|прежн\w*|предшествующ\w*|вышеуказанн\w*|исходн\w*|системн\w*|старые|ранее"
    r" данные|данные тебе)\s+(?:\S{1,30}\s+){0,2}?)(?:инструкци|указани|правил|команд|промпт"
    r"|установк|директив|ограничени|настройк)\w*"
    r"|\b(?:игнорируй|игнорируйте|проигнорируй|проигнорируйте|забудь|забудьте|не обращай"
    r" внимания на|отбрось)\s+(?:\S{1,30}\s+){0,2}?(?:инструкци\w*|указани\w*|системн\w* промпт\w*"
    r"|промпт\w*|(?:правил|команд)\w* (?:выше|ранее))"
    r"|\bзабудь(?:те)? вс[её],? что (?:тебе |вам )?(?:говорили|сказали|было сказано|писали)",
    # Chinese (simplified and traditional)
    r"(?:忽略|无视|無視|忽视|忽視|忘记|忘記|忘掉|不要理会|不要理會|不理会|不理會|别管|別管|抛开|拋開"
    r"|放弃|放棄|跳过|跳過|(?:不要|别|別|不用|不必|勿|不再)(?:理会|理會|管|在意|遵守|遵循|听从|聽從"
    r"|按照|考虑|考慮))[^。！？!?\n]{0,12}?(?:之前|以前|先前|上面|以上"
    r"|上述|所有|全部|你的|您的|原来|原來|原始|系统|系統|前面|早先|此前)[^。！？!?\n]{0,8}?(?:指令|指示"
    r"|命令|规则|規則|提示词|提示詞|提示|设定|設定|说明|說明|要求|约束|約束|限制)",
    # Japanese: the object comes first
    r"(?:以前|前|これまで|上記|上|今まで|すべて|全て|全部|あなたの|システム|元|最初|先程|先ほど)"
    r"[^。！？!?\n]{0,8}?(?:指示|命令|ルール|規則|プロンプト|指令|設定|制約|インストラクション)"
    r"[^。！？!?\n]{0,10}?(?:無視|むし|忘れ|わすれ|従わな|従うな|気にしな|気にせ|守らな|聞かな"
    r"|捨て|破棄)",
    # Korean
    r"(?:이전|위의|위|앞의|앞|모든|전부|너의|네|당신의|시스템|기존|원래|지금까지)[^.!?\n]{0,12}?"
    r"(?:지시|지침|명령|규칙|프롬프트|설정|제약|안내)[^.!?\n]{0,16}?(?:무시|잊어|잊고|잊으|잊을"
    r"|따르지 ?마|따르지 ?말)",
    # Arabic: verb, then the noun (often with the article or a clitic), with an aim word
    r"(?:تجاهل|تجاهلي|تجاهلوا|انس|انسى|انسي|انسوا|اهمل|اهملي|تخط|تخطى|الغ|لا تلتزم|لا تتبع"
    r"|لا تتقيد)\s*(?:\S{1,30}\s+){0,3}?(?:(?:جميع|كل|كافة)\s+)?(?:ب|ل|و|ف)?(?:ال)?(?:تعليمات|اوامر"
    r"|توجيهات|قواعد|ارشادات|اعدادات)\S*(?:\s+(?:السابقة|السابق|اعلاه|الاصلية|الماضية|القديمة))?",
    # ... and the noun first: "all previous instructions must be ignored"
    r"(?:جميع|كل|كافة)?\s*(?:ال)?(?:تعليمات|اوامر|توجيهات|قواعد|ارشادات)\S*\s+(?:السابقة|السابق"
    r"|اعلاه|الاصلية|الماضية|القديمة)\s+(?:\S{1,30}\s+){0,2}?(?:تجاهل|انس|اهمال|نسيان)\S*",
    # Turkish: qualifier, noun, verb
    r"\b(?:onceki|tum|butun|yukaridaki|eski|sistem|ilk|verilen|senin|sana"
    r" verilen)\s+(?:\S{1,30}\s+)"
    r"{0,2}?(?:talimat|komut|kural|yonerge|direktif|istem|emir)\S*\s+(?:\S{1,30}\s+)?(?:yok say"
    r"|gormezden gel|unut|dikkate alma|ihmal et|umursama|gecersiz say|bos ver|takma)"
    r"|\b(?:talimat|komut|kural|yonerge|istem)lar[iı]n[iı]\s+(?:\S{1,30}\s+)?(?:yok say|gormezden"
    r" gel"
    r"|unut|dikkate alma|ihmal et|umursama)",
    # Polish
    r"\b(?:zignoruj|ignoruj|zapomnij|pomin|nie zwracaj uwagi na|nie zwracajcie uwagi na|olej"
    r"|odrzuc|nie sluchaj|nie stosuj sie do|porzuc)(?:cie)?\s+(?:o\s+)?(?:\S{1,30}\s+){0,2}?"
    r"(?:wszystk|poprzedni|wczesniejsz|swoje|swoich|swoim|twoje|twoich|powyzsz|systemow"
    r"|dotychczasow|dawn|pierwotn)\w*\s+(?:\S{1,30}\s+){0,2}?(?:instrukcj|polecen|zasad|wytyczn"
    r"|regu[lł]|komend|prompt|ustawien)\w*"
    r"|\b(?:zignoruj|ignoruj)(?:cie)?\s+(?:\S{1,30}\s+){0,1}?(?:instrukcj|prompt)\w*",
)

# Russian, Chinese, Japanese, Korean, Arabic (twice), Turkish, Polish
_OVERRIDE_WORLD_NEEDLES: tuple[tuple[str, ...], ...] = (
    ("игнор", "забуд", "обращ", "отбрось", "пренебр", "слушай", "следуй", "отмени", "обойди"),
    (
        "忽略", "无视", "無視", "忽视", "忽視", "忘记", "忘記", "忘掉", "理会", "理會",
        "别管", "別管",
        "抛开", "拋開", "放弃", "放棄", "跳过", "跳過", "不要", "不用", "不必", "不再", "勿",
    ),
    (
        "無視", "むし", "忘れ", "わすれ", "従わ", "従う", "気にし", "気にせ", "守らな", "聞かな",
        "捨て", "破棄",
    ),
    ("무시", "잊", "따르지"),
    ("تجاهل", "انس", "اهمل", "أهمل", "تخط", "الغ", "لا تلتزم", "لا تتبع", "لا تتقيد"),
    ("تجاهل", "انس", "اهمال", "إهمال", "نسيان"),
    ("talimat", "komut", "kural", "yonerge", "direktif", "istem", "emir"),
    (
        "zignoruj", "ignoruj", "zapomnij", "pomin", "pomiń", "nie zwracaj", "olej", "odrzuc",
        "odrzuć", "nie sluchaj", "nie słuchaj", "nie stosuj", "porzuc", "porzuć",
    ),
)



# --- markdown or HTML images whose address would carry data away when rendered

# Alt text may not hold brackets and the tag may not hold '<', so two candidates never scan the
# same characters; the address itself is taken whole (possessive) and the match always succeeds
# once it starts, so finditer moves past it.
_IMAGE_TARGET = _Regex(
    r"!\[[^\[\]\n]{0,200}+\]\(\s*<?([^)\s>]{1,2048}+)"
    r"|<img\b[^<>]{0,400}?\bsrc\s*=\s*[\"']?([^\"'\s>]{1,2048}+)",
    re.IGNORECASE,
)
_REFERENCE_IMAGE = _Regex(r"!\[[^\[\]\n]{0,200}+\]\[[^\[\]\n]{0,100}+\]")
_REFERENCE = _Regex(r"\[[^\[\]\n]{1,100}+\]:\s*<?(\S{1,2048}+)")
# Something to be filled in: brackets, braces, $VAR, %VAR%, "...", SHOUTED_NAMES, an empty value.
_PLACEHOLDER = _Regex(
    r"[{}<>\[\]$]|%(?:7b|7d|3c|3e|5b|5d|24)|%[a-z_]{2,40}%|\.\.\.|[?&][^=&#]{1,40}=(?:&|#|$)",
    re.IGNORECASE,
)
_SHOUTED = _Regex(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+|=[A-Z]{5,}(?=&|#|$)")
# Parameter names that say what is being carried; a number after them is only a size or page.
_DATA_PARAM = _Regex(
    r"[?&](?:data|secrets?|key|api_?key|token|prompt|system|password|passwd|pw|memory|history"
    r"|chat|conversation|context|leak|exfil|payload|dump|creds|credentials|cookies?|session"
    r"|messages?|msg|info|content|email|summary|transcript|q)=(?![0-9]{0,12}(?:&|#|$))",
    re.IGNORECASE,
)
_BAD_HOST = _Regex(
    r"evil|attacker|exfil|malicious|leak|steal|hacker|phish|grabber|logger|collector",
    re.IGNORECASE,
)


def _exfiltrates(url: str) -> bool:
    if not url.lower().startswith(("http://", "https://", "//")):
        return False
    rest = url.split("//", 1)[1]
    cut = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i != -1),
              default=len(rest))
    host, tail = rest[:cut], rest[cut:]
    if _BAD_HOST.get().search(host):
        return True
    query = tail[tail.find("?") :] if "?" in tail else ""
    return bool(
        _PLACEHOLDER.get().search(tail)
        or _SHOUTED.get().search(tail)
        or _DATA_PARAM.get().search(query)
    )


def _exfiltration(text: str) -> bool:
    """A markdown or HTML image whose address is shaped to carry data away when it renders."""
    if "![" not in text and "<img" not in text.lower():
        return False
    for m in _IMAGE_TARGET.get().finditer(text):
        if _exfiltrates(m.group(1) or m.group(2) or ""):
            return True
    if _REFERENCE_IMAGE.get().search(text):
        return any(_exfiltrates(m.group(1)) for m in _REFERENCE.get().finditer(text))
    return False


_CONFIG_ASK = (
    rf"\b(?:{_ASK}|{_SHOW})\b[^.!?\n]{{0,40}}?(?:\b(?:{_CONFIG}|{_CONFIG_FOREIGN})\b|\.env\b)"
    rf"|\b{_CONFIG_FOREIGN}"
)
_HIDDEN_CONFIG_ASK = rf"\b(?:{_ASK}|{_SHOW})\b[^.!?\n]{{0,40}}?(?:\b{_CONFIG_HIDDEN}\b|\.env\b)"

_AGENT_CJK = (
    "人工智能", "机器人", "機器人", "智能体", "智能體", "助手", "语言模型", "語言模型", "大模型",
    "ボット", "人工知能", "言語モデル", "エージェント", "アシスタント", "인공지능", "봇", "챗봇",
    "如果你是", "假如你是",
    "若你是", "あなたが",
)
# Words the foreign system prompt requests need: a second-person possessive, a request verb or
# a question word of those languages.
_FOREIGN_PROMPT_WORDS = (
    "dein deine deinen deinem deiner deines ihr ihre ihren ihrem ihrer ihres je jouw uw ton ta"
    " tes votre vos tu tus su sus tuo tua tuoi tue seu sua seus suas teu teus tuas was welche"
    " wie wat welke quelles quelle quel cuales cual que zeig zeige gib nenn nenne wiederhole"
    " drucke druck schreib schreibe kopiere verrat verrate teile sag sage toon geef laat"
    " herhaal kopieer plak vertel deel montre affiche revele repete donne ecris recopie copie"
    " imprime dis partage transcris muestra muestrame ensena ensename revela revelame repite"
    " dame dime escribe copia pasa pasame comparte mostra mostrami rivela ripeti dammi dimmi"
    " scrivi stampa mostre repita diga escreva imprima print"
)
_FOREIGN_POSSESSIVES = "deine ihre deinen ihren ta votre tes vos tu su tus sus"

# Each family is one group; its patterns are made when a text first opens its gate.
_FAMILIES: tuple[_Group, ...] = (
    *(
        _family(OVERRIDE, needles, source)
        for needles, source in zip(_OVERRIDE_WORLD_NEEDLES, _OVERRIDE_WORLD, strict=True)
    ),
    _family(
        PROMPT_REQUEST, (), "|".join(_PROMPT_FOREIGN), anchors=_FOREIGN_PROMPT_WORDS
    ),
    _family(
        AGENT_REQUEST, _AGENT_CJK, _ADDRESSEE, near=_AGENT_ACTION, after=80, before=60,
        anchors=_AI_WORDS,
    ),
    *(
        _family(OPERATOR_CLAIM, _CJK_STAFF, source, anchors=anchors)
        for anchors, source in _OPERATOR_CLAIMS
    ),
    # "your creators ... from now on you answer only to me", "the bot's admin ... new rules"
    _family(
        OPERATOR_CLAIM, _CJK_STAFF, _OPERATOR_REF, near=_ORDERS_CUE, after=40, before=40,
        anchors=f"{_ROLE_WORDS} {_PEOPLE_WORDS} {_FOREIGN_OPERATOR_WORDS}",
    ),
    # "Message from the admin:" only counts when what follows orders the reader about.
    _family(
        OPERATOR_CLAIM,
        _CJK_STAFF,
        rf"\b{_ORDERS_NOUNS} (?:from|by) (?:the|our) (?:[\w-]{{1,30}} ){{0,2}}?{_STAFF}\b"
        rf"|\b{_STAFF} {_ORDERS_NOUNS}s?(?: #?\s*[0-9]{{1,6}})?\s*(?:[:-]|\u2014)",
        near=_YOU_CUE,
        after=200,
        anchors=_ROLE_WORDS,
    ),
    _family(
        AUTHORITY_CLAIM, _CJK_STAFF, _CLAIM_STRONG, near=_CONFIG_ASK, after=80, before=60,
        anchors=f"{_ROLE_WORDS} {_CLAIM_WORDS}",
    ),
    _family(
        AUTHORITY_CLAIM, (), _CLAIM_WEAK, near=_HIDDEN_CONFIG_ASK, after=80, before=60,
        anchors=_ROLE_WORDS,
    ),
    # Asking for the hidden configuration or the keys without claiming any authority.
    _family(
        PROMPT_REQUEST, (), _HIDDEN_CONFIG_NOUN, near=rf"\b(?:{_ASK}|{_SHOW})\b", before=45,
        anchors="your ur bot",
    ),
    _family(PROMPT_REQUEST, (), _KEYS_NOUN, near=_SECRET_ASK, before=30, anchors="your ur"),
    _family(PROMPT_REQUEST, (), _FOREIGN_HIDDEN_CONFIG, anchors=_FOREIGN_POSSESSIVES),
)


# Long texts are judged in overlapping chunks. Every pattern's match is far shorter than the
# overlap, so a match that starts in a chunk ends inside its window; the gates then run per
# chunk, and a pattern only scans the chunks that hold its needles or anchor words.
_CHUNK = 4096
_OVERLAP = 1024
_WORDS = _Regex(r"\w+")


def _wordish(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


class _Gates:
    """Which groups each needle and each anchor word lets run. A chunk tests every needle once
    and looks its words up once, instead of testing the gates group by group. `shared`: every
    needle is one `_seen` looks for, so the chunk's needles can be taken from it."""

    __slots__ = ("always", "by_needle", "by_word", "needles", "shared", "words")

    def __init__(
        self, needles: tuple[str, ...], by_needle: dict[str, tuple[int, ...]],
        words: frozenset[str], by_word: dict[str, tuple[int, ...]], always: tuple[int, ...],
        shared: bool,
    ) -> None:
        self.needles = needles
        self.by_needle = by_needle
        self.words = words
        self.by_word = by_word
        self.always = always
        self.shared = shared


class _Seen:
    """What one chunk holds: its words (runs of `\\w`), and which of the guard's needles occur
    in it. Found once per chunk and shared by the role, pattern and family passes over it."""

    __slots__ = ("needles", "words")

    def __init__(self, needles: set[str], words: set[str]) -> None:
        self.needles = needles
        self.words = words


class _Needles:
    """Every needle of the role, pattern, family and squashed gates, by how it is looked for.

    A needle made only of word characters can only occur inside one run of them, so it is
    looked for in the chunk's distinct words, and what each word holds is remembered: texts
    share most of their words, so a chunk costs a dictionary lookup per distinct word instead
    of a substring test per needle. Any other needle ("you are now", "system ", "<|") is tested
    on the chunk, but only when a word of the chunk holds its longest run of word characters
    (its `piece`: every occurrence of the needle has it inside one word of the chunk); a needle
    without one is always tested, and one with a non-ASCII character is skipped on ASCII text,
    which cannot hold it."""

    __slots__ = ("all", "ascii_all", "ascii_in_words", "everything", "in_words", "unpieced",
                 "with_piece")

    def __init__(self, needles: tuple[str, ...]) -> None:
        word = _WORDS.get()
        self.all = frozenset(needles)
        self.everything = needles
        self.ascii_all = tuple(n for n in needles if n.isascii())
        with_piece: dict[str, list[str]] = {}
        unpieced = []
        for needle in needles:
            if word.fullmatch(needle):
                continue
            runs = word.findall(needle)
            if runs:
                with_piece.setdefault(max(runs, key=len), []).append(needle)
            else:
                unpieced.append(needle)
        # Pieces are looked for in words like needles; a piece that is no needle opens no gate.
        words = dict.fromkeys(n for n in needles if word.fullmatch(n))
        words.update(dict.fromkeys(with_piece))
        self.in_words = tuple(words)
        self.ascii_in_words = tuple(n for n in self.in_words if n.isascii())
        self.with_piece = {piece: tuple(found) for piece, found in with_piece.items()}
        self.unpieced = tuple(unpieced)


_NEEDLES: list[_Needles] = []
# Word -> the needles and pieces it holds. Bounded: cleared when full, so memory stays flat
# however many distinct words a long run meets; long runs (unspaced scripts, squashed text)
# are not kept.
_IN_WORD: dict[str, tuple[str, ...]] = {}
_IN_WORD_MAX = 100_000
# The same for each regex's and each family's own table (there are a few dozen of them).
_BY_WORD_MAX = 16_384
_IN_WORD_LONGEST = 40
# A chunk with more words not met before (names, handles, typos) than this is judged the way
# it was before the tables: its needles tested on it, its partners found first, its regexes
# run. Reading a new word costs a test per needle or piece, so learning them all would make a
# text full of new words cost more than the scans the tables save: the needle table learns
# this many from such a chunk, the regexes' tables only learn from chunks with few new words.
_LEARN = 3
# The last chunk seen and what it holds: published in one assignment, so a thread reading it
# sees a matching pair, and a chunk that is not the one kept is simply looked at again.
_LAST_SEEN: list[tuple[str, _Seen] | None] = [None]


def _all_needles() -> _Needles:
    if not _NEEDLES:
        found: dict[str, None] = {}
        for members in (_ROLES, _PATTERNS, _SQUASHED):
            for pattern in members:
                found.update(dict.fromkeys(pattern.needles))
        for group in _FAMILIES:
            found.update(dict.fromkeys(group.needles))
        _NEEDLES.append(_Needles(tuple(found)))
    return _NEEDLES[0]


def _words_of(chunk: str) -> set[str]:
    """The runs of word characters in `chunk`, as `_WORDS.findall` finds them. Text of words
    and single spaces and newlines alone (as most normalized text is) splits into exactly those
    runs without the regex: `str.isalnum` is the regex's word character minus "_"."""
    if chunk.replace(" ", "").replace("\n", "").isalnum():
        return set(chunk.split())
    return set(_WORDS.get().findall(chunk))


def _seen(chunk: str) -> _Seen:
    last = _LAST_SEEN[0]
    if last is not None and (last[0] is chunk or last[0] == chunk):
        return last[1]
    needles = _all_needles()
    words = _words_of(chunk)
    remembered = _IN_WORD
    unknown = [word for word in words if word not in remembered]
    for word in unknown[:_LEARN]:
        candidates = needles.ascii_in_words if word.isascii() else needles.in_words
        holds = tuple([n for n in candidates if n in word])
        if len(word) <= _IN_WORD_LONGEST:
            if len(remembered) >= _IN_WORD_MAX:
                remembered.clear()
            remembered[word] = holds
    if len(unknown) > _LEARN:
        # Many words not met before (names, handles, links): testing each needle on the
        # chunk once costs less than reading every new word now; a few are learned per chunk.
        everything = needles.ascii_all if chunk.isascii() else needles.everything
        seen = _Seen({n for n in everything if n in chunk}, words)
        _LAST_SEEN[0] = (chunk, seen)
        return seen
    found: set[str] = set()
    for word in words:
        held = remembered.get(word)
        # A word too long to be kept, or the table was cleared meanwhile: read it now.
        if held is None:
            held = tuple([n for n in needles.in_words if n in word])
        if held:
            found.update(held)
    with_piece = needles.with_piece
    for piece in [p for p in found if p in with_piece]:
        for needle in with_piece[piece]:
            if needle in chunk:
                found.add(needle)
    for needle in needles.unpieced:
        if needle in chunk:
            found.add(needle)
    seen = _Seen(found, words)
    _LAST_SEEN[0] = (chunk, seen)
    return seen


_Members = tuple[_Pattern, ...] | tuple[_Group, ...]
# Keyed by the tuple's id, holding the tuple itself so the id can never be reused by another.
_GROUPED: dict[int, tuple[_Members, tuple[_Group, ...], _Gates]] = {}


def _groups(members: _Members) -> tuple[_Group, ...]:
    """The families as they are; patterns in groups of consecutive ones that share their needles
    and anchor words, so a group's gate is judged once. Order (and so which reason wins) is
    kept."""
    if all(isinstance(member, _Group) for member in members):
        return members  # type: ignore[return-value]
    groups: list[list[_Pattern]] = []
    for pattern in members:
        assert isinstance(pattern, _Pattern)
        last = groups[-1][-1] if groups else None
        if last is not None and last.needles is pattern.needles and last.anchors is pattern.anchors:
            groups[-1].append(pattern)
        else:
            groups.append([pattern])
    return tuple(
        _Group(
            patterns[0].needles,
            patterns[0].anchors,
            patterns[0].near if all(p.near is patterns[0].near for p in patterns) else None,
            tuple(patterns),
        )
        for patterns in groups
    )


def _grouped(members: _Members) -> tuple[tuple[_Group, ...], _Gates]:
    cached = _GROUPED.get(id(members))
    if cached is not None and cached[0] is members:
        return cached[1], cached[2]
    groups = _groups(members)
    by_needle: dict[str, list[int]] = {}
    by_word: dict[str, list[int]] = {}
    always = []
    for index, group in enumerate(groups):
        for needle in group.needles:
            by_needle.setdefault(needle, []).append(index)
        for word in group.anchors:
            by_word.setdefault(word, []).append(index)
        if not (group.needles or group.anchors):
            always.append(index)
    gates = _Gates(tuple(by_needle), {k: tuple(v) for k, v in by_needle.items()},
                   frozenset(by_word), {k: tuple(v) for k, v in by_word.items()}, tuple(always),
                   _all_needles().all.issuperset(by_needle))
    _GROUPED[id(members)] = (members, groups, gates)
    return groups, gates


def _first(members: _Members, text: str) -> str | None:
    nearby: dict[int, tuple[list[int], list[int]]] = {}
    groups, gates = _grouped(members)
    size = len(text)
    for start in range(0, max(size, 1), _CHUNK):
        end = min(size, start + _CHUNK + _OVERLAP)
        # The last chunk owns every match that starts in it; earlier ones leave a match that
        # starts in the overlap to the next chunk, which sees it whole.
        limit = start + _CHUNK if end < size else size
        chunk = text if start == 0 and end == size else text[start:end]
        reason = _first_in(groups, gates, text, chunk, start, end, limit, nearby)
        if reason:
            return reason
        if end == size:
            break
    return None


def _first_in(
    groups: tuple[_Group, ...],
    gates: _Gates,
    text: str,
    chunk: str,
    start: int,
    end: int,
    limit: int,
    nearby: dict[int, tuple[list[int], list[int]]],
) -> str | None:
    # A group runs when one of its needles is in the chunk, or one of its anchor words is.
    wanted = set(gates.always)
    seen: _Seen | None = None
    if gates.shared:
        seen = _seen(chunk)
        by_needle = gates.by_needle
        for needle in seen.needles:
            opened = by_needle.get(needle)
            if opened:
                wanted.update(opened)
        if gates.words:
            for word in gates.words.intersection(seen.words):
                wanted.update(gates.by_word[word])
    else:
        for needle in [n for n in gates.needles if n in chunk]:
            wanted.update(gates.by_needle[needle])
        if gates.words:
            for word in gates.words.intersection(_WORDS.get().findall(chunk)):
                wanted.update(gates.by_word[word])
    words = seen.words if seen is not None else None
    # The partners' words may be taken from the chunk's only when the chunk is the whole text.
    whole = words if chunk is text else None
    for index in sorted(wanted):
        group = groups[index]
        if group.near is not None and _no_partner(group.near, text, nearby, whole):
            continue  # as below, for every pattern of the group at once
        for pattern in group.patterns():
            if pattern.leading is not None:
                if not _holds_one(chunk, pattern.leading):
                    continue  # no match can start in this chunk
            else:
                starts = pattern.regex.needed()
                if starts is not None and starts.may_match(chunk, words) is False:
                    continue  # the same, read off the parsed regex
            if pattern.near is not None and _no_partner(pattern.near, text, nearby, whole):
                # No partner anywhere in the text: no match of this pattern could count, so
                # its regex (a family can have dozens of alternatives) is not run at all.
                continue
            if pattern.anchored:
                first = pattern.regex.get().match(text, 0, end) if start == 0 else None
                matches: Iterator[re.Match[str]] = iter((first,) if first else ())
            else:
                matches = pattern.regex.get().finditer(text, start, end)
            for m in matches:
                if m.start() >= limit:
                    break  # the next chunk sees it whole
                if pattern.word_start and m.start() and _wordish(text[m.start() - 1]):
                    continue
                if pattern.imperative and _REPORTED.get().search(
                    text, max(0, m.start() - 16), m.start()
                ):
                    continue
                if pattern.near is not None and not _is_near(pattern, m, text, nearby):
                    continue
                return pattern.reason
    return None


def _holds_one(chunk: str, words: tuple[str, ...]) -> bool:
    for word in words:  # noqa: SIM110 — a plain loop, not any() over a generator: it runs often
        if word in chunk:
            return True
    return False


def _no_partner(
    near: _Regex,
    text: str,
    nearby: dict[int, tuple[list[int], list[int]]],
    words: set[str] | None,
) -> bool:
    """True when `near` surely matches nowhere in the text: its matches were found and there
    are none, or the text (whose runs of word characters are `words`, if known) holds none of
    what a match starts with. False when it matches, or may: then the partners are found only
    when a pattern's match needs one (`_is_near`). The partners are long alternations the
    engine tries at every position, most of the cost of a text that opens their family, and
    on most texts that hold one of their first words no pattern of the family matches."""
    spans = nearby.get(id(near))
    if spans is None:
        starts = near.needed()
        held = starts.may_match(text, words) if starts is not None else None
        if held is None:
            # Not told cheaply: the partners are found now, as they always were.
            return not _near_spans(near, text, nearby)[0]
        if held:
            return False
        spans = nearby[id(near)] = ([], [])
    return not spans[0]


def _near_spans(
    near: _Regex,
    text: str,
    nearby: dict[int, tuple[list[int], list[int]]],
) -> tuple[list[int], list[int]]:
    """The starts and ends of every match of `near` in the whole text, found once per text."""
    spans = nearby.get(id(near))
    if spans is None:
        found = [n.span() for n in near.get().finditer(text)]
        spans = nearby[id(near)] = ([s for s, _ in found], [e for _, e in found])
    return spans


def _is_near(
    pattern: _Pattern,
    m: re.Match[str],
    text: str,
    nearby: dict[int, tuple[list[int], list[int]]],
) -> bool:
    assert pattern.near is not None
    starts, ends = _near_spans(pattern.near, text, nearby)
    # finditer's matches do not overlap, so starts and ends are both sorted.
    i = bisect_left(starts, m.start())
    if i < len(starts) and starts[i] <= m.end() + pattern.after:
        return True
    # The last partner starting before the match reaches furthest: it overlaps the match, or
    # ends within `before` characters of it.
    j = bisect_right(starts, m.start()) - 1
    return j >= 0 and ends[j] > m.start() - pattern.before


def _reason(norm: str, hid: bool) -> str | None:
    """The verdict on one normalized text, before any decoding."""
    plain = _deobfuscate(norm)
    disguised = hid or plain != norm
    for variant in (norm, plain) if disguised else (norm,):
        if _first(_ROLES, variant):
            return ROLE_MARKER
        # A newline ends a clause for some patterns and is mere spacing for others; try both.
        for lines in (variant, variant.replace("\n", " ")) if "\n" in variant else (variant,):
            reason = _first(_PATTERNS, lines)
            if reason:
                return reason
        # The families treat a newline as the end of a clause, so they need one pass, on the
        # normalized text only (look-alike digits are the classic overrides' disguise).
        if variant is norm:
            reason = _first(_FAMILIES, variant) or clause_reason(variant)
            if reason:
                return reason
    # Squashing throws away the word boundaries that keep "I'd ignore any prompts that..."
    # apart from an order, so it only runs on text that shows signs of a disguise.
    if not (disguised or (_may_be_split(plain) and _SPLIT_WORDS.get().search(plain))):
        return None
    return _first(_SQUASHED, _squash(plain))


# ---------------------------------------------------------------------------------------------
# Decoding layers: each decoded text (see `injection_decoding`) is judged again, up to three
# layers deep, so base64 inside base64 is seen, within a budget of a few times the length of the
# original, so decoding can never make the check superlinear.

_MAX_DEPTH = 3
_BUDGET_FACTOR = 4


def _judge(text: str, depth: int, budget: list[int]) -> str | None:
    norm, hid = _normalize(text)
    reason = _reason(norm, hid)
    if reason is None and _exfiltration(text):
        reason = EXFILTRATION
    if reason is not None or depth >= _MAX_DEPTH:
        return reason
    for decoded in decodings(text, norm):
        if len(decoded) > budget[0]:
            continue
        budget[0] -= len(decoded)
        if hidden_characters(decoded) or _judge(decoded, depth + 1, budget) is not None:
            return ENCODED
    return None


def injection_reason(text: str) -> str | None:
    """A short neutral reason when `text` reads like instructions for a model, else None."""
    if not text or text.isspace():
        return None
    if hidden_characters(text):
        return INVISIBLE
    return _judge(text, 0, [_BUDGET_FACTOR * len(text) + 4096])
