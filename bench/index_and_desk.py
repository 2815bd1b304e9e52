"""Benchmark the index, search and the desk on a realistic home.

Reports side by side in one run:
  * the whole `tactful reindex` command (the id map and the index, as the command does them)
    on 2,000 people x 30 entries, against a floor that reads the same files and bulk-inserts
    their text into a bare FTS5 table; the two run in pairs, several times, medians compared
    (goal: at most 2x);
  * on 10,000 people x 30 entries (300,000 entries): search p50 / p95 in process over many
    queries, beside the same MATCH ... ORDER BY rank LIMIT on the bare FTS5 table (goal: p50
    under 5 ms, p95 under 20 ms);
  * `hot`, the desk regenerated from the index (goal: under 1 s).

Run: .venv/bin/python bench/index_and_desk.py [--people 10000] [--entries 30]
     [--reindex-people 2000] [--repeat 5]
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


def floor(root: Path, where: Path) -> float:
    """Read every person file and put its text in a bare FTS5 table: what any index of these
    files must do at least (no YAML, no id map, no scoring columns)."""
    start = time.perf_counter()
    with __import__("contextlib").suppress(FileNotFoundError):
        where.unlink()
    db = sqlite3.connect(where)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body,"
               " tokenize = 'unicode61 remove_diacritics 2')")
    rows = []
    for folder in sorted((root / "people").iterdir()):
        for path in folder.iterdir():
            rows += [(line,) for line in path.read_text(encoding="utf-8").splitlines()
                     if line.startswith(("they: ", "me: ", "- [ ] "))]
    with db:
        db.executemany("INSERT INTO t(body) VALUES (?)", rows)
    db.close()
    return time.perf_counter() - start


def reindex_command(root: Path) -> float:
    """The body of `tactful reindex`, in process: the id map, then the index."""
    start = time.perf_counter()
    home = Home(root)
    index.rebuild(home, MemorySettings(tz=TZ), ids=True)
    return time.perf_counter() - start


def bare_search(where: Path, queries: list[str]) -> list[float]:
    db = sqlite3.connect(where)
    latencies = []
    for query in queries:
        expression = searching.match_expression(query, "AND")
        start = time.perf_counter()
        db.execute("SELECT rowid, snippet(t, -1, '[', ']', '…', 12) FROM t WHERE t MATCH ?"
                   " ORDER BY rank LIMIT 200", (expression,)).fetchall()
        latencies.append(time.perf_counter() - start)
    db.close()
    return latencies


def p50_p95(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    return statistics.median(values) * 1000, values[int(len(values) * 0.95) - 1] * 1000


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
    parser.add_argument("--reindex-people", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tactful-bench-index-"))
    try:
        small = root / "small"
        small.mkdir()
        generate(small, args.reindex_people, args.entries)
        sides: dict[str, list[float]] = {"floor": [], "reindex": []}
        for _ in range(args.repeat):  # paired: drift on a shared machine hits both alike
            sides["floor"].append(floor(small, root / "floor.sqlite"))
            sides["reindex"].append(reindex_command(small))
        bare_median = statistics.median(sides["floor"])
        print(f"reindex home: {args.reindex_people} people x {args.entries} entries; "
              f"{args.repeat} paired runs, medians")
        print(f"\n{'what':<52}{'seconds':>9}{'ratio':>8}")
        print(f"{'floor: read the files, bare FTS5 insert of their text':<52}"
              f"{bare_median:>9.2f}{1:>8.2f}")
        full = statistics.median(sides["reindex"])
        print(f"{'tactful reindex (id map + index)':<52}{full:>9.2f}{full / bare_median:>8.2f}")
        ratios = sorted(r / f for r, f in zip(sides["reindex"], sides["floor"], strict=True))
        print(f"per pair: {', '.join(f'{r:.2f}' for r in ratios)}; goal: at most 2x the floor")

        big = root / "big"
        big.mkdir()
        started = time.perf_counter()
        texts = generate(big, args.people, args.entries)
        print(f"\nsearch home: {args.people} people, {len(texts)} entries "
              f"(generated in {time.perf_counter() - started:.0f} s)")
        home, settings = Home(big), MemorySettings(tz=TZ)
        bare_fts(texts, root / "bare.sqlite")
        index.rebuild(home, settings)

        db, _ = index.open_fresh(home, settings)
        rng = random.Random(5)
        queries = []
        for n in range(args.queries):
            query = sentence(rng, rng.randint(1, 3))
            if n % 10 == 0:
                query = f"@user{rng.randrange(args.people):05d}"
            queries.append(query)
        latencies = []
        for query in queries:
            start = time.perf_counter()
            searching.search(db, query, NOW, limit=10)
            latencies.append(time.perf_counter() - start)
        db.close()
        bare = bare_search(root / "bare.sqlite", queries)
        t50, t95 = p50_p95(latencies)
        b50, b95 = p50_p95(bare)
        print(f"\n{'search, ' + str(args.queries) + ' queries':<52}{'p50 ms':>9}{'p95 ms':>8}")
        print(f"{'bare FTS5: MATCH (all words) ORDER BY rank LIMIT 200':<52}{b50:>9.1f}{b95:>8.1f}")
        print(f"{'tactful search (scored, all then any word)':<52}{t50:>9.1f}{t95:>8.1f}")
        print(f"ratio: p50 {t50 / b50:.2f}x, p95 {t95 / b95:.2f}x; "
              "goal: p50 under 5 ms, p95 under 20 ms")

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
