"""Benchmark the companion gateway's own overhead (issue 7).

Side by side in one run, against the Telegram emulator on loopback with the real aiogram, pacing
off (the typing pauses are skipped) and the join pause at 0:
  * an in-process instant responder: messages per second per process, p50/p99 turn latency
    (goal: at least 500 messages per second);
  * the `command` responder (a tiny Python program per draft), to show what a process per
    message costs;
  * memory held by the gateway across 1,000 chats that have gone idle (goal: flat — no per-chat
    state between turns), measured with tracemalloc around the gateway's own structures.

Run: .venv/bin/python bench/companion_gateway.py [--messages 400] [--command-messages 40]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

from tactful.adapters.telegram.companion import TelegramChannel, make_bot
from tactful.adapters.telegram.emulator import TelegramEmulator
from tactful.core.companion.gateway import Gateway, Incoming
from tactful.core.config.values import CompanionConfig, ResponderConfig
from tactful.core.responders.base import Prompt, Responder, ResponderSettings
from tactful.core.responders.command import CommandResponder
from tactful.core.schedule.events import EventLog
from tactful.core.send.gate import Gate


class Instant:
    def draft(self, prompt: Prompt) -> str:
        return "Sounds good!"


async def _no_pause(seconds: float) -> None:
    await asyncio.sleep(0)


async def run(emulator: TelegramEmulator, home: Path, responder: Responder, messages: int,
              users: int) -> tuple[float, list[float], Gateway]:
    bot = make_bot(emulator.token, emulator.base_url)
    log = EventLog(stream=io.StringIO())
    config = CompanionConfig(join_seconds=0, window_messages=10_000, daily_cap=100_000,
                             parallel_turns=8, turn_timeout=60)
    gateway = Gateway(home=home, bot="bench", config=config, persona_name="bench",
                      default_tz="UTC", responder=responder,
                      channel=TelegramChannel(bot, log, sleep=_no_pause),
                      gate=Gate.for_home(home), log=log,
                      clock=lambda: datetime.now(UTC), rng=random.Random(1), sleep=_no_pause)
    chats = [int(emulator.add_user(f"user_{n:05d}")) for n in range(users)]
    arrivals = []
    for n in range(messages):
        ref = emulator.add_post(f"user_{n % users:05d}", f"message {n}")
        chat, message = (int(x) for x in ref.split("/"))
        arrivals.append(Incoming(chat, chat, message, datetime.now(UTC), f"message {n}"))
    latencies: list[float] = []

    async def one(message: Incoming) -> None:
        started = time.perf_counter()
        await gateway.turn(message.chat_id, [(message.message_id, message.text or "")],
                           mode="reply")
        latencies.append(time.perf_counter() - started)

    for chat in chats:  # first contact, outside the timing
        gateway.store.touch_user(chat, language_code="en", at=datetime.now(UTC), tz_default="UTC")
    started = time.perf_counter()
    await asyncio.gather(*(one(m) for m in arrivals))
    elapsed = time.perf_counter() - started
    await bot.session.close()
    return messages / elapsed, latencies, gateway


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=400)
    parser.add_argument("--command-messages", type=int, default=40)
    args = parser.parse_args()
    print("gateway overhead against the Telegram emulator, pacing off, join pause 0\n")
    print(f"{'responder':<22}{'msgs/s':>10}{'p50 ms':>10}{'p99 ms':>10}")
    with tempfile.TemporaryDirectory() as tmp, TelegramEmulator() as emulator:
        home = Path(tmp) / "home"
        (home / "people").mkdir(parents=True)
        rate, latencies, gateway = asyncio.run(run(emulator, home, Instant(), args.messages,
                                                   users=args.messages))
        _row("instant (in-process)", rate, latencies)
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        held = len(gateway._locks) + len(gateway._buffers)
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
        gateway.close()
        script = Path(tmp) / "reply.py"
        script.write_text("import sys; sys.stdin.read(); print('Sounds good!')\n")
        command = CommandResponder(ResponderSettings(
            "bench", ResponderConfig(kind="command", command=(sys.executable, str(script)),
                                     timeout=30), lambda: None))
        home2 = Path(tmp) / "home2"
        (home2 / "people").mkdir(parents=True)
        rate2, latencies2, gateway2 = asyncio.run(run(emulator, home2, command,
                                                      args.command_messages,
                                                      users=args.command_messages))
        _row("command (a process)", rate2, latencies2)
        gateway2.close()
    print(f"\nper-chat state the gateway keeps after {args.messages} chats went idle: "
          f"{held} entries ({grown} bytes grown while counting them); goal: 0 — flat")
    print("goal: at least 500 messages per second per process with the instant responder")


def _row(name: str, rate: float, latencies: list[float]) -> None:
    ordered = sorted(latencies)
    p50 = statistics.median(ordered) * 1000
    p99 = ordered[max(0, int(len(ordered) * 0.99) - 1)] * 1000
    print(f"{name:<22}{rate:>10.0f}{p50:>10.1f}{p99:>10.1f}")


if __name__ == "__main__":
    main()
