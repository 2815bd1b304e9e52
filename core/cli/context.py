"""What a command needs: the application (`tactful.core.app.App`: config, home, people, the
plugin host, the gate), plus what only the command line knows (`--debug`).

The command line builds it and hands it on as an `App`: routines, the scheduler and the services
`tactful run` starts take an `App` and never import the command line.

For `check`, `card`, `search` and `hot`, memory's settings come from the config's few memory
values (`core/config/view.py`): when the home is named on the command line or in $TACTFUL_HOME
and the config file is byte for byte one that loaded before, they are read from the home's copy
instead of the whole file, so they do not pay for YAML and the schema before every reply or
look-up. Every other command reads all of the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tactful.core.app import App, memory_settings
from tactful.core.memory.home import Home, resolve_home
from tactful.core.memory.settings import MemorySettings


@dataclass
class Context(App):
    debug: bool = False  # --debug: show the traceback of an internal error
    # `check`, `card`, `search` and `hot`: read the config's memory values from the home's
    # copy, and keep one. Only they: they run before every reply or to look something up, and
    # they are answers, not changes (what they write, the index and the desk, is made from the
    # files); any other command reads the whole file and leaves the home as it found it when it
    # refuses.
    kept_config: bool = False

    @cached_property
    def settings(self) -> MemorySettings:
        from tactful.core.config import loader, view

        named = self._named_home() if self.kept_config else None

        def user_file() -> Path | None:  # where the user's own config goes, kept in the home
            return loader.user_config_file() if named is None else view.user_config_file(named)

        path = loader.config_file(Path(self.config_arg) if self.config_arg else None,
                                  environ=self.environ, user_file=user_file)
        values = None
        if path is None:
            values = view.MemoryView()  # no file: the defaults
        elif named is not None:
            values = view.kept(named, path)
        if values is None:
            config = self.config  # the whole file: an error in it is said as always
            values = view.MemoryView.of(config)
            if named is not None and path is not None:
                view.keep(named, path, config)
        return memory_settings(values.timezone, values.owners, values.compact_after,
                               values.keep_full)

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
