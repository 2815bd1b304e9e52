"""Benchmark the companion on its real path: Telegram updates arrive by aiogram long polling from
the Telegram emulator running in ANOTHER process, and go through `on_message` (the limits, the
join pause at 0, the per-chat mutex), the turn (the send gate and its ledger, the private store,
the session files), and aiogram's sendMessage back to the emulator. Pacing is off (typing pace 0:
no pauses; the typing indicator is still sent), and the responder is an instant in-process one.

Side by side in one run, on fresh homes:
  * "per write": the store commits every write on its own (the commit pattern before writes
    were grouped per turn);
  * "grouped": the store's writes at a message's arrival go in one commit, and those after its
    answer in one more (`CompanionStore.together`).
Every state change is durable in both (synchronous=FULL, the rollback journal, secure_delete).

Figures: messages per second from the moment the updates are queued until the last answer is
in the emulator, durable commits per turn (counted on the store's and the ledger's
connections), and the process's resident memory sampled every 50 ms over the run (start, peak,
end), with the per-chat state the gateway still holds once every chat went idle.

Run: .venv/bin/python bench/companion_gateway.py [--messages 300] [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from tactful.adapters.telegram.companion import Companion, TelegramChannel, make_bot
from tactful.core.companion.gateway import Gateway
from tactful.core.companion.store import CompanionStore
from tactful.core.config.values import CompanionConfig
from tactful.core.responders.base import Prompt
from tactful.core.schedule.events import EventLog
from tactful.core.send.gate import Gate


class Instant:
    def draft(self, prompt: Prompt) -> str:
        return "Sounds good!"


class PerWriteStore(CompanionStore):
    """The store as it was: `together` groups nothing, so every write is its own commit."""

    @contextlib.contextmanager
    def together(self) -> Iterator[None]:
        yield


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
    rss_start: int
    rss_peak: int
    rss_end: int
    idle_state: int


def _count_commits(connections: list[Any], counter: list[int]) -> None:
    def trace(statement: str) -> None:
        if statement.strip().upper().startswith("COMMIT"):
            counter[0] += 1

    for connection in connections:
        connection.set_trace_callback(trace)


async def _variant(remote: Remote, home: Path, messages: int, store_kind: type) -> Figures:
    prefix = home.name.replace("-", "_")  # users of their own: nothing answered already
    remote.ask("users", (prefix, messages))
    bot = make_bot(remote.token, remote.base_url)
    log = EventLog(stream=open(os.devnull, "w"))  # noqa: SIM115 — closed with the run
    config = CompanionConfig(join_seconds=0, window_messages=100_000, daily_cap=100_000,
                             parallel_turns=8, turn_timeout=60, typing_pace=0)
    gateway = Gateway(home=home, bot="bench", config=config, persona_name="bench",
                      default_tz="UTC", responder=Instant(),
                      channel=TelegramChannel(bot, log), gate=Gate.for_home(home), log=log,
                      clock=lambda: datetime.now(UTC), rng=random.Random(1))
    gateway.store.close()
    gateway.store = store_kind(home, "bench")
    commits = [0]
    _count_commits([gateway.store.db, gateway.gate.ledger.db], commits)
    companion = Companion(gateway, bot, log, gateway.clock, pass_every=24 * 3600, tick=3600)
    stop = threading.Event()
    running = asyncio.create_task(companion.run(stop))
    try:
        while remote.ask("polling") == 0:
            await asyncio.sleep(0.05)
        before, already = commits[0], remote.ask("sent")
        with Resident() as memory:
            started = time.perf_counter()
            remote.ask("posts", (prefix, messages))
            while remote.ask("sent") < already + messages:
                await asyncio.sleep(0.02)
            elapsed = time.perf_counter() - started
        turns_commits = (commits[0] - before) / messages
    finally:
        stop.set()
        await asyncio.wait_for(running, timeout=60)
        idle = len(gateway._locks) + len(gateway._buffers)
        gateway.close()
        log.stream.close()  # type: ignore[union-attr]
    return Figures(messages / elapsed, turns_commits, memory.samples[0], max(memory.samples),
                   memory.samples[-1], idle)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    variants = {"per write (before)": PerWriteStore, "grouped (now)": CompanionStore}
    results: dict[str, list[Figures]] = {name: [] for name in variants}
    remote = Remote()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for round_ in range(args.repeat):
                for name, kind in variants.items():  # paired: the two sides alternate
                    home = Path(tmp) / f"r{round_}-{kind.__name__.lower()}"
                    (home / "people").mkdir(parents=True)
                    results[name].append(asyncio.run(_variant(remote, home, args.messages,
                                                              kind)))
    finally:
        remote.stop()
    print(f"the companion's real path, {args.messages} messages from {args.messages} users, "
          f"emulator in another process, pacing off, instant responder; median of "
          f"{args.repeat}\n")
    print(f"{'store commits':<22}{'msgs/s':>9}{'commits/turn':>14}{'RSS start':>11}"
          f"{'peak':>9}{'end':>9}{'idle state':>12}")
    medians = {}
    for name, runs in results.items():
        rate = statistics.median(r.rate for r in runs)
        medians[name] = rate
        print(f"{name:<22}{rate:>9.0f}{statistics.median(r.commits_per_turn for r in runs):>14.1f}"
              f"{_mb(min(r.rss_start for r in runs)):>11}{_mb(max(r.rss_peak for r in runs)):>9}"
              f"{_mb(max(r.rss_end for r in runs)):>9}{max(r.idle_state for r in runs):>12}")
    before, now = medians.values()
    print(f"\nratio grouped / per write: {now / before:.2f}×; goal: at least 1,000 messages/s")


def _mb(size: int) -> str:
    return f"{size / 2**20:.0f} MB"


if __name__ == "__main__":
    main()
