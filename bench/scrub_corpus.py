"""Recall and false positives of the scrubber on the project's corpora, by family.

Recall: for each kind, the share of lines in tests/corpus/secrets/<kind>.txt and of the lines
of tests/corpus/secrets.txt tagged with that kind whose secrets are all gone and whose marker
is there; and the same on tests/corpus/heldout_secrets.txt, written after the rules and not
tuned against. False positives: for each kind, the share of look-alike lines
(tests/corpus/benign_lookalikes.txt) and of ordinary prose (tests/corpus/prose.txt) that the
scrubber changed and reported that kind for. The tests hold the goals (tests/test_scrub.py,
tests/test_scrub_families.py); this prints the figures for the README.

Run: .venv/bin/python bench/scrub_corpus.py [--misses]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from tactful.core.memory.scrub import KINDS, scrub

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
MARKER = re.compile(r"\[redacted:([a-z]+)\]")


def lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [
        ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), line)
        for line in text.split("\n")
        if line.strip() and not line.startswith("#")
    ]


def secret_cases(paths: list[Path]) -> list[tuple[tuple[str, ...], str, list[str]]]:
    cases = []
    for path in paths:
        for line in lines(path):
            kinds, text, *secrets = (part.strip() for part in line.split(" || "))
            cases.append((tuple(kinds.split(",")), text, secrets))
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--misses", action="store_true", help="print the lines missed")
    args = parser.parse_args()

    misses: list[str] = []

    def recall(paths: list[Path]) -> tuple[Counter[str], Counter[str]]:
        total: Counter[str] = Counter()
        caught: Counter[str] = Counter()
        for kinds, text, secrets in secret_cases(paths):
            result = scrub(text)
            gone = all(secret not in result.text for secret in secrets)
            markers = set(MARKER.findall(result.text))
            for kind in kinds:
                total[kind] += 1
                if gone and kind in markers:
                    caught[kind] += 1
                else:
                    misses.append(f"{kind}: {text!r} -> {result.text!r}")
        return total, caught

    total, caught = recall([CORPUS / "secrets.txt", *sorted(CORPUS.glob("secrets/*.txt"))])
    held_total, held_caught = recall([CORPUS / "heldout_secrets.txt"])

    benign = {name: lines(CORPUS / name) for name in ("benign_lookalikes.txt", "prose.txt")}
    flagged: dict[str, Counter[str]] = {name: Counter() for name in benign}
    changed: Counter[str] = Counter()
    for name, texts in benign.items():
        for text in texts:
            result = scrub(text)
            if result.text != text:
                changed[name] += 1
                misses.append(f"false positive ({name}): {text!r} -> {result.text!r}")
            for kind in result.kinds:
                flagged[name][kind] += 1

    def share(part: int, whole: int) -> str:
        return f"{part:>4}/{whole:<4} {part / whole if whole else float('nan'):>6.1%}"

    names = list(benign)
    print(
        f"{'kind':<9} {'recall (corpora)':>17} {'recall (held out)':>17}"
        + "".join(f" {n.removesuffix('.txt'):>17}" for n in names)
    )
    for kind in KINDS:
        row = f"{kind:<9} {share(caught[kind], total[kind])}"
        row += f" {share(held_caught[kind], held_total[kind])}"
        for name in names:
            row += f" {share(flagged[name][kind], len(benign[name]))}"
        print(row)
    row = f"{'all':<9} {share(sum(caught.values()), sum(total.values()))}"
    row += f" {share(sum(held_caught.values()), sum(held_total.values()))}"
    for name in names:
        row += f" {share(changed[name], len(benign[name]))}"
    print(row)
    print("(look-alike and prose columns: false positives, lines reported for that kind / lines;")
    print(" 'all': lines changed at all)")
    if args.misses:
        print("\n".join(misses))


if __name__ == "__main__":
    main()
