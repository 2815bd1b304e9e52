"""What a command needs: the application (`tactful.core.app.App`: config, home, people, the
plugin host, the gate), plus what only the command line knows (`--debug`).

The command line builds it and hands it on as an `App`: routines, the scheduler and the services
`tactful run` starts take an `App` and never import the command line.

For `check`, `card`, `search`, `hot` and `remember`, memory's settings come from the config's
few memory values (`core/config/view.py`): when the home is named on the command line or in
$TACTFUL_HOME and the config file is byte for byte one that loaded before, they are read from
the home's copy instead of the whole file, so they do not pay for YAML and the schema before
every reply, look-up or record of one. `remember` keeps a copy (and where platformdirs puts the
user's own config file) only once it has succeeded: a refused change leaves the home as it
found it. Every other command reads all of the file.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from tactful.core.app import App, memory_settings
from tactful.core.memory.home import Home, resolve_home
from tactful.core.memory.settings import MemorySettings

if TYPE_CHECKING:
    from collections.abc import Callable

    from tactful.core.config.values import Config


@dataclass
class Context(App):
    debug: bool = False  # --debug: show the traceback of an internal error
    # `check`, `card`, `search`, `hot` and `remember`: read the config's memory values from the
    # home's copy. Only they: they run before or after every reply, or to look something up,
    # and need of the config nothing but those values; any other command reads the whole file.
    kept_config: bool = False
    # `remember`: keep a copy only once the command has succeeded (`done`); the answers keep
    # theirs at once (what they write, the index and the desk, is made from the files).
    keep_when_done: bool = False
    _to_keep: list[Callable[[], object]] = field(default_factory=list, init=False, repr=False)

    @cached_property
    def settings(self) -> MemorySettings:
        from tactful.core.config import loader, view

        named = self._named_home() if self.kept_config else None
        later = self.keep_when_done

        def user_file() -> Path | None:  # where the user's own config goes, kept in the home
            if named is None:
                return loader.user_config_file()
            found = view.user_config_file(named, keep=not later)
            # platformdirs is imported only when the kept answer did not serve: keep it then.
            if later and "platformdirs" in sys.modules:
                self._to_keep.append(lambda: view.user_config_file(named))
            return found

        path = loader.config_file(Path(self.config_arg) if self.config_arg else None,
                                  environ=self.environ, user_file=user_file)
        kept = None if path is None or named is None else view.kept(named, path)
        if path is None:
            values = view.MemoryView()  # no file: the defaults
        elif kept is not None:
            values = kept
        else:
            # What `remember` keeps later is the file as read now: one edited while it waited
            # for a person's lock is then a stranger to the copy, and read whole next time.
            text = view.file_text(path) if later and named is not None else None
            config = self.config  # the whole file: an error in it is said as always
            values = view.MemoryView.of(config)
            if named is not None:
                self._keep(named, path, config, text)
        return memory_settings(values.timezone, values.owners, values.compact_after,
                               values.keep_full)

    def _keep(self, home: Path, path: Path, config: Config, text: str | None) -> None:
        from tactful.core.config import view

        if not self.keep_when_done:
            view.keep(home, path, config)
        elif text is not None:
            self._to_keep.append(lambda: view.keep(home, path, config, text))

    def done(self) -> None:
        """The command succeeded: keep what it read for the next one. Best effort, as `keep`
        is: nothing kept is no error, and nothing here may turn a change made into a failure
        (a retry would make it twice)."""
        while self._to_keep:
            try:
                self._to_keep.pop(0)()
            except Exception as exc:  # noqa: BLE001 — a cache not written is no failure
                print(f"tactful: warning: the config's values were not kept: {exc}",
                      file=sys.stderr)

    @cached_property
    def home(self) -> Home:
        # The settings first, as the application does: a config that does not load is said
        # before anything about the home.
        _ = self.settings
        named = self._named_home()
        if named is not None:
            return Home(named)
        return Home(resolve_home(None, self.environ, self.config.memory.home))

    def _named_home(self) -> Path | None:
        """The home when it is named before the config is read (--home, $TACTFUL_HOME)."""
        if self.home_arg or self.environ.get("TACTFUL_HOME"):
            return resolve_home(self.home_arg, self.environ, None)
        return None
