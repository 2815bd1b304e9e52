"""Benchmark `tactful remember` under many concurrent writers.

Builds a home of 2,000 person files (index and id map built), then runs, side by side in one
run, the real command two ways:
  * in process: `tactful.core.cli.main.main(argv)` in a warm interpreter (what a long-running
    caller pays: the whole command, argument parsing and the desk included, minus the
    interpreter's start and imports);
  * as a process: the installed `tactful remember ...` console script, started afresh for every
    write (what a shell or an agent calling the command pays, interpreter and imports included);
each with one writer alone, doing its writes one after another (the baseline), and with 32
writer processes at once, each pausing about a second between writes to people picked at
random. Beside the command as a process, its floor, started exactly the same way (the same
writers, pauses and counts): the same interpreter running `-c pass`, and running
`-c "import yaml, sqlite3"` (the libraries a write cannot do without); so the figures as
processes can be read as a ratio to what any Python command pays on this machine at that
concurrency. Reports p50 / p95 per write for all of them, the writes per second, the ratios,
and checks that nothing was lost: every entry written is in its person file and found by
`search`.

Run: .venv/bin/python bench/concurrent_writers.py [--people 2000] [--writers 32] [--writes 8]
     [--process-writes 2] (writes per writer as a process; 0 leaves those pairs out)
     [--rounds 2] (turns of the command and its floors, as processes)
     [--compare PATH] (another build's `tactful` console script, e.g. the code before a change
     installed in a venv of its own: run as a process in the same turns, on the same home)
     [--cpu-rounds N] (N rounds, each running once, in a shuffled order, `python -c pass`, the
     command as a process and the compared build's: the CPU time, user + system, of each whole
     process, read from the kernel; medians and ratios. CPU, not wall time, is what one write
     costs a machine shared by many writers, and is far less noisy on a loaded one)
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
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


COMMAND = str(Path(sys.executable).with_name("tactful"))  # the console script beside python
OTHER: list[str] = []  # --compare: another build's console script


def write_process(root: Path, platform: str, handle: str, token: str,
                  command: str = COMMAND) -> float:
    argv = [command, "--home", str(root), "remember", platform, handle, "--kind", "reply",
            "--they", f"about {token} and the harness"]
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"tactful remember {platform}/{handle} exited {done.returncode}: "
                         f"{done.stderr[-500:]}")
    return elapsed


# The floors: the same interpreter as the console script (its shebang names this one), started
# the same way, doing nothing, or only importing what a write cannot do without.
FLOORS = {"pass": "pass", "imports": "import yaml, sqlite3"}


def floor_process(code: str) -> Callable[[Path, str, str, str], float]:
    def run(root: Path, platform: str, handle: str, token: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - start

    return run


def cpu_of(argv: list[str]) -> float:
    """User + system CPU seconds of one whole process, from the kernel (wait4)."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read() if proc.stderr is not None else b""
    if proc.stderr is not None:
        proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} exited {proc.returncode}: {stderr[-500:]!r}")
    return usage.ru_utime + usage.ru_stime


def cpu_rounds(root: Path, people: int, rounds: int) -> tuple[dict[str, list[float]], Done]:
    """CPU per whole process, in paired rounds: the floor, this build, the compared build."""
    rng = random.Random(7)
    commands = {"python -c pass": None, "this build": COMMAND}
    if OTHER:
        commands["compared build"] = OTHER[0]
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    done: Done = []
    for turn in range(rounds):
        order = list(commands)
        rng.shuffle(order)
        for name in order:
            command = commands[name]
            if command is None:
                cpu[name].append(cpu_of([sys.executable, "-c", "pass"]))
                continue
            k = rng.randrange(people)
            platform, handle = ("x", "bluesky")[k % 2], f"person{k:05d}"
            token = f"cpu{turn}{name.split()[0]}"
            took = cpu_of([command, "--home", str(root), "remember", platform, handle,
                           "--kind", "reply", "--they", f"about {token} and the harness"])
            cpu[name].append(took)
            done.append((platform, handle, token, took))
    return cpu, done


def runner(how: str) -> Callable[[Path, str, str, str], float]:
    """What one write is: "in process", "process" (the command), or a floor's name."""
    if how in FLOORS:
        return floor_process(FLOORS[how])
    if how == "other":
        return lambda root, platform, handle, token: write_process(root, platform, handle,
                                                                   token, OTHER[0])
    return write_process if how == "process" else write


def writer(root: Path, people: int, writes: int, seed: int, start_at: float, pause: float,
           results: multiprocessing.Queue, how: str) -> None:  # type: ignore[type-arg]
    run = runner(how)
    rng = random.Random(seed)
    while time.time() < start_at:
        time.sleep(0.001)
    done = []
    for n in range(writes):
        if pause:  # a person's messages arrive at random times, not back to back
            time.sleep(rng.expovariate(1 / pause))
        k = rng.randrange(people)
        platform, handle = ("x", "bluesky")[k % 2], f"person{k:05d}"
        token = f"{how.replace(' ', '')}{seed}w{n}"
        done.append((platform, handle, token, run(root, platform, handle, token)))
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


Done = list[tuple[str, str, str, float]]


def alone(root: Path, people: int, total: int, seed: int, how: str) -> tuple[Done, float]:
    run = runner(how)
    done: Done = []
    rng = random.Random(seed)
    started = time.perf_counter()
    for n in range(total):
        k = rng.randrange(people)
        platform, handle = ("x", "bluesky")[k % 2], f"person{k:05d}"
        token = f"{how.replace(' ', '')}alone{seed}n{n}"
        done.append((platform, handle, token, run(root, platform, handle, token)))
    return done, time.perf_counter() - started


def together(root: Path, people: int, writers: int, writes: int, pause: float,
             how: str, first_seed: int = 0) -> tuple[Done, float]:
    context = multiprocessing.get_context("fork")
    results: multiprocessing.Queue = context.Queue()  # type: ignore[type-arg]
    start_at = time.time() + 1.0
    procs = [context.Process(target=writer, args=(root, people, writes, seed, start_at, pause,
                                                  results, how))
             for seed in range(first_seed, first_seed + writers)]
    for proc in procs:
        proc.start()
    done: Done = []
    for _ in procs:
        done += results.get()
    wall = time.time() - start_at
    for proc in procs:
        proc.join()
    return done, wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--people", type=int, default=2000)
    parser.add_argument("--writers", type=int, default=32)
    parser.add_argument("--writes", type=int, default=8)
    parser.add_argument("--process-writes", type=int, default=2,
                        help="writes per writer for the pair run as processes (0: none)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="turns of the command and its floors as processes")
    parser.add_argument("--pause", type=float, default=1.0,
                        help="mean seconds between one writer's writes (0: back to back)")
    parser.add_argument("--cpu-rounds", type=int, default=0,
                        help="paired rounds of CPU per whole process (0: none)")
    parser.add_argument("--compare", metavar="PATH",
                        help="another build's tactful console script, run beside this one")
    args = parser.parse_args()
    if args.compare:
        OTHER.append(args.compare)
    root = Path(tempfile.mkdtemp(prefix="tactful-bench-writers-"))
    os.environ["TACTFUL_HOME"] = str(root)
    # Bytecode written and read as on any install: with PYTHONDONTWRITEBYTECODE (set in some
    # environments) every process started would compile every module it imports, a cost no
    # user pays (bench/memory_fast_paths.py does the same).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        build_home(root, args.people)
        # Warm the page cache and the import of the command, as a running system has them.
        write(root, "x", "person00000", "warmup")
        load = os.getloadavg()[0]
        rows: list[tuple[str, Done, float]] = []
        total = args.writers * args.writes
        done, wall = alone(root, args.people, total, 99, "in process")
        rows.append(("in process, 1 writer (baseline)", done, wall))
        done, wall = together(root, args.people, args.writers, args.writes, args.pause,
                              "in process")
        rows.append((f"in process, {args.writers} writers", done, wall))
        if args.process_writes:
            # The command and its floors take turns, round after round, so that a change in
            # the machine's load (it is shared) falls on all of them alike.
            count = args.writers * args.process_writes
            kinds = (("process", "as a process"), ("pass", "floor: python -c pass"),
                     ("imports", "floor: import yaml and sqlite3"))
            if args.compare:
                kinds += (("other", "compared build, as a process"),)
            runs: dict[str, tuple[Done, float]] = {}
            for turn in range(args.rounds):
                for how, name in kinds:
                    for label, (done, wall) in (
                            (f"{name}, 1 writer (baseline)",
                             alone(root, args.people, count, 98 + 100 * turn, how)),
                            (f"{name}, {args.writers} writers",
                             together(root, args.people, args.writers, args.process_writes,
                                      args.pause, how, 1000 * (turn + 1)))):
                        before, took = runs.get(label, ([], 0.0))
                        runs[label] = (before + done, took + wall)
            rows += [(label, done, wall) for label, (done, wall) in runs.items()]
        cpu: dict[str, list[float]] = {}
        if args.cpu_rounds:
            for command in (COMMAND, *OTHER):  # bytecode written, page cache warm, for both
                write_process(root, "x", "person00000", "warmup", command)
            cpu, done = cpu_rounds(root, args.people, args.cpu_rounds)
            rows_cpu: Done = done
        load = max(load, os.getloadavg()[0])

        print(f"home: {args.people} person files; concurrent writers pause {args.pause:g} s on "
              "average between writes (offered "
              f"{args.writers / args.pause if args.pause else float('inf'):.0f} writes/s); "
              f"{os.cpu_count()} cores, load average up to {load:.1f}")
        print(f"\n{'remember':<50}{'writes':>7}{'p50 ms':>9}{'p95 ms':>9}{'writes/s':>10}")
        figures = []
        for name, found, wall in rows:
            p50, p95 = percentiles([t for *_, t in found])
            figures.append((p50, p95))
            print(f"{name:<50}{len(found):>7}{p50:>9.1f}{p95:>9.1f}{len(found) / wall:>10.1f}")
        for pair in range(0, len(figures), 2):
            (a50, a95), (c50, c95) = figures[pair], figures[pair + 1]
            how = rows[pair][0].split(",")[0]
            print(f"ratio {args.writers} writers / 1 writer, {how}: p50 {c50 / a50:.2f}×, "
                  f"p95 {c95 / a95:.2f}×")
        if args.process_writes:
            command = figures[2:4]
            floors = [(4, "python -c pass"), (6, "import yaml and sqlite3")]
            if args.compare:
                floors.append((8, f"compared build {args.compare}"))
            for at, floor in floors:
                print(f"ratio to {'the floor' if at < 8 else 'it'} ({floor}), as a process: "
                      "1 writer p50 "
                      f"{command[0][0] / figures[at][0]:.2f}×, p95 "
                      f"{command[0][1] / figures[at][1]:.2f}×; {args.writers} writers p50 "
                      f"{command[1][0] / figures[at + 1][0]:.2f}×, p95 "
                      f"{command[1][1] / figures[at + 1][1]:.2f}×")
        if cpu:
            print(f"\nCPU per whole process (user + system), {args.cpu_rounds} paired rounds:")
            medians = {name: statistics.median(times) * 1000 for name, times in cpu.items()}
            for name, median in medians.items():
                print(f"  {name:<20} median {median:6.1f} ms")
            this, floor = medians["this build"], medians["python -c pass"]
            print(f"  this build / python -c pass: {this / floor:.2f}×")
            if "compared build" in medians:
                other = medians["compared build"]
                print(f"  compared build / python -c pass: {other / floor:.2f}×; this build / "
                      f"compared build: {this / other:.2f}× (beyond the floor: "
                      f"{this - floor:.1f} ms vs {other - floor:.1f} ms)")
        print("goal: p50 < 50 ms, p95 < 200 ms under 32 writers, nothing lost")
        written = [found for name, found, _ in rows if not name.startswith("floor")]
        if cpu:
            written.append(rows_cpu)
        everything = [entry for found in written for entry in found]
        missing = lost(root, everything)
        from tactful.core.memory import search as searching

        db, _ = index.open_fresh(Home(root), MemorySettings(tz=TZ))
        now = __import__("datetime").datetime.now(TZ)
        unfound = sum(1 for _, _, token, _ in everything
                      if not searching.search(db, token, now))
        db.close()
        print(f"lost: {missing} of {len(everything)} entries missing from their files; "
              f"{unfound} of {len(everything)} not found by search")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
