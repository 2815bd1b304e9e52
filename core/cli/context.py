"""What a command needs, built lazily: config, home, the people store."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from tactful.core.memory.clock import now, zone
from tactful.core.memory.handles import normalize_handle, normalize_platform
from tactful.core.memory.home import Home, resolve_home
from tactful.core.memory.settings import MemorySettings
from tactful.core.memory.store import People

if TYPE_CHECKING:
    from datetime import datetime

    from tactful.core.config.values import Config
    from tactful.core.memory.store import Written
    from tactful.core.plugins import Host
    from tactful.core.send.gate import Gate


@dataclass
class Context:
    home_arg: str | None = None
    config_arg: str | None = None
    debug: bool = False
    environ: dict[str, str] = field(default_factory=lambda: dict(os.environ))

    @cached_property
    def config(self) -> Config:
        from pathlib import Path

        from tactful.core.config.loader import load_config

        return load_config(Path(self.config_arg) if self.config_arg else None,
                           environ=self.environ)

    @cached_property
    def settings(self) -> MemorySettings:
        config = self.config
        owners = set()
        for owner in config.persona.owners:
            platform, _, handle = owner.partition(":")
            owners.add(f"{normalize_platform(platform)}/{normalize_handle(handle, platform)}")
        return MemorySettings(tz=zone(config.persona.timezone),
                              compact_after=config.memory.compact_after,
                              keep_full=config.memory.keep_full,
                              owners=frozenset(owners))

    @cached_property
    def home(self) -> Home:
        return Home(resolve_home(self.home_arg, self.environ, self.config.memory.home))

    @cached_property
    def people(self) -> People:
        people = People(self.home, self.settings)
        people.after_write.append(self._index_person)
        return people

    @cached_property
    def plugins(self) -> Host:
        """The plugin host, loaded once, without the plugins the config disables."""
        from tactful.core.plugins import host

        found = host()
        found.disable(self.config.plugins.disabled)
        found.load()
        return found

    def make_gate(self) -> Gate:
        """The send gate every sender asks. One per thread that sends: it holds a connection
        to the ledger, and SQLite connections stay in the thread that made them."""
        from tactful.core.send.gate import Gate

        return Gate(config=self.config, home=self.home, people=self.people,
                    settings=self.settings, host=self.plugins, clock=self.now)

    def _index_person(self, written: Written) -> None:
        # The index is disposable: if it cannot be updated it is dropped and rebuilt later,
        # and the write that just succeeded stands.
        from tactful.core.memory import index

        index.update_person(self.home, written.person, written.text, written.stat)

    def after_memory_change(self) -> None:
        """Regenerate the desk after a change (remember, pin, unpin, journal, sync-log, ...).

        The desk is derived: if it cannot be rebuilt, the change stands and a warning says so.
        """
        from tactful.core.memory import desk

        try:
            desk.regenerate(self.home, self.settings, self.now())
        except Exception as exc:  # noqa: BLE001 — nothing about the desk may undo a change
            print(f"tactful: warning: the desk was not regenerated: {exc}", file=sys.stderr)

    def now(self) -> datetime:
        return now(self.settings.tz)
