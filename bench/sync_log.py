"""Benchmark `tactful sync-log` over a realistic engagement log.

Generates a log of 100,000 events over about 10,000 people (a few regulars with many events,
a long tail with one or two; replies, likes, mentions, quotes, follows, DMs, my own posts, a
few dry runs, some events with no URL), then times, side by side in one run, as real processes:
  1. the first sync-log into an empty home;
  2. a second run over the unchanged log (goal: under 1% of the first);
  3. a run after 1,000 new events were appended (through `engagement.append`);
  4. for reference, a run from the top with the checkpoint deleted (what happens after
     `forget` rewrites the log): every event is re-matched, nothing is written.

Each run shows wall seconds and CPU seconds (the command and the helper processes it waited
for): on a shared machine the wall clock follows the load, the CPU seconds much less.

With `--against DIR` (another checkout of tactful, e.g. `git worktree add /tmp/before main`),
it times instead runs 1 and 3 of this code and of that one, paired, in alternating order for
`--rounds` rounds over the same log, and prints the medians and their ratios, with the load.

Run: .venv/bin/python bench/sync_log.py [--events 100000] [--people 10000] [--keep]
     .venv/bin/python bench/sync_log.py --against /tmp/before [--rounds 3] [--this /tmp/after]
(`--this`: a snapshot of this code, e.g. `git archive HEAD | tar -x -C /tmp/after`, so editing
the worktree during a long paired run changes neither side.)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from tactful.core.memory import engagement
from tactful.core.memory.home import Home

TZ = ZoneInfo("America/New_York")
PLATFORMS = ("x", "bluesky", "threads", "telegram")
ACTIONS = (("reply", 46), ("like", 20), ("mention", 9), ("quote", 5), ("follow", 5),
           ("question", 3), ("dm", 2), ("post", 5), ("collab", 1))
WORDS = ("evals", "harness", "latency", "model", "release", "benchmark", "thanks", "question",
         "tokens", "python", "agent", "memory", "paper", "dataset", "launch", "bug", "fix", "demo",
         "talk", "slides", "prompt", "great", "point", "agree", "later", "share", "notes")


def sentence(rng: random.Random, low: int = 6, high: int = 30) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


class Generator:
    def __init__(self, people: int, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.handles = [(PLATFORMS[n % 4], f"user_{n:05d}") for n in range(people)]
        # Zipf-like: a few people get most of the talk, as on any real account.
        self.weights = [1 / (rank + 1) ** 0.9 for rank in range(people)]
        self.actions = [a for a, _ in ACTIONS]
        self.action_weights = [w for _, w in ACTIONS]
        self.status = 10**15

    def event(self, at: datetime) -> dict[str, object]:
        rng = self.rng
        action = rng.choices(self.actions, self.action_weights)[0]
        platform, handle = rng.choices(self.handles, self.weights)[0]
        self.status += rng.randint(1, 999)
        has_text = action not in ("like", "follow")
        with_url = action not in ("like", "follow", "dm") and rng.random() < 0.9
        record: dict[str, object] = {
            "time": at.isoformat(), "platform": platform,
            "handle": None if action == "post" else handle,
            "id": str(rng.randrange(10**9, 10**12)) if rng.random() < 0.3 else None,
            "action": action,
            "text": sentence(rng) if has_text else None,
            "url": f"https://example.social/{platform}/status/{self.status}" if with_url else None,
            "in_reply_to": f"https://example.social/{platform}/status/{self.status - 7}"
            if action in ("reply", "like", "quote") else None,
            "thread": str(self.status - 7) if action == "reply" else None,
            "dry_run": rng.random() < 0.01,
        }
        if action in ("reply", "quote", "question") and rng.random() < 0.4:
            record["they"] = sentence(rng, 4, 15)
        if rng.random() < 0.05:
            record["routine"] = "nightly-replies"  # an extra key another tool added
        return record

    def events(self, count: int, start: datetime, span: timedelta) -> list[dict[str, object]]:
        step = span / count
        return [self.event(start + step * n) for n in range(count)]


def distinct_texts(count: int, people: int = 10_000) -> list[str]:
    """The first `count` distinct texts ("text" and "they") of this bench's events, in order:
    what a sync-log of its log screens (the privacy benches time their checks on them)."""
    seen: dict[str, None] = {}
    generator = Generator(people)
    while len(seen) < count:
        for record in generator.events(5_000, datetime(2026, 1, 1, tzinfo=TZ), timedelta(days=30)):
            for key in ("text", "they"):
                text = record.get(key)
                if isinstance(text, str):
                    seen[text] = None
    return list(seen)[:count]


def run(home: Path, code: Path | None = None) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (the command and any helper process it waited for: on a
    shared, loaded machine the steadier figure), and what it printed. `code`: a folder whose
    `tactful` is imported instead of this checkout's."""
    env = {**os.environ, "TACTFUL_HOME": str(home)}
    env.pop("TACTFUL_CONFIG", None)
    # Users run with compiled modules cached: a command that recompiled every module at each
    # start would be timing the compiler.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tactful.core.cli", "sync-log"], env=env,
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"sync-log failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu, done.stdout.strip()


_SUMMARY = re.compile(
    r"(?P<events>\d+) events read .*entries: (?P<added>\d+) added, (?P<merged>\d+) merged, "
    r"(?P<present>\d+) already present; journal posts: (?P<posts>\d+) added, .*"
    r"; (?P<files>\d+) person files written")


def counts(summary: str) -> str:
    found = _SUMMARY.search(summary)
    if found is None:
        return summary
    return (f"{found['events']} events; entries +{found['added']} merged {found['merged']} "
            f"present {found['present']}; posts +{found['posts']}; "
            f"{found['files']} files written")


def importable(checkout: Path, scratch: Path) -> Path:
    """A folder from which `import tactful` gives that checkout's code (the layout the package
    installs: `entry` is the package, the other folders its subpackages)."""
    package = scratch / "tactful"
    package.mkdir(parents=True)
    for name in ("__init__.py", "__main__.py"):
        shutil.copy(checkout / "entry" / name, package / name)
    for name in ("core", "adapters", "routines", "testing"):
        (package / name).symlink_to(checkout / name)
    return scratch


# What a sync writes that must not depend on the code's speed: the person files, the journal
# and the id map (the desk names its home and the minute it was made; the index and the
# checkpoint are caches).
COMPARED = ("people", "journal", ".ids")


def different_files(one: Path, other: Path) -> list[str]:
    """The files under COMPARED that are not byte for byte the same in both homes."""
    def files(home: Path) -> dict[str, bytes]:
        return {str(path.relative_to(home)): path.read_bytes()
                for part in COMPARED for path in sorted((home / part).rglob("*"))
                if path.is_file()}

    mine, theirs = files(one), files(other)
    return sorted(name for name in mine.keys() | theirs.keys()
                  if mine.get(name) != theirs.get(name))


def paired(log: Path, appended: str, before: Path, rounds: int, root: Path,
           this: Path | None = None) -> None:
    """Runs 1 and 3, this code (or the checkout `this`) against the checkout `before`, in
    alternating order."""
    variants: dict[str, Path | None] = {
        "before": importable(before, root / "before-code"),
        "this": importable(this, root / "this-code") if this is not None else None}
    figures: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in variants}
    loads = [os.getloadavg()[0]]
    for number in range(rounds):
        for name in list(variants) if number % 2 == 0 else list(variants)[::-1]:
            home = root / f"home-{name}"
            shutil.rmtree(home, ignore_errors=True)
            home.mkdir()
            shutil.copy(log, home / "engagement.jsonl")
            first, first_cpu, _ = run(home, variants[name])
            with (home / "engagement.jsonl").open("a", encoding="utf-8") as f:
                f.write(appended)
            third, third_cpu, _ = run(home, variants[name])
            figures[name].append((first, first_cpu, third, third_cpu))
            loads.append(os.getloadavg()[0])
            print(f"round {number + 1} {name:>6}: first {first:6.2f} s wall {first_cpu:6.2f} s CPU;"
                  f" appended {third:5.2f} s wall {third_cpu:5.2f} s CPU; load {loads[-1]:.1f}",
                  flush=True)
    different = different_files(root / "home-before", root / "home-this")
    print("files written: " + (f"DIFFERENT from before's: {', '.join(different[:5])}"
                               if different else "the same bytes as before's (people, journal, "
                                                 "id map)"))
    medians = {name: [statistics.median(row[i] for row in rows) for i in range(4)]
               for name, rows in figures.items()}
    print(f"load average {min(loads):.1f} to {max(loads):.1f}; medians of {rounds} rounds")
    print(f"{'':<8}{'first wall':>11}{'CPU':>8}{'appended wall':>15}{'CPU':>8}")
    for name, (a, b, c, d) in medians.items():
        print(f"{name:<8}{a:11.2f}{b:8.2f}{c:15.2f}{d:8.2f}")
    ratios = [this / was for this, was in zip(medians["this"], medians["before"], strict=True)]
    print(f"{'ratio':<8}" + "".join(f"{r:>{w}.2f}" for r, w in zip(ratios, (11, 8, 15, 8),
                                                                   strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--people", type=int, default=10_000)
    parser.add_argument("--appended", type=int, default=1_000)
    parser.add_argument("--keep", action="store_true", help="keep the home and say where")
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="another checkout: time runs 1 and 3 of both, paired")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--this", type=Path, metavar="DIR",
                        help="with --against: time this checkout instead of the installed code "
                             "(a snapshot stays the same while the worktree is edited)")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="tactful-bench-sync-"))
    home = root / "home"
    home.mkdir()
    gen = Generator(args.people)
    start = datetime(2026, 5, 1, 8, tzinfo=TZ)
    span = timedelta(days=180)
    log = home / "engagement.jsonl"
    with log.open("w", encoding="utf-8") as f:
        for record in gen.events(args.events, start, span):
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    size = log.stat().st_size
    touched = len({(e["platform"], e["handle"]) for e in map(json.loads, log.open())})
    print(f"log: {args.events:,} events, {size / 2**20:.1f} MiB, {touched:,} distinct handles "
          f"(incl. my posts), on {os.cpu_count()} cores")

    if args.against is not None:
        # The appended events as `engagement.append` writes them, the same bytes for both.
        scratch = Home(root / "scratch")
        (root / "scratch").mkdir()
        for record in gen.events(args.appended, start + span, timedelta(days=1)):
            engagement.append(scratch, record, TZ)
        appended = scratch.engagement_log.read_text(encoding="utf-8")
        try:
            paired(log, appended, args.against.resolve(), args.rounds, root,
                   args.this.resolve() if args.this is not None else None)
        finally:
            shutil.rmtree(root)
        return

    # The 1-minute load average as each run starts: the wall clock of a run follows it.
    loads = [os.getloadavg()[0]]
    first, first_cpu, first_out = run(home)
    loads.append(os.getloadavg()[0])
    second, second_cpu, second_out = run(home)
    later = gen.events(args.appended, start + span, timedelta(days=1))
    where = Home(home)
    for record in later:
        engagement.append(where, record, TZ)
    loads.append(os.getloadavg()[0])
    third, third_cpu, third_out = run(home)
    (home / ".sync-state.json").unlink()
    loads.append(os.getloadavg()[0])
    fourth, fourth_cpu, fourth_out = run(home)
    loads.append(os.getloadavg()[0])

    rows = (("1. first sync-log", first, first_cpu, first_out),
            ("2. unchanged log", second, second_cpu, second_out),
            (f"3. +{args.appended:,} appended", third, third_cpu, third_out),
            ("4. from the top, no checkpoint", fourth, fourth_cpu, fourth_out))
    print(f"load average {min(loads):.1f} to {max(loads):.1f} (the command's own processes "
          f"count in it: about 2 while a first run screens)")
    print(f"{'run':<32}{'seconds':>9}{'vs first':>10}{'CPU s':>8}{'load':>6}   what it did")
    for (name, seconds, cpu, out), load in zip(rows, loads, strict=False):
        print(f"{name:<32}{seconds:9.2f}{seconds / first:9.1%}{cpu:8.2f}{load:6.1f}   "
              f"{counts(out)}")
    goal = "met" if second < 0.01 * first else "MISSED"
    print(f"goal (unchanged log < 1% of the first): {second / first:.1%} — {goal}; "
          f"first run {first:.1f} s (goal at 100,000 events: under 30 s)")
    if args.keep:
        print(f"home kept at {home}")
    else:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
