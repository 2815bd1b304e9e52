"""Find tactful.yaml, read it, check it, and turn every failure into one ConfigError line.

The file is chosen as SPEC §13 says: an explicit path, else $TACTFUL_CONFIG, else ./tactful.yaml,
else the built-in defaults. An explicit path or $TACTFUL_CONFIG naming nothing is an error, never a
quiet fall back to defaults. An empty $TACTFUL_CONFIG counts as unset, as shells usually mean it.

yaml is imported only once a file is found: `tactful check` without a config file stays fast.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from .values import Config

ENV_VAR = "TACTFUL_CONFIG"
DEFAULT_NAME = "tactful.yaml"


class _Choice(NamedTuple):
    path: Path  # absolute
    shown: str  # as the user wrote it, for messages
    missing_hint: str


def load_config(
    path: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Config:
    """The configuration in force; `Config()` with `source=None` when there is no file.

    Relative paths (explicit or from the environment) are taken from `cwd`, by default the
    process's working directory. Raises ConfigError naming file, line and key.
    """
    choice = _choose(path, os.environ if environ is None else environ, cwd)
    if choice is None:
        return Config()
    # The schema and the YAML reader only once there is a file to read: `check` stays fast.
    from .reading import read_file

    return read_file(choice.path, choice.shown, choice.missing_hint)


def _choose(path: Path | None, environ: Mapping[str, str], cwd: Path | None) -> _Choice | None:
    base = cwd if cwd is not None else Path.cwd()
    if path is not None:
        hint = "check the path given as the config file"
        return _Choice(base / _expand(Path(path)), str(path), hint)
    from_env = environ.get(ENV_VAR, "")
    if from_env:
        hint = f"fix ${ENV_VAR} or unset it to use ./{DEFAULT_NAME} or the defaults"
        return _Choice(base / _expand(Path(from_env)), from_env, hint)
    nearby = base / DEFAULT_NAME
    # lexists: a dangling symlink is a mistake to report, not a reason to use the defaults
    if os.path.lexists(nearby):
        return _Choice(nearby, DEFAULT_NAME, f"fix or remove ./{DEFAULT_NAME}")
    return None


def _expand(path: Path) -> Path:
    try:
        return path.expanduser()
    except RuntimeError:  # ~name of an unknown user: leave it, the read will say it is missing
        return path
