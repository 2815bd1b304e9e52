"""Benchmark the index, search and the desk on a realistic home.

Generates 10,000 people with 300,000 entries, then reports side by side in one run:
  * a full reindex against a bare FTS5 bulk insert of the same text (goal: at most 2.5x);
  * search latency p50 / p95 over many queries (goal: p50 under 10 ms);
  * `hot`, the desk regenerated from the index (goal: under 1 s).

Run: .venv/bin/python bench/index_and_desk.py [--people 10000] [--entries 30]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from tactful.core.memory import desk, index, personfile
from tactful.core.memory import search as searching
from tactful.core.memory.home import Home
from tactful.core.memory.person import Entry, OpenItem, Person, Pin
from tactful.core.memory.settings import MemorySettings

TZ = ZoneInfo("America/New_York")
NOW = datetime(2026, 11, 29, 17, 0, tzinfo=TZ)
VOCABULARY = ("eval", "harness", "latency", "model", "release", "benchmark", "thanks",
              "question", "tokens", "python", "agent", "memory", "paper", "dataset", "launch",
              "bug", "fix", "demo", "talk", "slides", "prompt", "quantization", "gpu",
              "inference", "kernel", "compiler", "rust", "typescript", "sqlite", "index",
              "search", "desk", "card", "ladder", "regular", "follower", "mutual",
              "collaborator", "brand", "bot", "owner", "privacy", "scrubber", "secret",
              "tombstone", "forget", "journal", "routine", "schedule", "reply", "mention",
              "quote", "follow", "like")


def _words() -> tuple[list[str], list[float]]:
    """A vocabulary with a Zipf-like spread, as real talk has: few words are everywhere."""
    rng = random.Random(9)
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "ex", "or"]
    made = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
            for _ in range(30_000)}
    words = list(VOCABULARY) + sorted(made - set(VOCABULARY))
    weights, total = [], 0.0
    for rank in range(1, len(words) + 1):
        total += 1.0 / rank
        weights.append(total)
    return words, weights


WORDS, CUMULATIVE = _words()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, cum_weights=CUMULATIVE, k=n))


def generate(root: Path, people: int, entries: int) -> list[str]:
    """Write the person files; return every searchable text, for the bare baseline."""
    rng = random.Random(3)
    texts: list[str] = []
    platforms = ("x", "bluesky", "threads", "telegram")
    for platform in platforms:
        (root / "people" / platform).mkdir(parents=True)
    for n in range(people):
        platform = platforms[n % 4]
        handle = f"user{n:05d}"
        person = Person(platform=platform, handle=handle, display_name=f"User {n}",
                        kind="brand" if n % 50 == 0 else "person")
        start = NOW - timedelta(days=rng.uniform(1, 200))
        for k in range(entries):
            inbound = k % 2 == 0
            entry = Entry(at=start + timedelta(hours=3 * k), kind="reply",
                          direction="inbound" if inbound else "outbound",
                          they=sentence(rng, 14) if inbound else None,
                          me=None if inbound else sentence(rng, 10),
                          link=f"https://x.com/{handle}/status/{rng.randrange(10**18)}",
                          topics=[rng.choice(VOCABULARY)])
            if k % 11 == 0:
                entry.open.append(OpenItem(sentence(rng, 6)))
            person.entries.append(entry)
            texts.append(" ".join(filter(None, [entry.they, entry.me,
                                                *(i.text for i in entry.open)])))
        person.pins.append(Pin(sentence(rng, 5), "them", "2026-10-01"))
        person.first_seen, person.last_seen = person.entries[0].at, person.entries[-1].at
        (root / "people" / platform / f"{handle}.md").write_text(personfile.dumps(person, TZ))
    return texts


def bare_fts(texts: list[str], where: Path) -> float:
    db = sqlite3.connect(where)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body,"
               " tokenize = 'unicode61 remove_diacritics 2')")
    start = time.perf_counter()
    with db:
        db.executemany("INSERT INTO t(body) VALUES (?)", ((t,) for t in texts))
    elapsed = time.perf_counter() - start
    db.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--people", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=30)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tactful-bench-index-"))
    try:
        started = time.perf_counter()
        texts = generate(root, args.people, args.entries)
        print(f"home: {args.people} people, {len(texts)} entries "
              f"(generated in {time.perf_counter() - started:.0f} s)")
        home, settings = Home(root), MemorySettings(tz=TZ)

        bare = bare_fts(texts, root / "bare.sqlite")
        start = time.perf_counter()
        index.rebuild(home, settings)
        full = time.perf_counter() - start
        print(f"\n{'what':<44}{'seconds':>9}{'ratio':>8}")
        print(f"{'bare FTS5 bulk insert of the same text':<44}{bare:>9.2f}{1:>8.2f}")
        print(f"{'tactful reindex (read + parse + insert)':<44}{full:>9.2f}{full / bare:>8.2f}")
        print("goal: reindex at most 2.5x the bare insert")

        db, _ = index.open_fresh(home, settings)
        rng = random.Random(5)
        latencies = []
        for n in range(args.queries):
            words = rng.randint(1, 3)
            query = sentence(rng, words)
            if n % 10 == 0:
                query = f"@user{rng.randrange(args.people):05d}"
            start = time.perf_counter()
            searching.search(db, query, NOW, limit=10)
            latencies.append(time.perf_counter() - start)
        db.close()
        latencies.sort()
        p50 = statistics.median(latencies) * 1000
        p95 = latencies[int(len(latencies) * 0.95) - 1] * 1000
        print(f"\nsearch over {args.queries} queries: p50 {p50:.1f} ms, p95 {p95:.1f} ms "
              "(goal: p50 under 10 ms)")

        runs = []
        for _ in range(5):
            start = time.perf_counter()
            desk.regenerate(home, settings, NOW)
            runs.append(time.perf_counter() - start)
        print(f"hot (desk from the index, {args.people} people): median "
              f"{statistics.median(runs) * 1000:.0f} ms over 5 runs (goal: under 1 s)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
