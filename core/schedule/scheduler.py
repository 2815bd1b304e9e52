"""The engine of `tactful run`: each job on its cron schedule, in its own thread, never overlapping.

Why a loop of our own: APScheduler's `CronTrigger` steps through cron fields, but APScheduler's
schedulers read the wall clock themselves and sleep on their own, so no test could drive them
with a fake clock. Here the clock and the waiting are passed in, and the loop that uses them is
short. Time zones and DST are placed by `Cron` (see there why not by APScheduler).

The rules it keeps (docs/scheduling.md tells operators the same):
- Never two runs of one job: a fire that comes while the job still runs is skipped, and logged.
- No catch-up storm: every fire at or before "now" is folded into one run; when the oldest was
  missed by more than `grace` (a suspend, a clock jump) the folding is logged.
- The clock is re-read at least every `max_sleep` seconds: a wait measures monotonic time,
  which stands still while the machine sleeps, so a long wait would wake up late.
- A job that raises is logged by exception class and exit code only (its message may quote
  someone), and the loop goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from time import monotonic

from tactful.core.schedule.cron import Cron
from tactful.core.schedule.events import EventLog
from tactful.core.schedule.routine import Result

Clock = Callable[[], datetime]
Wait = Callable[[float, threading.Event], bool]  # True when stopped

MAX_COUNTED = 1000  # fires counted when coalescing: enough to tell "a few" from "a week's worth"


# ---- the scheduler ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Job:
    """One routine to run on a schedule; `run` gets the stop event and returns early on it."""

    name: str
    schedule: str
    zone: str
    run: Callable[[threading.Event], Result]


@dataclass
class _State:
    job: Job
    cron: Cron
    next: datetime | None = None
    thread: threading.Thread | None = None  # set while a run is in progress


def _utc(moment: datetime) -> datetime:
    # Every comparison and difference in UTC: two times sharing a tzinfo compare and subtract
    # by wall clock, which is wrong across the hour the clocks go back.
    return moment.astimezone(UTC)


def _wait_on_event(seconds: float, stop: threading.Event) -> bool:
    return stop.wait(seconds)


def _exit_code(exc: Exception) -> int:
    code = getattr(exc, "exit_code", 1)
    return code if isinstance(code, int) else 1


class Scheduler:
    def __init__(self, jobs: Sequence[Job], *, clock: Clock, wait: Wait = _wait_on_event,
                 log: EventLog, grace: float = 60.0, max_sleep: float = 60.0,
                 drain_timeout: float | None = None) -> None:
        names = [job.name for job in jobs]
        if len(set(names)) != len(names):
            raise ValueError("two jobs share a name")
        self._states = [_State(job, Cron(job.schedule, job.zone)) for job in jobs]
        self._clock, self._wait, self._log = clock, wait, log
        self._grace, self._max_sleep, self._drain_timeout = grace, max_sleep, drain_timeout
        self._lock = threading.Lock()

    @property
    def running(self) -> frozenset[str]:
        """The jobs with a run in progress."""
        with self._lock:
            return frozenset(s.job.name for s in self._states if s.thread is not None)

    def run_forever(self, stop: threading.Event) -> None:
        """Run jobs as they fall due until `stop` is set; then wait for the running ones."""
        now = self._now()
        for state in self._states:
            state.next = state.cron.next_fire(now)
        self._log.emit("scheduler.start", routines={
            s.job.name: s.next.isoformat() if s.next else None for s in self._states})
        while not stop.is_set():
            now = self._now()
            for state in self._states:
                if stop.is_set():
                    break
                if state.next is not None and _utc(state.next) <= now:
                    self._fire(state, now, stop)
            if self._wait(self._delay(now), stop):
                break
        self._drain()

    def _now(self) -> datetime:
        return _utc(self._clock())

    def _delay(self, now: datetime) -> float:
        upcoming = [_utc(s.next) for s in self._states if s.next is not None]
        if not upcoming:
            return self._max_sleep
        seconds = (min(upcoming) - now).total_seconds()
        return max(0.0, min(seconds, self._max_sleep))

    def _fire(self, state: _State, now: datetime, stop: threading.Event) -> None:
        assert state.next is not None
        name, first = state.job.name, state.next
        fires, last = self._fires_between(state.cron, first, now)
        state.next = state.cron.next_fire(now, inclusive=False)
        late = (now - _utc(first)).total_seconds()
        if late > self._grace:
            self._log.emit("routine.coalesced", routine=name, fires=fires,
                           since=first.isoformat(), late_seconds=int(late))
        # Daemon threads: a second signal exits without waiting for them (see cli/run.py).
        thread = threading.Thread(target=self._run, args=(state, stop), name=f"routine:{name}",
                                  daemon=True)
        with self._lock:
            busy = state.thread is not None
            if not busy:
                state.thread = thread  # marked before it starts: the next fire must see it
        if busy:
            self._log.emit("routine.skipped", routine=name, reason="still running",
                           scheduled=last.isoformat())
            return
        self._log.emit("routine.fired", routine=name, scheduled=last.isoformat())
        try:
            thread.start()
        except RuntimeError as exc:  # no thread to be had: this fire is lost, not the job
            with self._lock:
                state.thread = None
            self._log.emit("routine.failed", routine=name, error=type(exc).__name__,
                           exit_code=1)

    @staticmethod
    def _fires_between(cron: Cron, first: datetime, now: datetime) -> tuple[int, datetime]:
        """How many fires from `first` to `now` (at most MAX_COUNTED), and the latest one."""
        count, last = 1, first
        while count < MAX_COUNTED:
            after = cron.next_fire(last, inclusive=False)
            if after is None or _utc(after) > now:
                break
            count, last = count + 1, after
        return count, last

    def _run(self, state: _State, stop: threading.Event) -> None:
        name, started = state.job.name, self._now()
        try:
            result = state.job.run(stop)
        except Exception as exc:  # noqa: BLE001 — one routine's failure never stops the others
            # The class name only: an exception's message may carry someone's words.
            self._log.emit("routine.failed", routine=name, error=type(exc).__name__,
                           exit_code=_exit_code(exc))
        else:
            seconds = int((self._now() - started).total_seconds())
            self._log.emit("routine.finished", routine=name, exit_code=result.exit_code,
                           seconds=seconds)
        finally:
            with self._lock:
                state.thread = None

    def _drain(self) -> None:
        with self._lock:
            threads = {s.job.name: s.thread for s in self._states if s.thread is not None}
        self._log.emit("scheduler.stopping", waiting_for=sorted(threads))
        deadline = None if self._drain_timeout is None else monotonic() + self._drain_timeout
        for thread in threads.values():
            # Joined in slices, so that a signal handler in the main thread still gets to run.
            while thread.is_alive() and (deadline is None or monotonic() < deadline):
                thread.join(0.25)
        left = sorted(name for name, thread in threads.items() if thread.is_alive())
        if left:
            self._log.emit("scheduler.abandoned", routines=left)
