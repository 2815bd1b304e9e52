"""What the gateway tests share: a fake clock, scripted responders (one that answers from a list,
one that waits at a gate the test opens, one that fails on a word), and a gateway on the real
aiogram against the Telegram emulator (`world`)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import random
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tactful.adapters.telegram.companion import TelegramChannel, make_bot
from tactful.adapters.telegram.emulator import TelegramEmulator
from tactful.core.companion.gateway import Gateway, Incoming
from tactful.core.config.values import CompanionConfig
from tactful.core.responders.base import Prompt
from tactful.core.schedule.events import EventLog
from tactful.core.send.gate import Gate

UNIQUE = "zxqvplonkerwug"  # a word only the user ever says
NOTES_REPLY = "=== MEMORY ===\nLikes tea.\n=== STYLE ===\nShort.\n=== END ==="  # a memory pass


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@dataclass
class Scripted:
    """A responder for tests: answers from a list (or raises), and keeps every prompt."""

    replies: list[str | BaseException | Callable[[], str]]
    prompts: list[Prompt] = field(default_factory=list)

    def draft(self, prompt: Prompt) -> str:
        self.prompts.append(prompt)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, BaseException):
            raise reply
        return reply() if callable(reply) else reply


class Gated:
    """A responder that waits at a gate (in its worker thread) until the test opens it; the
    gate opens by itself after 10 s so no thread outlives the test. Prompts for which `gate_if`
    is false are answered at once by `other`."""

    def __init__(self, reply: str = "Here is my answer.",
                 gate_if: Callable[[Prompt], bool] = lambda p: True,
                 other: Callable[[Prompt], str] = lambda p: "ok") -> None:
        self.reply, self.gate_if, self.other = reply, gate_if, other
        self.entered = threading.Event()
        self.opened = threading.Event()
        self.prompts: list[Prompt] = []

    def draft(self, prompt: Prompt) -> str:
        self.prompts.append(prompt)
        if not self.gate_if(prompt):
            return self.other(prompt)
        self.entered.set()
        self.opened.wait(10)
        return self.reply


class Picky:
    """A responder that raises an error other than DraftFailed (a plugin's bug) for prompts
    holding `bad`, and otherwise writes notes (NOTES_REPLY) or a summary."""

    def __init__(self, bad: str) -> None:
        self.bad = bad

    def draft(self, prompt: Prompt) -> str:
        if self.bad in prompt.user:
            raise RuntimeError("plugin bug")
        if prompt.system.startswith("You keep two short notes"):
            return NOTES_REPLY
        return "Rewrote two notes."


async def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Wait (without blocking the loop) until `condition()` holds; fail after `seconds`."""
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never became true")


@dataclass
class World:
    emulator: TelegramEmulator
    gateway: Gateway
    responder: Any
    clock: Clock
    sleeps: list[float]
    log: io.StringIO
    home: Path

    def incoming(self, who: str, text: str | None, **extra: Any) -> Incoming:
        """`who` writes to the bot (in the emulator too, so the bot may answer); `extra` goes
        to the Incoming (e.g. `handle=`, `private=`)."""
        ref = self.emulator.add_post(who, text or "(sticker)")
        chat, message = (int(x) for x in ref.split("/"))
        return Incoming(chat_id=chat, user_id=chat, message_id=message, at=self.clock(),
                        text=text, language_code=extra.pop("language_code", "en"), **extra)

    def texts(self) -> list[str]:
        return [m["text"] for m in self.emulator.sent()]

    def chat_id(self, who: str) -> int:
        """The private chat with `who` (who is added to the emulator if new)."""
        return int(self.emulator.add_user(who))

    def texts_to(self, who: str) -> list[str]:
        return [m["text"] for m in self.emulator.sent() if m["chat_id"] == str(self.chat_id(who))]

    def crash_in_join_pause(self) -> None:
        """The process dies in the join pause: the timers never fire, the buffers are gone."""
        for buffer in self.gateway._buffers.values():
            if buffer.timer is not None:
                buffer.timer.cancel()
        self.gateway._buffers.clear()

    async def say(self, who: str, text: str, **extra: Any) -> Incoming:
        message = self.incoming(who, text, **extra)
        await self.gateway.on_message(message)
        await asyncio.wait_for(self.gateway.drain(), timeout=20)
        return message


def make_gateway(emulator: TelegramEmulator, home: Path, responder: Any, clock: Clock,
                 sleeps: list[float], log: io.StringIO, config: CompanionConfig,
                 group_commit: bool = True) -> Gateway:
    """A gateway whose pauses are recorded in `sleeps` instead of waited."""

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        await asyncio.sleep(0)

    bot = make_bot(emulator.token, emulator.base_url)
    events = EventLog(stream=log, clock=clock)
    return Gateway(home=home, bot="persona", config=config, persona_name="galatea",
                   default_tz="Europe/Amsterdam", responder=responder,
                   channel=TelegramChannel(bot, events, sleep=sleep),
                   gate=Gate.for_home(home, clock=clock), log=events, clock=clock,
                   rng=random.Random(7), sleep=sleep, group_commit=group_commit)


def found(root: Path, word: str) -> list[str]:
    """Every file under `root` whose bytes hold `word`."""
    return [str(p) for p in root.rglob("*") if p.is_file() and word.encode() in p.read_bytes()]


@pytest.fixture
async def world(home: Path) -> AsyncIterator[World]:
    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
        responder = Scripted(["Good luck tomorrow! Tell me how it goes."])
        sleeps: list[float] = []
        log = io.StringIO()
        config = CompanionConfig(window_messages=3, window_minutes=10, daily_cap=50)
        gateway = make_gateway(emulator, home, responder, clock, sleeps, log, config)
        yield World(emulator, gateway, responder, clock, sleeps, log, home)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(gateway.drain(), timeout=20)
        await gateway.channel.bot.session.close()  # type: ignore[attr-defined]
        gateway.close()
