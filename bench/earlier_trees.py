"""Another build of tactful beside this one, for the benches that time both in the same
rounds: the tree at an earlier commit as an importable package, the environment a child
process runs either in, a command run that stops the bench when it fails, commands timed in
paired rounds, and the table of process starts both benches print."""

from __future__ import annotations

import io
import os
import resource
import shutil
import statistics
import subprocess
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child_env(tree: Path | None) -> dict[str, str]:
    """The environment of a timed child: bytecode written and read as a user's install does
    (this environment sets PYTHONDONTWRITEBYTECODE), and `tree` first on the import path."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def earlier_tree(rev: str, into: Path) -> Path:
    """The tree at `rev` as an importable `tactful` package under `into`."""
    package = into / "tactful"
    package.mkdir(parents=True)
    git = shutil.which("git")
    if git is None:
        raise SystemExit("git is needed to take the earlier tree (or pass --before '')")
    archive = subprocess.run([git, "-C", str(ROOT), "archive", rev], capture_output=True,
                             check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(package, filter="data")
    return into


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{argv[:4]} failed ({done.returncode}): {done.stderr[-400:]}")
    return done


# A command of the paired rounds: argv ("{n}" becomes the round's number), environment, and
# what to keep: "" wall and CPU time, "importtime" the module's `-X importtime` figure, any
# other kind the command's output.
Command = tuple[list[str], dict[str, str], str]


def paired_rounds(commands: dict[str, Command], rounds: int, module: str) -> tuple[
        dict[str, list[float]], dict[str, list[float]], dict[str, list[int]],
        dict[str, list[str]]]:
    """Every command once a round, in turns (the order reversed every other round), after a
    first round that writes bytecode and is not counted: (wall times, CPU times of the child,
    cumulative `-X importtime` microseconds of `module`, outputs), each by command."""
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    importtimes: dict[str, list[int]] = {name: [] for name in commands}
    outputs: dict[str, list[str]] = {name: [] for name in commands}
    for n in range(rounds + 1):
        order = list(commands.items())
        if n % 2:
            order.reverse()
        for name, (argv, env, kind) in order:
            argv = [arg.replace("{n}", str(n)) for arg in argv]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = run(argv, env)
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if n == 0:
                continue
            if kind == "importtime":
                line = next(row for row in done.stderr.splitlines()
                            if row.rstrip().endswith(f"| {module}"))
                importtimes[name].append(int(line.split("|")[1]))
            elif kind:
                outputs[name].append(done.stdout)
            else:
                walls[name].append(wall)
                cpus[name].append(after.ru_utime + after.ru_stime
                                  - before.ru_utime - before.ru_stime)
    return walls, cpus, importtimes, outputs


def print_starts(walls: dict[str, list[float]], cpus: dict[str, list[float]],
                 importtimes: dict[str, list[int]], rounds: int,
                 width: int) -> tuple[float, float]:
    """Each command's median wall and CPU time beside `python3 -c pass`'s (which `walls` and
    `cpus` must hold), then each tree's `-X importtime` figure of the module measured; returns
    the bare start's median wall and CPU time."""
    bare = statistics.median(walls["python3 -c pass"])
    bare_cpu = statistics.median(cpus["python3 -c pass"])
    print(f"\nStarts, median of {rounds} paired rounds: wall time, and the CPU time of the process"
          " (what it costs the machine, whatever the queue for a core)")
    print(f"{'command':{width}} {'wall ms':>8} {'x pass':>7} {'CPU ms':>7} {'x pass':>7}")
    for name, times in walls.items():
        if times:
            wall, cpu = statistics.median(times), statistics.median(cpus[name])
            print(f"{name:{width}} {wall * 1e3:>8.1f} {wall / bare:>7.2f} {cpu * 1e3:>7.1f} "
                  f"{cpu / bare_cpu:>7.2f}")
    print(f"\n{'python3 -X importtime, cumulative':{width}} {'median ms':>8}")
    for name, values in importtimes.items():
        if values:
            print(f"{name:{width}} {statistics.median(values) / 1e3:>8.1f}")
    return bare, bare_cpu


def print_ratios(walls: dict[str, list[float]], cpus: dict[str, list[float]],
                 importtimes: dict[str, list[int]], trees: tuple[str, str], whats: list[str],
                 module: str, bare: tuple[float, float], width: int) -> None:
    """Each command of the later tree over the earlier one's, with what each costs beyond a
    bare start; then the two trees' `-X importtime` of `module` (named "-X importtime:
    MODULE, TREE" in `importtimes`)."""
    earlier = trees[1]
    bare_wall, bare_cpu = bare
    print(f"\nthis tree / {earlier}, and each minus python3 -c pass:")
    for what in whats:
        a, b = (statistics.median(walls[f"{what}, {tree}"]) for tree in trees)
        ca, cb = (statistics.median(cpus[f"{what}, {tree}"]) for tree in trees)
        print(f"  {what:{width}} wall {a / b:.2f} ({(a - bare_wall) * 1e3:.1f} vs "
              f"{(b - bare_wall) * 1e3:.1f} ms); CPU {ca / cb:.2f} "
              f"({(ca - bare_cpu) * 1e3:.1f} vs {(cb - bare_cpu) * 1e3:.1f} ms)")
    a, b = (statistics.median(importtimes[f"-X importtime: {module}, {tree}"]) for tree in trees)
    print(f"  {'-X importtime of ' + module:{width}} {a / b:.2f} "
          f"({a / 1e3:.1f} vs {b / 1e3:.1f} ms)")
