"""The scrubber: every field passes through `scrub` before it is written anywhere.

It replaces what looks like a secret or a piece of personal data with a marker such as
`[redacted:email]` and reports which kinds it removed, so the entry can say so. The kinds:

- email: user@host.tld, and "name [at] host [dot] tld"; not @handles or user@instance handles
- phone: +international, 00-international, (555) 123-4567 style, trunk-0 national numbers
  with separators, and any number after "phone:", "tel", "mobile", ...
- password: the value after password/pw/passcode/PIN/wachtwoord/... and in user:pass@ links
- token: provider keys (OpenAI, Anthropic, xAI, GitHub, GitLab, Slack, Stripe, Google, AWS,
  Hugging Face, npm, Telegram bots, X bearer), JWTs, private key blocks, Bearer/Authorization
  values, and random-looking values after key/token/secret
- card: 13-19 digits, plain or grouped, Luhn-valid and starting like a card (2-6)
- id: SSNs, and numbers after passport/SSN/BSN/national id/driver's license/...
- bank: IBANs (mod-97), account/routing/sort-code numbers after their keyword
- address: house number + street + suffix (Street, Ave, ...), Dutch/German glued streets
  (Kerkstraat 12), French/Spanish/Portuguese/Italian forms, P.O. Box/Postbus/Postfach

Design choices, all in favour of leaving ordinary prose alone:

- Structured numbers are validated, not just shaped: card numbers must pass Luhn and start like
  a real card, IBANs must pass mod-97, SSNs must fall in assignable ranges.
- A bare run of digits is never a phone or an ID on its own: phones need a `+`, separators or a
  keyword; IDs and account numbers need a keyword. Links keep their digits (status ids).
- Keyword rules keep the keyword and redact only the value, so the line still reads.
- Markers already in the text are never touched, and scrubbing repeats until a pass finds
  nothing, which makes `scrub` idempotent by construction rather than by luck.

Python's regex engine pays for every position it tries, so most rules sit behind cheap gates
(a substring test, or a short scan) and the digit rules only look at runs of digits.
Standard library only; every pattern is compiled once, at import.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

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
_Spans = list[tuple[int, int]]

_MARKER = re.compile(r"\[redacted:(?:" + "|".join(KINDS) + r")\]")
_DIGIT = re.compile(r"[0-9]")
# Runs of digits with the separators phones and cards use; the digit rules match inside these.
_RUN = re.compile(r"[0-9][0-9 ().+/\-]{3,}")

# ---------------------------------------------------------------------------------------------
# Validators


def _span(m: re.Match[str]) -> tuple[int, int]:
    """The part of a match that gets redacted: the value group when the rule has one."""
    for name in ("v", "q", "q2"):
        if name in m.re.groupindex and m.start(name) != -1:
            return m.start(name), m.end(name)
    return m.start(), m.end()


def _value(m: re.Match[str], text: str) -> str:
    start, end = _span(m)
    return text[start:end]


def _digits(s: str) -> str:
    return "".join(ch for ch in s if "0" <= ch <= "9")


def _luhn(number: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(number)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _card_ok(m: re.Match[str], text: str) -> bool:
    number = _digits(m.group(0))
    # Issuers start at 2..6; that also spares snowflake ids (they start with 1) and zero runs.
    return 13 <= len(number) <= 19 and number[0] in "23456" and _luhn(number)


# Lengths for the countries that issue IBANs; an unknown country still needs a sane length.
_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20,
    "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
    "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30,
    "KZ": 20, "LB": 28, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22,
    "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29,
    "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27,
    "TN": 24, "TR": 26, "UA": 29, "VG": 24, "XK": 20,
}  # fmt: skip


def _iban_ok(m: re.Match[str], text: str) -> bool:
    iban = m.group(0).replace(" ", "")
    expected = _IBAN_LENGTHS.get(iban[:2])
    if expected is None:
        if not 15 <= len(iban) <= 34:
            return False
    elif len(iban) != expected:
        return False
    # Move the country and check digits to the end, letters count as 10..35, then mod 97.
    numeric = "".join(str(int(ch, 36)) for ch in iban[4:] + iban[:4])
    return int(numeric) % 97 == 1


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


_TIMESTAMPISH = re.compile(r"[0-9:.+\-TZtz/]+")


_SEGMENT_BREAKS = re.compile(r"[-_./+=~:]")


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
    if len(value) < 12 or _TIMESTAMPISH.fullmatch(value):
        return False
    if not any(_random_segment(seg) for seg in _SEGMENT_BREAKS.split(value)):
        return False
    return _entropy(value) >= 3.0


def _random_value(m: re.Match[str], text: str) -> bool:
    return _looks_random(_value(m, text))


_PROSE_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*|[0-9]{1,3}")


def _password_value(m: re.Match[str], text: str) -> bool:
    if m.start("v") == -1:
        return True  # quoted: somebody is spelling out the exact value
    value = text[m.start("v") : m.end("v")]
    return len(value) >= 4 and any(ch.isalnum() for ch in value)


def _password_like(m: re.Match[str], text: str) -> bool:
    """After "my password is", lowercase words and small numbers are prose ("is weak", "is
    case-sensitive", "is 12 characters"); anything else reads like the password itself."""
    if not _password_value(m, text):
        return False
    if m.start("v") == -1:
        return True
    value = text[m.start("v") : m.end("v")]
    if _PROSE_WORD.fullmatch(value):
        return False
    return not value.isalpha() or any(ch.isupper() for ch in value[1:])


def _aba_ok(m: re.Match[str], text: str) -> bool:
    """US routing numbers carry a weighted check digit (3, 7, 1)."""
    d = [int(ch) for ch in _digits(_value(m, text))]
    if len(d) != 9:
        return False
    return (3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + d[2] + d[5] + d[8]) % 10 == 0


def _min_digits(n: int) -> _Check:
    def check(m: re.Match[str], text: str) -> bool:
        return len(_digits(_value(m, text))) >= n

    return check


def _digit_count(low: int, high: int) -> _Check:
    def check(m: re.Match[str], text: str) -> bool:
        return low <= len(_digits(_value(m, text))) <= high

    return check


_YEAR_CONTEXT = re.compile(
    r"\b(?:[Ii]n|[Ss]ince|[Bb]y|[Ff]rom|[Uu]ntil|[Tt]ill|[Oo]f|[Aa]fter|[Bb]efore|[Aa]round"
    r"|[Cc]irca|[Dd]uring|and|to)\s*$"
)


_NEXT_WORD = re.compile(r"[ \t]+([a-z]+)")
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
_NOT_HOUSE = re.compile(
    r"(?i)\b(?:the|chapter|page|top|route|gate|room|level|episode|season|part|vol|volume|no"
    r"|number|version|act|scene|step|day|week|rank|section|article|verse|stage|round|track"
    r"|side|floor|platform|bus|tram|line)\.?\s*$"
)


def _address_ok(m: re.Match[str], text: str) -> bool:
    number = m.group("n")
    before = max(0, m.start() - 12)
    if _NOT_HOUSE.search(text, before, m.start()):
        return False
    # "In 2020 Main Street closed" names a year, not a house number.
    if (
        len(number) == 4
        and number[:2] in ("19", "20")
        and _YEAR_CONTEXT.search(text, before, m.start()) is not None
    ):
        return False
    following = _NEXT_WORD.match(text, m.end())
    return following is None or following.group(1) in _AFTER_ADDRESS


# ---------------------------------------------------------------------------------------------
# Rules


class _Rule:
    """One detector: a pattern, an optional validator, and the gates that let it skip work."""

    __slots__ = (
        "check",
        "gate",
        "in_links",
        "kind",
        "lower",
        "needles",
        "needs_digit",
        "pattern",
        "rank",
        "run",
        "shield",
        "word_start",
    )

    def __init__(
        self,
        kind: str,
        rank: int,
        pattern: str,
        *,
        check: _Check | None = None,
        in_links: bool = True,
        lower: bool = False,
        needles: tuple[str, ...] = (),
        needs_digit: bool = False,
        gate: str | None = None,
        run: int = 0,
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
        self.pattern = re.compile(pattern, flags)
        self.check = check
        # Digits inside links are ids, not phones or cards; only secrets are hunted there.
        self.in_links = in_links
        # A match that fails its check still claims its span from the later in_links=False
        # rules: an IBAN with a typo is a bank number, not a phone number.
        self.shield = shield
        # Gates, cheapest first: a digit somewhere, a needle in the lowered text, then a short
        # scan of the text.
        self.needs_digit = needs_digit or run > 0
        self.needles = needles
        self.gate = re.compile(gate) if gate else None
        # When set, the pattern only runs around digit runs at least this long.
        self.run = run
        # Keyword rules start on a word boundary; checked by hand because a leading
        # look-behind would stop the engine from skipping ahead to the keyword.
        self.word_start = word_start

    def wanted(self, text: str, lowered: str, has_digit: bool, seen: dict[int, bool]) -> bool:
        if self.needs_digit and not has_digit:
            return False
        if self.needles:
            # Rules share needle sets (both password rules, the street suffixes); test once.
            found = seen.get(id(self.needles))
            if found is None:
                found = seen[id(self.needles)] = _any_in(self.needles, lowered)
            if not found:
                return False
        return self.gate is None or self.gate.search(text) is not None

    def matches(self, text: str, lowered: str, runs: _Spans) -> Iterator[re.Match[str]]:
        if self.lower:
            yield from self.pattern.finditer(lowered)
        elif not self.run:
            yield from self.pattern.finditer(text)
        else:
            size = len(text)
            for start, end in runs:
                if end - start >= self.run:
                    # Two characters back for a leading '+' or '(', three ahead for look-aheads.
                    yield from self.pattern.finditer(text, max(0, start - 2), min(size, end + 3))

    def accepts(self, m: re.Match[str], text: str) -> bool:
        if self.word_start and m.start() and text[m.start() - 1].isalnum():
            return False
        return self.check is None or self.check(m, text)


# A bare value after a keyword runs to the next space; trailing sentence punctuation stays out.
_BARE = r"(?P<v>[^\s\"'`]\S*?)(?=[.,;:!?)\]}>\"'`]*(?:\s|$))"
_QUOTED = r"(?:\"(?P<q>[^\"\n]{1,120})\"|'(?P<q2>[^'\n]{1,120})')"

# Env-style names such as DB_PASSWORD or smtp_pwd count too: the prefix ends in '_', which
# passes the word-start check, and a suffix may follow.
_LOGIN_WORDS = (
    r"(?:password|passwd|passwort|passphrase|passcode|pass_?word|pass(?==)|pwd|pw|wachtwoord"
    r"|kennwort|contrase[ñn]a|mot\s+de\s+passe|senha|пароль)(?:_[A-Za-z0-9]+)*\b[\"']?"
)
_PASSWORD_NEEDLES = ("pass", "pw", "wachtwoord", "kennwort", "contrase", "mot", "senha", "пароль")
_API_WORDS = (
    r"(?:api[_ -]?key|apikey|access[_ -]?key|secret[_ -]?key|access[_ -]?token"
    r"|auth[_ -]?token|refresh[_ -]?token|id[_ -]?token|session[_ -]?(?:id|token|key)"
    r"|client[_ -]?secret|private[_ -]?key|signing[_ -]?key|secret|token|key|credentials?)"
    r"(?:[_-][A-Za-z0-9]+)*\b[\"']?"
)

_NAME = r"[A-ZÀ-ÖØ-Þ][A-Za-zÀ-ÖØ-öø-ÿ'’.\-]*"
_STREET_SUFFIX = (
    r"Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Boulevard|Blvd|Drive|Dr|Way|Court|Ct|Place|Pl"
    r"|Terrace|Ter|Parkway|Pkwy|Highway|Hwy|Square|Sq|Circle|Cir|Crescent|Close|Row"
)
_GLUED_SUFFIX = (
    r"straat|steeg|weg|laan|gracht|plein|kade|singel|dijk|straße|strasse|str\.|allee|gasse"
)
_GLUED_NEEDLES = (
    "straat", "steeg", "weg", "laan", "gracht", "plein", "kade", "singel", "dijk", "straße",
    "strasse", "str.", "allee", "gasse",
)  # fmt: skip
_FILE_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "pdf"})

_RULES: tuple[_Rule, ...] = (
    # --- token: formats that announce themselves
    _Rule(
        "token",
        0,
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)",
        needles=("private key",),
        flags=re.DOTALL,
    ),
    _Rule(
        "token",
        0,
        r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        needles=("eyj",),
        word_start=True,
    ),
    _Rule(
        "token",
        0,
        r"(?<![\w-])(?:"
        r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}"
        r"|whsec_[A-Za-z0-9]{20,}"
        r"|gh[pousr]_[A-Za-z0-9]{30,}"
        r"|github_pat_[A-Za-z0-9_]{30,}"
        r"|glpat-[A-Za-z0-9_-]{20,}"
        r"|xox[abposr]-[A-Za-z0-9-]{10,}"
        r"|AIza[A-Za-z0-9_-]{35}"
        r"|ya29\.[A-Za-z0-9_-]{20,}"
        r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
        r"|npm_[A-Za-z0-9]{36}"
        r"|hf_[A-Za-z0-9]{30,}"
        r"|xai-[A-Za-z0-9]{20,}"
        r"|GOCSPX-[A-Za-z0-9_-]{20,}"
        # X/Twitter app bearer tokens open with a long run of A's (a scream has no digits).
        r"|A{16,}(?=[A-Za-z0-9%_-]*[0-9%])[A-Za-z0-9%_-]{20,}"
        r")(?![\w-])",
        needles=(
            "_live_", "_test_", "whsec_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
            "glpat-", "xox", "aiza", "ya29.", "akia", "asia", "npm_", "hf_", "xai-", "gocspx-",
            "aaaaaaaaaaaaaaaa",
        ),
    ),
    # OpenAI/Anthropic style; "sk-" alone is too common a prefix, so the rest must look random.
    _Rule(
        "token",
        0,
        r"(?<![\w-])sk-(?P<v>[A-Za-z0-9_-]{20,})(?![\w-])",
        check=_random_value,
        needles=("sk-",),
    ),
    # Telegram bot tokens: numeric bot id, colon, a secret that starts with AA.
    _Rule(
        "token",
        0,
        r"(?<![\w:])[0-9]{6,12}:AA[A-Za-z0-9_-]{30,}(?![\w-])",
        needles=(":aa",),
    ),
    _Rule(
        "token",
        0,
        r"hooks\.slack\.com/services/(?P<v>[A-Za-z0-9/_-]{20,})",
        needles=("hooks.slack",),
        lower=True,
    ),
    _Rule(
        "token",
        0,
        r"(?:authorization\s*[:=]\s*(?:bearer|basic|token|bot)?|bearer)"
        r"\s*(?P<v>[A-Za-z0-9._~+/=-]{12,})",
        check=_random_value,
        needles=("bearer", "authorization"),
        lower=True,
        word_start=True,
    ),
    # --- token: "api_key = ...", "token: ...", JSON and env styles
    _Rule(
        "token",
        0,
        _API_WORDS + r"\s*(?:[:=]|\bis\b|\bwas\b)\s*[\"']?(?P<v>[A-Za-z0-9_\-+/=.~]{12,})",
        check=_random_value,
        needles=("key", "token", "secret", "credential"),
        lower=True,
        word_start=True,
    ),
    # --- password
    _Rule("password", 1, r"://[^\s:/@\[\]]+:(?P<v>[^\s/@\[\]]+)@", needles=("://",)),
    _Rule(
        "password",
        1,
        # "password: x", "pw=x", and a quoted value right after the keyword.
        _LOGIN_WORDS + rf"(?:\s*[:=]\s*|\s*(?=[\"']))(?:{_QUOTED}|{_BARE})",
        check=_password_value,
        needles=_PASSWORD_NEEDLES,
        lower=True,
        word_start=True,
    ),
    _Rule(
        "password",
        1,
        # "my password is x", "the password for the wifi is x", "my password's x".
        _LOGIN_WORDS + r"(?:\s+(?:for|of|to|on)\s+(?:the\s+|my\s+|our\s+|your\s+)?[\w.-]+"
        r"(?:\s+[\w.-]+)?)?(?:\s+(?:is|was|ist|es|est|is\s+now|to|naar|auf)\s+|'s\s+|’s\s+)"
        rf"(?:{_QUOTED}|{_BARE})",
        check=_password_like,
        needles=_PASSWORD_NEEDLES,
        lower=True,
        word_start=True,
    ),
    _Rule(
        "password",
        1,
        r"pin(?:\s?code)?\s*(?:[:=]|\bis\b|\bwas\b)\s*(?P<v>[0-9]{4,8})(?![\w])",
        needles=("pin",),
        lower=True,
        needs_digit=True,
        word_start=True,
    ),
    # --- email: the "user@host" form has its own finder below; this is "name [at] host [dot] com"
    _Rule(
        "email",
        2,
        r"(?<![\w.+-])[\[(]?[\w.+-]+[\])]?\s*[\[(]\s*at\s*[\])]\s*[\[(]?[\w-]+[\])]?"
        r"(?:\s*[\[(]\s*dot\s*[\])]\s*[\[(]?[\w-]+[\])]?)+",
        needles=("dot]", "dot)", "dot ]", "dot )"),
        lower=True,
    ),
    # --- bank: IBAN (mod-97) and keyword-introduced account numbers
    _Rule(
        "bank",
        3,
        # The look-behind sits after the first letters so the engine can skip ahead cheaply.
        r"[A-Z]{2}(?<![A-Za-z0-9][A-Z]{2})[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?"
        r"(?![A-Za-z0-9])",
        check=_iban_ok,
        in_links=False,
        needs_digit=True,
        shield=True,
    ),
    _Rule(
        "bank",
        4,
        r"(?:(?:bank\s+)?account\s*(?:number|num\.?|no\.?|nr\.?|#)|bank\s+account"
        r"|acct\.?(?:\s*(?:number|no\.?|#))?|routing\s*(?:number|no\.?|#)"
        r"|aba(?:\s+routing)?\s*(?:number|no\.?|#)|sort\s+code"
        r"|rekening(?:nummer)?|kontonummer|n[uú]mero\s+de\s+cuenta)"
        r"\s*(?:[:#=]|\bis\b|\bwas\b)?\s*(?P<v>[0-9](?:[ -]?[0-9]){3,19})(?![\w])",
        check=_min_digits(6),
        in_links=False,
        needles=("account", "acct", "routing", "aba", "sort", "rekening", "kontonummer", "cuenta"),
        lower=True,
        needs_digit=True,
        word_start=True,
    ),
    # Bare "routing 1000000 requests" is prose: only a checksummed routing number counts, and
    # only a long number right after "account".
    _Rule(
        "bank",
        4,
        r"(?P<k>routing|account)\s*(?:[:#=]|\bis\b)?\s*(?P<v>[0-9](?:[ -]?[0-9]){7,19})(?![\w])",
        check=lambda m, text: _aba_ok(m, text) if m.group("k") == "routing" else True,
        in_links=False,
        needles=("account", "routing"),
        lower=True,
        needs_digit=True,
        word_start=True,
    ),
    # --- card: 13-19 digits, plain or in the usual 4-4-4-4 / 4-6-5 groupings, Luhn-checked
    _Rule(
        "card",
        3,
        r"(?<![\w.,/+:$€£¥=-])(?:[0-9]{13,19}"
        r"|[0-9]{4}(?P<s>[ -])[0-9]{4}(?P=s)[0-9]{4}(?P=s)[0-9]{1,4}(?:(?P=s)[0-9]{1,3})?"
        r"|[0-9]{4}(?P<t>[ -])[0-9]{6}(?P=t)[0-9]{4,5})"
        r"(?![\w/]|[.,-][0-9])",
        check=_card_ok,
        in_links=False,
        run=13,
    ),
    # --- id: US SSN in its assignable ranges, and numbers introduced by an ID keyword
    _Rule(
        "id",
        4,
        r"(?<![\w.=-])(?!000|666|9[0-9]{2})[0-9]{3}-(?!00)[0-9]{2}-(?!0000)[0-9]{4}(?![\w-])",
        in_links=False,
        run=11,
    ),
    _Rule(
        "id",
        4,
        r"(?:passport|ssn|social\s+security|national\s+(?:id|identity|insurance)"
        r"|bsn|burgerservicenummer|sofinummer|driver'?s?\s+licen[cs]e|personalausweis"
        r"|dni|nino|tax\s+id|(?:id|identity)\s+card"
        r"|(?:id|identity|identification)(?=\s*(?:number|no\b|nr\b|#)))"
        r"(?:\s*(?:number|num\b\.?|no\b\.?|nr\b\.?|#))?\s*(?:[:#=]|\bis\b|\bwas\b)?\s*"
        r"(?P<v>[0-9](?:[ -]?[0-9]){3,15}"
        r"|(?=[a-z]*[0-9])[a-z0-9]{1,20}(?:-[a-z0-9]{1,20}){0,3})(?![\w-])",
        # Six digits at least: "passport 2026 renewal" names a year.
        check=_min_digits(6),
        in_links=False,
        needs_digit=True,
        lower=True,
        needles=(
            "passport", "ssn", "social", "national", "bsn", "burgerservicenummer", "sofinummer",
            "licen", "personalausweis", "dni", "nino", "tax", "id number", "id no", "id nr",
            "id#", "id #", "id card", "identi",
        ),
        word_start=True,
    ),
    # --- phone
    _Rule(
        "phone",
        5,
        r"(?<![\w+/=])\+[0-9]{1,3}(?:[ .-]?(?:\([0-9]{1,4}\)|[0-9]{1,5})){1,6}"
        r"(?![\w]|[.,-][0-9])",
        check=_digit_count(8, 15),
        in_links=False,
        needles=("+",),
        run=6,
    ),
    # The same with the 00 exit prefix, which needs a separator to stand apart from plain ids.
    _Rule(
        "phone",
        5,
        r"(?<![\w+/=.:-])(?<![0-9] )00[1-9][0-9]{0,2}[ .-](?:\([0-9]{1,4}\)|[0-9]{1,5})"
        r"(?:[ .-]?(?:\([0-9]{1,4}\)|[0-9]{1,5})){0,5}"
        r"(?![\w]|[.,-][0-9])",
        check=_digit_count(10, 17),
        in_links=False,
        run=10,
    ),
    _Rule(
        "phone",
        5,
        r"(?<![\w.+/=-])(?:1[ .-])?(?:\([0-9]{3}\) ?|[0-9]{3}[ .-])[0-9]{3}[ .-][0-9]{4}"
        r"(?![\w]|[.,-][0-9])",
        in_links=False,
        run=11,
    ),
    # National numbers with a trunk 0 and separators: 06-12345678, 020 7946 0958, 030 1234567,
    # 01 23 45 67 89.
    _Rule(
        "phone",
        5,
        # Not part of a longer row of numbers: "04 11 23 35 42 49" is a lottery draw.
        r"(?<![\w.+/=:-])(?<![0-9] )0[0-9]{1,4}(?:[ .-][0-9]{2,8}){1,4}(?![\w]|[ .,:/-][0-9])",
        check=_digit_count(10, 11),
        in_links=False,
        run=11,
    ),
    _Rule(
        "phone",
        5,
        r"(?:phone|tel|telephone|mobile|cell|whatsapp|telefoon|mobiel|telefon)"
        r"(?:\s*(?:number|no\.?|nr\.?|#))?\s*(?:[:=]|\bis\b|\bat\b)?\s*"
        r"(?P<v>\+?[0-9](?:[ .()-]?[0-9]){6,14})(?![\w])",
        check=_digit_count(7, 15),
        in_links=False,
        lower=True,
        needs_digit=True,
        needles=("phone", "tel", "mobile", "cell", "whatsapp", "mobiel"),
        word_start=True,
    ),
    # --- address
    _Rule(
        "address",
        6,
        r"(?<![\w.,/:$€£-])(?P<n>[0-9]{1,5})[A-Za-z]?(?:-[0-9]{1,5})?,?\s+"
        rf"(?:(?:{_NAME}|[0-9]{{1,3}}(?:st|nd|rd|th))\s+){{1,4}}"
        rf"(?:{_STREET_SUFFIX})\b\.?(?:\s+(?:N|S|E|W|NE|NW|SE|SW)\b)?",
        check=_address_ok,
        in_links=False,
        needs_digit=True,
        gate=rf"(?:{_STREET_SUFFIX})\b",
    ),
    _Rule(
        "address",
        6,
        rf"(?<![\w-])(?:{_NAME}\s+)?[A-ZÀ-ÖØ-Þ][\w'’-]*(?:{_GLUED_SUFFIX})"
        r"\s*[0-9]{1,5}(?:\s?[a-zA-Z](?![\w]))?(?:-[0-9]{1,4})?(?![\w])",
        in_links=False,
        needles=_GLUED_NEEDLES,
        needs_digit=True,
    ),
    _Rule(
        "address",
        6,
        rf"(?<![\w-]){_NAME}\s+(?:Straße|Strasse|Str\.|Weg|Allee|Gasse)"
        r"\s+[0-9]{1,5}[a-z]?(?![\w])",
        in_links=False,
        needles=_GLUED_NEEDLES,
        needs_digit=True,
    ),
    _Rule(
        "address",
        6,
        r"(?<![\w-])(?:Calle|Avenida|Avda\.|Paseo|Rua|Rúa|Viale|Piazza|Carrer)\s+"
        r"(?:(?:de|del|la|los|las|do|da|dos|das|di|della)\s+)*[A-ZÀ-ÖØ-Þ][\w'’-]*"
        r"(?:\s+[A-ZÀ-ÖØ-Þ][\w'’-]*)?,?\s+(?:n[º°o]\.?\s*)?[0-9]{1,4}(?![\w])",
        in_links=False,
        needles=("calle", "avenida", "avda.", "paseo", "rua", "rúa", "viale", "piazza", "carrer"),
        needs_digit=True,
    ),
    _Rule(
        "address",
        6,
        r"(?<![\w.,/:-])[0-9]{1,4}(?:\s?(?:bis|ter))?,?\s+"
        r"(?:rue|avenue|boulevard|bd|chemin|allée|impasse|quai)\s+"
        r"(?:(?:de|du|des|la|le|l'|d')\s*)*[A-ZÀ-ÖØ-Þ][\w'’-]*",
        in_links=False,
        needles=("rue", "avenue", "boulevard", "bd", "chemin", "allée", "impasse", "quai"),
        needs_digit=True,
    ),
    _Rule(
        "address",
        6,
        r"(?:p\.?\s?o\.?\s?box|post\s+office\s+box|postbus|postfach)"
        r"\s*#?\s*[0-9]{1,6}(?![\w])",
        in_links=False,
        needles=("box", "postbus", "postfach"),
        lower=True,
        needs_digit=True,
        word_start=True,
    ),
)

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
_EMAIL_DOMAIN = re.compile(r"@(?:[\w-]+\.)+(?P<tld>[A-Za-z]{2,})(?![\w-])")
_LOCAL_PUNCT = frozenset(".%+-_")


def _emails(text: str) -> Iterator[tuple[int, int]]:
    for m in _EMAIL_DOMAIN.finditer(text):
        if m.group("tld").lower() in _FILE_EXTENSIONS:
            continue  # icon@2x.png
        start = m.start()
        while start and (text[start - 1].isalnum() or text[start - 1] in _LOCAL_PUNCT):
            start -= 1
        # Nothing before '@' is a handle; '@user@instance.social' is a public fediverse handle.
        if start == m.start() or (start and text[start - 1] == "@"):
            continue
        yield start, m.end()


# ---------------------------------------------------------------------------------------------
# Engine


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    kind: str
    rank: int


def _overlaps(start: int, end: int, spans: _Spans) -> bool:
    return any(start < e and s < end for s, e in spans)


def _lower(text: str) -> str:
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    # Only U+0130 (dotted capital I) grows when lowered; keep it so positions line up.
    return "".join(ch if ch == "\u0130" else ch.lower() for ch in text)


def _find(text: str) -> list[_Hit]:
    lowered = _lower(text)
    markers = [m.span() for m in _MARKER.finditer(text)] if "[redacted:" in text else []
    # Spans the structured-number rules keep out of: links, and invalid IBANs.
    shielded = _links(text, lowered) if ("://" in text or "www." in lowered) else []
    has_digit = _DIGIT.search(text) is not None
    runs = [m.span() for m in _RUN.finditer(text)] if has_digit else []
    hits: list[_Hit] = []
    seen: dict[int, bool] = {}
    if "@" in text:
        for start, end in _emails(text):
            if not _overlaps(start, end, markers):
                hits.append(_Hit(start, end, "email", _EMAIL_RANK))
    for rule in _RULES:
        if not rule.wanted(text, lowered, has_digit, seen):
            continue
        for m in rule.matches(text, lowered, runs):
            start, end = _span(m)
            if start == end or _overlaps(start, end, markers):
                continue
            if not rule.in_links and _overlaps(start, end, shielded):
                continue
            if rule.accepts(m, text):
                hits.append(_Hit(start, end, rule.kind, rule.rank))
            elif rule.shield:
                shielded.append((start, end))
    if len(hits) < 2:
        return hits
    # Best rank first, then earliest, then longest; keep what does not collide.
    hits.sort(key=lambda h: (h.rank, h.start, h.start - h.end))
    kept: list[_Hit] = []
    taken: _Spans = []
    for hit in hits:
        if not _overlaps(hit.start, hit.end, taken):
            kept.append(hit)
            taken.append((hit.start, hit.end))
    return kept


def _apply(text: str, hits: list[_Hit]) -> str:
    parts: list[str] = []
    pos = 0
    for hit in sorted(hits, key=lambda h: h.start):
        parts.append(text[pos : hit.start])
        parts.append(f"[redacted:{hit.kind}]")
        pos = hit.end
    parts.append(text[pos:])
    return "".join(parts)


def scrub(text: str) -> Scrubbed:
    """Redact secrets and personal data from one field.

    Idempotent: `scrub(scrub(x).text).text == scrub(x).text`. Every pass turns at least one
    unprotected character into part of a protected marker, so repeating until a pass finds
    nothing always ends, and what it returns is a fixed point.
    """
    kinds: set[str] = set()
    while True:
        hits = _find(text)
        if not hits:
            return Scrubbed(text, tuple(sorted(kinds)))
        kinds.update(hit.kind for hit in hits)
        text = _apply(text, hits)
