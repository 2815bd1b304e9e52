"""Benchmark the privacy gate: the scrubber and the injection check, per kilobyte.

Every field written to memory passes `scrub` (core/memory/scrub.py) and `injection_reason`
(core/memory/injection.py). Both must cost time in proportion to the text, whatever its shape.
This measures, side by side in one run, at 1 KB, 10 KB, 100 KB and 1 MB, four kinds of text:
  * prose: ordinary lines, with secrets and near-misses among them;
  * token: one long run without a space (base64-ish noise, digits, hex, repeated keywords and
    look-alikes of keys glued together), the shape that made the first scrubber quadratic;
  * log: service log lines (timestamps, key=value pairs, ids, paths, an occasional secret);
  * runs: prose with long unbroken runs spliced in;
and for each a floor: `str.lower()` plus a `re.finditer(r"\\S+")` over the same text (the
least any reading of the text costs). Figures are microseconds per kilobyte and the ratio to
that floor; linear means both stay flat from 1 KB to 1 MB, and the last column of the summary
(the 1 MB figure over the 1 KB one) stays near 1. A quadratic rule shows as a figure that grows
tenfold with each tenfold size. (The smallest texts can come out cheaper per KB: fewer of the
rules' gates open on them.)

Every size reads the same mix: the 1 KB, 10 KB and 100 KB rows time consecutive slices of
that size over the first 100 KB of the text, the 1 MB row the whole megabyte; functions take
turns within each round, and the best of the rounds counts.

Run: .venv/bin/python bench/privacy_gate.py [--sizes 1,10,100,1000] [--rounds 3]
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


TOKEN_SHAPES = (
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    "0123456789",
    "0123456789abcdef",
)
TOKEN_REPEATS = ("A", "eyJ", "key_", "a@b.", "%41", "1-", "pw=", "4111", "\uff11", "nl91abna")


def token(size: int, *, seed: int) -> str:
    """One unbroken run of `size` characters, glued from short pieces of shapes that have made
    regex engines backtrack (short, so that even the 1 KB prefix holds most shapes; the long
    single-shape runs are in the "runs" text)."""
    rng = random.Random(seed)
    parts: list[str] = []
    length = 0
    while length < size:
        piece = rng.choice((16, 32, 64, 128))
        if rng.random() < 0.5:
            alphabet = rng.choice(TOKEN_SHAPES)
            part = "".join(rng.choice(alphabet) for _ in range(piece))
        else:
            unit = rng.choice(TOKEN_REPEATS)
            part = (unit * (piece // len(unit) + 1))[:piece]
        parts.append(part)
        length += len(part)
    return "".join(parts)[:size]


LEVELS = ("DEBUG", "INFO", "INFO", "INFO", "WARN", "ERROR")


def log(size: int, *, seed: int) -> str:
    """Service log lines: little prose, many digits, ids, paths and key=value pairs."""
    rng = random.Random(seed)
    secrets = secret_lines()
    lines: list[str] = []
    length = 0
    n = 0
    while length < size:
        n += 1
        stamp = f"2026-12-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z"
        rid = "".join(rng.choice("0123456789abcdef") for _ in range(32))
        fields = [
            stamp,
            rng.choice(LEVELS),
            f"worker-{rng.randrange(16)}",
            f"req={rid[:8]}-{rid[8:12]}-{rid[12:16]}-{rid[16:20]}-{rid[20:]}",
            f"path=/api/v1/items/{rng.randrange(10**9)}?page={rng.randrange(50)}",
            f"status={rng.choice((200, 200, 201, 304, 404, 500))}",
            f"dur={rng.randrange(2000)}ms",
            f"ip=10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}",
            f"bytes={rng.randrange(10**7)}",
        ]
        if n % 4 == 0:
            fields.append("note=" + rng.choice(secrets))
        line = " ".join(fields)
        lines.append(line)
        length += len(line) + 1
    return "\n".join(lines)[:size]


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


def per_kb(
    fns: dict[str, Callable[[str], object]], texts: list[str], rounds: int
) -> dict[str, float]:
    """Microseconds per KB for each function over the same texts: the best of `rounds` rounds,
    the functions taking turns within a round, so a busy moment of the machine hits them alike."""
    kb = sum(len(text) for text in texts) / 1000
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            for text in texts:
                fn(text)
            times[name].append(time.perf_counter() - start)
    return {name: min(spent) / kb * 1e6 for name, spent in times.items()}


KINDS = ("prose", "token", "log", "runs")


def text_of(kind: str, size: int) -> str:
    if kind == "token":
        return token(size, seed=1)
    if kind == "log":
        return log(size, seed=1)
    return make_text(size, with_runs=kind == "runs", seed=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="1,10,100,1000", help="kilobytes, comma-separated")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per measurement (best)")
    args = parser.parse_args()
    sizes = [int(float(s) * 1000) for s in args.sizes.split(",")]

    # Warm up: compile caches, the lazy imports of the decoders and the seed word list.
    for kind in KINDS:
        warm = text_of(kind, 20_000)
        scrub(warm)
        injection_reason(warm)

    figures: dict[tuple[str, str, int], float] = {}
    flagged: dict[tuple[str, int], str] = {}
    fns: dict[str, Callable[[str], object]] = {
        "floor": floor,
        "scrub": scrub,
        "injection": injection_reason,
    }
    for kind in KINDS:
        # Every size reads the same text: consecutive slices of that size covering at least
        # `span` characters of it (one slice when the size is larger). Comparing one 1 KB
        # prefix with a whole megabyte would compare different mixes.
        whole = text_of(kind, max(sizes))
        span = min(max(sizes), 100_000)
        for size in sizes:
            texts = [whole[i : i + size] for i in range(0, max(span, size), size)]
            for name, value in per_kb(fns, texts, args.rounds).items():
                figures[name, kind, size] = value
            reason = injection_reason(texts[0])
            if reason:
                flagged[kind, size] = reason

    print(f"µs per KB (best of {args.rounds} rounds); × = ratio to the floor", end=" ")
    print("(lower() + finditer(\\S+))")
    for what in ("scrub", "injection"):
        print(f"\n{what}")
        header = f"{'size':>8}" + "".join(f" {kind:>10} {'×':>5}" for kind in KINDS)
        print(header)
        for size in sizes:
            row = f"{size // 1000:>6}KB"
            for kind in KINDS:
                value = figures[what, kind, size]
                row += f" {value:>10.1f} {value / figures['floor', kind, size]:>4.0f}×"
            print(row)
        big, small = max(sizes), min(sizes)
        row = f"{'growth':>8}"
        for kind in KINDS:
            ratio = figures[what, kind, big] / figures[what, kind, small]
            row += f" {ratio:>9.2f}x {'':>5}"
        print(row + f"  (µs per KB at {big // 1000} KB over {small // 1000} KB)")
    for (kind, size), reason in sorted(flagged.items()):
        print(f"note: injection_reason stopped early on {kind} ({size // 1000} KB): {reason}")


if __name__ == "__main__":
    main()
