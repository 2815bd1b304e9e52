"""Benchmark the privacy gate: the scrubber and the injection check, per kilobyte.

Every field written to memory passes `scrub` (core/memory/scrub.py) and `injection_reason`
(core/memory/injection.py). Both must cost time in proportion to the text, whatever its shape.
This measures, side by side in one run, at 1 KB, 10 KB, 100 KB and 1 MB:
  * a floor: `str.lower()` plus a `re.finditer(r"\\S+")` over the same text (the least any
    reading of the text costs);
  * `scrub(text)`;
  * `injection_reason(text)`;
for two kinds of text: prose (ordinary lines, some secrets and near-misses among them) and runs
(the same, with long unbroken runs: base64-ish noise, digits, repeated keywords, a 16k-character
token). Figures are microseconds per kilobyte and the ratio to the floor; linear means the ratio
stays flat from 1 KB to 1 MB. A quadratic rule shows as a ratio that grows with the size.
(The smallest texts can come out cheaper per KB: fewer of the rules' gates open on them.)

Run: .venv/bin/python bench/privacy_gate.py [--sizes 1,10,100,1000] [--budget 2.0]
"""

from __future__ import annotations

import argparse
import random
import re
import time
from collections.abc import Callable
from pathlib import Path

from tactful.core.memory.injection import injection_reason
from tactful.core.memory.scrub import scrub

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
WORDS = re.compile(r"\S+")


def corpus_lines(name: str) -> list[str]:
    text = (CORPUS / name).read_text(encoding="utf-8")
    return [line for line in text.split("\n") if line.strip() and not line.startswith("#")]


def secret_lines() -> list[str]:
    lines = []
    for path in sorted(CORPUS.glob("secrets/*.txt")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.strip() and not line.startswith("#"):
                lines.append(line.split(" || ")[1])
    return lines


def runs(rng: random.Random) -> str:
    """One long unbroken run, of a shape that has made regex engines backtrack."""
    size = rng.choice((512, 2048, 8192, 16384))
    shape = rng.randrange(7)
    if shape == 0:
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        return "".join(rng.choice(alphabet) for _ in range(size))
    if shape == 1:
        return "A" * size
    if shape == 2:
        return ("eyJ" * size)[:size]
    if shape == 3:
        return "".join(rng.choice("0123456789") for _ in range(size))
    if shape == 4:
        return ("key_" * size)[:size]
    if shape == 5:
        return ("a@b." * size)[:size]
    return ("%41" * size)[:size]


# Direction marks and joiners are fine in one line but add up over a long text (the guard
# counts them), so the bench text leaves those lines out.
FORMAT_CHARS = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2069\U000e0000-\U000e007f]")


def make_text(size: int, *, with_runs: bool, seed: int) -> str:
    """Ordinary prose with secrets among it (and long runs when asked): text the scrubber has
    work in and the injection check reads to the end (it holds no instruction)."""
    rng = random.Random(seed)
    prose = [line for line in corpus_lines("prose.txt") if not FORMAT_CHARS.search(line)]
    secrets = secret_lines()
    parts: list[str] = []
    length = 0
    while length < size:
        roll = rng.random()
        if with_runs and roll < 0.08:
            part = runs(rng)
        elif roll < 0.15:
            part = rng.choice(secrets)
        else:
            part = rng.choice(prose)
        parts.append(part)
        length += len(part) + 1
    return " ".join(parts)[:size]


def floor(text: str) -> None:
    text.lower()
    for _ in WORDS.finditer(text):
        pass


def best(fn: Callable[[str], object], text: str, budget: float) -> float:
    """The best of several runs, as many as fit in the budget (at least two)."""
    times: list[float] = []
    spent = 0.0
    while len(times) < 2 or (spent < budget and len(times) < 25):
        start = time.perf_counter()
        fn(text)
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        spent += elapsed
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="1,10,100,1000", help="kilobytes, comma-separated")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds per measurement")
    args = parser.parse_args()
    sizes = [int(float(s) * 1000) for s in args.sizes.split(",")]

    # Warm up: compile caches, the lazy imports of the decoders.
    warm = make_text(20_000, with_runs=True, seed=0)
    scrub(warm)
    injection_reason(warm)

    print("µs per KB (best of several runs); × = ratio to the floor (lower() + finditer(\\S+))")
    print(
        f"{'text':<6} {'size':>8} {'floor':>9} {'scrub':>10} {'×':>7} {'injection':>11} {'×':>7}"
    )
    for with_runs in (False, True):
        # Prefixes of one text, so every size has the same mix.
        whole = make_text(max(sizes), with_runs=with_runs, seed=1)
        for size in sizes:
            text = whole[:size]
            flagged = injection_reason(text)
            kb = len(text) / 1000
            base = best(floor, text, args.budget) / kb * 1e6
            scrubbed = best(scrub, text, args.budget) / kb * 1e6
            checked = best(injection_reason, text, args.budget) / kb * 1e6
            label = "runs" if with_runs else "prose"
            print(
                f"{label:<6} {size // 1000:>6}KB {base:>9.1f} {scrubbed:>10.1f} "
                f"{scrubbed / base:>6.0f}× {checked:>11.1f} {checked / base:>6.0f}×"
                + (f"  (stopped early: {flagged})" if flagged else "")
            )


if __name__ == "__main__":
    main()
