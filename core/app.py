"""The application: what every command, routine, service and the scheduler work with.

The command line builds one (`core/cli/context.py`) and hands it on: to routines (`Run.context`),
to the scheduler's jobs, to the services `tactful run` starts (the companion) and to the demo.
Nothing outside the command line imports the command line.

Everything is made on first use, so a command pays only for what it touches: `tactful check`
reads the config, the home and the people store, and never loads the plugin host. Platform
facts reach memory without it (memory's static table, `core/memory/platforms.py`); when the
plugins do load (`App.plugins`), what they declare through `register_platforms` is registered
with memory too, and checked against the static table. For a platform name memory does not
know, memory asks the plugins through the finder the app installs, which loads the host then.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from tactful.core.memory import platforms
from tactful.core.memory.clock import now, zone
from tactful.core.memory.handles import normalize_handle, normalize_platform
from tactful.core.memory.home import Home, resolve_home
from tactful.core.memory.settings import MemorySettings

if TYPE_CHECKING:
    import threading
    from datetime import datetime

    from tactful.core.config.values import Config
    from tactful.core.memory.store import People
    from tactful.core.plugins import Host
    from tactful.core.schedule.events import EventLog
    from tactful.core.send.gate import Gate


def memory_settings(timezone: str, owners: Iterable[str], compact_after: int,
                    keep_full: int) -> MemorySettings:
    """What memory needs of the config (`persona.timezone`, `persona.owners`, `memory.*`)."""
    found = set()
    for owner in owners:
        platform, _, handle = owner.partition(":")
        found.add(f"{normalize_platform(platform)}/{normalize_handle(handle, platform)}")
    return MemorySettings(tz=zone(timezone), compact_after=compact_after, keep_full=keep_full,
                          owners=frozenset(found))


class Service(Protocol):
    """A long-running part of `tactful run` that a plugin contributes (`register_services`),
    such as the Telegram companion's long polling. The core starts it without knowing it."""

    def wanted(self, app: App) -> bool:
        """Whether the config asks for it (e.g. a platform's `mode: companion`)."""
        ...

    def serve(self, app: App, log: EventLog, stop: threading.Event) -> None:
        """Run, in a thread of its own, until `stop` is set. Raising stops `tactful run`."""
        ...


@dataclass
class App:
    home_arg: str | None = None  # --home; else $TACTFUL_HOME, memory.home, the user data dir
    config_arg: str | None = None  # --config; else $TACTFUL_CONFIG, ./tactful.yaml, ...
    environ: dict[str, str] = field(default_factory=lambda: dict(os.environ))

    def __post_init__(self) -> None:
        # A platform name memory does not know is looked up among the plugins, and only then:
        # the finder loads the plugin host when it is first asked.
        platforms.use_finder(_platforms_of_the_plugins)

    @cached_property
    def config(self) -> Config:
        from pathlib import Path

        from tactful.core.config.loader import load_config

        return load_config(Path(self.config_arg) if self.config_arg else None,
                           environ=self.environ)

    @cached_property
    def settings(self) -> MemorySettings:
        config = self.config
        return memory_settings(config.persona.timezone, config.persona.owners,
                               config.memory.compact_after, config.memory.keep_full)

    @cached_property
    def home(self) -> Home:
        return Home(resolve_home(self.home_arg, self.environ, self.config.memory.home))

    @cached_property
    def people(self) -> People:
        # No index update per write: the index is caught up by its readers (the desk right
        # after the write, search), so writers to different people share no index lock
        # (docs/search-and-desk.md). Imported here: `search` builds an App and never writes.
        from tactful.core.memory.store import People

        return People(self.home, self.settings)

    @cached_property
    def plugins(self) -> Host:
        """The plugin host, loaded once, without the plugins the config disables; what they
        declare of their platforms is registered with memory."""
        from tactful.core.plugins import host

        found = host()
        found.disable(self.config.plugins.disabled)
        found.load()
        _declare_platforms(found)
        return found

    def now(self) -> datetime:
        return now(self.settings.tz)

    def make_gate(self) -> Gate:
        """The send gate every sender asks. One per thread that sends: it holds a connection
        to the ledger, and SQLite connections stay in the thread that made them."""
        from tactful.core.send.gate import Gate

        return Gate(config=self.config, home=self.home, people=self.people,
                    settings=self.settings, host=self.plugins, clock=self.now)

    def services(self) -> dict[str, Service]:
        """The services the plugins offer that the config wants running, by name."""
        offered = self.plugins.collect("register_services")
        wanted: dict[str, Service] = {}
        for name, (_, service) in sorted(offered.items()):
            if service.wanted(self):
                wanted[name] = service
        return wanted

    def register_stores(self) -> list[str]:
        """Register every store that holds something of people with memory's forget: the send
        ledger, the inbox and, for each companion a plugin offers, its private store. Done
        when the app is about to forget, not before: registering imports the stores, which
        `check` and `card` must not pay for. Returns warnings (a store that cannot be found)."""
        from tactful.core.inbound import inbox
        from tactful.core.send import ledger

        ledger.register_for_forget()
        inbox.register_for_forget()
        try:
            offered = self.plugins.collect("register_services")
        except Exception as exc:  # noqa: BLE001 — forgetting goes on; the operator is told
            return [f"the plugins could not be asked which companions keep people "
                    f"({type(exc).__name__}: {exc}); a companion's store was not searched"]
        chats = [service.chats for _, (_, service) in sorted(offered.items())
                 if getattr(service, "chats", None) is not None]
        if chats:
            from tactful.core.companion import erasure

            for platform in chats:
                erasure.register_for_forget(platform, self.config.companion.database)
        return []

    def after_memory_change(self) -> None:
        """Regenerate the desk after a change (remember, pin, unpin, journal, sync-log, ...).

        The desk is derived: if it cannot be rebuilt, the change stands and a warning says so.
        """
        from tactful.core.memory import desk

        try:
            desk.after_change(self.home, self.settings, self.now())
        except Exception as exc:  # noqa: BLE001 — nothing about the desk may undo a change
            print(f"tactful: warning: the desk was not regenerated: {exc}", file=sys.stderr)


def _platforms_of_the_plugins() -> Iterable[platforms.Platform]:
    """Memory's finder: the platforms of this process's plugin host (core/plugins.py installs
    the same one when it is imported; the app installs it before, without importing it)."""
    from tactful.core.plugins import found_platforms

    return found_platforms()


def _declare_platforms(host: Host) -> None:
    """Register with memory what the plugins declare of their platforms. Facts that differ from
    the static table's are refused (exit 2, naming both); facts only a hook declares are
    registered, with a warning: `check` and `card`, which load no plugin, do not see them."""
    for facts, source in host.platforms():
        declared_by = platforms.source(facts.name)  # the static table's distribution, or None
        if declared_by is None and facts == platforms.Platform(facts.name):
            continue  # an adapter's platform with plain handles: nothing to declare
        platforms.register(facts, source)
        if declared_by is None or not declared_by.startswith("distribution "):
            warning = (f"{source} declares the platform {facts.name!r} only through "
                       "register_platforms; `check` and `card`, which load no plugin, write its "
                       "handles without those facts: add its entry point to "
                       "`tactful.platforms` (docs/hooks.md#register_platforms)")
            if warning not in host.load_warnings:
                host.load_warnings.append(warning)
    for problem in platforms.problems():  # a static entry that could not be loaded
        if problem not in host.load_warnings:
            host.load_warnings.append(problem)
