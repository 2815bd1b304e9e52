"""The companion's own lines: the right language, every kind, never empty, never a number."""

from __future__ import annotations

import random
import re

import pytest

from tactful.core.companion.phrases import (
    COMMANDS,
    KINDS,
    LANGUAGES,
    commands,
    language,
    pick,
    variants,
)


@pytest.mark.parametrize(("code", "expected"), [
    ("nl", "nl"), ("nl-BE", "nl"), ("NL", "nl"), ("nl_NL", "nl"),
    ("de", "de"), ("de-AT", "de"), ("de-CH", "de"), ("DE_de", "de"),
    ("en", "en"), ("en-GB", "en"), ("fr", "en"), ("nds", "en"), ("", "en"), (None, "en"),
    ("  de ", "de"), ("dE-x-private", "de"),
])
def test_language_from_the_platform_code(code: str | None, expected: str) -> None:
    assert language(code) == expected


def test_pick_speaks_the_users_language() -> None:
    rng = random.Random(1)
    assert pick("failed", "nl-BE", rng) in variants("failed", "nl")
    assert pick("failed", "de-AT", rng) in variants("failed", "de")
    assert pick("failed", "pt-BR", rng) in variants("failed", "en")
    assert variants("failed", "nl") != variants("failed", "en") != variants("failed", "de")


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_in_every_language_and_no_line_is_empty(kind: str, lang: str) -> None:
    lines = variants(kind, lang)  # type: ignore[arg-type]
    assert lines
    assert all(line.strip() and line == line.strip() for line in lines)
    assert len(set(lines)) == len(lines)


def test_hold_has_warm_variants_and_never_mentions_limits() -> None:
    limit_words = re.compile(r"limit|quota|rate|cap\b|maximum|too many|te veel|zu viele|minut",
                             re.IGNORECASE)
    for lang in LANGUAGES:
        lines = variants("hold", lang)
        assert len(lines) >= 3
        for line in lines:
            assert not re.search(r"\d", line), line
            assert not limit_words.search(line), line
    picked = {pick("hold", "de", random.Random(seed)) for seed in range(40)}
    assert picked == set(variants("hold", "de"))  # every variant gets its turn


def test_pick_is_exact_with_a_seeded_rng() -> None:
    assert pick("hold", "nl", random.Random(5)) == pick("hold", "nl", random.Random(5))


def test_help_lists_every_command_in_every_language() -> None:
    expected = ["memory", "forget", "export", "delete", "invite", "pause", "resume", "timezone",
                "help"]
    assert list(COMMANDS) == expected
    for lang in LANGUAGES:
        text = pick("help", lang, random.Random(0))
        listed = re.findall(r"^/(\w+) ", text, re.MULTILINE)
        assert listed == expected, lang
        assert [name for name, _ in commands(lang)] == expected
        for name, description in commands(lang):
            assert f"/{name} — {description}" in text
            assert 3 <= len(description) <= 256  # what a platform command menu accepts


def test_lines_that_name_commands_name_real_ones() -> None:
    for lang in LANGUAGES:
        for kind in KINDS:
            for line in variants(kind, lang):
                for name in re.findall(r"(?<![\w/])/(\w+)", line):  # not Europe/London
                    assert name in COMMANDS, (kind, lang, name)


def test_an_unknown_kind_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="kinds are"):
        pick("shout", "en", random.Random(0))  # type: ignore[arg-type]
