"""`tactful run`: every scheduled routine on its cron schedule, and every service a plugin
offers that the config wants (the Telegram companion), until SIGTERM or Ctrl-C.

Decisions (docs/scheduling.md):
- Services come from the plugins (`register_services`): each runs in a thread of its own;
  one that fails stops everything, and `run` reports why. The core knows none of them.
- One application object (`App`) serves every run. The people store keeps no cache (each read
  goes to the file, each write locks the one person with flock, which also keeps two threads
  apart), so a run never sees stale memory. The config is read once, at start: a changed YAML
  needs a restart.
- The clock is `context.now`, so `TACTFUL_NOW` freezes it as it does everywhere: under a
  frozen clock only what is due at that instant fires (tests and the demo use this).
- A signal handler may run while the main thread holds any lock, so ours takes none: it notes
  the signal and a wakeup byte ends the wait; the main thread then sets the stop event. A
  second signal while routines finish their step stops at once (exit 130).
"""

from __future__ import annotations

import argparse
import select
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import FrameType

from tactful.core.app import App, Service
from tactful.core.cli.sending import defaults_notice, warn_plugins
from tactful.core.errors import BadInput
from tactful.core.plugins import Host
from tactful.core.schedule import routine as routines
from tactful.core.schedule.events import EventLog
from tactful.core.schedule.scheduler import Job, Scheduler

SIGNALS = (signal.SIGTERM, signal.SIGINT)


def run(context: App, args: argparse.Namespace) -> int:
    plugins = context.plugins
    warn_plugins(plugins)
    defaults_notice(context)
    log = EventLog(clock=context.now)
    services = context.services()
    jobs = scheduled_jobs(context, plugins, log, required=not services)
    # Made here, in one thread: a cached property computed by two routine threads at once
    # could be computed twice.
    _ = context.settings, context.home, context.people
    with _signals() as signals:
        failed: list[BaseException] = []
        workers = [_service_thread(name, service, context, log, signals.stop, failed)
                   for name, service in services.items()]
        scheduler = Scheduler(jobs, clock=context.now, wait=signals.wait, log=log)
        scheduler.run_forever(signals.stop)
        for worker in workers:
            worker.join()
    log.emit("scheduler.stop", signal=signals.received[0] if signals.received else None)
    if failed:
        raise failed[0]
    return 0


def _service_thread(name: str, service: Service, app: App, log: EventLog,
                    stop: threading.Event, failed: list[BaseException]) -> threading.Thread:
    """A service (the companion's polling, say) in its own thread, next to the scheduler's.
    When it cannot start (a missing token, say) or fails, everything stops and `run` reports
    why."""

    def main() -> None:
        try:
            service.serve(app, log, stop)
        except BaseException as exc:  # noqa: BLE001 — reported by the main thread
            failed.append(exc)
            log.emit("service.failed", service=name, error=type(exc).__name__)
            if not stop.is_set():
                signal.raise_signal(signal.SIGTERM)  # wakes the main thread, which stops all

    worker = threading.Thread(target=main, name=name, daemon=True)
    worker.start()
    return worker


def scheduled_jobs(context: App, plugins: Host, log: EventLog, *,
                   required: bool = True) -> list[Job]:
    """A job per enabled routine with a schedule; refuses a kind no plugin installs."""
    config = context.config
    chosen = {name: settings for name, settings in routines.configured(config).items()
              if settings.enabled and settings.schedule}
    if not chosen and required:
        raise BadInput("no routine is scheduled: give a routine a `schedule:` in cron syntax "
                       "under routines in the config (see docs/scheduling.md)")
    installed = routines.kinds(plugins)
    missing = [name for name, settings in chosen.items() if settings.kind not in installed]
    if missing:
        where = f"{config.source}: " if config.source else ""
        which = ", ".join(f"routines.{n}.kind ({chosen[n].kind!r})" for n in missing)
        hint = ("; the default nightly-sync needs the sync-log routine of tactful itself: "
                "reinstall tactful, or set routines.nightly-sync.enabled: false"
                if routines.DEFAULT_SYNC in missing and routines.DEFAULT_SYNC not in config.routines
                else "; install the plugin that provides it or set enabled: false")
        raise BadInput(f"{where}{which}: no such routine kind is installed (installed: "
                       f"{', '.join(sorted(installed)) or 'none'}){hint}")
    return [_job(name, settings.schedule or "", settings.timezone or config.persona.timezone,
                 context, plugins, log) for name, settings in chosen.items()]


def _job(name: str, schedule: str, zone: str, context: App, plugins: Host,
         log: EventLog) -> Job:
    def run_routine(stop: threading.Event) -> routines.Result:
        return routines.run_one(name, context, plugins, dry_run=False, log=log, stop=stop)

    return Job(name=name, schedule=schedule, zone=zone, run=run_routine)


class _Signals:
    def __init__(self, wakeup: socket.socket) -> None:
        self.stop = threading.Event()
        self.received: list[str] = []
        self._wakeup = wakeup

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.stop.is_set():
            raise KeyboardInterrupt  # a second signal: do not wait for the routines
        self.received.append(signal.Signals(signum).name)  # no lock taken: see the docstring

    def wait(self, seconds: float, stop: threading.Event) -> bool:
        readable, _, _ = select.select([self._wakeup], [], [], seconds)
        if readable:
            with suppress(BlockingIOError):  # select may wake with nothing to read
                self._wakeup.recv(512)
        if self.received:
            stop.set()
        return stop.is_set()


@contextmanager
def _signals() -> Iterator[_Signals]:
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    signals = _Signals(reader)
    previous_fd = signal.set_wakeup_fd(writer.fileno())
    previous = {sig: signal.signal(sig, signals.handle) for sig in SIGNALS}
    try:
        yield signals
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(previous_fd)
        reader.close()
        writer.close()
