"""Benchmark the fast paths of memory: `tactful check` and the card.

Builds a home of 10,000 person files, then measures, in paired rounds against a bare
`python3 -c pass` (medians; the ratio is the figure, the machine being shared):
  * `tactful check x HANDLE` as a real process (goal: at most 3x; check reads only the files it
    needs and imports no platform SDK): with the id map fresh, by id, with the full example
    config (config/tactful.example.yaml);
  * `tactful check` right after a write by the real command (not timed): `remember` of someone
    new, `remember --id`, `dne` on and off, `flag`, `pin`, `set`, `link`, taking turns, so
    whatever was written just before, the check finds the id map fresh or pays for it here;
  * `tactful search` as a real process right after a write (goal: at most 3x), wall-clock and
    CPU seconds, each round paired with its own bare runs: after `remember` by the real command
    (which brings the index up to date as it regenerates the desk), and after a write that
    left the index behind (the file replaced and the change journal told, as a writer whose
    desk was busy leaves it), which the search itself catches up: it reads that file;
  * the card built in-process for a person with 50 entries of realistic talk (goal: under
    5 ms), beside a plain read of the same file, so the figure can be judged on a noisy machine.

Every process runs with bytecode written and read, as after any install (see `child_env`).

Run: .venv/bin/python bench/memory_fast_paths.py [--people 10000] [--runs 21] [--search-only]
     [--before OTHER/.venv/bin/tactful]
"""

from __future__ import annotations

import argparse
import os
import random
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

from tactful.core.memory import card, check, personfile, recording
from tactful.core.memory.home import Home
from tactful.core.memory.person import Entry, Person
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


def child_env() -> dict[str, str]:
    """The environment of every timed process. Bytecode is written and read as on any install
    (pip compiles at install time; an editable install writes it at the first run): a shell
    that sets PYTHONDONTWRITEBYTECODE would otherwise time the compiling of every module of
    tactful at each start, which no user pays."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run(argv: list[str], name: str) -> None:
    done = subprocess.run(argv, capture_output=True, check=False, env=child_env())
    if done.returncode not in (0, 3):
        raise SystemExit(f"{name} failed ({done.returncode}): {done.stderr.decode()[:300]}")


def timed(argv: list[str], name: str) -> float:
    start = time.perf_counter()
    run(argv, name)
    return time.perf_counter() - start


def timed_runs(commands: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """Paired rounds: each round times every command once, the bare interpreter first, so
    drift on a shared machine hits each alike. One untimed round first (the id map is built,
    bytecode written, the config's copy kept: the state every later check finds)."""
    for name, argv in commands.items():
        run(argv, name)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            times[name].append(timed(argv, name))
    return times


def writes(tactful: str, home: Path) -> list[list[str]]:
    """What may be written just before a check, each by the real command on the platform the
    check reads: a new person, one with a stable id, do-not-engage on and off, a flag, a pin, a
    display name, a link between two accounts."""
    base = [tactful, "--home", str(home)]
    return [
        [*base, "remember", "x", "new_{n}", "--kind", "reply", "--they", "thanks, will do"],
        [*base, "remember", "x", "person{p}", "--kind", "mention", "--they", "nice",
         "--id", "7{n}"],
        [*base, "dne", "x", "person{p}", "on", "--reason", "asked to be left alone"],
        [*base, "dne", "x", "person{p}", "off"],
        [*base, "flag", "x", "person{p}", "spam-signals"],
        [*base, "pin", "x", "person{p}", "likes long evals", "--by", "them"],
        [*base, "set", "x", "person{p}", "--display-name", "Someone {n}"],
        [*base, "link", "x:person{p}", "bluesky:person{q}", "--proof",
         "https://example.com/proof"],
    ]


def check_after_write(tactful: str, home: Path, runs: int) -> dict[str, list[float]]:
    """`tactful check` right after a write by the real command (the write is not timed),
    paired with a bare interpreter start in the same round. The writes take turns (`writes`);
    the check is of someone else on the same platform, so it reads the id map, not only the
    file just written."""
    times: dict[str, list[float]] = {"python3 -c pass": [], "tactful check after a write": []}
    kinds = writes(tactful, home)
    for n in range(runs):
        person = f"{4 * (n + 1):05d}"
        fields = {"n": str(n), "p": person, "q": f"{4 * (n + 1) + 1:05d}"}
        run([arg.format(**fields) for arg in kinds[n % len(kinds)]], "the write")
        times["tactful check after a write"].append(
            timed([tactful, "--home", str(home), "check", "x", f"person{4 * n + 8:05d}"],
                  "check after a write"))
        times["python3 -c pass"].append(timed([sys.executable, "-c", "pass"], "bare"))
    return times


def timed_cpu(argv: list[str], name: str) -> tuple[float, float]:
    """Wall-clock seconds of one process and the CPU seconds it used (user + system): on a
    shared machine the second moves much less with what else runs."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(argv, name)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def search_after_write(tactful: str, home: Path, runs: int,
                       before: str | None = None) -> dict[str, list[tuple[float, float]]]:
    """`tactful search` right after a write, paired with a bare interpreter start in the same
    round (the two take turns going first). Two writes: `remember` by the real command (not
    timed), and a write made here in the bench's process (not timed), the file replaced and
    the change journal told but the index not caught up, as when the writer found the desk
    busy: the search reads the file itself. `before`: another checkout's `tactful`, timed in
    the same rounds (its own write before each of its searches after a write)."""
    bare = [sys.executable, "-c", "pass"]
    sides = {"": tactful, **({" (before)": before} if before else {})}
    people = People(Home(home), MemorySettings(tz=TZ))
    times: dict[str, list[tuple[float, float]]] = {"python3 -c pass": []}
    for label in sides:
        times[f"search after remember{label}"] = []
        times[f"search after a write{label}"] = []
    for command in sides.values():  # the index built, bytecode written
        run([command, "--home", str(home), "search", "evals harness"], "search")
    written = 0
    for n in range(runs):
        run([tactful, "--home", str(home), "remember", "x", f"person{4 * n:05d}", "--kind",
             "reply", "--they", f"more evals, round {n}"], "remember")
        turn = [("python3 -c pass", bare)] + [
            (f"search after remember{label}", [command, "--home", str(home), "search",
                                                "evals harness"])
            for label, command in sides.items()]
        shift = n % len(turn)
        for name, argv in turn[shift:] + turn[:shift]:
            times[name].append(timed_cpu(argv, name))
        for label, command in sides.items():
            written += 1
            entry = Entry(at=datetime(2026, 11, 29, 12, tzinfo=TZ), kind="reply",
                          direction="inbound", they=f"evals again, round {n}")
            people.change("x", f"person{4 * written:05d}",
                          lambda person, entry=entry: person.entries.append(entry))
            times[f"search after a write{label}"].append(timed_cpu(
                [command, "--home", str(home), "search", "evals harness"], "after a write"))
    return times


def report_cpu(group: dict[str, list[tuple[float, float]]]) -> None:
    wall = statistics.median(w for w, _ in group["python3 -c pass"])
    cpu = statistics.median(c for _, c in group["python3 -c pass"])
    for name, values in group.items():
        w = statistics.median(v for v, _ in values)
        c = statistics.median(v for _, v in values)
        print(f"{name:<34}{w * 1000:>10.1f}{w / wall:>8.2f}{c * 1000:>10.1f}{c / cpu:>8.2f}")


def search_report(tactful: str, home: Path, runs: int, before: str | None) -> None:
    searches = search_after_write(tactful, home, runs, before)
    print(f"\n{'command, medians':<34}{'wall ms':>10}{'× bare':>8}{'CPU ms':>10}{'× bare':>8}")
    report_cpu(searches)
    print("goal: tactful search at most 3× a bare interpreter start right after a write")


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


def imported_by_check(home: Path) -> list[str]:
    probe = (f"import sys; import tactful.core.cli.main as m;"
             f"m.main(['--home', {str(home)!r}, 'check', 'x', 'person00000']);"
             "print(','.join(sorted({n.split('.')[0] for n in sys.modules})))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=False, env=child_env()).stdout.strip().splitlines()[-1]
    return [name for name in out.split(",") if name in SDKS]


def report(group: dict[str, list[float]]) -> None:
    base = statistics.median(group["python3 -c pass"])
    for name, values in group.items():
        values.sort()
        p90 = values[max(0, int(len(values) * 0.9) - 1)]
        median = statistics.median(values)
        print(f"{name:<34}{median * 1000:>10.1f}{p90 * 1000:>9.1f}{median / base:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--people", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--search-only", action="store_true",
                        help="only search right after a write, not check or the card")
    parser.add_argument("--before", metavar="TACTFUL",
                        help="also time search with another checkout's tactful, same rounds")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tactful-bench-"))
    try:
        started = time.perf_counter()
        build_home(root, args.people)
        print(f"home: {args.people} person files + one with 50 entries "
              f"(built in {time.perf_counter() - started:.1f} s)")
        print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        tactful = str(Path(sys.executable).with_name("tactful"))
        config = Path(__file__).resolve().parent.parent / "config" / "tactful.example.yaml"
        base = [tactful, "--home", str(root)]
        if args.search_only:
            search_report(tactful, root, args.runs, args.before)
            print(f"load average after:  {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
            return
        times = timed_runs({
            "python3 -c pass": [sys.executable, "-c", "pass"],
            "tactful check (fresh id map)": [*base, "check", "x", "person00000"],
            "tactful check (by id)": [*base, "check", "x", "renamed_person", "--id", "424242"],
            "tactful check (example config)": [*base, "--config", str(config), "check", "x",
                                               "person00000"],
        }, args.runs)
        after = check_after_write(tactful, root, args.runs)
        print(f"\n{'command':<34}{'median ms':>10}{'p90 ms':>9}{'× bare':>8}")
        report(times)
        report(after)
        print("goal: tactful check at most 3× a bare interpreter start, whatever was written "
              "just before (each group paired with its own bare runs)")
        print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        search_report(tactful, root, args.runs, args.before)
        people = People(Home(root), MemorySettings(tz=TZ))
        per_card, per_read = card_time(people, 300)
        print(f"\ncard, 50 entries, in-process: {per_card * 1000:.2f} ms per card "
              f"(reading the file alone: {per_read * 1000:.3f} ms; "
              f"ratio {per_card / per_read:.0f}×); goal under 5 ms")
        sdks = imported_by_check(root)
        print(f"platform SDKs imported by check: {', '.join(sdks) or 'none'}")
        print(f"load average after:  {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
