"""What a routine is, which routines are configured, and running one by name.

A routine kind is registered by a plugin (`register_routines`: `register(kind, routine)`) and
configured under `routines.<name>` with `kind:`. `routine(run) -> Result` does one run: it
checks `run.stop` between steps and returns early when it is set (SIGTERM), pauses only through
`run.pause`, and reports through `run.log`, never with message text.

Choice: when no configured routine is of kind `sync-log`, a default `nightly-sync` runs the
sync at 22:30 in the persona's time zone (docs/log.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tactful.core.config.values import Config, RoutineConfig
from tactful.core.errors import BadInput
from tactful.core.schedule.events import EventLog

if TYPE_CHECKING:
    from tactful.core.app import App
    from tactful.core.plugins import Host

DEFAULT_SYNC = "nightly-sync"
DEFAULT_SYNC_CONFIG = RoutineConfig(kind="sync-log", schedule="30 22 * * *")


@dataclass(frozen=True)
class Result:
    """One line for the operator (no message text), an exit code (README), and counts."""

    summary: str
    exit_code: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)


@dataclass
class Run:
    name: str
    config: RoutineConfig
    context: App  # the application: config, home, people, the gate (core/app.py)
    host: Host
    dry_run: bool
    log: EventLog
    stop: threading.Event = field(default_factory=threading.Event)
    preview: bool = False  # read, resolve, run every guard, draft, write the outbox; post nothing
    # Accounts the operator named by hand (`routine run NAME --only HANDLE`): the run answers
    # only them, and one of them being do-not-engage is the hard stop (exit 3).
    only: tuple[str, ...] = ()

    def pause(self, seconds: float) -> bool:
        """Wait between steps; False when asked to stop meanwhile."""
        if seconds <= 0:
            return not self.stop.is_set()
        return not self.stop.wait(seconds)


Routine = Callable[[Run], Result]


def configured(config: Config) -> dict[str, RoutineConfig]:
    routines = dict(config.routines)
    if not any(r.kind == "sync-log" for r in routines.values()) and DEFAULT_SYNC not in routines:
        routines[DEFAULT_SYNC] = DEFAULT_SYNC_CONFIG
    return dict(sorted(routines.items()))


def kinds(host: Host) -> dict[str, tuple[str, Routine]]:
    return host.collect("register_routines")


def find(name: str, config: Config, host: Host) -> tuple[RoutineConfig, Routine]:
    routines = configured(config)
    if name not in routines:
        names = ", ".join(routines) or "none"
        raise BadInput(f"no routine named {name[:40]!r} (configured: {names}); see "
                       "`tactful routine list`")
    settings = routines[name]
    registered = kinds(host)
    if settings.kind not in registered:
        raise BadInput(f"{config.where(f'routines.{name}.kind')}: no routine kind "
                       f"{settings.kind!r} is "
                       f"installed (installed: {', '.join(sorted(registered)) or 'none'})")
    return settings, registered[settings.kind][1]


def run_one(name: str, context: App, host: Host, *, dry_run: bool, log: EventLog,
            stop: threading.Event | None = None, preview: bool = False,
            only: tuple[str, ...] = ()) -> Result:
    settings, routine = find(name, context.config, host)
    dry = dry_run or settings.dry_run
    run = Run(name=name, config=settings, context=context, host=host, dry_run=dry, log=log,
              stop=stop or threading.Event(), preview=preview and not dry, only=only)
    log.emit("routine.start", routine=name, kind=settings.kind, dry_run=run.dry_run)
    try:
        result = routine(run)
    except Exception as exc:
        code = getattr(exc, "exit_code", 1)
        log.emit("routine.end", routine=name, exit_code=code, error=type(exc).__name__)
        raise
    log.emit("routine.end", routine=name, exit_code=result.exit_code, **dict(result.counts))
    return result
