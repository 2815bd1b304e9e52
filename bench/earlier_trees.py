"""Another build of tactful beside this one, for the benches that time both in the same
rounds: the tree at an earlier commit as an importable package, the environment a child
process runs either in, and a command run that stops the bench when it fails."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
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
