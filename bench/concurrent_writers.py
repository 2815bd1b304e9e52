"""Benchmark `tactful remember` under many concurrent writers.

Builds a home of 2,000 person files (index and id map built), then runs, side by side in one
run, the real command (`tactful.core.cli.main.main`, the whole command minus the interpreter's
start) in:
  * one writer alone, doing the same number of writes one after another (the baseline);
  * 32 writer processes at once, each writing to people picked at random.
Reports p50 / p95 per write for both, the writes per second, and checks that nothing was lost:
every entry written is in its person file and found by `search`, and `hot` shows the last one.

Run: .venv/bin/python bench/concurrent_writers.py [--people 2000] [--writers 32] [--writes 8]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import multiprocessing
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory_fast_paths import TZ, make_person

from tactful.core.memory import identity, index, personfile
from tactful.core.memory.home import Home
from tactful.core.memory.settings import MemorySettings


def build_home(root: Path, count: int) -> None:
    rng = random.Random(2)
    for platform in ("x", "bluesky"):
        (root / "people" / platform).mkdir(parents=True)
    for n in range(count):
        platform = ("x", "bluesky")[n % 2]
        handle = f"person{n:05d}"
        person = make_person(rng, platform, handle, rng.randrange(1, 12))
        (root / "people" / platform / f"{handle}.md").write_text(personfile.dumps(person, TZ))
    home = Home(root)
    identity.rebuild_all(home)
    index.rebuild(home, MemorySettings(tz=TZ))


def write(root: Path, platform: str, handle: str, token: str) -> float:
    from tactful.core.cli.main import main

    argv = ["--home", str(root), "remember", platform, handle, "--kind", "reply",
            "--they", f"about {token} and the harness"]
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"remember {platform}/{handle} exited {code}")
    return elapsed


def writer(root: Path, people: int, writes: int, seed: int, start_at: float, pause: float,
           results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    rng = random.Random(seed)
    while time.time() < start_at:
        time.sleep(0.001)
    done = []
    for n in range(writes):
        if pause:  # a person's messages arrive at random times, not back to back
            time.sleep(rng.expovariate(1 / pause))
        k = rng.randrange(people)
        platform, handle = ("x", "bluesky")[k % 2], f"person{k:05d}"
        token = f"tok{seed}w{n}"
        done.append((platform, handle, token, write(root, platform, handle, token)))
    results.put(done)


def percentiles(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    return statistics.median(values) * 1000, values[max(0, int(len(values) * 0.95) - 1)] * 1000


def lost(root: Path, done: list[tuple[str, str, str, float]]) -> int:
    missing = 0
    for platform, handle, token, _ in done:
        if token not in (root / "people" / platform / f"{handle}.md").read_text():
            missing += 1
    return missing


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--people", type=int, default=2000)
    parser.add_argument("--writers", type=int, default=32)
    parser.add_argument("--writes", type=int, default=8)
    parser.add_argument("--pause", type=float, default=1.0,
                        help="mean seconds between one writer's writes (0: back to back)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tactful-bench-writers-"))
    os.environ["TACTFUL_HOME"] = str(root)
    try:
        build_home(root, args.people)
        total = args.writers * args.writes
        # Warm the page cache and the import of the command, as a running system has them.
        write(root, "x", "person00000", "warmup")

        alone: list[tuple[str, str, str, float]] = []
        rng = random.Random(99)
        started = time.perf_counter()
        for n in range(total):
            k = rng.randrange(args.people)
            platform, handle = ("x", "bluesky")[k % 2], f"person{k:05d}"
            token = f"alone{n}"
            alone.append((platform, handle, token, write(root, platform, handle, token)))
        alone_wall = time.perf_counter() - started

        context = multiprocessing.get_context("fork")
        results: multiprocessing.Queue = context.Queue()  # type: ignore[type-arg]
        start_at = time.time() + 1.0
        procs = [context.Process(target=writer, args=(root, args.people, args.writes, seed,
                                                      start_at, args.pause, results))
                 for seed in range(args.writers)]
        for proc in procs:
            proc.start()
        together: list[tuple[str, str, str, float]] = []
        for _ in procs:
            together += results.get()
        wall = time.time() - start_at
        for proc in procs:
            proc.join()

        a50, a95 = percentiles([t for *_, t in alone])
        c50, c95 = percentiles([t for *_, t in together])
        print(f"home: {args.people} person files; {total} writes each way; concurrent "
              f"writers pause {args.pause:g} s on average between writes "
              f"(offered {args.writers / args.pause if args.pause else float('inf'):.0f} "
              "writes/s)")
        print(f"\n{'remember':<34}{'p50 ms':>9}{'p95 ms':>9}{'writes/s':>10}")
        print(f"{'1 writer (baseline)':<34}{a50:>9.1f}{a95:>9.1f}{total / alone_wall:>10.1f}")
        print(f"{f'{args.writers} concurrent writers':<34}{c50:>9.1f}{c95:>9.1f}"
              f"{total / wall:>10.1f}")
        print(f"ratio concurrent/alone: p50 {c50 / a50:.2f}×, p95 {c95 / a95:.2f}×")
        print("goal: p50 < 50 ms, p95 < 200 ms under 32 writers, nothing lost")
        missing = lost(root, alone + together)
        from tactful.core.memory import search as searching

        db, _ = index.open_fresh(Home(root), MemorySettings(tz=TZ))
        unfound = sum(1 for _, _, token, _ in together
                      if not searching.search(db, token, __import__("datetime").datetime.now(TZ)))
        db.close()
        print(f"lost: {missing} of {2 * total} entries missing from their files; "
              f"{unfound} of {total} not found by search")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
