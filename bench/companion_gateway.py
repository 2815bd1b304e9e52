"""Benchmark the companion on its real path: Telegram updates arrive by aiogram long polling from
the Telegram emulator running in ANOTHER process, and go through `on_message` (the limits, the
join pause at 0, the per-chat mutex), the turn (the send gate and its ledger, the private store,
the session files), and aiogram's sendMessage back to the emulator. Pacing is off (typing pace 0:
no pauses; the typing indicator is still sent), and the responder is an instant in-process one.

Side by side in one run, on fresh homes, every state change durable in both (synchronous=FULL,
the rollback journal, secure_delete, the history fsynced):
  * "today's path" (group commit off): each write block of the store and the ledger is its own
    durable commit, on the event loop, and each turn fsyncs its history file;
  * "group commit": the writes of every turn in flight share one commit round per database (in
    a thread of its own), a turn awaiting it before its send, and the history files of a round
    are fsynced together (docs/companion.md, "Throughput");
  * "floor": the same emulator and aiogram polling with no tactful at all, the handler sending
    the typing indicator and the answer: what this machine allows the real path at best.
Both tactful variants run with `parallel_turns` raised to PARALLEL (an instant responder needs
no brake; the production default is 4).

Figures: messages per second from the moment the updates are queued until the last answer is
in the emulator, durable SQLite commits per turn (the store's and the ledger's own counters),
fsync rounds per second (SQLite commits plus history writes or history rounds), and the
process's resident memory sampled every 50 ms over the run (start, peak, end), with the per-chat
state the gateway still holds once every chat went idle. `--profile` adds where the event
loop's time goes in a group-commit run (cProfile, by area).

Run: .venv/bin/python bench/companion_gateway.py [--messages 1000] [--repeat 2] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import multiprocessing
import os
import pstats
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from aiogram import Dispatcher
from aiogram.exceptions import TelegramNetworkError
from aiogram.types import Message

from tactful.adapters.telegram.companion import Companion, TelegramChannel, make_bot
from tactful.core.companion.gateway import Gateway
from tactful.core.config.values import CompanionConfig
from tactful.core.responders.base import Prompt
from tactful.core.schedule.events import EventLog
from tactful.core.send.gate import Gate

PARALLEL = 512


class Instant:
    def draft(self, prompt: Prompt) -> str:
        return "Sounds good!"


# ---- the emulator, in a process of its own --------------------------------------------------

def _emulator_process(control: Connection) -> None:
    from tactful.adapters.telegram.emulator import TelegramEmulator

    with TelegramEmulator() as emulator:
        control.send((emulator.token, emulator.base_url))
        while True:
            command, argument = control.recv()
            if command == "users":
                prefix, count = argument
                for n in range(count):
                    emulator.add_user(f"{prefix}_{n:05d}")
                control.send(True)
            elif command == "posts":
                prefix, count = argument
                for n in range(count):
                    emulator.add_post(f"{prefix}_{n:05d}", f"message {n}")
                control.send(True)
            elif command == "polling":
                control.send(len(emulator.calls("getUpdates")))
            elif command == "sent":
                control.send(len(emulator.sent()))
            elif command == "cpu":
                times = os.times()
                control.send(times.user + times.system)
            else:
                control.send(True)
                return


class Remote:
    """The emulator in another process, driven over a pipe."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.control, child = context.Pipe()
        self.process = context.Process(target=_emulator_process, args=(child,), daemon=True)
        self.process.start()
        self.token, self.base_url = self.control.recv()

    def ask(self, command: str, argument: Any = None) -> Any:
        self.control.send((command, argument))
        return self.control.recv()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.ask("stop")
        self.process.join(timeout=10)


# ---- memory over the run ----------------------------------------------------------------------

class Resident:
    """Samples this process's resident memory every 50 ms while it runs."""

    def __init__(self) -> None:
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def now() -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(self.now())
            self._stop.wait(0.05)

    def __enter__(self) -> Resident:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(self.now())


# ---- one variant --------------------------------------------------------------------------

@dataclass
class Figures:
    rate: float
    commits_per_turn: float
    fsync_rounds: float  # per second
    rss_start: int
    rss_peak: int
    rss_end: int
    idle_state: int
    cpu_ms: float = 0.0  # CPU of the bot's process per message (every thread)
    emulator_ms: float = 0.0  # CPU of the emulator's process per message


async def _measure(remote: Remote, prefix: str, messages: int,
                   polling: Callable[[threading.Event], Awaitable[None]],
                   durable: Callable[[], int],
                   profile: cProfile.Profile | None = None
                   ) -> tuple[float, int, Resident, tuple[float, float]]:
    """Start polling, queue the messages, wait for every answer; seconds, fsync rounds, and
    the CPU milliseconds per message of this process and of the emulator's."""
    stop = threading.Event()
    running = asyncio.create_task(polling(stop))
    try:
        while remote.ask("polling") == 0:
            await asyncio.sleep(0.05)
        before, already = durable(), remote.ask("sent")
        with Resident() as memory:
            if profile is not None:
                profile.enable()  # the measured window only: not aiogram's start-up
            cpu, emulator_cpu = time.process_time(), remote.ask("cpu")
            started = time.perf_counter()
            remote.ask("posts", (prefix, messages))
            while remote.ask("sent") < already + messages:
                if time.perf_counter() - started > 600:
                    raise RuntimeError("not every message was answered within 10 minutes")
                await asyncio.sleep(0.02)
            elapsed = time.perf_counter() - started
            cpu = time.process_time() - cpu
            emulator_cpu = remote.ask("cpu") - emulator_cpu
            if profile is not None:
                profile.disable()
        rounds = durable() - before
    finally:
        stop.set()
        await asyncio.wait_for(running, timeout=120)
    return elapsed, rounds, memory, (1000 * cpu / messages, 1000 * emulator_cpu / messages)


async def _variant(remote: Remote, home: Path, messages: int, group_commit: bool,
                   profile: cProfile.Profile | None = None) -> Figures:
    prefix = home.name.replace("-", "_")  # users of their own: nothing answered already
    remote.ask("users", (prefix, messages))
    bot = make_bot(remote.token, remote.base_url)
    log = EventLog(stream=open(os.devnull, "w"))  # noqa: SIM115 — closed with the run
    config = CompanionConfig(join_seconds=0, window_messages=100_000, daily_cap=100_000,
                             parallel_turns=PARALLEL, turn_timeout=60, typing_pace=0)
    gateway = Gateway(home=home, bot="bench", config=config, persona_name="bench",
                      default_tz="UTC", responder=Instant(),
                      channel=TelegramChannel(bot, log), gate=Gate.for_home(home), log=log,
                      clock=lambda: datetime.now(UTC), rng=random.Random(1),
                      group_commit=group_commit)
    companion = Companion(gateway, bot, log, gateway.clock, pass_every=24 * 3600, tick=3600)
    ledger = gateway.gate.ledger

    def commits() -> int:
        return gateway.store.commits + ledger.commits

    def history() -> int:
        # Today's path fsyncs one history file per turn; group commit counts its rounds.
        writer = gateway._history
        return writer.rounds if writer is not None else int(remote.ask("sent"))

    try:
        before = commits()
        elapsed, rounds, memory, (cpu, emulator_cpu) = await _measure(
            remote, prefix, messages, companion.run, lambda: commits() + history(), profile)
        per_turn = (commits() - before) / messages
    finally:
        idle = len(gateway._locks) + len(gateway._buffers)
        gateway.close()
        log.stream.close()  # type: ignore[union-attr]
    return Figures(messages / elapsed, per_turn, rounds / elapsed, memory.samples[0],
                   max(memory.samples), memory.samples[-1], idle, cpu, emulator_cpu)


async def _floor(remote: Remote, home: Path, messages: int) -> Figures:
    """aiogram polling the emulator and answering each message, no tactful in between."""
    prefix = home.name.replace("-", "_")
    remote.ask("users", (prefix, messages))
    bot = make_bot(remote.token, remote.base_url)
    dispatcher = Dispatcher()

    @dispatcher.message()
    async def answer(message: Message) -> None:
        with contextlib.suppress(TelegramNetworkError):  # as the channel: a failed indicator
            await bot.send_chat_action(message.chat.id, "typing")
        for pause in (1, 2, 4, 0):  # as the channel: a network error is tried again
            try:
                await bot.send_message(message.chat.id, "Sounds good!")
                return
            except TelegramNetworkError:
                await asyncio.sleep(pause)

    async def polling(stop: threading.Event) -> None:
        task = asyncio.create_task(dispatcher.start_polling(bot, handle_signals=False,
                                                            polling_timeout=10))
        while not stop.is_set():
            await asyncio.sleep(0.1)
        with contextlib.suppress(Exception):
            await dispatcher.stop_polling()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(task, timeout=15)
        await bot.session.close()

    elapsed, _, memory, (cpu, emulator_cpu) = await _measure(remote, prefix, messages,
                                                              polling, lambda: 0)
    return Figures(messages / elapsed, 0.0, 0.0, memory.samples[0], max(memory.samples),
                   memory.samples[-1], 0, cpu, emulator_cpu)


AREAS = (("aiogram, aiohttp, pydantic (updates, HTTP)", ("aiogram", "aiohttp", "pydantic",
                                                         "yarl", "multidict")),
         ("do-not-engage checks (memory: check, identity)", ("/core/memory/",)),
         ("the send gate and its ledger (Python side)", ("/core/send/",)),
         ("the companion (gateway, store, session)", ("/core/companion/",)),
         ("SQLite statements", ("sqlite3",)),
         ("files and paths (os, pathlib)", ("posix.", "pathlib", "genericpath", "posixpath",
                                            "tempfile", "_io.")),
         ("asyncio, selectors, threads", ("asyncio", "selectors", "threading",
                                          "concurrent", "_queue")))


def _areas(profile: cProfile.Profile) -> list[tuple[str, float]]:
    """The loop thread's own time (tottime) by area of code."""
    stats = pstats.Stats(profile)
    totals: dict[str, float] = {}
    for (path, _, name), row in stats.stats.items():  # type: ignore[attr-defined]
        tottime = row[2]
        where = f"{path}:{name}"
        area = next((label for label, marks in AREAS if any(m in where for m in marks)),
                    "other (json, files, the standard library)")
        totals[area] = totals.get(area, 0.0) + tottime
    return sorted(totals.items(), key=lambda item: -item[1])


ENTRY_POINTS = (("the do-not-engage checks (memory.check, every call)", "core/memory/check.py",
                 "check"),
                ("the send gate's admit (guards, claim)", "core/send/gate.py", "admit"),
                ("Bot API calls (aiogram make_request: HTTP, parsing)", "aiogram/client/session",
                 "make_request"),
                ("answers parsed (pydantic model_validate: updates, results)", "pydantic",
                 "model_validate"),
                ("the gateway's turn (all of it)", "core/companion/gateway.py", "_turn"),
                ("the store's reads and writes", "core/companion/store.py", "_read"),
                ("session files on the loop (prompt written, notes and history read)",
                 "core/companion/session.py", "write_prompt notes recent"))


def _entry_points(profile: cProfile.Profile) -> list[tuple[str, float]]:
    """Cumulative time of a few named entry points (they overlap: a turn holds the rest)."""
    stats = pstats.Stats(profile)
    found = []
    for label, where, name in ENTRY_POINTS:
        total = sum(row[3] for (path, _, func), row in stats.stats.items()  # type: ignore[attr-defined]
                    if where in path and func in name.split())
        found.append((label, total))
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    variants: dict[str, Callable[[Remote, Path, int], Awaitable[Figures]]] = {
        "today's path": lambda r, h, n: _variant(r, h, n, False),
        "group commit": lambda r, h, n: _variant(r, h, n, True),
        "floor (no tactful)": _floor,
    }
    results: dict[str, list[Figures]] = {name: [] for name in variants}
    remote = Remote()
    profile: cProfile.Profile | None = None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for round_ in range(args.repeat):
                for n, (name, run) in enumerate(variants.items()):  # paired: sides alternate
                    home = Path(tmp) / f"r{round_}-v{n}"
                    (home / "people").mkdir(parents=True)
                    results[name].append(asyncio.run(run(remote, home, args.messages)))
            if args.profile:
                home = Path(tmp) / "profiled"
                (home / "people").mkdir(parents=True)
                profile = cProfile.Profile()
                asyncio.run(_variant(remote, home, args.messages, True, profile))
    finally:
        remote.stop()
    load = os.getloadavg()
    print(f"the companion's real path, {args.messages} messages from {args.messages} users, "
          f"emulator in another process, pacing off, instant responder, parallel_turns "
          f"{PARALLEL}; median of {args.repeat}; load average {load[0]:.1f} / {load[1]:.1f} "
          f"on {os.cpu_count()} cores\n")
    print(f"{'variant':<20}{'msgs/s':>9}{'CPU ms/msg':>12}{'emulator':>10}"
          f"{'commits/turn':>14}{'fsync rounds/s':>16}"
          f"{'RSS start':>11}{'peak':>9}{'end':>9}{'idle state':>12}")
    medians, cpus = {}, {}
    for name, runs in results.items():
        rate = statistics.median(r.rate for r in runs)
        medians[name] = rate
        cpus[name] = statistics.median(r.cpu_ms for r in runs)
        print(f"{name:<20}{rate:>9.0f}{cpus[name]:>12.2f}"
              f"{statistics.median(r.emulator_ms for r in runs):>10.2f}"
              f"{statistics.median(r.commits_per_turn for r in runs):>14.2f}"
              f"{statistics.median(r.fsync_rounds for r in runs):>16.0f}"
              f"{_mb(min(r.rss_start for r in runs)):>11}{_mb(max(r.rss_peak for r in runs)):>9}"
              f"{_mb(max(r.rss_end for r in runs)):>9}{max(r.idle_state for r in runs):>12}")
    today, grouped, floor = medians.values()
    print(f"\nratio group commit / today's path: {grouped / today:.1f}×; group commit / floor: "
          f"{grouped / floor:.2f}; goal: at least 1,000 messages/s")
    # What tactful itself adds to each message, in CPU of the bot's process: the rest is
    # aiogram's and the emulator's, which no change to tactful can take away.
    own = cpus["group commit"] - cpus["floor (no tactful)"]
    print(f"tactful's own CPU per message (group commit − floor): {own:.2f} ms, at most "
          f"{1000 / own if own > 0 else float('inf'):.0f} messages/s on one core for tactful "
          f"alone; the floor's own: {cpus['floor (no tactful)']:.2f} ms")
    if profile is not None:
        total = sum(t for _, t in _areas(profile))
        print("\nwhere the event loop's time goes in one more group-commit run (cProfile, "
              "own time, the measured window only; profiling slows it):")
        for area, seconds in _areas(profile):
            print(f"  {area:<46}{seconds:>7.2f} s {100 * seconds / total:>5.1f}%")
        print("\ncumulative time of some entry points (overlapping):")
        for label, seconds in _entry_points(profile):
            print(f"  {label:<68}{seconds:>7.2f} s")
        print()
        pstats.Stats(profile).sort_stats("tottime").print_stats(12)


def _mb(size: int) -> str:
    return f"{size / 2**20:.0f} MB"


if __name__ == "__main__":
    main()
