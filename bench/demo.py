"""Benchmark `tactful demo`: its wall time and CPU beside the floor, and beside an older version.

Side by side in one run, interleaved round by round (these machines are shared and noisy):
  * the floor: `python -c "import aiogram"`, the heaviest single import any demo that reaches
    Telegram through its real library must pay;
  * the sum of the platform libraries imported one after the other (what a demo in one process
    pays before it answers anyone);
  * `tactful demo` as installed;
  * with `--baseline REF`: the demo of that git revision, run from a temporary checkout with the
    same interpreter and libraries (site packages on the path, the editable install bypassed).
Wall time is what a reader waits; CPU (user + system, children included) is the work, which a
loaded machine stretches less than wall time. Load averages are printed before and after.

Run: .venv/bin/python bench/demo.py [--rounds 3] [--baseline fdb85fa]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GIT = shutil.which("git") or "/usr/bin/git"


def measure(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])}… failed: {done.stderr[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def baseline(ref: str, scratch: Path) -> tuple[list[str], dict[str, str]]:
    """The demo of `ref`, from a checkout of it, with this interpreter's libraries."""
    tree = scratch / "checkout"
    subprocess.run([GIT, "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), ref],
                   check=True)
    links = scratch / "links" / "tactful"
    links.mkdir(parents=True)
    for folder in ("core", "adapters", "routines", "testing"):
        (links / folder).symlink_to(tree / folder)
    site = sysconfig.get_paths()["purelib"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(links.parent), site])}
    # -S: no site processing, so the editable install's finder (this checkout) stays out.
    return [sys.executable, "-S", "-m", "tactful.core.cli", "demo"], env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--baseline", metavar="REF", help="a git revision to compare with")
    args = parser.parse_args()
    runs: dict[str, list[tuple[float, float]]] = {}
    variants: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "floor: import aiogram": ([sys.executable, "-c", "import aiogram"], None),
        "the libraries one after the other": (
            [sys.executable, "-c", "import tweepy, atproto, aiogram, httpx"], None),
        "tactful demo (this checkout)": ([sys.executable, "-m", "tactful", "demo"], None),
    }
    scratch = Path(tempfile.mkdtemp(prefix="bench-demo-"))
    try:
        if args.baseline:
            variants[f"tactful demo ({args.baseline})"] = baseline(args.baseline, scratch)
        print(f"load average before: {os.getloadavg()}")
        for _ in range(args.rounds):
            for name, (argv, env) in variants.items():
                runs.setdefault(name, []).append(measure(argv, env))
        print(f"load average after:  {os.getloadavg()}")
    finally:
        if args.baseline:
            subprocess.run([GIT, "-C", str(ROOT), "worktree", "remove", "--force",
                            str(scratch / "checkout")], check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    floor_wall = statistics.median(w for w, _ in runs["floor: import aiogram"])
    print(f"\n{'what':40} {'wall (median)':>14} {'CPU (median)':>13} {'wall / floor':>13}")
    for name, found in runs.items():
        wall = statistics.median(w for w, _ in found)
        cpu = statistics.median(c for _, c in found)
        print(f"{name:40} {wall:13.1f}s {cpu:12.1f}s {wall / floor_wall:12.1f}×")


if __name__ == "__main__":
    main()
