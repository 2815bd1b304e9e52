"""The injection guard catches families it was not tuned on, and leaves ordinary requests alone.

The families in tests/corpus/injections/ are the development set the guard is tuned on (see
tests/test_injection.py). These sets were written apart from it, from the families'
descriptions only, each before the changes it then measured (docs/memory.md tells the order and
the first figures each set gave):

- tests/corpus/heldout/: written first, before any tuning;
- tests/corpus/sealed/: written next, before tuning, measured once when tuning on the
  development set was done;
- tests/corpus/blind/: written after the sealed set's misses were seen and before they were
  fixed.

Each holds injections/<family>.txt and benign_imperatives.txt; foreign families mark each
language's lines with a "## <Language>" line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tactful.core.memory.injection import injection_reason

CORPUS = Path(__file__).parent / "corpus"
SPLITS = ("heldout", "sealed", "blind")
FAMILIES = (
    "agent_requests", "operator_instructions", "prompt_requests_foreign", "overrides_foreign",
    "encoded", "markdown_exfiltration", "developer_authority",
)
LANGUAGES = {
    "prompt_requests_foreign": {"German", "Dutch", "French", "Spanish"},
    "overrides_foreign": {
        "Russian", "Chinese", "Japanese", "Korean", "Arabic", "Turkish", "Polish",
    },
}
# The goals: at least 95% of every family caught, fewer than 5% of benign requests flagged.
RECALL = 0.95
FALSE_FLAGS = 0.05
# A language's section holds a handful of lines; one miss in four is the most it may have.
LANGUAGE_RECALL = 0.75


def sections(path: Path) -> dict[str, list[str]]:
    """The lines of a corpus file by "## <Language>" section ("" before any section)."""
    found: dict[str, list[str]] = {"": []}
    current = ""
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("## "):
            current = line[3:].strip()
            found.setdefault(current, [])
        elif line.strip() and not line.startswith("#"):
            found[current].append(line)
    return found


def lines(path: Path) -> list[str]:
    return [line for part in sections(path).values() for line in part]


def recall(attempts: list[str]) -> tuple[float, list[str]]:
    missed = [line for line in attempts if injection_reason(line) is None]
    return 1 - len(missed) / len(attempts), missed


@pytest.mark.parametrize("split", SPLITS)
def test_split_has_every_family_and_benign_requests(split: str) -> None:
    for family in FAMILIES:
        attempts = lines(CORPUS / split / "injections" / f"{family}.txt")
        assert len(attempts) >= 5, (split, family)
        assert len(set(attempts)) == len(attempts), (split, family)
    benign = lines(CORPUS / split / "benign_imperatives.txt")
    assert len(benign) >= 15
    assert len(set(benign)) == len(benign)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("split", SPLITS)
def test_family_written_apart_is_caught(split: str, family: str) -> None:
    rate, missed = recall(lines(CORPUS / split / "injections" / f"{family}.txt"))
    assert rate >= RECALL, (f"{split}/{family}: {rate:.1%}", missed)


@pytest.mark.parametrize("split", SPLITS)
def test_benign_requests_written_apart_are_rarely_flagged(split: str) -> None:
    benign = lines(CORPUS / split / "benign_imperatives.txt")
    flagged = [(line, injection_reason(line)) for line in benign]
    flagged = [pair for pair in flagged if pair[1] is not None]
    assert len(flagged) / len(benign) < FALSE_FLAGS, flagged


@pytest.mark.parametrize(
    ("split", "family", "language"),
    [
        (split, family, language)
        for split in SPLITS
        for family, languages in LANGUAGES.items()
        for language in sorted(languages)
    ],
)
def test_each_language_written_apart_is_caught(split: str, family: str, language: str) -> None:
    by_language = sections(CORPUS / split / "injections" / f"{family}.txt")
    attempts = by_language.get(language, [])
    assert attempts, f"{split}/{family} has no {language} lines"
    rate, missed = recall(attempts)
    assert rate >= LANGUAGE_RECALL, (f"{split}/{family}/{language}: {rate:.0%}", missed)


@pytest.mark.parametrize("split", SPLITS)
def test_foreign_sections_name_only_the_languages_asked_for(split: str) -> None:
    for family, languages in LANGUAGES.items():
        named = set(sections(CORPUS / split / "injections" / f"{family}.txt")) - {""}
        assert named == languages, (split, family)
