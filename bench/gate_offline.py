"""Benchmark the offline part of the send gate: what every message pays before any credential.

Builds a home of N person files (some flagged, some linked by aka, some sharing a stable id),
then measures, side by side in one run, for the same messages (a target and two @mentions):
  * the floor: `check` of the same three accounts, in process (what any gate must at least do);
  * the gate's offline part in process: input, every guard (plugins, memory, do-not-engage on
    the identity model, bot thread, ledger, quota) and the dry-run outbox line;
  * the whole command: `tactful send x --dry-run` as a real process, beside `tactful check` of
    the same accounts as a real process (the path a user runs, end to end).
Reported as medians and ratios: these machines are shared and noisy.

Run: .venv/bin/python bench/gate_offline.py [--people 2000] [--sends 300] [--runs 11]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tactful.core.memory import check
from tactful.core.memory.home import Home
from tactful.core.memory.person import Aka, Person
from tactful.core.memory.settings import MemorySettings
from tactful.core.memory.store import People
from tactful.core.send.attempt import SendRequest
from tactful.core.send.gate import Gate
from tactful.core.send.pipeline import Pipeline


def build(root: Path, count: int, rng: random.Random) -> list[str]:
    people = People(Home(root), MemorySettings())
    (root / "people").mkdir(parents=True, exist_ok=True)
    handles = [f"user_{n:05d}" for n in range(count)]
    for n, handle in enumerate(handles):
        def mutate(person: Person, n: int = n) -> None:
            person.id = str(10_000 + n // 2)  # pairs share an id: renamed accounts
            person.do_not_engage = n % 97 == 0
            if n % 13 == 0 and n + 1 < count:
                person.aka.append(Aka(ref=f"bluesky/user_{n + 1:05d}.bsky.social",
                                      reason="bench", at=_at()))
        people.change("x", handle, mutate)
    # Neither flagged nor sharing an id with a flagged account.
    return [h for n, h in enumerate(handles) if n % 97 and (n ^ 1) % 97]


def _at():  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    return datetime(2026, 11, 1, tzinfo=UTC)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def in_process(root: Path, allowed: list[str], sends: int, rng: random.Random,
               runs: int) -> tuple[float, float]:
    people = People(Home(root), MemorySettings())
    gate = Gate.for_home(root)
    pipeline = Pipeline(gate)
    floor, gated = [], []
    for _ in range(runs):
        picks = [rng.sample(allowed, 3) for _ in range(sends)]
        started = time.perf_counter()
        for to, a, b in picks:
            for handle in (to, a, b):
                check.check(people, "x", handle)
        floor.append((time.perf_counter() - started) / sends)
        started = time.perf_counter()
        for n, (to, a, b) in enumerate(picks):
            pipeline.send(SendRequest("x", f"hi @{to}, meet @{a} and @{b} ({n})", to=to,
                                      dry_run=True))
        gated.append((time.perf_counter() - started) / sends)
    gate.close()
    return median_ms(floor), median_ms(gated)


def as_process(root: Path, allowed: list[str], runs: int) -> tuple[float, float]:
    env = {**os.environ, "TACTFUL_HOME": str(root)}
    tactful = [sys.executable, "-m", "tactful.core.cli"]
    to, a, b = allowed[:3]
    checking = [*tactful, "check", "x", to, a, b]
    sending = [*tactful, "send", "x", "--to", to, "--text", f"hi @{to}, meet @{a} and @{b}",
               "--dry-run"]
    floor, whole = [], []
    for _ in range(runs):
        for argv, into in ((checking, floor), (sending, whole)):
            started = time.perf_counter()
            subprocess.run(argv, env=env, check=True, capture_output=True)
            into.append(time.perf_counter() - started)
    return median_ms(floor), median_ms(whole)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=2000)
    parser.add_argument("--sends", type=int, default=300)
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "home"
        allowed = build(root, args.people, rng)
        floor, gated = in_process(root, allowed, args.sends, rng, args.runs)
        check_cmd, send_cmd = as_process(root, allowed, args.runs)
    print(f"home: {args.people} person files; messages with a target and two @mentions")
    print(f"{'what':<52}{'median':>10}{'ratio':>8}")
    print(f"{'check of the 3 accounts, in process (floor)':<52}{floor:>8.2f}ms{1:>8.1f}")
    print(f"{'gate offline + dry-run outbox line, in process':<52}{gated:>8.2f}ms"
          f"{gated / floor:>8.1f}")
    print(f"{'tactful check x A B C (process)':<52}{check_cmd:>8.1f}ms{1:>8.1f}")
    print(f"{'tactful send x --to A --text ... --dry-run (process)':<52}{send_cmd:>8.1f}ms"
          f"{send_cmd / check_cmd:>8.1f}")


if __name__ == "__main__":
    main()
