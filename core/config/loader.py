"""Find tactful.yaml, read it, check it, and turn every failure into one ConfigError line.

The first of these that applies is the config file (README, Configuration):

1. `--config FILE` (the `path` argument);
2. `$TACTFUL_CONFIG`, unless empty (an empty variable counts as unset, as shells usually mean it);
3. `./tactful.yaml` in the working directory;
4. `tactful.yaml` in the user config folder, `platformdirs.user_config_dir("tactful")`: on
   Linux `$XDG_CONFIG_HOME/tactful/` when that variable holds an absolute path, else
   `~/.config/tactful/`; on macOS `~/Library/Application Support/tactful/` (or the XDG folder,
   with a platformdirs that honours it there); on Windows `%APPDATA%\\tactful\\`;
5. none: the built-in defaults, `Config()`, whose `defaults_only` is True.

An explicit path or $TACTFUL_CONFIG naming nothing is an error, never a quiet fall back to the
next place or the defaults. So is a dangling symlink at ./tactful.yaml or in the user folder.
The user folder is read from the process environment, as platformdirs reads it (the `environ`
argument covers $TACTFUL_CONFIG only), and is never created.

yaml, the schema and even the classes of the values are imported only once a file is found,
and platformdirs only once the first three places found nothing: `tactful check` without a
config file stays fast (and with one it may not need them at all: view.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .values import Config

ENV_VAR = "TACTFUL_CONFIG"
DEFAULT_NAME = "tactful.yaml"
APP_NAME = "tactful"


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
    """The configuration in force; `Config()` (`source=None`, `defaults_only`) when no file.

    Relative paths (explicit or from the environment) are taken from `cwd`, by default the
    process's working directory. Raises ConfigError naming file, line and key.
    """
    choice = _choose(path, os.environ if environ is None else environ, cwd)
    if choice is None:
        from .values import Config

        return Config()
    # The schema and the YAML reader only once there is a file to read: `check` stays fast.
    from .reading import read_file

    return read_file(choice.path, choice.shown, choice.missing_hint)


def config_file(path: Path | None = None, *, environ: Mapping[str, str] | None = None,
                cwd: Path | None = None,
                user_file: Callable[[], Path | None] | None = None) -> Path | None:
    """The file `load_config` would read (absolute), or None when it would use the defaults;
    whether it exists and loads is `load_config`'s to say. `user_file` stands for
    `user_config_file` (view.py keeps its answer)."""
    choice = _choose(path, os.environ if environ is None else environ, cwd,
                     user_file or user_config_file)
    return None if choice is None else choice.path


def user_config_file() -> Path | None:
    """Where the user's own config file goes: `<platformdirs user_config_dir>/tactful.yaml`.

    Follows $XDG_CONFIG_HOME (when absolute) as platformdirs does; creates nothing. None when
    there is no user folder: neither an absolute $XDG_CONFIG_HOME nor a home directory.
    """
    import platformdirs  # only here: most runs find their file earlier, or never look

    try:
        folder = platformdirs.user_config_dir(APP_NAME, appauthor=False)
    except RuntimeError:  # no home directory to put ~/.config in
        return None
    return Path(folder) / DEFAULT_NAME


def defaults_notice() -> str:
    """One line for stderr, said by commands that send, preview or run routines on `Config()`."""
    found = user_config_file()
    user_file = _printable(str(found)) if found else "the user config folder (no home directory)"
    return (f"tactful: note: no config file found (looked at ${ENV_VAR}, ./{DEFAULT_NAME}, "
            f"{user_file}); running on built-in defaults — persona, memory home and platforms "
            "are the defaults; pass --config FILE or write one of these files")


def _choose(path: Path | None, environ: Mapping[str, str], cwd: Path | None,
            user_file: Callable[[], Path | None] | None = None) -> _Choice | None:
    base = cwd if cwd is not None else Path.cwd()
    if path is not None:
        hint = "check the path given as the config file"
        return _Choice(base / _expand(Path(path)), str(path), hint)
    from_env = environ.get(ENV_VAR, "")
    if from_env:
        hint = (f"fix ${ENV_VAR}, or unset it to use ./{DEFAULT_NAME}, the user config folder "
                "or the defaults")
        return _Choice(base / _expand(Path(from_env)), from_env, hint)
    nearby = base / DEFAULT_NAME
    # lexists: a dangling symlink is a mistake to report, not a reason to look further
    if os.path.lexists(nearby):
        return _Choice(nearby, DEFAULT_NAME, f"fix or remove ./{DEFAULT_NAME}")
    found = (user_file or user_config_file)()
    if found is not None and os.path.lexists(found):
        return _Choice(found, str(found), f"fix or remove {found}")
    return None


def _expand(path: Path) -> Path:
    try:
        return path.expanduser()
    except RuntimeError:  # ~name of an unknown user: leave it, the read will say it is missing
        return path


def _printable(text: str) -> str:
    """The notice stays one line whatever $XDG_CONFIG_HOME holds."""
    return text if text.isprintable() else ascii(text)
