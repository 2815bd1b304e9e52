"""`tactful run`: every scheduled routine on its cron schedule, until SIGTERM or Ctrl-C.

Decisions (docs/scheduling.md):
- One Context serves every run. The people store keeps no cache (each read goes to the file,
  each write locks the one person with flock, which also keeps two threads apart), so a run
  never sees stale memory. The config is read once, at start: a changed YAML needs a restart.
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

from tactful.core.cli.context import Context
from tactful.core.cli.sending import defaults_notice, warn_plugins
from tactful.core.errors import BadInput
from tactful.core.plugins import Host
from tactful.core.schedule import routine as routines
from tactful.core.schedule.events import EventLog
from tactful.core.schedule.scheduler import Job, Scheduler

SIGNALS = (signal.SIGTERM, signal.SIGINT)


def run(context: Context, args: argparse.Namespace) -> int:
    plugins = context.plugins
    warn_plugins(plugins)
    defaults_notice(context)
    log = EventLog(clock=context.now)
    companion = context.config.platform("telegram").mode == "companion"
    jobs = scheduled_jobs(context, plugins, log, required=not companion)
    # Made here, in one thread: a cached property computed by two routine threads at once
    # could be computed twice.
    _ = context.settings, context.home, context.people
    with _signals() as signals:
        failed: list[BaseException] = []
        worker = _companion_thread(context, plugins, log, signals.stop, failed) \
            if companion else None
        scheduler = Scheduler(jobs, clock=context.now, wait=signals.wait, log=log)
        scheduler.run_forever(signals.stop)
        if worker is not None:
            worker.join()
    log.emit("scheduler.stop", signal=signals.received[0] if signals.received else None)
    if failed:
        raise failed[0]
    return 0


def _companion_thread(context: Context, plugins: Host, log: EventLog, stop: threading.Event,
                      failed: list[BaseException]) -> threading.Thread:
    """The Telegram companion, on its own event loop next to the scheduler's threads. When it
    cannot start (a missing token, say) everything stops and `run` reports why."""
    import asyncio

    def main() -> None:
        from tactful.adapters.telegram.companion import serve

        try:
            asyncio.run(serve(context, plugins, log, stop))
        except BaseException as exc:  # noqa: BLE001 — reported by the main thread
            failed.append(exc)
            log.emit("companion.failed", error=type(exc).__name__)
            if not stop.is_set():
                signal.raise_signal(signal.SIGTERM)  # wakes the main thread, which stops all

    worker = threading.Thread(target=main, name="companion", daemon=True)
    worker.start()
    return worker


def scheduled_jobs(context: Context, plugins: Host, log: EventLog, *,
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


def _job(name: str, schedule: str, zone: str, context: Context, plugins: Host,
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
