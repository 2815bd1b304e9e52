"""Benchmark the index, search and the desk on a realistic home.

Reports side by side in one run:
  * the whole `tactful reindex` command, run as a command (the id map and the index, from one
    reading of the files), on 2,000 people x 30 entries, against a floor, also run as a
    command, that reads the same files and bulk-inserts the same text (the same documents,
    columns and words as tactful's index holds; checked) into a bare FTS5 table; they run in
    rounds, several times, medians compared (goal: at most 2x). Beside it, the floor this
    bench first used, which indexed only their side and mine of each entry, about a third
    fewer words (no names, topics, open items or pins): not the same text, so not the goal's
    floor, kept so earlier figures can be compared;
  * on 10,000 people x 30 entries (300,000 entries): search p50 / p95 in process over many
    Zipf-distributed queries, beside the same MATCH ... ORDER BY rank LIMIT 200 on the bare
    FTS5 table (goal: p50 under 5 ms, p95 under 20 ms);
  * `tactful search` as a command on those 10,000 files, with the index fresh and right after
    a write, beside `python -c pass` (goal: at most 3x), and how long the freshness check takes
    in process (the change journal and the folders) beside a stat of every file;
  * `hot`, the desk regenerated from the index, as `tactful hot` does it (every file stat-ed)
    and as a write does it (goal: under 1 s).

Run: .venv/bin/python bench/index_and_desk.py [--people 10000] [--entries 30]
     [--reindex-people 2000] [--repeat 5] [--reindex-only] [--before PYTHON]
`--before` also runs `tactful reindex` with another interpreter (another checkout's venv, e.g.
main's) in the same pairs: a change measured against what it replaces under the same load.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
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
from tactful.core.memory.store import People

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


# The floors, each a command of its own, only the standard library: the interpreter's start is
# all they share with tactful. Both read every person file and bulk-insert text into a bare
# FTS5 table (no YAML, no id map, no scoring columns, no ids of their own).
#
# FLOOR_SAME_TEXT indexes the text tactful's index holds, in the same columns: one document per
# person (its `who`: handle, @handle, display name), per entry (their side, my side, open items;
# its topics; its `who`) and per pin (its text; its `who`). This is the floor the goal is
# measured against: "a bare FTS5 floor indexing the same text". The bench checks that it holds
# exactly as many documents and words per column as tactful's index.
#
# FLOOR_BODY is the floor this bench first used, kept for comparison with earlier figures: only
# the entry lines that start `they: ` or `me: ` (and their first word with them), in one column:
# no open items, topics, pins or names, so about a third fewer words than the index holds.
FLOOR_SAME_TEXT = """
import os, sqlite3, sys
root, where = sys.argv[1], sys.argv[2]
if os.path.exists(where):
    os.unlink(where)
db = sqlite3.connect(where)
db.execute("PRAGMA journal_mode = OFF")
db.execute("PRAGMA synchronous = OFF")
db.execute("CREATE VIRTUAL TABLE t USING fts5(body, topics, who,"
           " tokenize = 'unicode61 remove_diacritics 2')")
rows = []
people = os.path.join(root, "people")
for folder in sorted(os.listdir(people)):
    for name in os.listdir(os.path.join(people, folder)):
        with open(os.path.join(people, folder, name), encoding="utf-8") as f:
            lines = f.read().splitlines()
        handle = name[:-3]
        shown = next((line[14:] for line in lines if line.startswith("display_name: ")), "")
        who = f"{handle} @{handle} {shown}" if shown else f"{handle} @{handle}"
        rows.append(("", "", who))
        pins = body = None
        topics = ""
        for line in lines:
            if line.startswith("### "):
                if body is not None:
                    rows.append((" ".join(body), topics, who))
                body, topics = [], ""
            elif line.startswith("## "):
                pins = line == "## Pinned"
            elif body is not None:
                if line.startswith("they: "):
                    body.append(line[7:-1])  # a JSON string: its quotes are no words
                elif line.startswith(("me: ", "open: ", "withheld: ")):
                    body.append(line.split(": ", 1)[1])
                elif line.startswith("topics: "):
                    topics = line[8:]
            elif pins and line[:1].isdigit():
                rows.append((line.split(". ", 1)[1].rsplit(" \u2014 ", 1)[0], "", who))
        if body is not None:
            rows.append((" ".join(body), topics, who))
with db:
    db.executemany("INSERT INTO t(body, topics, who) VALUES (?, ?, ?)", rows)
db.close()
"""
FLOOR_BODY = """
import os, sqlite3, sys
root, where = sys.argv[1], sys.argv[2]
if os.path.exists(where):
    os.unlink(where)
db = sqlite3.connect(where)
db.execute("PRAGMA journal_mode = OFF")
db.execute("PRAGMA synchronous = OFF")
db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')")
rows = []
people = os.path.join(root, "people")
for folder in sorted(os.listdir(people)):
    for name in os.listdir(os.path.join(people, folder)):
        with open(os.path.join(people, folder, name), encoding="utf-8") as f:
            rows += [(line,) for line in f.read().splitlines()
                     if line.startswith(("they: ", "me: ", "- [ ] "))]
with db:
    db.executemany("INSERT INTO t(body) VALUES (?)", rows)
db.close()
"""


def command(*argv: str) -> float:
    """Seconds one command takes, start to exit, as a person at a shell would wait for it."""
    return timed(*argv, env=child_env())[0]


def timed(*argv: str, env: dict[str, str] | None = None) -> tuple[float, float]:
    """The wall-clock seconds of one command and the CPU seconds it used (user + system): on a
    shared machine the second moves much less with what else runs."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def tactful(*argv: str, python: str = sys.executable) -> float:
    return command(python, "-m", "tactful.core.cli", *argv)


def floor_command(root: Path, where: Path, floor: str = FLOOR_SAME_TEXT) -> tuple[float, float]:
    return timed(sys.executable, "-c", floor, str(root), str(where), env=child_env())


def words_per_column(where: Path, table: str) -> tuple[int, list[int]]:
    """How many documents an FTS5 table holds, and how many words in each column."""
    db = sqlite3.connect(where)
    try:
        db.execute(f"CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, '{table}', 'col')")
        documents = db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # noqa: S608
        columns = db.execute("SELECT col, sum(cnt) FROM temp.words GROUP BY col").fetchall()
    finally:
        db.close()
    order = {"body": 0, "topics": 1, "who": 2}
    return documents, [count for _, count in sorted(columns, key=lambda c: order[c[0]])]


def same_text(small: Path, root: Path) -> str:
    """Whether the same-text floor holds what tactful's index holds: documents and words per
    column (the floor is only fair if it indexes as much)."""
    floor = words_per_column(root / "floor-same.sqlite", "t")
    tactful = words_per_column(small / index.FILE, "docs_fts")
    verdict = "the same" if floor == tactful else "NOT the same"
    return (f"same-text floor: {floor[0]} documents, words per column (body, topics, who) "
            f"{floor[1]}; tactful's index: {tactful[0]}, {tactful[1]}: {verdict}")


def child_env() -> dict[str, str]:
    """The environment of the timed reindex commands. Bytecode is written and read as on any
    install (pip compiles at install time; an editable install writes it at the first run): a
    shell that sets PYTHONDONTWRITEBYTECODE would otherwise time the compiling of every module
    of tactful at each start (about 0.15 s of CPU), which no user pays."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


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
    parser.add_argument("--reindex-only", action="store_true")
    parser.add_argument("--before", metavar="PYTHON",
                        help="also time reindex with this interpreter's tactful, in each pair")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tactful-bench-index-"))
    try:
        small = root / "small"
        small.mkdir()
        generate(small, args.reindex_people, args.entries)
        time.sleep(2.5)  # past index.SETTLE_NS: the folders as a home at rest has them
        reindex_runs(small, root, args.repeat, args.before)
        print(f"(reindex home: {args.reindex_people} people x {args.entries} entries)")
        if args.reindex_only:
            return

        big = root / "big"
        big.mkdir()
        started = time.perf_counter()
        texts = generate(big, args.people, args.entries)
        print(f"\nsearch home: {args.people} people, {len(texts)} entries "
              f"(generated in {time.perf_counter() - started:.0f} s)")
        home, settings = Home(big), MemorySettings(tz=TZ)
        bare_fts(texts, root / "bare.sqlite")
        time.sleep(2.5)
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
        print(f"\n{'search, ' + str(args.queries) + ' queries, in process':<56}"
              f"{'p50 ms':>9}{'p95 ms':>8}")
        print(f"{'bare FTS5: MATCH (all words) ORDER BY rank LIMIT 200':<56}{b50:>9.1f}{b95:>8.1f}")
        print(f"{'tactful search (scored, all then any word)':<56}{t50:>9.1f}{t95:>8.1f}")
        print(f"ratio: p50 {t50 / b50:.2f}x, p95 {t95 / b95:.2f}x; "
              "goal: p50 under 5 ms, p95 under 20 ms")

        freshness(home, settings)
        search_command(big, home, settings, args.repeat)
        desk_runs(home, settings, args.people)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def reindex_runs(small: Path, root: Path, repeat: int, before: str | None) -> None:
    """The whole `tactful reindex` command beside the floor commands, in rounds (and `before`'s
    reindex in the same rounds); medians of wall-clock and of CPU seconds, the ratios of the
    medians to each floor, and the ratio to the same-text floor of each round."""
    pythons = {"reindex": sys.executable, **({"before": before} if before else {})}
    floors = {"same": (FLOOR_SAME_TEXT, root / "floor-same.sqlite"),
              "body": (FLOOR_BODY, root / "floor-body.sqlite")}
    wall: dict[str, list[float]] = {side: [] for side in [*floors, *pythons]}
    cpu: dict[str, list[float]] = {side: [] for side in wall}
    argv = ("-m", "tactful.core.cli", "reindex", "--home", str(small))
    for python in pythons.values():  # warm: modules compiled, files cached
        timed(python, *argv, env=child_env())
    for floor, where in floors.values():
        floor_command(small, where, floor)
    for n in range(repeat):  # paired: drift on a shared machine hits all alike
        sides = [*floors, *pythons]
        for side in sides[n % len(sides):] + sides[:n % len(sides)]:  # each goes first in turn
            if side in floors:
                taken = floor_command(small, floors[side][1], floors[side][0])
            else:
                taken = timed(pythons[side], *argv, env=child_env())
            wall[side].append(taken[0])
            cpu[side].append(taken[1])
    if before:  # the index the bench checks is this checkout's
        timed(sys.executable, *argv, env=child_env())
    print(f"reindex: {repeat} rounds, medians, each a command (interpreter start included); "
          f"load average before: {os.getloadavg()[0]:.1f}")
    print(f"\n{'what':<50}{'wall s':>8}{'x same':>8}{'x body':>8}{'CPU s':>8}{'x same':>8}"
          f"{'x body':>8}")
    labels = {"same": "floor: the same text, bare FTS5 (the goal's)",
              "body": "floor: their and my side only (as first measured)",
              "reindex": "tactful reindex (id map + index)",
              "before": f"tactful reindex, {before}"}
    for side in wall:
        w, c = statistics.median(wall[side]), statistics.median(cpu[side])
        print(f"{labels[side][:50]:<50}{w:>8.2f}"
              f"{w / statistics.median(wall['same']):>8.2f}"
              f"{w / statistics.median(wall['body']):>8.2f}{c:>8.2f}"
              f"{c / statistics.median(cpu['same']):>8.2f}"
              f"{c / statistics.median(cpu['body']):>8.2f}")
    for side in pythons:
        for name, runs in (("wall", wall), ("CPU", cpu)):
            ratios = sorted(r / f for r, f in zip(runs[side], runs["same"], strict=True))
            print(f"  {side} / same-text floor per round, {name}: "
                  f"{', '.join(f'{r:.2f}' for r in ratios)}")
    if before:
        for name, runs in (("wall", wall), ("CPU", cpu)):
            gains = sorted(b / r for r, b in zip(runs["reindex"], runs["before"], strict=True))
            print(f"  before / now per round, {name}: {', '.join(f'{g:.2f}' for g in gains)}")
    print(same_text(small, root))
    print("goal: at most 2x the floor (the same-text floor)")


def write_one(home: Home, settings: MemorySettings, n: int) -> None:
    """A write as `remember` makes it: the person's file replaced, the change journal told."""
    people = People(home, settings)
    people.change("x", "user00000", lambda person: person.entries.append(
        Entry(at=NOW, kind="reply", direction="inbound", they=f"one more word {n}")))


def freshness(home: Home, settings: MemorySettings) -> None:
    """The check before every search, in process: nothing changed, one write, every file."""
    sides: dict[str, list[float]] = {"quiet": [], "write": [], "every": []}
    for n in range(5):
        for side in sides:
            if side == "write":
                write_one(home, settings, n)
            start = time.perf_counter()
            db, _ = index.open_fresh(home, settings, every_file=side == "every")
            sides[side].append(time.perf_counter() - start)
            db.close()
    print(f"\n{'index freshness check before a search, in process':<56}{'median ms':>9}")
    for side, label in (("every", "stat of every file (as before; `tactful hot`)"),
                        ("quiet", "journal + folders, nothing changed"),
                        ("write", "journal + folders, right after one write")):
        print(f"{label:<56}{statistics.median(sides[side]) * 1000:>9.1f}")


def search_command(big: Path, home: Home, settings: MemorySettings, repeat: int) -> None:
    sides: dict[str, list[float]] = {"pass": [], "quiet": [], "write": [], "hot": []}
    tactful("search", "--home", str(big), "eval harness")  # warm, as above
    for n in range(max(repeat, 5)):  # paired, as above
        sides["pass"].append(command(sys.executable, "-c", "pass"))
        sides["quiet"].append(tactful("search", "--home", str(big), "eval harness"))
        write_one(home, settings, 100 + n)
        sides["write"].append(tactful("search", "--home", str(big), "eval harness"))
        sides["hot"].append(tactful("hot", "--home", str(big)))
    floor_s = statistics.median(sides["pass"])
    files = len(list(big.glob("people/*/*.md")))
    title = f"tactful search as a command, {files} person files"
    print(f"\n{title:<56}{'ms':>9}{'ratio':>8}")
    print(f"{'python -c pass':<56}{floor_s * 1000:>9.0f}{1:>8.2f}")
    for side, label in (("quiet", "tactful search (index fresh)"),
                        ("write", "tactful search right after a write"),
                        ("hot", "tactful hot (every file stat-ed)")):
        value = statistics.median(sides[side])
        print(f"{label:<56}{value * 1000:>9.0f}{value / floor_s:>8.2f}")
    print("goal: search at most 3x python -c pass")


def desk_runs(home: Home, settings: MemorySettings, people: int) -> None:
    sides: dict[str, list[float]] = {"hot": [], "write": []}
    for n in range(5):
        start = time.perf_counter()
        desk.regenerate(home, settings, NOW, every_file=True)
        sides["hot"].append(time.perf_counter() - start)
        write_one(home, settings, 200 + n)
        start = time.perf_counter()
        desk.regenerate(home, settings, NOW)
        sides["write"].append(time.perf_counter() - start)
    print(f"\n{'the desk from the index, ' + str(people) + ' people':<56}{'median ms':>9}")
    print(f"{'tactful hot (every file stat-ed first)':<56}"
          f"{statistics.median(sides['hot']) * 1000:>9.0f}")
    print(f"{'after a write (journal + folders)':<56}"
          f"{statistics.median(sides['write']) * 1000:>9.0f}")
    print("goal: under 1 s")


if __name__ == "__main__":
    main()
