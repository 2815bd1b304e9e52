"""Benchmark the fast paths of memory: `tactful check` and the card.

Builds a home of 10,000 person files, then measures, side by side in one run:
  * `tactful check x HANDLE` as a real process against a bare `python3 -c pass`
    (goal: at most 3x; check reads only the files it needs and imports no platform SDK): with
    the id map fresh, with the full example config, by id, and right after a `tactful remember`
    (each check paired with the write just before it, which is not timed);
  * the card built in-process for a person with 50 entries of realistic talk (goal: under
    5 ms), beside a plain read of the same file, so the figure can be judged on a noisy machine.

Run: .venv/bin/python bench/memory_fast_paths.py [--people 10000] [--runs 21]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from tactful.core.memory import card, check, personfile, recording
from tactful.core.memory.home import Home
from tactful.core.memory.person import Person
from tactful.core.memory.settings import MemorySettings
from tactful.core.memory.store import People

TZ = ZoneInfo("America/New_York")
WORDS = ("evals", "harness", "latency", "model", "release", "benchmark", "thanks", "question",
         "tokens", "python", "agent", "memory", "paper", "dataset", "launch", "bug", "fix", "demo",
         "talk", "slides", "prompt")
SDKS = ("tweepy", "atproto", "aiogram", "httpx", "pluggy", "keyring", "requests", "aiohttp")


TALK = ("did you try the new eval harness on the long-context split? the numbers look off",
        "thanks for the pointer, the latency drop after quantization is wild",
        "we shipped the release notes, link in the thread if you want the details",
        "could you share the dataset card? curious how you handled the duplicates",
        "that benchmark leaks test prompts into the training mix, I think",
        "happy to review the paper draft this weekend, send it over",
        "the agent kept looping on the tool call until we capped retries at three",
        "love the demo! what GPU was that running on?")


def sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def talk(rng: random.Random) -> str:
    return rng.choice(TALK)


def make_person(rng: random.Random, platform: str, handle: str, entries: int) -> Person:
    person = Person(platform=platform, handle=handle, display_name=handle.title(),
                    id=str(rng.randrange(10**9, 10**12)))
    start = datetime(2026, 6, 1, 9, tzinfo=TZ) + timedelta(minutes=rng.randrange(100_000))
    for n in range(entries):
        inbound = n % 2 == 0
        recording.remember(person, kind=rng.choice(["reply", "mention", "question"]),
                           direction="inbound" if inbound else "outbound",
                           at=start + timedelta(hours=7 * n),
                           they=sentence(rng) + "?" if inbound else None,
                           me=None if inbound else sentence(rng),
                           link=f"https://x.com/{handle}/status/{rng.randrange(10**18)}",
                           topics=[rng.choice(WORDS)],
                           open_items=[sentence(rng, 6)] if n % 9 == 0 else None)
    recording.refresh(person, MemorySettings(tz=TZ))
    return person


def regular(rng: random.Random, entries: int) -> Person:
    """Someone talked with for months: real-looking messages, a name, pins, open threads."""
    person = Person(platform="x", handle="the_regular", display_name="Dana Reyes", id="4242")
    start = datetime(2026, 6, 1, 9, tzinfo=TZ)
    for n in range(entries):
        inbound = n % 2 == 0
        recording.remember(person, kind=rng.choice(["reply", "mention", "question", "dm"]),
                           direction="inbound" if inbound else "outbound",
                           at=start + timedelta(hours=41 * n),
                           they=talk(rng) if inbound else None,
                           me=None if inbound else talk(rng),
                           link=f"https://x.com/dana/status/{rng.randrange(10**18)}",
                           topics=[rng.choice(WORDS)],
                           open_items=["send her the eval numbers"] if n % 13 == 0 else None)
    recording.pin(person, "prefers DMs for anything unpublished", "them", start)
    recording.pin(person, "co-wrote the harness post with me", "me", start)
    recording.refresh(person, MemorySettings(tz=TZ))
    return person


def build_home(root: Path, count: int) -> None:
    rng = random.Random(1)
    platforms = ("x", "bluesky", "threads", "telegram")
    for platform in platforms:
        (root / "people" / platform).mkdir(parents=True)
    for n in range(count):
        platform = platforms[n % 4]
        handle = f"person{n:05d}"
        person = make_person(rng, platform, handle, rng.randrange(1, 12))
        (root / "people" / platform / f"{handle}.md").write_text(personfile.dumps(person, TZ))
    fifty = regular(rng, 50)
    (root / "people" / "x" / "the_regular.md").write_text(personfile.dumps(fifty, TZ))


def timed_runs(commands: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """Interleave the commands so drift on a shared machine hits each alike."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            start = time.perf_counter()
            done = subprocess.run(argv, capture_output=True, check=False)
            times[name].append(time.perf_counter() - start)
            if done.returncode not in (0, 3):
                raise SystemExit(f"{name} failed: {done.stderr.decode()[:300]}")
    return times


def check_after_write(tactful: str, home: Path, runs: int) -> dict[str, list[float]]:
    """`tactful check` right after a `tactful remember` of someone else on the same platform
    (the write is not timed), paired with a bare interpreter start in the same round."""
    times: dict[str, list[float]] = {"python3 -c pass": [], "tactful check after a write": []}
    for n in range(runs):
        subprocess.run([tactful, "--home", str(home), "remember", "x", f"person{4 * n:05d}",
                        "--kind", "reply", "--they", "thanks, will do"], capture_output=True,
                       check=True)
        start = time.perf_counter()
        subprocess.run([tactful, "--home", str(home), "check", "x", f"person{4 * n + 4:05d}"],
                       capture_output=True, check=True)
        times["tactful check after a write"].append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times["python3 -c pass"].append(time.perf_counter() - start)
    return times


def card_time(people: People, loops: int) -> tuple[float, float]:
    path = people.home.person_path("x", "the_regular")
    start = time.perf_counter()
    for _ in range(loops):
        verdict = check.check(people, "x", "the_regular")
        card.render_text(verdict, TZ)
    per_card = (time.perf_counter() - start) / loops
    start = time.perf_counter()
    for _ in range(loops):
        path.read_bytes()
    per_read = (time.perf_counter() - start) / loops
    return per_card, per_read


def imported_by_check(tactful: str, home: Path) -> list[str]:
    probe = (f"import sys; import tactful.core.cli.main as m;"
             f"m.main(['--home', {str(home)!r}, 'check', 'x', 'person00000']);"
             "print(','.join(sorted({n.split('.')[0] for n in sys.modules})))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=False).stdout.strip().splitlines()[-1]
    return [name for name in out.split(",") if name in SDKS]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--people", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tactful-bench-"))
    try:
        started = time.perf_counter()
        build_home(root, args.people)
        print(f"home: {args.people} person files + one with 50 entries "
              f"(built in {time.perf_counter() - started:.1f} s)")
        tactful = str(Path(sys.executable).with_name("tactful"))
        config = Path(__file__).resolve().parent.parent / "config" / "tactful.example.yaml"
        times = timed_runs({
            "python3 -c pass": [sys.executable, "-c", "pass"],
            "tactful check (1 handle)": [tactful, "--home", str(root), "check", "x",
                                         "person00000"],
            "tactful check (id lookup)": [tactful, "--home", str(root), "check", "x",
                                          "renamed_person", "--id", "424242"],
            "tactful check (with config)": [tactful, "--home", str(root), "--config",
                                            str(config), "check", "x", "person00000"],
        }, args.runs)
        after = check_after_write(tactful, root, args.runs)
        for name, values in (("tactful check (fresh id map)", times["tactful check (1 handle)"]),):
            times[name] = values
        del times["tactful check (1 handle)"]
        print(f"\n{'command':<32}{'median ms':>10}{'p90 ms':>9}{'× bare':>8}")
        for group in (times, after):
            base = statistics.median(group["python3 -c pass"])
            for name, values in group.items():
                values.sort()
                p90 = values[max(0, int(len(values) * 0.9) - 1)]
                median = statistics.median(values)
                print(f"{name:<32}{median * 1000:>10.1f}{p90 * 1000:>9.1f}"
                      f"{median / base:>8.2f}")
        print("goal: tactful check at most 3× a bare interpreter start, whatever was written "
              "just before (each group paired with its own bare runs)")
        people = People(Home(root), MemorySettings(tz=TZ))
        per_card, per_read = card_time(people, 300)
        print(f"\ncard, 50 entries, in-process: {per_card * 1000:.2f} ms per card "
              f"(reading the file alone: {per_read * 1000:.3f} ms; "
              f"ratio {per_card / per_read:.0f}×); goal under 5 ms")
        sdks = imported_by_check(tactful, root)
        print(f"platform SDKs imported by check: {', '.join(sdks) or 'none'}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
