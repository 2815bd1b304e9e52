"""How the injection guard's time grows with the length of the text.

Side by side in one run, for texts of 1 KB, 10 KB, 100 KB and 1 MB: the time per kilobyte of
`injection_reason`, and of two baselines over the same text (`str.lower`, and `re.search` of a
pattern that never matches, which reads the whole text once). Flat rows mean linear time; the
ratio column says how many baseline passes one judgement costs.

Texts (none holds an attempt, so nothing stops the guard reading early; the run stops if one
is flagged):
  * prose: the shared prose corpus, lines joined until the size is reached;
  * imperatives: the benign imperatives, which share words with every family;
  * near misses: parts of attempts that never complete (addressees, staff words, fresh orders,
    secret nouns, image links without data), the worst case for the structural reading;
  * one token: a single run without spaces that looks like base64 (decoding is bounded).

Run: .venv/bin/python bench/injection_scaling.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable
from pathlib import Path

from tactful.core.memory.injection import injection_reason

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
SIZES = (1_000, 10_000, 100_000, 1_000_000)
NEVER = re.compile(r"zq{3}x")


def corpus(name: str) -> list[str]:
    lines = (CORPUS / name).read_text(encoding="utf-8").split("\n")
    return [line for line in lines if line.strip() and not line.startswith("#")]


def filled(lines: list[str], size: int) -> str:
    """Lines joined up to `size` characters. A line that would make an attempt with the lines
    just before it is left out (a corpus of benign lines still holds a few such pairs, and a
    text the guard stops reading early would not measure the whole length)."""
    lines = [line for line in lines if injection_reason(line) is None]
    parts: list[str] = []
    total = 0
    i = 0
    while total < size:
        line = lines[i % len(lines)]
        i += 1
        if injection_reason("\n".join([*parts[-3:], line])) is not None:
            continue
        parts.append(line)
        total += len(line) + 1
    return "\n".join(parts)[:size]


NEAR_MISSES = [
    "AI agents reading this thread, thanks for nothing.",
    "The ferry operator posted a photo of the harbour.",
    "New instructions for the dishwasher arrived today.",
    "I'm the developer of a small game about frogs.",
    "The password manager I use is fine.",
    "Hey bots, nice weather today.",
    "![cat](https://pics.example/cat.jpg?w=600)",
    "Follow the river until the bridge.",
    "the config file lives in your home folder",
    "dear assistant manager, the shift starts at nine",
]


def texts(size: int) -> dict[str, str]:
    token = ("QWxsIHRoZSB3b3JsZCBpcyBhIHN0YWdlLCBhbmQgYWxsIHRoZSBtZW4g" * (size // 56 + 1))[:size]
    return {
        "prose": filled(corpus("prose.txt"), size),
        "imperatives": filled(corpus("benign_imperatives.txt"), size),
        "near misses": filled(NEAR_MISSES, size),
        "one token": token,
    }


def best(fn: Callable[[str], object], text: str, repeat: int) -> float:
    runs = max(1, min(200, 200_000 // max(len(text), 1)))
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(runs):
            fn(text)
        times.append((time.perf_counter() - started) / runs)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'text':12} {'size':>8} {'guard us/KB':>12} {'lower us/KB':>12} "
          f"{'re us/KB':>10} {'guard/lower':>12} {'guard/re':>9}")
    for size in SIZES:
        for name, text in texts(size).items():
            assert injection_reason(text) is None, name
            kb = len(text) / 1000
            guard = best(injection_reason, text, args.repeat) / kb * 1e6
            lower = best(str.lower, text, args.repeat) / kb * 1e6
            search = best(NEVER.search, text, args.repeat) / kb * 1e6
            print(f"{name:12} {size // 1000:>6}KB {guard:>12.1f} {lower:>12.2f} "
                  f"{search:>10.2f} {guard / lower:>12.0f} {guard / search:>9.0f}")


if __name__ == "__main__":
    main()
