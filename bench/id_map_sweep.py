"""Benchmark the id map's sweep for files edited in place against a full rebuild of the map.

Builds a home of person files (bench/memory_fast_paths.py's), then times `tactful check x
HANDLE` as a real process, in paired rounds beside a bare `python3 -c pass` (medians; ratios,
the machine being shared), with the id map of every platform:
  * fresh (no sweep due): what most checks find;
  * due a sweep (its mark moved back by the period, as if ten seconds had passed): a stat of
    every file, and the headers of the files changed since read again;
  * stale (each people folder's times moved, as a file made by hand moves them): the whole map
    rebuilt from every header.
A sweep must never cost a check more than the rebuild it stands in for.

Run: .venv/bin/python bench/id_map_sweep.py [--people 4000] [--runs 11]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory_fast_paths import build_home, run, timed

from tactful.core.memory import identity

PLATFORMS = ("x", "bluesky", "threads", "telegram")


def sweep_due(home: Path) -> None:
    for platform in PLATFORMS:
        swept = home / ".ids" / platform / identity.SWEPT
        at = time.time_ns() - identity.SWEEP_EVERY_NS - 1_000_000_000
        os.utime(swept, ns=(at, at))


def stale(home: Path) -> None:
    for platform in PLATFORMS:
        os.utime(home / "people" / platform)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--people", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    tactful = str(Path(sys.executable).with_name("tactful"))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        build_home(home, args.people)
        check = [tactful, "--home", str(home), "check", "x", "person00000"]
        run(check, "first check")  # the map built and swept, bytecode written
        states = {"fresh": lambda: None, "sweep due": lambda: sweep_due(home),
                  "stale (rebuild)": lambda: stale(home)}
        times: dict[str, list[float]] = {"python3 -c pass": [], **{k: [] for k in states}}
        for _ in range(args.runs):
            times["python3 -c pass"].append(timed([sys.executable, "-c", "pass"], "python"))
            for name, prepare in states.items():
                prepare()
                times[name].append(timed(check, name))
        base = statistics.median(times["python3 -c pass"])
        rebuild = statistics.median(times["stale (rebuild)"])
        print(f"{args.people} person files, {args.runs} paired rounds, load {os.getloadavg()}")
        for name, values in times.items():
            median = statistics.median(values)
            print(f"  {name:18} {median * 1000:8.1f} ms  {median / base:5.1f}x python  "
                  f"{median / rebuild:5.2f}x rebuild")


if __name__ == "__main__":
    main()
