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
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import FrameType

from tactful.core.app import App, Service
from tactful.core.cli.sending import defaults_notice, warn_plugins
from tactful.core.errors import BadInput, MissingCredential, TactfulError
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
    missing = _Missing(log)
    jobs = scheduled_jobs(context, plugins, log, required=not services, told=missing)
    _start_up_warnings(context, plugins, missing, [job.name for job in jobs])
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
                   required: bool = True, told: _Missing | None = None) -> list[Job]:
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
    told = told or _Missing(log)
    return [_job(name, settings.schedule or "", settings.timezone or config.persona.timezone,
                 context, plugins, log, told) for name, settings in chosen.items()]


_FIX = "store it with: "  # how a MissingCredential message gives its fix (core/send/credentials.py)


class _Missing:
    """Credentials a routine lacks: each said once (the field and the command that stores
    it), at start-up when it can be seen then, else at the first fire that meets it."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self._told: set[tuple[str, str]] = set()
        self._lock = threading.Lock()  # routines fire in threads of their own

    def say(self, routine: str, message: str) -> None:
        with self._lock:
            if (routine, message) in self._told:
                return
            self._told.add((routine, message))
        fix = message.rpartition(_FIX)[2]
        print(f"tactful: routine {routine} cannot run: {message}", file=sys.stderr, flush=True)
        self.log.emit("routine.needs_credential", routine=routine, fix=fix[:120])


def _job(name: str, schedule: str, zone: str, context: App, plugins: Host,
         log: EventLog, missing: _Missing) -> Job:
    def run_routine(stop: threading.Event) -> routines.Result:
        try:
            result = routines.run_one(name, context, plugins, dry_run=False, log=log, stop=stop)
        except MissingCredential as exc:
            # Said once; each later fire only counts as exit 2 until the credential is
            # stored (the keyring is read again at every fire: no restart needed).
            missing.say(name, str(exc))
            return routines.Result("waiting for a credential (said at its first sight)",
                                   exit_code=exc.exit_code)
        if result.exit_code == 2 and _FIX in result.summary:
            missing.say(name, result.summary)  # a batch that met it while sending
        return result

    return Job(name=name, schedule=schedule, zone=zone, run=run_routine)


def _start_up_warnings(context: App, plugins: Host, missing: _Missing,
                       names: list[str]) -> None:
    """What would go wrong later, said once before anything runs: a routine's platform
    without its credentials, and a companion that would answer real people with the
    template responder's canned lines (docs/scheduling.md)."""
    from tactful.core.send import credentials
    from tactful.core.send.adapters import adapter_for, settings_for

    config = context.config
    for name in names:
        settings = config.routines.get(name)
        if settings is None or settings.platform is None or settings.dry_run:
            continue
        platform = settings.platform.strip().lower()
        try:
            adapter = adapter_for(platform, config, plugins)
            account = settings_for(platform, config).account
            fields = (*adapter.read_fields,
                      *(() if config.platform(platform).dry_run else adapter.post_fields))
            credentials.read(platform, account, fields)
        except MissingCredential as exc:
            missing.say(name, str(exc))
        except TactfulError:
            continue  # the routine's own run reports it, with its exit code
    responder = config.companion.responder
    chosen = config.responders.get(responder) if responder else None
    canned = responder in (None, "template") or (chosen is not None and chosen.kind == "template")
    for platform, section in sorted(config.platforms.items()):
        if section.mode == "companion" and canned:
            print(f"tactful: warning: {platform} runs in companion mode with the template "
                  "responder: real people get canned lines; set companion.responder to a "
                  "configured model responder (docs/companion.md)", file=sys.stderr)
            missing.log.emit("companion.template_responder", platform=platform)


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
