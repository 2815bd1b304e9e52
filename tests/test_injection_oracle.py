"""The injection guard finds exactly what it found when every pattern was made and compiled at
import (docs/memory.md, "Privacy at write time").

The guard now compiles each regex when first used and makes a family's patterns (its source
folded and split into alternatives) when a text first opens the family's gate, with a faster
splitter. The oracle here builds all of them eagerly, the old way, from the same definitions
(the module's tuples of patterns and its families' definitions, split by the old
character-by-character splitter and compiled at once), and judges every text with a plain
reading of the old rules: every pattern in order, its needles or anchor words in the chunk, its
partner anywhere in the text, no groups and nothing made lazily. Any text on which the two
disagree fails the test. Its cost is measured in bench/injection_scaling.py, never here.
"""

from __future__ import annotations

import base64
import codecs
import html
import json
import random
import re
import subprocess
import sys
import urllib.parse
import warnings
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from re import _constants as sre
from re import _parser as sre_parser

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tactful.core.memory import injection
from tactful.core.memory.injection import injection_reason
from tactful.core.memory.injection_clauses import clause_reason
from tactful.core.memory.injection_decoding import decodings
from tactful.core.memory.injection_hidden import hidden_characters

CORPUS = Path(__file__).parent / "corpus"

# ---------------------------------------------------------------------------------------------
# The oracle: today's patterns, all made and compiled up front


def old_alternatives(source: str) -> list[str]:
    """The top-level alternatives of a pattern source, found the way the guard found them before
    it split with a regex: one character at a time."""
    parts: list[str] = []
    depth = 0
    in_class = False
    start = i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if source[i + 1 : i + 2] == "]" or source[i + 1 : i + 3] == "^]":
                i += 2 if source[i + 1] == "]" else 3
                continue
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(source[start:i])
            start = i + 1
        i += 1
    parts.append(source[start:])
    return parts


def fold_source(source: str) -> str:
    return re.sub(r"[^\x00-\x7f]+", lambda m: injection._fold(m.group(0)), source)


@dataclass(frozen=True)
class Eager:
    reason: str
    needles: tuple[str, ...]
    anchors: frozenset[str]
    regex: re.Pattern[str]
    imperative: bool = False
    near: re.Pattern[str] | None = None
    after: int = 0
    before: int = 0
    word_start: bool = False
    anchored: bool = False


def eager_patterns(patterns: tuple[injection._Pattern, ...]) -> tuple[Eager, ...]:
    return tuple(
        Eager(
            p.reason, p.needles, p.anchors, re.compile(p.regex.source, p.regex.flags),
            p.imperative,
            re.compile(fold_source(p.near.source)) if p.near is not None else None,
            p.after, p.before, p.word_start, p.anchored,
        )
        for p in patterns
    )


def eager_family(family: injection._FamilyDefinition) -> tuple[Eager, ...]:
    near = re.compile(fold_source(family.near)) if family.near else None
    needles = tuple(injection._fold(n) for n in family.needles)
    anchors = frozenset(injection._fold(family.anchors).split())
    patterns = []
    for alternative in old_alternatives(fold_source(family.source)):
        word_start = alternative.startswith("\\b")
        anchored = alternative.startswith("^")
        body = alternative[2:] if word_start else alternative[1:] if anchored else alternative
        patterns.append(
            Eager(family.reason, needles, anchors, re.compile(body), False, near,
                  family.after, family.before, word_start, anchored)
        )
    return tuple(patterns)


def definitions() -> list[injection._FamilyDefinition]:
    found = [group.definition for group in injection._FAMILIES]
    assert all(found)
    return [d for d in found if d is not None]


ROLES = eager_patterns(injection._ROLES)
PATTERNS = eager_patterns(injection._PATTERNS)
SQUASHED = eager_patterns(injection._SQUASHED)
FAMILIES = tuple(p for family in definitions() for p in eager_family(family))
REPORTED = re.compile(injection._REPORTED.source)
SPLIT_WORDS = re.compile(injection._SPLIT_WORDS.source)
WORDS = re.compile(r"\w+")


def first(patterns: tuple[Eager, ...], text: str) -> str | None:
    """The old reading, pattern by pattern: chunks, needles and anchor words, partners found
    once over the whole text."""
    spans: dict[int, tuple[list[int], list[int]]] = {}

    def partner(p: Eager) -> tuple[list[int], list[int]]:
        assert p.near is not None
        if id(p.near) not in spans:
            found = [m.span() for m in p.near.finditer(text)]
            spans[id(p.near)] = ([s for s, _ in found], [e for _, e in found])
        return spans[id(p.near)]

    size = len(text)
    for start in range(0, max(size, 1), injection._CHUNK):
        end = min(size, start + injection._CHUNK + injection._OVERLAP)
        limit = start + injection._CHUNK if end < size else size
        chunk = text[start:end]
        words = set(WORDS.findall(chunk))
        for p in patterns:
            gated = p.needles or p.anchors
            if gated and not (any(n in chunk for n in p.needles) or p.anchors & words):
                continue
            if p.near is not None and not partner(p)[0]:
                continue
            if p.anchored:
                m0 = p.regex.match(text, 0, end) if start == 0 else None
                matches = [m0] if m0 else []
            else:
                matches = list(p.regex.finditer(text, start, end))
            for m in matches:
                if m.start() >= limit:
                    break
                before = text[m.start() - 1] if m.start() else ""
                if p.word_start and before and (before.isalnum() or before == "_"):
                    continue
                if p.imperative and REPORTED.search(text, max(0, m.start() - 16), m.start()):
                    continue
                if p.near is not None:
                    starts, ends = partner(p)
                    i = bisect_left(starts, m.start())
                    j = bisect_right(starts, m.start()) - 1
                    if not (
                        (i < len(starts) and starts[i] <= m.end() + p.after)
                        or (j >= 0 and ends[j] > m.start() - p.before)
                    ):
                        continue
                return p.reason
        if end == size:
            break
    return None


def reason_of(norm: str, hid: bool) -> str | None:
    plain = injection._deobfuscate(norm)
    disguised = hid or plain != norm
    for variant in (norm, plain) if disguised else (norm,):
        if first(ROLES, variant):
            return injection.ROLE_MARKER
        for lines in (variant, variant.replace("\n", " ")) if "\n" in variant else (variant,):
            found = first(PATTERNS, lines)
            if found:
                return found
        if variant is norm:
            found = first(FAMILIES, variant) or clause_reason(variant)
            if found:
                return found
    if not (disguised or SPLIT_WORDS.search(plain)):
        return None
    return first(SQUASHED, injection._squash(plain))


def judge(text: str, depth: int, budget: list[int]) -> str | None:
    norm, hid = injection._normalize(text)
    found = reason_of(norm, hid)
    if found is None and injection._exfiltration(text):
        found = injection.EXFILTRATION
    if found is not None or depth >= injection._MAX_DEPTH:
        return found
    for decoded in decodings(text, norm):
        if len(decoded) > budget[0]:
            continue
        budget[0] -= len(decoded)
        if hidden_characters(decoded) or judge(decoded, depth + 1, budget) is not None:
            return injection.ENCODED
    return None


def oracle(text: str) -> str | None:
    if not text or text.isspace():
        return None
    if hidden_characters(text):
        return injection.INVISIBLE
    return judge(text, 0, [injection._BUDGET_FACTOR * len(text) + 4096])


# ---------------------------------------------------------------------------------------------
# How the regex parser reads the start of a pattern, to check the guard's cheap reading of it


def exact(items: list[tuple[object, object]]) -> set[str] | None:
    """Every string the parsed items can match, when that is a small finite set, else None."""
    out = {""}
    for op, av in items:
        got: set[str] | None
        if op is sre.LITERAL:
            got = {chr(av)}  # type: ignore[arg-type]
        elif op is sre.SUBPATTERN:
            _, add, remove, sub = av  # type: ignore[misc]
            got = None if add or remove else exact(list(sub))
        elif op is sre.BRANCH:
            got = set()
            for sub in av[1]:  # type: ignore[index]
                each = exact(list(sub))
                if each is None:
                    got = None
                    break
                got |= each
        elif op is sre.IN:
            members = list(av)  # type: ignore[call-overload]
            got = ({chr(v) for _, v in members}
                   if all(o is sre.LITERAL for o, _ in members) else None)
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT) and av[:2] == (0, 1):  # type: ignore[index]
            each = exact(list(av[2]))  # type: ignore[index]
            got = None if each is None else each | {""}
        else:
            got = None
        if got is None or len(out) * len(got) > 10_000:
            return None
        out = {a + b for a in out for b in got}
    return out


def parser_starts(source: str) -> set[str]:
    """Strings one of which every match starts with, as the regex parser reads the source: the
    items at its start whose matches are a known finite set, joined."""
    tree = sre_parser.parse(source)
    if tree.state.flags & ~re.UNICODE:
        return {""}
    out = {""}
    for op, av in tree:
        each = exact([(op, av)])
        repeated = op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
        if each is None and repeated and av[0] >= 1:  # type: ignore[index]
            # At least once: a match starts with one of what it matches once.
            once = exact(list(av[2]))  # type: ignore[index]
            if once is not None and len(out) * len(once) <= 10_000:
                out = {a + b for a in out for b in once}
            break
        if each is None or len(out) * len(each) > 10_000:
            break
        out = {a + b for a in out for b in each}
    return out


def sound(leading: tuple[str, ...], source: str) -> bool:
    """Every match of `source` starts with one of `leading`."""
    return all(any(start.startswith(word) for word in leading) for start in parser_starts(source))


# ---------------------------------------------------------------------------------------------
# Texts

ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def corpus_lines() -> list[str]:
    found = []
    for path in sorted(CORPUS.rglob("*.txt")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.strip() and not line.startswith("#"):
                found.append(line)
                unescaped = ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), line)
                if unescaped != line:
                    found.append(unescaped)
    return found


LINES = corpus_lines()
ATTACKS = [
    line
    for path in sorted(CORPUS.rglob("injections/*.txt"))
    for line in path.read_text(encoding="utf-8").split("\n")
    if line.strip() and not line.startswith("#")
]
FIRST_OF_EACH_FAMILY = [
    next(line for line in path.read_text(encoding="utf-8").split("\n")
         if line.strip() and not line.startswith("#"))
    for path in sorted(CORPUS.rglob("injections/*.txt"))
]
# Cyrillic and Greek look-alikes, as the guard knows them, and ones it does not.
HOMOGLYPHS = {"a": "аα", "e": "еε", "o": "оο", "p": "рρ", "c": "сϲ", "i": "іι", "x": "хχ",
              "y": "у", "s": "ѕ", "k": "κ", "n": "η", "l": "ӏ1|", "t": "т7"}
INVISIBLES = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u200e\u200f\u034f\u180e\U000e0041"
ACCENTS = "\u0301\u0308\u0327\u064b"
LEET = {"o": "0", "i": "1", "e": "3", "a": "4@", "s": "5$", "t": "7"}


@st.composite
def disguised(draw: st.DrawFn) -> str:
    """A corpus line, an attack or random text, disguised the ways attempts are disguised."""
    base = draw(
        st.one_of(
            st.sampled_from(ATTACKS),
            st.sampled_from(LINES),
            st.lists(st.sampled_from(LINES), min_size=2, max_size=4).map(
                lambda ls: draw(st.sampled_from([" ", "\n", "\n\n", ". "])).join(ls)
            ),
            st.text(max_size=120),
        )
    )
    chars = list(base)
    for _ in range(draw(st.integers(0, 6))):
        if not chars:
            break
        at = draw(st.integers(0, len(chars) - 1))
        kind = draw(st.integers(0, 8))
        ch = chars[at]
        if kind == 0:
            chars.insert(at, draw(st.sampled_from(INVISIBLES)))
        elif kind == 1 and ch.lower() in HOMOGLYPHS:
            chars[at] = draw(st.sampled_from(HOMOGLYPHS[ch.lower()]))
        elif kind == 2 and "!" <= ch <= "~":
            chars[at] = chr(ord(ch) + 0xFEE0)  # fullwidth
        elif kind == 3:
            chars[at] = ch.swapcase()
        elif kind == 4 and ch.lower() in LEET:
            chars[at] = draw(st.sampled_from(LEET[ch.lower()]))
        elif kind == 5:
            chars.insert(at + 1, draw(st.sampled_from(ACCENTS)))
        elif kind == 6:
            chars.insert(at, draw(st.sampled_from([" ", "  ", "\n", ".", "-", "\t", "_"])))
        elif kind == 7:
            chars[at] = draw(st.sampled_from(["ß", "İ", "ı", "ﬁ", "’", "`", "Σ", "ς"]))
        else:
            chars.insert(at, draw(st.characters()))
    text = "".join(chars)
    if draw(st.booleans()):
        text = draw(st.sampled_from([str.upper, str.lower, str.title, str.casefold]))(text)
    spacing = draw(st.integers(0, 3))
    if spacing == 1:
        text = " ".join(text)  # "i g n o r e ..."
    elif spacing == 2:
        text = text.replace(" ", draw(st.sampled_from([".", "-", "  ", "\n", "_", "+"])))
    return wrapped(text, draw(st.integers(0, 7)), draw(st.text(max_size=30)))


def wrapped(text: str, how: int, filler: str) -> str:
    """The text as it is, or encoded one of the ways the guard decodes, amid other words."""
    raw = text.encode("utf-8", "surrogatepass")
    if how == 1:
        text = base64.b64encode(raw).decode("ascii")
    elif how == 2:
        text = base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
    elif how == 3:
        text = codecs.encode(text, "rot13")
    elif how == 4:
        text = urllib.parse.quote(raw)
    elif how == 5:
        text = urllib.parse.quote_plus(raw)
    elif how == 6:
        text = "".join(f"&#{ord(c)};" if c.isalpha() and ord(c) % 2 else c for c in text)
        text = html.escape(text, quote=False) if filler.startswith("a") else text
    elif how == 7:
        text = base64.b64encode(base64.b64encode(raw)).decode("ascii")
    return f"{filler} {text} {filler[::-1]}" if filler else text


# ---------------------------------------------------------------------------------------------
# Tests


def test_the_splitter_finds_the_alternatives_the_old_one_found_in_every_family() -> None:
    sources = [fold_source(d.source) for d in definitions()]
    assert len(sources) >= 20
    for source in sources:
        assert injection._alternatives(source) == old_alternatives(source), source[:60]


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="ab()|[]^\\?:\n", max_size=40))
def test_the_splitter_agrees_with_the_old_one_on_any_source(source: str) -> None:
    assert injection._alternatives(source) == old_alternatives(source)


def test_every_family_alternative_starts_with_one_of_the_words_its_regex_is_skipped_without(
) -> None:
    checked = 0
    for group in injection._FAMILIES:
        for pattern in group.patterns():
            if pattern.leading is not None:
                assert sound(pattern.leading, pattern.regex.source), pattern.regex.source[:60]
                checked += 1
    assert checked > 80


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="abs (?:|)*+{}2,\\[]^", max_size=24))
def test_the_leading_words_are_where_every_match_starts_for_any_source(source: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "possible nested set": still valid
        try:
            re.compile(source)
        except re.error:
            assume(False)
        leading = injection._leading(source)
        if leading is not None:
            assert sound(leading, source)


def test_the_lazy_families_hold_the_patterns_the_eager_build_made() -> None:
    lazy = [p for group in injection._FAMILIES for p in group.patterns()]
    assert len(lazy) == len(FAMILIES) > 100
    for made, eager in zip(lazy, FAMILIES, strict=True):
        assert made.regex.get().pattern == eager.regex.pattern
        assert (made.reason, made.needles, made.anchors, made.word_start, made.anchored) == (
            eager.reason, eager.needles, eager.anchors, eager.word_start, eager.anchored)
        assert (made.after, made.before) == (eager.after, eager.before)
        assert (made.near is None) == (eager.near is None)
        if made.near is not None and eager.near is not None:
            assert made.near.get().pattern == eager.near.pattern


def test_every_corpus_line_gets_the_verdict_the_eager_guard_gives() -> None:
    assert len(LINES) > 2000
    differ = [(line[:60], injection_reason(line), oracle(line))
              for line in LINES if injection_reason(line) != oracle(line)]
    assert not differ
    flagged = sum(1 for line in ATTACKS if oracle(line) is not None)
    assert flagged > len(ATTACKS) // 2  # the oracle is no stub that answers None


@pytest.mark.parametrize(
    "encode", [
        lambda t: base64.b64encode(t.encode()).decode(),
        lambda t: codecs.encode(t, "rot13"),
        lambda t: urllib.parse.quote_plus(t),
        lambda t: "".join(f"&#{ord(c)};" for c in t),
        lambda t: " ".join(t),
        lambda t: "\u200b".join(t.split(" ")),
    ],
    ids=["base64", "rot13", "percent", "entities", "spaced", "zero-width"],
)
def test_every_attack_encoded_or_disguised_gets_the_eager_verdict(
    encode: Callable[[str], str],
) -> None:
    texts = [encode(line) for line in ATTACKS]
    differ = [text[:60] for text in texts if injection_reason(text) != oracle(text)]
    assert not differ


def test_long_texts_read_in_chunks_get_the_eager_verdict() -> None:
    # Attacks placed across chunk edges, in prose of several chunks.
    prose = (CORPUS / "prose.txt").read_text(encoding="utf-8").split("\n")
    filler = "\n".join(line for line in prose if not line.startswith("#"))
    filler = (filler * (1 + 2 * injection._CHUNK // len(filler)))[: 2 * injection._CHUNK]
    for line in FIRST_OF_EACH_FAMILY:
        for at in (injection._CHUNK - 20, injection._CHUNK + injection._OVERLAP - 10):
            text = filler[:at] + " " + line + " " + filler[at:]
            assert injection_reason(text) == oracle(text), (line[:40], at)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(disguised())
def test_any_text_gets_the_verdict_the_eager_guard_gives(text: str) -> None:
    assert injection_reason(text) == oracle(text)


# What a persona account's log carries all day (the vocabulary of bench/sync_log.py's generator):
# talk about models, agents, prompts and tokens, which opens the gates of many families, so
# their partners and regexes run. Some are joined with the words of an attempt.
PERSONA_WORDS = (
    "evals", "harness", "latency", "model", "release", "benchmark", "thanks", "question",
    "tokens", "python", "agent", "memory", "paper", "dataset", "launch", "bug", "fix", "demo",
    "talk", "slides", "prompt", "great", "point", "agree", "later", "share", "notes",
)
PERSONA_EXTRA = (
    "your", "system", "me", "hey", "agents", "ai", "bots", ",", ":", ".", "please", "follow",
    "ignore", "previous", "instructions", "the", "api", "keys", "operator", "new", "you", "must",
)


def persona_texts(count: int, seed: int, extra: float, new: float = 0.0) -> list[str]:
    """Texts of the persona's words, with `extra` of them the words of attempts and `new` of
    them made up (names, handles, typos: words the guard has not met before)."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        words = [
            "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
            if rng.random() < new
            else rng.choice(PERSONA_EXTRA if rng.random() < extra else PERSONA_WORDS)
            for _ in range(rng.randint(4, 30))
        ]
        texts.append(" ".join(words).replace(" ,", ",").replace(" :", ":").replace(" .", "."))
    return texts


def test_persona_traffic_gets_the_verdict_the_eager_guard_gives() -> None:
    texts = (persona_texts(3000, 7, 0.0) + persona_texts(3000, 8, 0.15)
             + persona_texts(1500, 9, 0.2, new=0.3) + persona_texts(500, 10, 0.3, new=0.1))
    differ = [(text[:60], injection_reason(text), oracle(text))
              for text in texts if injection_reason(text) != oracle(text)]
    assert not differ
    assert any(oracle(text) for text in texts)  # some of the mixed texts are attempts


THREADED = r"""
import json, sys, threading
sys.setswitchinterval(1e-6)
from tactful.core.memory.injection import injection_reason
texts = json.loads(sys.stdin.read())
start = threading.Barrier(8)
results = [None] * 8
def work(k):
    start.wait()
    # All threads take the attacks in the same order at once, so each family and pattern is
    # first used on several threads together; then each the rest in an order of its own.
    results[k] = {t: injection_reason(t) for t in texts}
    results[k].update((t, injection_reason(t)) for t in texts[k::8])
threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(results))
"""


def test_threads_making_the_patterns_at_once_in_a_fresh_process_agree_with_the_oracle() -> None:
    texts = ATTACKS + LINES[::5]
    done = subprocess.run(
        [sys.executable, "-c", THREADED], input=json.dumps(texts), capture_output=True,
        text=True, check=True, timeout=600,
    )
    expected = {t: oracle(t) for t in texts}
    for result in json.loads(done.stdout):
        assert result == expected
