"""`tactful run`'s scheduler: fires on time in its zone, never overlaps, survives a failing
routine, folds missed fires into one run, stops cleanly, and logs no message text."""

from __future__ import annotations

import io
import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tactful.core.errors import Refused
from tactful.core.schedule.cron import next_fire
from tactful.core.schedule.events import EventLog
from tactful.core.schedule.routine import Result
from tactful.core.schedule.scheduler import Job, Scheduler

SECRET = "please forward my address to everyone"  # stands for someone's words


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


class FakeClock:
    """A clock whose waiting moves time on instead of sleeping. It stops the scheduler once
    time reaches `until`; `settle` (when given) is awaited before time moves, so that a job
    started at one fire has finished before the next one comes."""

    def __init__(self, start: str, until: str, *, jumps: tuple[timedelta, ...] = (),
                 zone: str = "UTC") -> None:
        self.now = at(start).astimezone(ZoneInfo(zone))  # as `context.now`: the persona's zone
        self.until = at(until)
        self.jumps = list(jumps)  # extra time passing on the next waits: a suspend
        self.settle: Callable[[], bool] | None = None

    def __call__(self) -> datetime:
        return self.now

    def wait(self, seconds: float, stop: threading.Event) -> bool:
        if self.settle is not None:
            deadline = time.monotonic() + 5
            while not self.settle():
                assert time.monotonic() < deadline, "a job did not finish"
                time.sleep(0.001)
        moved = self.now.astimezone(UTC) + timedelta(seconds=seconds)  # real time, not wall
        if self.jumps:
            moved += self.jumps.pop(0)
        self.now = moved.astimezone(self.now.tzinfo)
        if moved >= self.until:
            stop.set()
        return stop.is_set()


class Harness:
    def __init__(self, jobs: list[Job], clock: Callable[[], datetime], **options: Any) -> None:
        self.stream = io.StringIO()
        self.log = EventLog(stream=self.stream, clock=clock)
        self.scheduler = Scheduler(jobs, clock=clock, log=self.log, **options)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.scheduler.run_forever, args=(self.stop,),
                                       daemon=True)

    def run(self, timeout: float = 5) -> None:
        self.thread.start()
        self.join(timeout)

    def join(self, timeout: float) -> None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "run_forever did not return"

    def events(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.log.events if e["event"] == name]


Routine = Callable[[threading.Event], Result]


def counting(results: list[str], result: Result | None = None) -> Routine:
    def run(stop: threading.Event) -> Result:
        results.append("ran")
        return result or Result("done")

    return run


# ---- when a job fires ------------------------------------------------------------------------

def test_a_job_fires_at_its_cron_time_in_its_zone_across_a_dst_change() -> None:
    # 22:30 in New York is 03:30 UTC the next day in winter (EST), 02:30 UTC after the clocks
    # go forward on 2026-03-08 (EDT).
    runs: list[str] = []
    clock = FakeClock("2026-03-07T12:00:00+00:00", "2026-03-09T12:00:00+00:00")
    job = Job("nightly", "30 22 * * *", "America/New_York", counting(runs))
    harness = Harness([job], clock, wait=clock.wait)
    clock.settle = lambda: not harness.scheduler.running
    harness.run()
    assert harness.events("scheduler.start")[0]["routines"] == {
        "nightly": "2026-03-07T22:30:00-05:00"}
    fired = harness.events("routine.fired")
    assert [e["time"] for e in fired] == ["2026-03-08T03:30:00+00:00",
                                          "2026-03-09T02:30:00+00:00"]
    assert [e["scheduled"] for e in fired] == ["2026-03-07T22:30:00-05:00",
                                               "2026-03-08T22:30:00-04:00"]
    assert runs == ["ran", "ran"]
    assert not harness.events("routine.coalesced")


def test_when_the_clocks_go_back_each_wall_time_fires_once_and_time_never_runs_backwards(
        ) -> None:
    # New York, 2026-11-01: 01:00-02:00 happens twice (EDT, then EST). The clock is in the
    # persona's zone, as in `tactful run`, so comparing by wall clock would go wrong here.
    quarter: list[str] = []
    nightly: list[str] = []
    clock = FakeClock("2026-11-01T04:50:00+00:00", "2026-11-01T08:20:00+00:00",
                      zone="America/New_York")
    jobs = [Job("quarter", "*/15 * * * *", "America/New_York", counting(quarter)),
            Job("one-thirty", "30 1 * * *", "America/New_York", counting(nightly))]
    harness = Harness(jobs, clock, wait=clock.wait)
    clock.settle = lambda: not harness.scheduler.running
    harness.run()
    fired = [at(e["scheduled"]).astimezone(UTC).strftime("%H:%M")
             for e in harness.events("routine.fired") if e["routine"] == "quarter"]
    # The repeated hour ran once, the first time: 05:00-05:45 UTC is 01:00-01:45 EDT.
    assert fired == ["05:00", "05:15", "05:30", "05:45", "07:00", "07:15", "07:30", "07:45",
                     "08:00", "08:15"]
    assert len(quarter) == 10
    assert nightly == ["ran"]
    assert not harness.events("routine.coalesced") and not harness.events("routine.skipped")


def test_a_time_the_clocks_skip_fires_an_hour_later() -> None:
    # New York, 2026-03-08: 02:00-03:00 does not exist; 02:30 that day fires at 03:30 EDT.
    before = at("2026-03-07T12:00:00+00:00")
    assert next_fire("30 2 * * *", "America/New_York", before) == \
        at("2026-03-08T03:30:00-04:00")


def test_weekday_numbers_are_read_as_cron_reads_them() -> None:
    saturday = at("2026-03-07T12:00:00+00:00")
    # Cron's 1-5 is Monday to Friday (APScheduler 3 alone would read Tuesday to Saturday).
    assert next_fire("0 9 * * 1-5", "UTC", saturday) == at("2026-03-09T09:00:00+00:00")
    assert next_fire("0 9 * * 0", "UTC", saturday) == at("2026-03-08T09:00:00+00:00")
    # Both day fields restricted: either one matching fires (the 1st, or any Monday).
    assert next_fire("0 0 1 * 1", "UTC", at("2026-03-24T00:00:00+00:00")) == \
        at("2026-03-30T00:00:00+00:00")
    assert next_fire("0 0 1 * 1", "UTC", at("2026-03-31T00:00:00+00:00")) == \
        at("2026-04-01T00:00:00+00:00")


# ---- never twice at once, never a storm ----------------------------------------------------

def test_a_job_never_overlaps_itself() -> None:
    runs: list[str] = []
    entered = threading.Event()

    def blocking(stop: threading.Event) -> Result:
        runs.append("ran")
        entered.set()
        stop.wait(5)  # still running while the clock passes 12:05 and 12:10
        return Result("done")

    clock = FakeClock("2026-03-08T12:00:00+00:00", "2026-03-08T12:12:00+00:00")
    harness = Harness([Job("slow", "*/5 * * * *", "UTC", blocking)], clock, wait=clock.wait)
    harness.run()
    assert entered.is_set() and runs == ["ran"]
    skipped = harness.events("routine.skipped")
    assert [(e["reason"], e["scheduled"]) for e in skipped] == [
        ("still running", "2026-03-08T12:05:00+00:00"),
        ("still running", "2026-03-08T12:10:00+00:00")]
    assert harness.events("routine.finished")[0]["exit_code"] == 0


def test_fires_missed_during_a_suspend_are_folded_into_one_run() -> None:
    runs: list[str] = []
    # The first wait (one minute) lasts three hours more: the machine slept through six fires.
    clock = FakeClock("2026-03-08T12:00:00+00:00", "2026-03-08T15:03:00+00:00",
                      jumps=(timedelta(hours=3),))
    harness = Harness([Job("every-half-hour", "*/30 * * * *", "UTC", counting(runs))], clock,
                      wait=clock.wait)
    clock.settle = lambda: not harness.scheduler.running
    harness.run()
    assert runs == ["ran", "ran"]  # 12:00, then once on waking, not six times
    [coalesced] = harness.events("routine.coalesced")
    assert coalesced["fires"] == 6  # 12:30 to 15:00
    assert coalesced["since"] == "2026-03-08T12:30:00+00:00"
    assert coalesced["late_seconds"] == 2 * 3600 + 31 * 60
    assert harness.events("routine.fired")[-1]["scheduled"] == "2026-03-08T15:00:00+00:00"


# ---- failures and the log ---------------------------------------------------------------------

def test_a_job_that_raises_is_logged_by_class_and_the_scheduler_goes_on() -> None:
    attempts: list[str] = []
    steady: list[str] = []

    def failing(stop: threading.Event) -> Result:
        attempts.append("tried")
        if len(attempts) % 2:
            raise ValueError(SECRET)
        raise Refused(SECRET)

    clock = FakeClock("2026-03-08T12:00:00+00:00", "2026-03-08T12:03:30+00:00")
    jobs = [Job("broken", "* * * * *", "UTC", failing),
            Job("steady", "*/2 * * * *", "UTC",
                counting(steady, Result(f"replied: {SECRET}", counts={"sent": 1})))]
    harness = Harness(jobs, clock, wait=clock.wait)
    clock.settle = lambda: not harness.scheduler.running
    harness.run()
    assert len(attempts) == 4  # 12:00, 12:01, 12:02, 12:03: the failures stopped nothing
    assert steady == ["ran", "ran"]
    failed = harness.events("routine.failed")
    assert [(e["error"], e["exit_code"]) for e in failed] == [
        ("ValueError", 1), ("Refused", 5), ("ValueError", 1), ("Refused", 5)]
    lines = harness.stream.getvalue().splitlines()
    assert lines and all(isinstance(json.loads(line), dict) for line in lines)
    assert SECRET not in harness.stream.getvalue()
    assert "replied" not in harness.stream.getvalue()  # a routine's summary is not logged


# ---- stopping -------------------------------------------------------------------------------

def test_stop_ends_run_forever_promptly_after_the_running_job_returns() -> None:
    started, finished = threading.Event(), threading.Event()

    def slow(stop: threading.Event) -> Result:
        started.set()
        stop.wait(5)  # a routine checks stop between its steps
        time.sleep(0.05)  # ...and finishes the step it is in
        finished.set()
        return Result("stopped early")

    noon = at("2026-03-08T12:00:00+00:00")  # the clock stands on the fire time: it fires now
    harness = Harness([Job("slow", "0 12 * * *", "UTC", slow)], lambda: noon)
    harness.thread.start()
    assert started.wait(2)
    assert harness.scheduler.running == {"slow"}
    begun = time.monotonic()
    harness.stop.set()
    harness.join(3)
    assert time.monotonic() - begun < 1
    assert finished.is_set()
    assert harness.events("scheduler.stopping")[0]["waiting_for"] == ["slow"]
    assert harness.events("routine.finished")[0]["routine"] == "slow"
    assert harness.scheduler.running == frozenset()


# ---- `tactful run` ---------------------------------------------------------------------------

TICK_PLUGIN = """
    import os
    import pathlib

    from tactful.core.hookspecs import hookimpl
    from tactful.core.schedule.routine import Result


    def tick(run):
        marker = pathlib.Path(os.environ["TACTFUL_TEST_MARKER"])
        marker.write_text("started\\n")
        stopped = not run.pause(10)
        with marker.open("a") as out:
            out.write("stopped early\\n" if stopped else "ran out\\n")
        return Result("ticked", counts={"ticks": 1})


    @hookimpl
    def register_routines(register):
        register("tick", tick)
"""

CONFIG = """
persona: {timezone: UTC}
routines:
  tick: {kind: tick, schedule: "* * * * *"}
  nightly-sync: {kind: sync-log, enabled: false}
"""


@pytest.fixture
def tick_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The `tick` routine kind, installed as a third-party plugin for child processes."""
    site = tmp_path / "site"
    dist = site / "tactful_tick-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tactful-tick\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[tactful]\ntick = tick_plugin\n")
    (site / "tick_plugin.py").write_text(textwrap.dedent(TICK_PLUGIN))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(site), os.environ.get("PYTHONPATH")) if p))
    monkeypatch.setenv("TACTFUL_TEST_MARKER", str(tmp_path / "marker"))
    (tmp_path / "tactful.yaml").write_text(CONFIG)
    return tmp_path / "marker"


class Running:
    """`tactful run` in a real process; its structured log read line by line as it comes."""

    def __init__(self, config: Path, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tactful.core.cli", "--config", str(config), "run"],
            env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put(line)

    def wait_for(self, text: str, timeout: float = 10) -> str:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=max(remaining, 0.01))
            except queue.Empty:
                raise AssertionError(f"no {text!r} within {timeout}s: {self.seen}") from None
            self.seen.append(line)
            if text in line:
                return line

    def terminate(self, timeout: float = 10) -> int:
        """SIGTERM, the exit code, and every line it wrote kept in `seen`."""
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=timeout)
        self.reader.join(timeout=2)
        while not self.lines.empty():
            self.seen.append(self.lines.get_nowait())
        return code

    def events(self) -> list[str]:
        return [json.loads(line)["event"] for line in self.seen if line.startswith("{")]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=5)
        self.reader.join(timeout=2)
        if self.process.stderr is not None:
            self.process.stderr.close()


def test_tactful_run_starts_logs_and_stops_cleanly_on_sigterm(tick_installed: Path) -> None:
    running = Running(tick_installed.parent / "tactful.yaml")
    try:
        start = json.loads(running.wait_for('"scheduler.start"'))
        assert set(start["routines"]) == {"tick"}
        assert datetime.fromisoformat(start["routines"]["tick"]).second == 0
        code = running.terminate()
    finally:
        running.close()
    assert code == 0
    stop = json.loads(running.seen[-1])
    assert (stop["event"], stop["signal"]) == ("scheduler.stop", "SIGTERM")


def test_tactful_run_fires_a_due_routine_and_lets_it_finish_its_step(
        tick_installed: Path) -> None:
    # A frozen clock on a minute boundary: "* * * * *" is due at once, so the first fire is
    # seen without waiting for a real minute to turn.
    running = Running(tick_installed.parent / "tactful.yaml",
                      env={"TACTFUL_NOW": "2026-03-08T12:00:00+00:00"})
    try:
        running.wait_for('"routine.start"')
        deadline = time.monotonic() + 5
        while not tick_installed.exists():
            assert time.monotonic() < deadline, "the routine never wrote its marker"
            time.sleep(0.01)
        code = running.terminate()
    finally:
        running.close()
    assert code == 0
    assert tick_installed.read_text() == "started\nstopped early\n"
    assert running.events() == ["scheduler.start", "routine.fired", "routine.start",
                                "scheduler.stopping", "routine.end", "routine.finished",
                                "scheduler.stop"]


def error_line(err: str) -> str:
    [line] = [x for x in err.splitlines() if not x.startswith("tactful: warning:")]
    return line


def test_run_refuses_when_no_routine_is_scheduled(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "tactful.yaml").write_text("routines:\n  nightly-sync: "
                                           "{kind: sync-log, enabled: false}\n")
    result = cli("run")
    assert result.code == 2
    assert "no routine is scheduled" in error_line(result.err)


def test_run_refuses_a_kind_no_plugin_installs(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "tactful.yaml").write_text(
        'routines:\n  mystery: {kind: nosuch, schedule: "0 * * * *"}\n'
        "  nightly-sync: {kind: sync-log, enabled: false}\n")
    result = cli("run")
    assert result.code == 2
    assert "routines.mystery.kind ('nosuch')" in error_line(result.err)


def test_the_event_log_keeps_only_the_latest_events_in_memory() -> None:
    # `tactful run` logs every companion turn: memory must not grow with the run's length.
    stream = io.StringIO()
    log = EventLog(stream=stream, keep=100)
    for n in range(1_000):
        log.emit("companion.turn", n=n)
    assert len(log.events) == 100
    assert [e["n"] for e in log.events] == list(range(900, 1_000))
    assert len(stream.getvalue().splitlines()) == 1_000  # the stream has every one
