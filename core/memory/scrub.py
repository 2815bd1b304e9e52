"""The scrubber: every field passes through `scrub` before it is written anywhere.

It replaces what looks like a secret or a piece of personal data with a marker such as
`[redacted:email]` and reports which kinds it removed, so the entry can say so. The kinds:

- email: user@host.tld (also with a fullwidth or small ＠, or an odd full stop), "name [at]
  host [dot] tld", "name [@] host [.] tld", "name at host dot com", defanged
  "user@host[.]com"; not @handles, user@instance handles or git@host:org/repo
- phone: +international (also "(+44)"), 00-international, (555) 123-4567 style, trunk-0
  national numbers with spaces, dots, dashes or slashes (the trunk part may sit in brackets),
  and any number after "phone:", "tel", "mobile", ...
- password: the value after password/pw/passcode/PIN/wachtwoord/... and in user:pass@ links;
  after "my password is" a value of plain words or dash groups counts too ("purple monkey
  dishwasher", "tiger-lamp-orbit-nine"), prose does not ("is weak", "is case-sensitive")
- token: provider keys (OpenAI, Anthropic, xAI, GitHub, GitLab, Slack, Stripe, Google, AWS,
  Azure, DigitalOcean, Alibaba, Hugging Face, npm, Telegram bots, X bearer), JWTs, private key
  blocks, Bearer/Authorization values, random-looking values after key/token/secret, and
  unlabelled secrets: 40-character cloud secret keys, 64-hex private keys (whole or grouped),
  WIF keys (checked), extended private keys, seed phrases (twelve or more BIP-39 words however
  separated), and base64 that wraps a finding (two layers at most; the inner kind is reported)
  or Basic credentials
- card: 13-19 digits, plain or grouped by spaces, dashes, dots, slashes, underscores,
  backslashes, bars or asterisks (or in halves, or digit by digit), Luhn-valid and starting like
  a card (2-6)
- id: US SSNs, UK National Insurance numbers, Dutch BSNs (11-check), German tax ids (check
  digit), French NIRs (key), Spanish DNI/NIE (check letter), Italian codici fiscali (check
  letter), Belgian national numbers (mod 97), Finnish identity codes (check character), and
  numbers after passport/SSN/BSN/national id/driver's license/Steuer-ID/PESEL/...
- bank: IBANs (mod-97, any case, spaced, dashed or dotted), account/routing/sort-code
  numbers after their keyword
- address: house number + street + suffix (Street, Ave, Loop, Grove, Mews...; lower case too
  after "live at", "ship to"...), Dutch/German/Nordic/Finnish glued streets (Kerkstraat 12,
  Kungsgatan 5), French/Spanish/Portuguese/Italian/Polish/Hungarian forms, P.O. Box/Postbus

Design choices, all in favour of leaving ordinary prose alone:

- Structured numbers are validated, not just shaped (core/memory/checksums.py): card numbers
  must pass Luhn and start like a real card, IBANs must pass mod-97, national ids their check
  digit or letter, WIF keys their checksum, SSNs must fall in assignable ranges.
- A bare run of digits is never a phone or an ID on its own: phones need a `+`, separators or a
  keyword; IDs and account numbers need a keyword or a checksummed national format. Links keep
  their digits (status ids).
- Keyword rules keep the keyword and redact only the value, so the line still reads.
- Markers already in the text are never touched, and scrubbing repeats until a pass finds
  nothing, which makes `scrub` idempotent by construction rather than by luck.
- The rules read a normalized view of the text: fullwidth forms and every script's decimal
  digits as ASCII, non-breaking and other odd spaces as spaces, odd hyphens as '-', odd full
  stops as '.', zero-width characters left out. Each finding
  is mapped back to the original, so everything outside a marker is kept byte for byte.

Cost is linear in the length of the text. Every pattern either consumes what it scans or is
bounded (no nested unbounded quantifiers; a keyword is anchored at a token boundary so a long
run is scanned once, not once per position), overlaps are tracked in byte maps rather than
lists, and decoding (base64) is bounded by the length of the text. `bench/privacy_gate.py`
measures it. Most rules sit behind cheap gates (a substring test, or a short scan) and the
digit rules only look at runs of digits. Standard library only; no pattern is compiled at
import, each the first time a text needs it (`_Lazy`, `_Rule.pattern`), so a process that
starts to write one entry pays only for the patterns its text reaches. Cheap tests that follow
from a pattern (the digits it needs, the piece between white space every match holds, a piece
long enough for base64, enough different listed words for a seed phrase) skip it on texts it
cannot match, compiled or not: a short persona text, all words, reaches a handful of keyword
rules and no pattern at all (README, Speed). tests/test_scrub_oracle.py holds that the findings
are exactly those of every pattern compiled up front and run, and recounts the tests from the
regex parser.
"""

from __future__ import annotations

import binascii
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from tactful.core.memory.checksums import (
    aba_ok,
    belgian_id_ok,
    bsn_ok,
    card_number_ok,
    codice_fiscale_ok,
    dni_ok,
    hetu_ok,
    iban_ok,
    nir_ok,
    steuer_id_ok,
    wif_ok,
)
from tactful.core.memory.seedwords import seed_words

__all__ = ["KINDS", "Scrubbed", "scrub"]

KINDS: tuple[str, ...] = (
    "address",
    "bank",
    "card",
    "email",
    "id",
    "password",
    "phone",
    "token",
)


@dataclass(frozen=True)
class Scrubbed:
    """The scrubbed text and the sorted, unique kinds that were redacted from it."""

    text: str
    kinds: tuple[str, ...]


# Checks get the match and the original text: lowercase rules match on a lowered copy.
_Check = Callable[[re.Match[str], str], bool]
# Span functions decide how far a value reaches (or None to drop the match).
_Extend = Callable[[re.Match[str], str], "tuple[int, int] | None"]
_Spans = list[tuple[int, int]]


class _Lazy:
    """A pattern compiled the first time it is used: compiled at import, the scrubber's patterns
    cost every `tactful remember` started as a process several milliseconds (README, Speed).
    Threads that race to the first use each compile the same pattern, and either result is kept:
    compiled patterns of one source behave alike."""

    __slots__ = ("_compiled", "flags", "source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    def __call__(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.source, self.flags)
        return compiled


_MARKER = _Lazy(r"\[redacted:(?:" + "|".join(KINDS) + r")\]")
# Runs of digits with the separators phones and cards use; the digit rules match inside these.
_RUN = _Lazy(r"[0-9][0-9 ().+/_\\|*\-]{3,}+")
# Unbroken tokens long enough to hold a key; the unlabelled-key rules only look inside these.
_LONG_TOKEN = _Lazy(r"(?<!\S)\S{16,}+")
_ASCII_DIGITS = b"0123456789"


def _ascii_digits(text: str) -> int:
    """How many ASCII digits the text holds (what `[0-9]` matches), the cheap test that lets a
    rule needing more digits than that skip its pattern. Counted as the bytes the digits leave
    behind when deleted from the UTF-8 form: two calls in C, and no other character's bytes
    fall in 0-9 (lone surrogates, passed through, neither)."""
    raw = text.encode("utf-8", "surrogatepass")
    return len(raw) - len(raw.translate(None, _ASCII_DIGITS))

# ---------------------------------------------------------------------------------------------
# The normalized view

# Fullwidth ASCII, the small commercial at, odd spaces and odd hyphens, one for one.
_VIEW_TABLE = {
    **{cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)},
    0xFE6B: ord("@"),
    0x3000: ord(" "),
    **dict.fromkeys((0x00A0, 0x2007, 0x202F, 0x2009, 0x200A, 0x205F, 0x1680), ord(" ")),
    **dict.fromkeys(range(0x2002, 0x2007), ord(" ")),
    0x2008: ord(" "),
    **dict.fromkeys((0x2010, 0x2011, 0x2012, 0x2013, 0x2212, 0xFE63), ord("-")),
    # Full stops that stand in for '.' in an address: ideographic, halfwidth, one-dot leader.
    **dict.fromkeys((0x3002, 0xFF61, 0x2024, 0xFE52), ord(".")),
}


class _ViewTable(dict[int, int]):
    """The table above, plus every other decimal digit (Arabic-Indic, Devanagari, mathematical
    bold...) read as its ASCII digit. Looked up lazily: only characters that turn up are asked
    about, and the answers are kept, up to a bound (a text of every code point must not grow
    the table without end)."""

    def __missing__(self, cp: int) -> int:
        digit = unicodedata.decimal(chr(cp), None)
        value = cp if digit is None else 48 + digit
        if len(self) < _VIEW_CACHE:
            self[cp] = value
        return value


_VIEW_CACHE = 50_000


_VIEW = _ViewTable(_VIEW_TABLE)
# Characters with no width: left out of the view, so "4111\u200b1111..." reads as digits.
_ZERO_WIDTH = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
_VISIBLE = _Lazy(f"[^{_ZERO_WIDTH}]+")


def _view(text: str) -> tuple[str, list[int] | None]:
    """The text the rules read, and for each of its characters the index in `text` (None when
    the two line up one for one)."""
    if text.isascii():
        return text, None
    view = text.translate(_VIEW)
    if not any(ch in view for ch in _ZERO_WIDTH):
        return view, None
    parts: list[str] = []
    index: list[int] = []
    for m in _VISIBLE().finditer(view):
        parts.append(m.group(0))
        index.extend(range(m.start(), m.end()))
    return "".join(parts), index


# ---------------------------------------------------------------------------------------------
# Validators

# Trailing sentence punctuation is not part of a bare value ("password: hunter2.").
_TRAILING = ".,;:!?)]}>\"'`"


def _span(m: re.Match[str]) -> tuple[int, int]:
    """The part of a match that gets redacted: the value group when the rule has one."""
    groups = m.re.groupindex
    for name in ("v", "b", "q", "q2"):
        if name in groups and m.start(name) != -1:
            start, end = m.start(name), m.end(name)
            if name == "b":
                value = m.string[start:end].rstrip(_TRAILING)
                end = start + max(len(value), 1)
            return start, end
    return m.start(), m.end()


def _value(m: re.Match[str], text: str) -> str:
    start, end = _span(m)
    return text[start:end]


def _digits(s: str) -> str:
    return "".join(ch for ch in s if "0" <= ch <= "9")


def _card_ok(m: re.Match[str], text: str) -> bool:
    return card_number_ok(_digits(_value(m, text)))


_IBAN_TAIL = _Lazy(r"[ .-][A-Za-z0-9]{1,8}$")


def _iban_span(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """The IBAN, giving back up to two trailing groups a lower-case match may have swallowed
    ("be68539007547034 is the club account")."""
    raw = m.group(0)
    for _ in range(3):
        if iban_ok(raw):
            return m.start(), m.start() + len(raw)
        tail = _IBAN_TAIL().search(raw)
        if tail is None:
            return None
        raw = raw[: tail.start()]
    return None


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


_TIMESTAMPISH = _Lazy(r"[0-9:.+\-TZtz/]+")


_SEGMENT_BREAKS = _Lazy(r"[-_./+=~:%]")


def _random_segment(segment: str) -> bool:
    if len(segment) < 10:
        return False
    has_digit = any(ch.isdigit() for ch in segment)
    has_alpha = any(ch.isalpha() for ch in segment)
    if has_digit and has_alpha:
        return True
    mixed_case = any(ch.isupper() for ch in segment) and any(ch.islower() for ch in segment)
    return mixed_case and len(segment) >= 16


def _looks_random(value: str) -> bool:
    """A secret after `key:` or `token=` has a long, mixed run somewhere in it; slugs such as
    "q3-2026-roadmap-v2", words and dates do not."""
    if len(value) < 12 or _TIMESTAMPISH().fullmatch(value):
        return False
    if not any(_random_segment(seg) for seg in _SEGMENT_BREAKS().split(value)):
        return False
    return _entropy(value) >= 3.0


def _random_value(m: re.Match[str], text: str) -> bool:
    return _looks_random(_value(m, text))


def _cloud_secret(m: re.Match[str], text: str) -> bool:
    """An unlabelled 40-character key: both cases and digits, not hex, and random enough."""
    value = m.group(0)
    return (
        any(ch.isupper() for ch in value)
        and any(ch.islower() for ch in value)
        and any(ch.isdigit() for ch in value)
        and _entropy(value) >= 4.0
    )


# Words that make a 64-hex run a digest or an id rather than a key.
_HASH_WORDS = _Lazy(
    r"sha|hash|checksum|digest|commit|\btx|txid|transaction|block|fingerprint|etag|integrity"
    r"|md5|blake|\bgit\b|merkle|\bcid\b",
)


def _hex_key(m: re.Match[str], text: str) -> bool:
    return _HASH_WORDS().search(text[max(0, m.start() - 40) : m.start()].lower()) is None


def _wif_ok(m: re.Match[str], text: str) -> bool:
    return wif_ok(m.group(0))


# --- national ids


def _nino_ok(m: re.Match[str], text: str) -> bool:
    value = m.group(0)
    # Letters in one case ("AB123456C", "ab 123456 c"), not a run of shouting.
    return value[:2].isupper() == value[-1].isupper()


def _id_value_ok(m: re.Match[str], text: str) -> bool:
    """After an ID keyword: six digits at least ("passport 2026 renewal" names a year), or a
    passport-style mix of eight letters and digits with two digits or more (C01X00T47)."""
    value = _value(m, text)
    digits = len(_digits(value))
    return digits >= 6 or (digits >= 2 and len(value) >= 8 and value.isalnum())


def _belgian_id_ok(m: re.Match[str], text: str) -> bool:
    return belgian_id_ok(_digits(m.group(0)))


def _hetu_ok(m: re.Match[str], text: str) -> bool:
    return hetu_ok(m.group(0))


def _bsn_ok(m: re.Match[str], text: str) -> bool:
    return bsn_ok(_digits(_value(m, text)))


def _steuer_id_ok(m: re.Match[str], text: str) -> bool:
    return steuer_id_ok(_digits(_value(m, text)))


def _nir_ok(m: re.Match[str], text: str) -> bool:
    return nir_ok(m.group(0))


def _dni_ok(m: re.Match[str], text: str) -> bool:
    return dni_ok(m.group(0))


def _codice_fiscale_ok(m: re.Match[str], text: str) -> bool:
    return codice_fiscale_ok(m.group(0))


# --- passwords


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


_PW_TOKEN = _Lazy(r"[^\s\"'`]{1,80}")
# Words that make what follows "my password is" a sentence rather than the password.
_PROSE_AFTER_PASSWORD = _wordset(
    """
    weak strong fine good bad safe secure insecure long short simple easy hard complex
    complicated wrong incorrect correct right invalid valid new old same different unique
    random blank empty set ready done private personal secret public shared obvious terrible
    awful great perfect okay ok enough too very so still now also just really literally always
    never not no in on at for with from to of by as like more less only already what because
    and but or if when where which who how why the a an my your his her our their its this that
    these those is was are were be been being it them him she he we they i you me us here there
    mine yours ours theirs same case important optional generic temporary gone lost mandatory
    unchanged actually basically currently probably definitely simply exactly also either
    something nothing anything everything one yesterday today tomorrow tonight again last ago
    earlier later recently
    ist nicht zu sehr schwach sicher falsch richtig neu alt gleich dein mein sein unser
    is niet te erg zwak sterk fout goed veilig nieuw oud hetzelfde
    est pas trop tres faible fort incorrect nouveau ancien meme
    es muy debil segura seguro incorrecta incorrecto nuevo nueva igual
    """
)
# Endings that mark an adjective or a participle: "is compromised", "is expiring".
_PROSE_ENDINGS = ("ed", "ly", "ing", "ive", "able", "ible", "ous", "ful", "less")
_SKIP_BEFORE_VALUE = _wordset(
    "still now currently literally actually basically simply probably definitely just really"
    " officially"
)


def _prose_word(word: str) -> bool:
    word = word.lower()
    return word in _PROSE_AFTER_PASSWORD or (len(word) > 4 and word.endswith(_PROSE_ENDINGS))


def _single_value(token: str, explicit: bool) -> bool:
    """Whether one token after a password keyword is the password. After a colon or '=' any
    token of four characters or more is; after "is" a plain word is, unless prose."""
    if explicit:
        return len(token) >= 4 and any(ch.isalnum() for ch in token)
    if token.isdigit():
        return len(token) >= 4
    parts = token.split("-")
    if len(parts) >= 3 and all(parts):
        return True
    if all(part.isalpha() for part in parts):
        if any(ch.isupper() for ch in token[1:]) and not token.isupper():
            return True  # CamelCase: MyDogIsCalledRex
        return not any(_prose_word(part) for part in parts)
    return any(ch.isalnum() for ch in token)


_PLAIN_WORD = _Lazy(r"[A-Za-zÀ-ÖØ-öø-ÿ0-9]+(?:-[A-Za-zÀ-ÖØ-öø-ÿ0-9]+)*")


def _password_value_span(m: re.Match[str], text: str, *, explicit: bool) -> tuple[int, int] | None:
    """How far the password after a keyword reaches: one token, or several plain words or
    dash groups ("purple monkey dishwasher lamp") up to the end of the clause."""
    for name in ("q", "q2"):
        if m.start(name) != -1:
            return m.start(name), m.end(name)
    pos = m.start("b")
    words: list[tuple[int, int]] = []
    while len(words) < 8:
        token = _PW_TOKEN().match(text, pos)
        if token is None:
            break
        core = token.group(0).rstrip(_TRAILING)
        if not core:
            break
        if not words and core.lower() in _SKIP_BEFORE_VALUE and token.end() < len(text):
            pos = token.end() + 1
            continue
        if words and core.lower() in _PROSE_AFTER_PASSWORD:
            break
        words.append((token.start(), token.start() + len(core)))
        if len(core) != len(token.group(0)) or token.end() >= len(text):
            break
        if text[token.end()] != " ":
            break
        pos = token.end() + 1
    if not words:
        return None
    first = text[words[0][0] : words[0][1]]
    if len(words) == 1 or not all(
        _PLAIN_WORD().fullmatch(text[s:e]) for s, e in words
    ):
        return words[0] if _single_value(first, explicit) else None
    texts = [text[s:e] for s, e in words]
    if len(words) == 2 and any(_prose_word(part) for w in texts for part in w.split("-")):
        return words[0] if _single_value(first, explicit) and not _prose_word(first) else None
    if _prose_word(first) and len(words) < 3:
        return None
    return words[0][0], words[-1][1]


def _password_is(m: re.Match[str], text: str) -> tuple[int, int] | None:
    return _password_value_span(m, text, explicit=False)


def _password_colon(m: re.Match[str], text: str) -> tuple[int, int] | None:
    return _password_value_span(m, text, explicit=True)


def _aba_ok(m: re.Match[str], text: str) -> bool:
    return aba_ok(_digits(_value(m, text)))


def _min_digits(n: int) -> _Check:
    def check(m: re.Match[str], text: str) -> bool:
        return len(_digits(_value(m, text))) >= n

    return check


def _trunk_phone_ok(m: re.Match[str], text: str) -> bool:
    """Ten or eleven digits; nine when the area code sits in brackets, a phone's own way of
    writing it: (030) 901820."""
    count = len(_digits(m.group(0)))
    return (9 if m.group(0).startswith("(") else 10) <= count <= 11


def _digit_count(low: int, high: int) -> _Check:
    def check(m: re.Match[str], text: str) -> bool:
        return low <= len(_digits(_value(m, text))) <= high

    return check


_YEAR_CONTEXT = _Lazy(
    r"\b(?:[Ii]n|[Ss]ince|[Bb]y|[Ff]rom|[Uu]ntil|[Tt]ill|[Oo]f|[Aa]fter|[Bb]efore|[Aa]round"
    r"|[Cc]irca|[Dd]uring|and|to)\s*$"
)


_NEXT_WORD = _Lazy(r"[ \t]+(?:[A-Z][ \t]+)?([a-z]+)")
# Words that may follow a street address. Any other lowercase word means the street name was
# an adjective: "the 9 Supreme Court justices", "2 Wall Street banks".
_AFTER_ADDRESS = frozenset(
    (
        "in", "is", "was", "and", "or", "to", "for", "near", "at", "on", "with", "where", "which",
        "apt", "apartment", "unit", "suite", "ste", "floor", "now", "since", "until", "but", "so",
        "because", "if", "then", "the", "a", "an", "this", "that", "today", "tomorrow", "yesterday",
        "tonight", "next", "last", "please", "thanks", "just", "will", "has", "have", "had", "are",
        "were", "be", "by", "from", "of", "off", "between", "across", "opposite", "behind",
        "around", "downtown",
    )
)  # fmt: skip


# Words that make the number a count or an index: "Chapter 11 Main Street", "the 3 Little Pigs".
_NOT_HOUSE = _Lazy(
    r"(?i)\b(?:the|chapter|page|top|route|gate|room|level|episode|season|part|vol|volume|no"
    r"|number|version|act|scene|step|day|week|rank|section|article|verse|stage|round|track"
    r"|side|floor|platform|bus|tram|line)\.?\s*$"
)


def _address_ok(m: re.Match[str], text: str) -> bool:
    number = m.group("n")
    before = max(0, m.start() - 12)
    if _NOT_HOUSE().search(text, before, m.start()):
        return False
    # "In 2020 Main Street closed" names a year, not a house number.
    if (
        len(number) == 4
        and number[:2] in ("19", "20")
        and _YEAR_CONTEXT().search(text, before, m.start()) is not None
    ):
        return False
    following = _NEXT_WORD().match(text, m.end())
    return following is None or following.group(1) in _AFTER_ADDRESS


# Lower-case addresses need someone saying it is where they are ("I live at 14 church lane").
_ADDRESS_CUE = _Lazy(
    r"(?:live|living|lives|stay|staying|ship|send|deliver|mail|post|moved|move|located|visit"
    r"|find|come|address|addr|house|home|flat|apartment|place|office|we're|i'm|am|is|at|to)"
    r"\W{0,3}(?:\w{1,10}\W{1,3}){0,2}$"
)
_NONSPACE = _Lazy(r"\S")
_NOT_STREET_NAME = _wordset(
    "the a an down up to on of in my our your his her their this that from into onto over"
    " through along across past by near and or miles mile km blocks block minutes mins hours"
    " more less than about"
)


def _lower_address_ok(m: re.Match[str], text: str) -> bool:
    if not _address_ok(m, text):
        return False
    if any(word in _NOT_STREET_NAME for word in m.group("names").split()):
        return False
    before = text[max(0, m.start() - 30) : m.start()].lower()
    # Lowered text is the rule's input here, so "before" is already lower case.
    return (_ADDRESS_CUE().search(before) is not None
            or _NONSPACE().search(text, 0, m.start()) is None)


# "Via Twitter 2 days ago" is not an address.
_UNIT_AFTER = _Lazy(
    r"\s*(?:days?|hours?|h|minutes?|mins?|seconds?|weeks?|months?|years?|times|people|likes"
    r"|followers|replies|comments|%)\b",
    re.IGNORECASE,
)


def _not_a_count(m: re.Match[str], text: str) -> bool:
    return _UNIT_AFTER().match(text, m.end()) is None


# ---------------------------------------------------------------------------------------------
# Rules


class _Rule:
    """One detector: a pattern, an optional validator, and the gates that let it skip work."""

    __slots__ = (
        "_compiled",
        "_flags",
        "_gate",
        "_source",
        "check",
        "digits",
        "extend",
        "gate_source",
        "in_links",
        "kind",
        "lower",
        "needles",
        "needs_digit",
        "pad",
        "rank",
        "run",
        "shield",
        "token",
        "unbroken",
        "word_start",
    )

    def __init__(
        self,
        kind: str,
        rank: int,
        pattern: str,
        *,
        check: _Check | None = None,
        extend: _Extend | None = None,
        in_links: bool = True,
        lower: bool = False,
        needles: tuple[str, ...] = (),
        needs_digit: bool = False,
        digits: int = 0,
        gate: str | None = None,
        run: int = 0,
        pad: tuple[int, int] = (2, 3),
        token: int = 0,
        unbroken: int = 0,
        shield: bool = False,
        word_start: bool = False,
        flags: int = 0,
    ) -> None:
        self.kind = kind
        # Lower wins when two findings overlap.
        self.rank = rank
        # Case-insensitive rules are written in lowercase and run on a lowered copy of the
        # text (same length, so positions line up): the engine is many times slower with
        # IGNORECASE.
        self.lower = lower
        # Compiled when first needed: most rules are gated away for most texts, and compiling
        # them all up front cost every command that writes a few tens of milliseconds.
        self._source, self._flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None
        self.check = check
        # Decides the redacted span itself (a password of several words), or drops the match.
        self.extend = extend
        # Digits inside links are ids, not phones or cards; only secrets are hunted there.
        self.in_links = in_links
        # A match that fails its check still claims its span from the later in_links=False
        # rules: an IBAN with a typo is a bank number, not a phone number.
        self.shield = shield
        # Gates, cheapest first: counts taken once per text (a digit somewhere, the digits and
        # the longest piece, see `_candidates`), a needle in the lowered text, then a short scan
        # of the text.
        self.needs_digit = needs_digit or run > 0
        # The ASCII digits every match holds at least (read off the pattern: counted digits,
        # never a guess; tests/test_scrub_oracle.py recounts them from the regex parser): a
        # text with fewer skips the rule without compiling it, and so does a window around a
        # run of digits (`run`) with fewer.
        self.digits = digits
        self.needles = needles
        self.gate_source = gate
        self._gate: re.Pattern[str] | None = None
        # When set, the pattern only runs around digit runs at least this long, widened by
        # `pad` characters (before, after) for what may precede or follow the digits.
        self.run = run
        self.pad = pad
        # When set, the pattern only runs inside unbroken tokens at least this long.
        self.token = token
        # Every match holds this many characters in a row with no white space among them (read
        # off the pattern, never a guess; tests/test_scrub_oracle.py recomputes it from the regex
        # parser): a text whose longest piece between white space is shorter skips the rule.
        self.unbroken = unbroken
        # Keyword rules start on a word boundary, checked after the match. (The patterns keep
        # their own bounds: what follows a keyword is limited, so a long run of repeated
        # keywords costs each keyword a bounded look, not a scan to the end.)
        self.word_start = word_start

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    def wanted(self, text: str, lowered: str, seen: dict[int, bool]) -> bool:
        """The gates that read the text (its needles, its gate pattern); the counts (digits,
        the longest piece) have been asked by `_candidates`."""
        if self.needles:
            # Rules share needle sets (both password rules, the street suffixes); test once.
            found = seen.get(id(self.needles))
            if found is None:
                found = seen[id(self.needles)] = _any_in(self.needles, lowered)
            if not found:
                return False
        if self.gate_source is None:
            return True
        if self._gate is None:
            self._gate = re.compile(self.gate_source)
        return self._gate.search(lowered if self.lower else text) is not None

    def matches(
        self, text: str, lowered: str, runs: _Spans, tokens: _Spans
    ) -> Iterator[re.Match[str]]:
        source = lowered if self.lower else text
        if self.token:
            # Unbroken tokens do not overlap, so each character is scanned once.
            for start, end in tokens:
                if end - start >= self.token:
                    yield from self.pattern.finditer(source, max(0, start - 1), end + 1)
        elif not self.run:
            yield from self.pattern.finditer(source)
        else:
            size = len(text)
            back, ahead = self.pad
            last = 0
            for start, end in runs:
                if end - start >= self.run:
                    # Characters back for a leading '+' or '(', ahead for look-aheads; never
                    # back over the previous window, so no character is scanned twice.
                    begin = max(last, start - back)
                    last = min(size, end + ahead)
                    # A match lies inside the window, so the window holds its digits. Counted
                    # only until the pattern is compiled: after that, running it costs less.
                    if (
                        self.digits > 1
                        and self._compiled is None
                        and _ascii_digits(source[begin:last]) < self.digits
                    ):
                        continue
                    yield from self.pattern.finditer(source, begin, last)

    def span(self, m: re.Match[str], text: str) -> tuple[int, int] | None:
        """The span to redact, or None when the match is not a finding."""
        if self.word_start and m.start() and text[m.start() - 1].isalnum():
            return None
        if self.check is not None and not self.check(m, text):
            return None
        if self.extend is not None:
            return self.extend(m, text)
        return _span(m)


# A bare value after a keyword runs to the next space; trailing sentence punctuation is trimmed
# afterwards (group "b"), so the engine never scans ahead for it.
_BARE = r"(?P<b>[^\s\"'`]\S{0,200}+)"
_QUOTED = r"(?:\"(?P<q>[^\"\n]{1,120})\"|'(?P<q2>[^'\n]{1,120})')"

# Env-style names such as DB_PASSWORD or smtp_pwd count too: the prefix ends in '_', which
# passes the word-start check, and a suffix may follow.
_LOGIN_WORDS = (
    r"(?:password|passwd|passwort|passphrase|passcode|pass_?word|pass(?==)|pwd|pw|wachtwoord"
    r"|kennwort|contrase[ñn]a|mot\s+de\s+passe|senha|пароль)(?:_[A-Za-z0-9]{1,20}){0,4}\b[\"']?"
)
_PASSWORD_NEEDLES = ("pass", "pw", "wachtwoord", "kennwort", "contrase", "mot", "senha", "пароль")
_API_WORDS = (
    r"(?:api[_ -]?key|apikey|x-api-key|access[_ -]?key|secret[_ -]?key|access[_ -]?token"
    r"|auth[_ -]?token|refresh[_ -]?token|id[_ -]?token|session[_ -]?(?:id|token|key)"
    r"|client[_ -]?secret|private[_ -]?key|signing[_ -]?key|accountkey|sharedaccesskey"
    r"|shared[_ -]?access[_ -]?(?:key|signature)|secret|token|key|signature|sig|credentials?)"
    r"(?:[_-][A-Za-z0-9]{1,20}){0,4}\b[\"']?"
)

_NAME = r"[A-ZÀ-ÖØ-Þ][A-Za-zÀ-ÖØ-öø-ÿ'’.\-]{0,40}"
_STREET_SUFFIX = (
    r"Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Boulevard|Blvd|Drive|Dr|Way|Court|Ct|Place|Pl"
    r"|Terrace|Ter|Parkway|Pkwy|Highway|Hwy|Square|Sq|Circle|Cir|Crescent|Close|Row|Loop|Grove"
    r"|Gardens|Gdns|Mews|Alley|Trail|Trl|Plaza|Heights|Hts|Walk|Esplanade|Quay|Wharf"
)
_LOWER_SUFFIX = (
    r"street|avenue|road|lane|drive|boulevard|terrace|crescent|parkway|highway|close|court"
    r"|square|grove|mews|st|ave|rd|ln|blvd|dr"
)
_GLUED_SUFFIX = (
    r"straat|steeg|weg|laan|gracht|plein|kade|singel|dijk|straße|strasse|str\.|allee|gasse"
    r"|gatan|gata|vägen|vagen|gade|vej|veien|katu|(?<=[a-zäöå]{3})tie"
)
_GLUED_NEEDLES = (
    "straat", "steeg", "weg", "laan", "gracht", "plein", "kade", "singel", "dijk", "straße",
    "strasse", "str.", "allee", "gasse", "gatan", "gata", "vägen", "vagen", "gade", "vej",
    "veien", "katu", "tie",
)  # fmt: skip
_FILE_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "pdf"})
_TLDS = (
    r"com|org|net|io|edu|gov|dev|app|ai|co|me|info|biz|nl|de|uk|fr|es|it|be|ch|at|se|no|dk|fi"
    r"|pl|pt|ie|us|ca|au|nz|jp|cn|in|br|mx|ru|eu|email|mail|xyz|tech|online|site"
)
# Separators a card number may be grouped by; one kind per number.
_CARD_SEP = r"(?: {0,2}[-./_\\|*] {0,2}| {1,3})"

_RULES: tuple[_Rule, ...] = (
    # --- token: formats that announce themselves
    _Rule(
        "token",
        0,
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)",
        needles=("private key",),
        unbroken=10,
        flags=re.DOTALL,
    ),
    # JWTs: the look-behind sits after "eyJ" (so the engine still jumps to it) and keeps the
    # match at the start of a run; the segments never give back what they took.
    _Rule(
        "token",
        0,
        r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+",
        needles=("eyj",),
        unbroken=29,
    ),
    _Rule(
        "token",
        0,
        r"(?<![\w-])(?:"
        r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}+"
        r"|whsec_[A-Za-z0-9]{20,}+"
        r"|gh[pousr]_[A-Za-z0-9]{30,}+"
        r"|github_pat_[A-Za-z0-9_]{30,}+"
        r"|glpat-[A-Za-z0-9_-]{20,}+"
        r"|xox[abposr]-[A-Za-z0-9-]{10,}+"
        r"|AIza[A-Za-z0-9_-]{35}"
        r"|ya29\.[A-Za-z0-9_-]{20,}+"
        r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
        r"|npm_[A-Za-z0-9]{36}"
        r"|hf_[A-Za-z0-9]{30,}+"
        r"|xai-[A-Za-z0-9]{20,}+"
        r"|GOCSPX-[A-Za-z0-9_-]{20,}+"
        r"|do[por]_v1_[a-f0-9]{64}"
        r"|LTAI[A-Za-z0-9]{12,20}"
        r"|xprv[1-9A-HJ-NP-Za-km-z]{100,112}"
        # X/Twitter app bearer tokens open with a long run of A's (a scream has no digits).
        # The run is taken whole, so a long scream is looked at once.
        r"|A{16,}+(?=[A-Za-z0-9%_-]{0,400}[0-9%])[A-Za-z0-9%_-]{4,}+"
        r")(?![\w-])",
        needles=(
            "_live_", "_test_", "whsec_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
            "glpat-", "xox", "aiza", "ya29.", "akia", "asia", "npm_", "hf_", "xai-", "gocspx-",
            "aaaaaaaaaaaaaaaa", "_v1_", "ltai", "xprv",
        ),
        unbroken=15,
    ),
    # OpenAI/Anthropic style; "sk-" alone is too common a prefix, so the rest must look random.
    _Rule(
        "token",
        0,
        r"(?<![\w-])sk-(?P<v>[A-Za-z0-9_-]{20,}+)(?![\w-])",
        check=_random_value,
        needles=("sk-",),
        unbroken=23,
    ),
    # Azure AD client secrets: three characters, a digit, "Q~", then the rest.
    _Rule(
        "token",
        0,
        r"(?<![\w~.-])[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])",
        needles=("q~",),
        token=38,
        unbroken=37,
    ),
    # Telegram bot tokens: numeric bot id, colon, a secret that starts with AA.
    _Rule(
        "token",
        0,
        r"(?<![\w:])[0-9]{6,12}:AA[A-Za-z0-9_-]{30,}+(?![\w-])",
        needles=(":aa",),
        digits=6,
        unbroken=39,
    ),
    _Rule(
        "token",
        0,
        r"hooks\.slack\.com/services/(?P<v>[A-Za-z0-9/_-]{20,}+)",
        needles=("hooks.slack",),
        lower=True,
        unbroken=45,
    ),
    _Rule(
        "token",
        0,
        r"(?:authorization\s{0,8}[:=]\s{0,8}(?:bearer|basic|token|bot)?|bearer)"
        r"\s{0,8}(?P<v>[A-Za-z0-9._~+/=-]{12,}+)",
        check=_random_value,
        needles=("bearer", "authorization"),
        lower=True,
        word_start=True,
        unbroken=12,
    ),
    # --- token: "api_key = ...", "token: ...", JSON and env styles
    _Rule(
        "token",
        0,
        _API_WORDS + r"\s{0,8}(?:[:=]|\bis\b|\bwas\b)\s{0,8}[\"']?"
        r"(?P<v>[A-Za-z0-9_\-+/=.~%]{12,}+)",
        check=_random_value,
        needles=("key", "token", "secret", "credential", "sig"),
        lower=True,
        word_start=True,
        unbroken=12,
    ),
    # --- token: unlabelled secrets
    # 40-character cloud secret keys (AWS style): both cases, digits, random.
    _Rule(
        "token",
        0,
        r"(?<![A-Za-z0-9+/=_.~-])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=_.~-])",
        check=_cloud_secret,
        in_links=False,
        needs_digit=True,
        token=40,
        unbroken=40,
    ),
    # 64 hex digits: a raw private key, unless a hash word names it a digest.
    _Rule(
        "token",
        0,
        r"(?<![A-Za-z0-9])(?:0x)?[0-9a-fA-F]{64}(?![A-Za-z0-9])",
        check=_hex_key,
        in_links=False,
        needs_digit=True,
        token=64,
        unbroken=64,
    ),
    # The same key written in four groups of sixteen or eight groups of eight.
    _Rule(
        "token",
        0,
        r"(?<![A-Za-z0-9:-])(?:[0-9a-fA-F]{16}(?P<s>[ :-])[0-9a-fA-F]{16}(?P=s)[0-9a-fA-F]{16}"
        r"(?P=s)[0-9a-fA-F]{16}|[0-9a-fA-F]{8}(?P<t>[ :-])(?:[0-9a-fA-F]{8}(?P=t)){6}"
        r"[0-9a-fA-F]{8})(?![A-Za-z0-9:-])",
        check=_hex_key,
        in_links=False,
        needs_digit=True,
        gate=r"[0-9a-fA-F]{8}[ :-][0-9a-fA-F]{8}",
        unbroken=8,
    ),
    # Wallet import format keys, checked against their own checksum.
    _Rule(
        "token",
        0,
        r"(?<![A-Za-z0-9])[5KL][1-9A-HJ-NP-Za-km-z]{50,51}(?![A-Za-z0-9])",
        check=_wif_ok,
        needs_digit=True,
        token=51,
        unbroken=51,
    ),
    # --- password
    _Rule(
        "password",
        1,
        r"://[^\s:/@\[\]]{1,256}:(?P<v>[^\s/@\[\]]{1,256})@",
        needles=("://",),
        unbroken=7,
    ),
    _Rule(
        "password",
        1,
        # "password: x", "pw=x", and a quoted value right after the keyword.
        _LOGIN_WORDS + rf"(?:\s{{0,8}}[:=]\s{{0,8}}|\s{{0,8}}(?=[\"']))(?:{_QUOTED}|{_BARE})",
        extend=_password_colon,
        needles=_PASSWORD_NEEDLES,
        lower=True,
        word_start=True,
    ),
    _Rule(
        "password",
        1,
        # "my password is x", "the password for the wifi is x", "my password's x".
        _LOGIN_WORDS + r"(?:\s{1,8}(?:for|of|to|on)\s{1,8}(?:the\s+|my\s+|our\s+|your\s+)?"
        r"[\w.-]{1,40}(?:\s{1,8}[\w.-]{1,40})?)?(?:\s{1,8}(?:is|was|ist|es|est|is\s+now|to|naar"
        rf"|auf)\s{{0,8}}:?\s{{1,8}}|'s\s{{1,8}}|’s\s{{1,8}})(?:{_QUOTED}|{_BARE})",
        extend=_password_is,
        needles=_PASSWORD_NEEDLES,
        lower=True,
        word_start=True,
    ),
    _Rule(
        "password",
        1,
        r"pin(?:\s?code)?\s{0,8}(?:[:=]|\bis\b|\bwas\b)\s{0,8}(?P<v>[0-9]{4,8})(?![\w])",
        needles=("pin",),
        lower=True,
        needs_digit=True,
        word_start=True,
        digits=4,
    ),
    # --- email: the "user@host" form has its own finder below; these are the spelled-out ones
    _Rule(
        "email",
        2,
        r"(?<![\w.+-])[\[({]?[\w.+-]{1,64}[\]})]?\s{0,3}[\[({]\s{0,3}(?:at|@)\s{0,3}[\]})]\s{0,3}"
        r"[\[({]?[\w-]{1,63}[\]})]?(?:\s{0,3}[\[({]\s{0,3}(?:dot|\.)\s{0,3}[\]})]\s{0,3}"
        r"[\[({]?[\w-]{1,63}[\]})]?){1,4}",
        needles=("dot]", "dot)", "dot ]", "dot )", "dot}", "[.]", "(.)", "{.}"),
        lower=True,
    ),
    _Rule(
        "email",
        2,
        rf"(?<![\w.+-])[\w.+-]{{1,64}}\s(?:at|AT)\s[\w-]{{1,63}}(?:\s(?:dot"
        rf"|DOT)\s[\w-]{{1,63}}){{0,3}}"
        rf"\s(?:dot|DOT)\s(?:{_TLDS}|{_TLDS.upper()})\b",
        needles=(" dot ",),
    ),
    # "user@host[.]com" (defanged) and "user @ host.com"
    _Rule(
        "email",
        2,
        r"(?<![\w.+-])[\w.+-]{1,64}(?:@| @ )(?:[\w-]{1,63}(?:\[\.\]|\(\.\)|\{\.\}|\.))+"
        # Not a clone address (git@host:org/repo).
        rf"(?:{_TLDS})\b(?!:\S)",
        needles=("@",),
        lower=True,
    ),
    # --- bank: IBAN (mod-97) and keyword-introduced account numbers
    _Rule(
        "bank",
        3,
        # The look-behind sits after the first letters so the engine can skip ahead cheaply.
        # Any case; spaced or dashed in groups of four.
        r"[A-Za-z]{2}(?<![A-Za-z0-9][A-Za-z]{2})[0-9]{2}(?:[ .-]?[A-Za-z0-9]{4}){2,7}"
        r"(?:[ .-]?[A-Za-z0-9]{1,3})?(?![A-Za-z0-9])",
        extend=_iban_span,
        in_links=False,
        # Every IBAN holds a run of four digits or more, within a dozen characters of its start.
        run=4,
        pad=(14, 24),
        shield=True,
    ),
    _Rule(
        "bank",
        4,
        r"(?:(?:bank\s+)?account\s{0,8}(?:number|num\.?|no\.?|nr\.?|#)(?:\s+is)?|bank\s+account"
        r"|acct\.?(?:\s{0,8}(?:number|no\.?|#))?|routing\s{0,8}(?:number|no\.?|#)"
        r"|aba(?:\s+routing)?\s{0,8}(?:number|no\.?|#)|sort\s+code"
        r"|rekening(?:nummer)?|kontonummer|n[uú]mero\s+de\s+cuenta)"
        r"\s{0,8}(?:[:#=]|\bis\b|\bwas\b)?\s{0,8}(?P<v>[0-9](?:[ -]?[0-9]){3,19})(?![\w])",
        check=_min_digits(6),
        in_links=False,
        needles=("account", "acct", "routing", "aba", "sort", "rekening", "kontonummer", "cuenta"),
        lower=True,
        needs_digit=True,
        word_start=True,
        digits=4,
    ),
    # Bare "routing 1000000 requests" is prose: only a checksummed routing number counts, and
    # only a long number right after "account".
    _Rule(
        "bank",
        4,
        r"(?P<k>routing|account)\s{0,8}(?:[:#=]|\bis\b)?\s{0,8}(?P<v>[0-9](?:[ -]?[0-9]){7,19})"
        r"(?![\w])",
        check=lambda m, text: _aba_ok(m, text) if m.group("k") == "routing" else True,
        in_links=False,
        needles=("account", "routing"),
        lower=True,
        needs_digit=True,
        word_start=True,
        digits=8,
    ),
    # --- id: French NIR before the card rule, so a 15-digit NIR with a valid key stays an id
    _Rule(
        "id",
        3,
        r"(?<![A-Za-z0-9.,/+:$€£¥=-])[1-478] ?[0-9]{2} ?(?:0[1-9]|1[0-2]|[2-9][0-9]) ?"
        r"(?:[0-9]{2}|2[ABab]) ?[0-9]{3} ?[0-9]{3} ?[0-9]{2}(?![A-Za-z0-9]|[.,-][0-9])",
        check=_nir_ok,
        in_links=False,
        run=13,
        digits=14,
    ),
    # --- card: 13-19 digits, plain or grouped 4-4-4-4 / 4-6-5 by one kind of separator
    _Rule(
        "card",
        3,
        r"(?<![A-Za-z0-9_.,/+:$€£¥=-])(?:[0-9]{13,19}"
        rf"|[0-9]{{4}}(?P<s>{_CARD_SEP})[0-9]{{4}}(?P=s)[0-9]{{4}}(?P=s)[0-9]{{1,4}}"
        r"(?:(?P=s)[0-9]{1,3})?"
        rf"|[0-9]{{4}}(?P<t>{_CARD_SEP})[0-9]{{6}}(?P=t)[0-9]{{4,5}}"
        # Two halves (4532015-1283...), or one digit at a time ("4 5 3 2 0 1 ...").
        rf"|[0-9]{{8}}(?P<u>{_CARD_SEP})[0-9]{{8,11}}|[0-9](?: [0-9]){{12,18}})"
        r"(?![A-Za-z0-9_/]|[.,-][0-9])",
        check=_card_ok,
        in_links=False,
        run=13,
        digits=13,
    ),
    # "card: 4111..." and "visa #4111...": a keyword allows what the bare rule refuses.
    _Rule(
        "card",
        3,
        r"(?:card|cc|visa|mastercard|amex|discover|kaart|karte|tarjeta|carte)"
        r"(?:\s{0,4}(?:number|no\.?|nr\.?|#))?\s{0,4}[:#=]\s{0,4}(?P<v>[0-9](?:["
        r" .\-/_]?[0-9]){12,18})"
        r"(?![\w])",
        check=_card_ok,
        in_links=False,
        lower=True,
        needs_digit=True,
        needles=("card", "cc", "visa", "master", "amex", "discover", "kaart", "karte", "tarjeta"),
        word_start=True,
        digits=13,
    ),
    # --- id: US SSN in its assignable ranges, and numbers introduced by an ID keyword
    _Rule(
        "id",
        4,
        r"(?<![\w.=-])(?!000|666|9[0-9]{2})[0-9]{3}-(?!00)[0-9]{2}-(?!0000)[0-9]{4}(?![\w-])",
        in_links=False,
        run=11,
        digits=9,
        unbroken=11,
    ),
    _Rule(
        "id",
        4,
        r"(?:passport|ssn|social\s+security|national\s+(?:id|identity|insurance)"
        r"|bsn|burgerservicenummer|sofinummer|sofi|driver'?s?\s+licen[cs]e|personalausweis"
        r"|dni|nie|nif|nino|ni\s+number|tax\s+id|(?:id|identity)\s+card|steuer-?id"
        r"|steuer-?identifikationsnummer|steuernummer|idnr|identifikationsnummer|nir|insee"
        r"|s[eé]curit[eé]\s+sociale|s[eé]cu|codice\s+fiscale|cf|personnummer|pesel"
        r"|reisepass|pasaporte|passeport|paspoort|passaporto|rijksregisternummer"
        r"|henkilötunnus|hetu|cpr-?nummer|fødselsnummer"
        r"|(?:id|identity|identification)(?=\s{0,4}(?:number|no\b|nr\b|#)))"
        r"(?:\s{0,4}(?:number|num\b\.?|no\b\.?|nr\b\.?|#))?\s{0,4}(?:[:#=]|\bis\b|\bwas\b|\bes\b"
        r"|\best\b|\bist\b|\bè\b|\bto\b|\bjest\b|\bär\b|\ber\b)?\s{0,4}"
        r"(?P<v>[0-9](?:[ .-]?[0-9]){3,15}"
        r"|(?=[a-z]{0,20}[0-9])[a-z0-9]{1,20}(?:-[a-z0-9]{1,20}){0,3})(?![\w-])",
        check=_id_value_ok,
        in_links=False,
        needs_digit=True,
        lower=True,
        needles=(
            "passport", "ssn", "social", "national", "bsn", "burgerservicenummer", "sofi",
            "licen", "personalausweis", "dni", "nie", "nif", "nino", "ni number", "tax",
            "id number", "id no", "id nr", "id#", "id #", "id card", "identi", "steuer", "idnr",
            "nir", "insee", "sociale", "secu", "sécu", "fiscale", "cf", "personnummer", "pesel",
            "reisepass", "pasaporte", "passeport", "paspoort", "passaporto", "rijksregister",
            "henkilötunnus", "hetu", "cpr", "fødselsnummer",
        ),
        word_start=True,
    ),
    # UK National Insurance numbers: two letters, three pairs of digits, a letter A-D; written
    # together, in pairs (spaces or dashes), or as letters around the six digits.
    _Rule(
        "id",
        4,
        r"(?<![A-Za-z0-9])[A-Za-z]{2}(?:(?P<s>[ -]?)[0-9]{2}(?P=s)[0-9]{2}(?P=s)[0-9]{2}(?P=s)"
        r"| [0-9]{6} )[A-Da-d](?![A-Za-z0-9])",
        check=_nino_ok,
        in_links=False,
        run=6,
        pad=(4, 4),
        digits=6,
    ),
    # Belgian national numbers (YY.MM.DD-NNN.CC) and Finnish identity codes (DDMMYY-NNNC): the
    # punctuation and the check digits are distinctive enough without a keyword.
    _Rule(
        "id",
        4,
        r"(?<![\w.,/+:$€£¥=-])[0-9]{2}\.[01][0-9]\.[0-3][0-9]-[0-9]{3}\.[0-9]{2}(?![\w]|[.,-][0-9])",
        check=_belgian_id_ok,
        in_links=False,
        run=8,
        digits=11,
        unbroken=15,
    ),
    _Rule(
        "id",
        4,
        r"(?<![\w.,/+:$€£¥=-])[0-3][0-9][01][0-9]{3}[-+A-FU-Ya-fu-y][0-9]{3}[0-9A-Ya-y]"
        r"(?![\w-])",
        check=_hetu_ok,
        in_links=False,
        run=6,
        pad=(2, 6),
        digits=9,
        unbroken=11,
    ),
    # Dutch BSN written 1234.56.782, German tax id written 12 345 678 901: the shape plus the
    # check digit is enough without a keyword.
    _Rule(
        "id",
        4,
        r"(?<![\w.,/+:$€£¥=-])[0-9]{4}\.[0-9]{2}\.[0-9]{3}(?![\w]|[.,-][0-9])",
        check=_bsn_ok,
        in_links=False,
        run=11,
        digits=9,
        unbroken=11,
    ),
    _Rule(
        "id",
        4,
        r"(?<![\w.,/+:$€£¥=-])[1-9][0-9] [0-9]{3} [0-9]{3} [0-9]{3}(?![\w]|[ .,-][0-9])",
        check=_steuer_id_ok,
        in_links=False,
        run=14,
        digits=11,
    ),
    # Spanish DNI (8 digits and a check letter) and NIE (X/Y/Z, 7 digits, check letter).
    _Rule(
        "id",
        4,
        r"(?<![A-Za-z0-9])(?:[0-9]{8}|[XYZxyz][ -]?[0-9]{7}) ?-? ?[A-Za-z](?![A-Za-z0-9])",
        check=_dni_ok,
        in_links=False,
        run=7,
        pad=(3, 5),
        digits=7,
    ),
    # Italian codice fiscale: 6 letters, year, month letter, day, place, check letter.
    _Rule(
        "id",
        4,
        r"(?<![A-Za-z0-9])[A-Za-z]{6}[0-9LMNPQRSTUVlmnpqrstuv]{2}[A-Za-z]"
        r"[0-9LMNPQRSTUVlmnpqrstuv]{2}[A-Za-z][0-9LMNPQRSTUVlmnpqrstuv]{3}[A-Za-z](?![A-Za-z0-9])",
        check=_codice_fiscale_ok,
        in_links=False,
        needs_digit=True,
        token=16,
        unbroken=16,
    ),
    # --- phone
    _Rule(
        "phone",
        5,
        r"(?<![\w+/=])(?:\(\+[0-9]{1,3}\)|\+[0-9]{1,3})(?:[ .-]?(?:\([0-9]{1,4}\)|[0-9]{1,5})){1,6}"
        r"(?![\w]|[.,-][0-9])",
        check=_digit_count(8, 15),
        in_links=False,
        needles=("+",),
        run=6,
    ),
    # The same with the 00 exit prefix, which needs a separator to stand apart from plain ids
    # (or a full international length without one: 0031612345678).
    _Rule(
        "phone",
        5,
        r"(?<![\w+/=.:-])(?<![0-9] )(?:00[1-9][0-9]{0,2}[ .-](?:\([0-9]{1,4}\)|[0-9]{1,5})"
        r"(?:[ .-]?(?:\([0-9]{1,4}\)|[0-9]{1,5})){0,5}|00[1-9][0-9]{9,12})"
        r"(?![\w]|[.,-][0-9])",
        check=_digit_count(10, 17),
        in_links=False,
        run=10,
        digits=4,
    ),
    _Rule(
        "phone",
        5,
        r"(?<![\w.+/=-])(?:1[ .-])?(?:\([0-9]{3}\)[ .-]?|[0-9]{3}[ .-])[0-9]{3}[ .-][0-9]{4}"
        r"(?![\w]|[.,-][0-9])",
        in_links=False,
        run=11,
        digits=10,
    ),
    # National numbers with a trunk 0 and separators: 06-12345678, 020 7946 0958, 030 1234567,
    # 01 23 45 67 89, 030/1234567.
    _Rule(
        "phone",
        5,
        # Not part of a longer row of numbers: "04 11 23 35 42 49" is a lottery draw.
        # The trunk part may sit in brackets: (020) 7946 0958, (0)6-12345678.
        r"(?<![\w.+/=:-])(?<![0-9] )(?:0[0-9]{1,4}|\(0[0-9]{1,4}\) ?|\(0\) ?[1-9][0-9]{0,3})"
        r"(?:[ ./-]?(?<=[ ./)-])[0-9]{2,8}){1,4}(?![\w]|[ .,:/-][0-9])",
        check=_trunk_phone_ok,
        in_links=False,
        run=11,
        digits=4,
    ),
    _Rule(
        "phone",
        5,
        r"(?:phone|tel|telephone|mobile|cell|whatsapp|telefoon|mobiel|telefon)"
        r"(?:\s{0,4}(?:number|no\.?|nr\.?|#))?\.?\s{0,4}(?:[:=]|\bis\b|\bat\b)?\s{0,4}"
        r"(?P<v>\+?[0-9](?:(?: ?[.()/-] ?| )?[0-9]){6,14})(?![\w])",
        check=_digit_count(7, 15),
        in_links=False,
        lower=True,
        needs_digit=True,
        needles=("phone", "tel", "mobile", "cell", "whatsapp", "mobiel"),
        word_start=True,
        digits=7,
    ),
    # --- address
    _Rule(
        "address",
        6,
        # A unit may come first: 5/12 Smith Street.
        r"(?<![\w.,/:$€£-])(?:[0-9]{1,4}/)?(?P<n>[0-9]{1,5})[A-Za-z]?(?:-[0-9]{1,5})?,?\s{1,4}"
        rf"(?:(?:{_NAME}|[0-9]{{1,3}}(?:st|nd|rd|th))\s{{1,4}}){{1,4}}"
        rf"(?:{_STREET_SUFFIX})\b\.?(?:\s+(?:N|S|E|W|NE|NW|SE|SW)\b)?",
        check=_address_ok,
        in_links=False,
        needs_digit=True,
        gate=rf"(?:{_STREET_SUFFIX})\b",
    ),
    # "1585 Broadway": the one street famous enough to need no suffix.
    _Rule(
        "address",
        6,
        r"(?<![\w.,/:$€£-])(?P<n>[0-9]{1,5}) Broadway\b",
        check=_address_ok,
        in_links=False,
        needles=("broadway",),
        needs_digit=True,
    ),
    # All lower case, when the text says it is where someone is.
    _Rule(
        "address",
        6,
        r"(?<![\w.,/:$€£-])(?P<n>[0-9]{1,5})[a-z]?(?:-[0-9]{1,5})?,? "
        rf"(?P<names>(?:[a-z][a-z'’-]{{1,20}} ){{1,3}})(?:{_LOWER_SUFFIX})\b\.?",
        check=_lower_address_ok,
        in_links=False,
        lower=True,
        needs_digit=True,
        gate=rf"(?:{_LOWER_SUFFIX})\b",
    ),
    _Rule(
        "address",
        6,
        rf"(?<![\w-])(?:{_NAME}\s{{1,4}})?[A-ZÀ-ÖØ-Þ][\w'’-]{{0,40}}(?:{_GLUED_SUFFIX})"
        r"\s{0,4}[0-9]{1,5}(?:\s?[a-zA-Z](?![\w]))?(?:-[0-9]{1,4})?(?![\w])",
        in_links=False,
        needles=_GLUED_NEEDLES,
        needs_digit=True,
    ),
    _Rule(
        "address",
        6,
        rf"(?<![\w-]){_NAME}\s{{1,4}}(?:Straße|Strasse|Str\.|Weg|Allee|Gasse|út|utca|körút|tér)"
        r"\s{1,4}[0-9]{1,5}[a-z]?(?![\w])",
        in_links=False,
        needles=(*_GLUED_NEEDLES, "út", "utca", "tér"),
        needs_digit=True,
    ),
    _Rule(
        "address",
        6,
        r"(?<![\w-])(?:(?:Calle|Avenida|Avda\.|Av\.|Paseo|Rua|Rúa|Via|Viale|Piazza|Corso"
        r"|Largo|Vicolo|Strada|Carrer|ul\.|ulica|al\.|aleja|pl\.|plac)\s{1,4}|[Cc]/\s{0,4})"
        r"(?:(?:de|del|la|los|las|do|da|dos|das|di|della|dei|degli|delle|dello)\s{1,4}){0,3}[A-ZÀ-ÖØ-ÞŁŚŻŹĆŃÓ][\w'’-]{0,40}"
        r"(?:\s{1,4}[A-ZÀ-ÖØ-ÞŁŚŻŹĆŃÓ][\w'’-]{0,40})?,?\s{1,4}(?:n[º°o]\.?\s{0,4})?[0-9]{1,5}(?![\w])",
        check=_not_a_count,
        in_links=False,
        needles=(
            "calle", "avenida", "avda.", "av.", "paseo", "rua", "rúa", "via", "viale", "piazza",
            "corso", "largo", "vicolo", "strada", "carrer", "ul.", "ulica", "al.", "aleja", "pl.",
            "c/",
            "plac",
        ),
        needs_digit=True,
    ),
    _Rule(
        "address",
        6,
        r"(?<![\w.,/:-])[0-9]{1,4}(?:\s?(?:bis|ter))?,?\s{1,4}"
        r"(?i:rue|avenue|boulevard|bd|chemin|allée|impasse|quai|place)\s{1,4}"
        r"(?:(?i:de|du|des|la|le|l'|d')\s{0,4}){0,3}[A-ZÀ-ÖØ-Þ][\w'’-]{1,40}",
        in_links=False,
        needles=("rue", "avenue", "boulevard", "bd", "chemin", "allée", "impasse", "quai", "place"),
        needs_digit=True,
    ),
    _Rule(
        "address",
        6,
        r"(?:p\.?\s?o\.?\s?box|post\s+office\s+box|postbus|postfach)"
        r"\s{0,4}#?\s{0,4}[0-9]{1,6}(?![\w])",
        in_links=False,
        needles=("box", "postbus", "postfach"),
        lower=True,
        needs_digit=True,
        word_start=True,
    ),
)


# The rules a text can reach, in their order, by how many ASCII digits it holds and how long its
# longest piece between white space is (both capped where no rule asks for more): the rest
# cannot match it, and most short texts reach a handful. Filled as texts ask; threads that race
# to one entry each put the same tuple there.
_DIGITS_CAP = max(1, *(rule.digits for rule in _RULES))
_UNBROKEN_CAP = max(rule.unbroken for rule in _RULES)
_REACHABLE: dict[tuple[int, int], tuple[_Rule, ...]] = {}


def _candidates(digits: int, longest: int) -> tuple[_Rule, ...]:
    key = (min(digits, _DIGITS_CAP), min(longest, _UNBROKEN_CAP))
    rules = _REACHABLE.get(key)
    if rules is None:
        rules = _REACHABLE[key] = tuple(
            rule
            for rule in _RULES
            if not (rule.needs_digit and not digits)
            and rule.digits <= digits
            and rule.unbroken <= longest
        )
    return rules


def _any_in(needles: tuple[str, ...], haystack: str) -> bool:
    # A plain loop: any() over a generator costs more than the substring tests themselves.
    for needle in needles:  # noqa: SIM110
        if needle in haystack:
            return True
    return False


def _links(text: str, lowered: str) -> _Spans:
    """Spans of links with a scheme or www. The digit rules refuse digits right after '/', '='
    or '.', which keeps bare-domain links (x.com/a/status/123...) intact as well."""
    spans: _Spans = []
    for marker in ("://", "www."):
        at = lowered.find(marker)
        while at != -1:
            start = at
            while start and lowered[start - 1].isalpha():
                start -= 1
            end = at
            while end < len(text) and not text[end].isspace():
                end += 1
            spans.append((start, end))
            at = lowered.find(marker, end)
    return spans


_EMAIL_RANK = 2
# Anchored on '@' so the engine jumps straight to it; the local part is walked back by hand.
_EMAIL_DOMAIN = _Lazy(r"@(?:[\w-]{1,63}\.)+(?P<tld>[A-Za-z]{2,24})(?![\w-])")
_LOCAL_PUNCT = frozenset(".%+-_")


def _emails(text: str) -> Iterator[tuple[int, int]]:
    floor = 0
    for m in _EMAIL_DOMAIN().finditer(text):
        if m.group("tld").lower() in _FILE_EXTENSIONS:
            continue  # icon@2x.png
        start = m.start()
        # Never walk back past the previous address: each character is walked at most once.
        while start > floor and (text[start - 1].isalnum() or text[start - 1] in _LOCAL_PUNCT):
            start -= 1
        floor = m.end()
        # Nothing before '@' is a handle; '@user@instance.social' is a public fediverse handle;
        # 'git@host:org/repo' is a clone address.
        if start == m.start() or (start and text[start - 1] == "@"):
            continue
        if text.startswith(":", m.end()) and text[m.end() + 1 : m.end() + 2].strip():
            continue
        yield start, m.end()


# Base64 that wraps a secret: decoded (in bounded spans) and scrubbed on its own, two layers
# deep at most.
_BASE64_RUN = _Lazy(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}+={0,2}")
_BASE64_SPAN = 4096
_BASE64_DEPTH = 2
_URLSAFE = str.maketrans("-_", "+/")
_LAYOUT = str.maketrans("", "", "\n\r\t")
# "user:password", as HTTP Basic credentials carry them.
_CREDENTIAL_PAIR = _Lazy(r"[^\s:]{1,64}:(?P<v>\S{6,128})")
_BASIC = _Lazy(r"(?i:basic)\s{1,4}$")


def _decoded(run: str) -> str | None:
    """The text a base64 run stands for, or None when it is not printable text."""
    body = run.rstrip("=")
    if len(body) > _BASE64_SPAN or (body.isalpha() and (body.islower() or body.isupper())):
        return None
    body = body.translate(_URLSAFE)
    body += "=" * (-len(body) % 4)
    try:
        decoded = binascii.a2b_base64(body).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if len(decoded) < 12 or not decoded.translate(_LAYOUT).isprintable():
        return None
    return decoded


def _credential_pair(decoded: str, basic: bool) -> bool:
    pair = _CREDENTIAL_PAIR().fullmatch(decoded)
    if pair is None:
        return False
    value = pair.group("v")
    return basic or (any(ch.isdigit() for ch in value) and any(ch.isalpha() for ch in value))


# Short texts (what `remember` and each sync-log line carry) are asked cheap questions before
# patterns that most of them cannot match are run (or compiled); longer ones go straight to them.
# The questions are asked even once a pattern is compiled: on short persona texts running the
# patterns (the seed-phrase run, the keyword rules) cost several times the questions.
_PRETEST_SPAN = 4096
_BASE64_LEAST = 16


def _longest_piece(text: str) -> int:
    """How long the longest piece of the text between white space is (at most): a rule whose
    every match holds more characters in a row with no white space (`_Rule.unbroken`, a base64
    run's sixteen) cannot match. A long text is given its length, which skips nothing."""
    if len(text) > _PRETEST_SPAN:
        return len(text)
    return max(map(len, text.split()), default=0)


def _may_hold_base64(text: str) -> bool:
    """False only when no base64 run can be there: a run is sixteen characters or more, none of
    them white space, so some piece of the text split at white space is that long."""
    return _longest_piece(text) >= _BASE64_LEAST


def _wrapped_secrets(text: str, depth: int) -> Iterator[tuple[int, int, str]]:
    """Base64 runs whose text holds a finding, with the kind to report (secrets first); the
    caller has checked that some piece of the text is long enough to be one."""
    for m in _BASE64_RUN().finditer(text):
        basic = _BASIC().search(text, max(0, m.start() - 10), m.start()) is not None
        # Short runs only after "Basic": "admin:pass" fits in twenty characters.
        if m.end() - m.start() < 24 and not basic:
            continue
        decoded = _decoded(m.group(0))
        if decoded is None:
            continue
        inner = _find(decoded, depth + 1)
        if inner:
            kinds = {hit.kind for hit in inner}
            kind = next((k for k in ("token", "password") if k in kinds), None)
            yield m.start(), m.end(), kind or min(inner, key=lambda h: h.rank).kind
        elif _credential_pair(decoded, basic):
            yield m.start(), m.end(), "token"


# Seed phrases: twelve or more words in a row, however separated (spaces, commas, new lines,
# dashes, numbers), nearly all of them from the BIP-39 list. Prose never qualifies: its short
# words (a, I, of, to) break a run and its common ones (the, and, for, was) are not on the list.
_SEED_WORD = r"[a-z]{3,8}(?![a-z0-9'’])"
_SEED_GAP = (
    r"(?:[ \t]{0,3}[,;|/-])?(?:[ \t]{0,3}\r?\n)?[ \t]{0,8}"
    r"(?:(?:[0-9]{1,2}[.):-]|#[0-9]{1,2})[ \t]{0,3})?"
)
# A run's words never overlap its gaps (a gap holds no letter), so a failed run costs at most
# a dozen words of backtracking.
_SEED_RUN = _Lazy(
    rf"(?<![\w'’-])(?:[0-9]{{1,2}}[.):-][ \t]{{0,3}})?{_SEED_WORD}"
    rf"(?:{_SEED_GAP}{_SEED_WORD}){{11,}}+"
)
_SEED_MIN_TEXT = 12 * 4 - 1
_LETTERS = _Lazy(r"[a-z]+")
# Every byte but a-z read as a space: splitting then gives the runs of a-z, the only letters a
# phrase's words are made of.
_ONLY_LETTERS = bytes(b if 97 <= b <= 122 else 32 for b in range(256))


_SEED_LEAST_LISTED = 10


def _may_hold_seed_phrase(lowered: str) -> bool:
    """False only when no phrase can be reported: a reported run's words are whole runs of a-z
    letters (a gap holds none), twelve or more, and at least ten different ones are on the list.
    A run of n words has at most n // 6 off the list, and no repeat under twenty words (one
    from twenty): twelve words hold ten different listed ones at least, twenty sixteen. Anything
    else goes to the pattern."""
    if len(lowered) > _PRETEST_SPAN:
        return True
    # Other characters become '?' (one each), which is not a letter either.
    runs = lowered.encode("ascii", "replace").translate(_ONLY_LETTERS).decode("ascii").split()
    if len(runs) < 12:
        return False
    # Each word three to eight letters long: counted first, so a text of a few words never
    # loads the list (a process that scrubs one message pays nothing for it).
    words = [run for run in runs if 3 <= len(run) <= 8]
    if len(words) < 12:
        return False
    return len(seed_words().intersection(words)) >= _SEED_LEAST_LISTED


def _seed_phrases(lowered: str) -> Iterator[tuple[int, int]]:
    for m in _SEED_RUN().finditer(lowered):
        words = _LETTERS().findall(m.group(0))
        listed = seed_words()
        known = sum(1 for word in words if word in listed)
        repeats = len(words) - len(set(words))
        # A typo or two off the list (one in six words), and one repeat in a long phrase.
        off_list = len(words) - known
        if off_list <= len(words) // 6 and repeats <= (1 if len(words) >= 20 else 0):
            yield m.span()


# ---------------------------------------------------------------------------------------------
# Engine


class _Hit:
    """One finding. A plain class: a dataclass costs every process that imports the scrubber
    about a millisecond to make (README, Speed), and findings are never compared."""

    __slots__ = ("end", "kind", "rank", "start")

    def __init__(self, start: int, end: int, kind: str, rank: int) -> None:
        self.start = start
        self.end = end
        self.kind = kind
        self.rank = rank


def _lower(text: str) -> str:
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    # Only U+0130 (dotted capital I) grows when lowered; keep it so positions line up.
    return "".join(ch if ch == "\u0130" else ch.lower() for ch in text)


class _Map:
    """Which characters are taken: one byte per character, so asking about a span costs its
    length, never the number of spans seen so far."""

    __slots__ = ("bits",)

    def __init__(self, size: int) -> None:
        self.bits = bytearray(size)

    def hits(self, start: int, end: int) -> bool:
        return self.bits.find(1, start, end) != -1

    def take(self, start: int, end: int) -> None:
        self.bits[start:end] = b"\x01" * (end - start)


def _find(text: str, depth: int = 0) -> list[_Hit]:
    """Findings in `text`, mapped back from the normalized view."""
    view, index = _view(text)
    hits = _find_in(view, depth)
    if index is None:
        return hits
    return [_Hit(index[h.start], index[h.end - 1] + 1, h.kind, h.rank) for h in hits]


def _find_in(text: str, depth: int) -> list[_Hit]:
    size = len(text)
    lowered = _lower(text)
    # Markers already in the text, and the spans the structured-number rules keep out of
    # (links, and invalid IBANs).
    marked = _Map(size)
    if "[redacted:" in text:
        for m in _MARKER().finditer(text):
            marked.take(*m.span())
    shielded = _Map(size)
    if "://" in text or "www." in lowered:
        for start, end in _links(text, lowered):
            shielded.take(start, end)
    digits = _ascii_digits(text)
    longest = _longest_piece(text)
    runs = [m.span() for m in _RUN().finditer(text)] if digits else []
    tokens = [m.span() for m in _LONG_TOKEN().finditer(text)] if digits else []
    hits: list[_Hit] = []
    seen: dict[int, bool] = {}
    if "@" in text:
        for start, end in _emails(text):
            if not marked.hits(start, end):
                hits.append(_Hit(start, end, "email", _EMAIL_RANK))
    if depth < _BASE64_DEPTH and longest >= _BASE64_LEAST:
        for start, end, kind in _wrapped_secrets(text, depth):
            if not marked.hits(start, end):
                hits.append(_Hit(start, end, kind, 0))
    if size >= _SEED_MIN_TEXT and _may_hold_seed_phrase(lowered):
        for start, end in _seed_phrases(lowered):
            if not marked.hits(start, end):
                hits.append(_Hit(start, end, "token", 0))
    for rule in _candidates(digits, longest):
        if not rule.wanted(text, lowered, seen):
            continue
        for m in rule.matches(text, lowered, runs, tokens):
            start, end = _span(m)
            if start == end or marked.hits(start, end):
                continue
            if not rule.in_links and shielded.hits(start, end):
                continue
            found = rule.span(m, text)
            if found is not None and found[0] < found[1] and not marked.hits(*found):
                hits.append(_Hit(found[0], found[1], rule.kind, rule.rank))
            elif found is None and rule.shield:
                shielded.take(start, end)
    if len(hits) < 2:
        return hits
    # Best rank first, then earliest, then longest; keep what does not collide.
    hits.sort(key=lambda h: (h.rank, h.start, h.start - h.end))
    kept: list[_Hit] = []
    taken = _Map(size)
    for hit in hits:
        if not taken.hits(hit.start, hit.end):
            kept.append(hit)
            taken.take(hit.start, hit.end)
    return kept


def _apply(text: str, hits: list[_Hit]) -> tuple[str, _Spans]:
    """The text with markers in place of the hits, and where the markers now are."""
    parts: list[str] = []
    spans: _Spans = []
    pos = 0
    size = 0
    for hit in sorted(hits, key=lambda h: h.start):
        before = text[pos : hit.start]
        marker = f"[redacted:{hit.kind}]"
        parts.append(before)
        parts.append(marker)
        size += len(before)
        spans.append((size, size + len(marker)))
        size += len(marker)
        pos = hit.end
    parts.append(text[pos:])
    return "".join(parts), spans


# After the first pass, a new finding can only appear where a marker went in (a marker shortens
# or ends what was around it). Long texts are rescanned in windows around the markers; a
# finding is kept when it starts in the middle half of a window, away from its cut edges.
_RESCAN = 2048


def _find_near(text: str, changed: _Spans) -> list[_Hit]:
    hits: list[_Hit] = []
    size = len(text)
    windows: _Spans = []
    for start, end in changed:
        lo, hi = max(0, start - _RESCAN), min(size, end + _RESCAN)
        if windows and lo <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(windows[-1][1], hi))
        else:
            windows.append((lo, hi))
    for lo, hi in windows:
        core_lo = lo + _RESCAN // 2 if lo else 0
        core_hi = hi - _RESCAN // 2 if hi < size else size
        for hit in _find(text[lo:hi]):
            if core_lo <= lo + hit.start < core_hi:
                hits.append(_Hit(lo + hit.start, lo + hit.end, hit.kind, hit.rank))
    return hits


def scrub(text: str) -> Scrubbed:
    """Redact secrets and personal data from one field.

    Idempotent: `scrub(scrub(x).text).text == scrub(x).text`. Every pass turns at least one
    unprotected character into part of a protected marker, so repeating until a pass finds
    nothing always ends, and what it returns is a fixed point.
    """
    kinds: set[str] = set()
    hits = _find(text)
    while hits:
        kinds.update(hit.kind for hit in hits)
        text, changed = _apply(text, hits)
        hits = _find(text) if len(text) <= 4 * _RESCAN else _find_near(text, changed)
    return Scrubbed(text, tuple(sorted(kinds)))
