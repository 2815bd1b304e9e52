"""The companion on Telegram: aiogram long polling into the platform-agnostic gateway.

Everything about pacing, limits, notes, retention and check-ins is in tactful.core.companion;
this module only turns Telegram updates into `Incoming`, gives the gateway a `Channel` over the
Bot API, registers the command list, and runs the gateway's timers (held messages, check-ins,
the memory pass and the retention sweep) next to the polling.

Telegram answering 429 is waited out with its own `retry_after` (a few times, never hammered);
5xx is retried with a growing pause; 403 means the user blocked the bot, who is then never
messaged again. Malformed updates, stickers, photos and edited messages reach no traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import PRODUCTION, TelegramAPIServer
from aiogram.exceptions import (
    TelegramForbiddenError,
    TelegramNetworkError,
    TelegramRetryAfter,
    TelegramServerError,
)
from aiogram.types import BotCommand, BufferedInputFile, Message

from tactful.core.companion.gateway import (
    COMMANDS,
    NOTES_JOB,
    Blocked,
    Gateway,
    Incoming,
    file_line,
)
from tactful.core.companion.timers import check as check_timers
from tactful.core.companion.timers import precise_clock
from tactful.core.errors import BadInput
from tactful.core.memory.handles import normalize_handle
from tactful.core.schedule.events import EventLog
from tactful.core.send.gate import Ticket

from .platform import CHATS, NAME, Chats
from .session import _LoopbackSession

if TYPE_CHECKING:
    from tactful.core.app import App

TRIES = 4  # sends of one message at most, on 429 and 5xx


class _NoText(logging.Filter):
    """aiogram logs a failed decode with the whole answer of getUpdates in it: message text.
    Such records keep their level and logger, and lose everything after the error's name."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "Content:" in message or "content=" in message:
            record.msg = message.split("Content:", 1)[0].split("content=", 1)[0].rstrip()
            record.args = ()
        record.exc_info = None  # a traceback may carry the same text
        record.exc_text = None
        return True


for _name in ("aiogram", "aiogram.dispatcher", "aiogram.event"):
    logging.getLogger(_name).addFilter(_NoText())
MAX_RETRY_AFTER = 300.0  # seconds; longer than this is a day gone wrong: give up the message
TICK = 15.0  # seconds between looks at held messages and check-ins

DESCRIPTIONS = {
    "start": "say hi", "help": "what I can do", "memory": "what I remember about you",
    "forget": "clear what I remember", "export": "a file with your notes",
    "delete": "remove everything I hold about you", "invite": "a link for a friend",
    "pause": "no check-ins from me", "resume": "check-ins again",
    "timezone": "your time zone, e.g. /timezone Europe/London",
}


def make_bot(token: str, base_url: str | None, timeout: float = 30) -> Bot:
    api = TelegramAPIServer.from_base(base_url) if base_url else PRODUCTION
    kind = _LoopbackSession if (base_url or "").startswith("http://") else AiohttpSession
    return Bot(token, session=kind(api=api, timeout=timeout))


class TelegramChannel:
    """The gateway's `Channel` over one aiogram Bot."""

    platform: Chats = CHATS  # what the gateway must know of Telegram chats (platform.py)

    def __init__(self, bot: Bot, log: EventLog,
                 sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        self.bot, self.log, self.sleep = bot, log, sleep

    async def typing(self, chat_id: int) -> None:
        with contextlib.suppress(Exception):  # an indicator that fails costs nothing
            await self.bot.send_chat_action(chat_id, "typing")

    async def send(self, chat_id: int, text: str, *, ticket: Ticket) -> None:
        ticket.require(text)  # nothing goes out that the send gate did not admit
        await self._retrying(chat_id, lambda: self.bot.send_message(chat_id, text))

    async def send_file(self, chat_id: int, name: str, data: bytes, *,
                        ticket: Ticket) -> None:
        ticket.require(file_line(name))
        document = BufferedInputFile(data, filename=name)
        await self._retrying(chat_id, lambda: self.bot.send_document(chat_id, document))

    async def _retrying(self, chat_id: int, call: Callable[[], Any]) -> None:
        pause = 1.0
        for attempt in range(1, TRIES + 1):
            try:
                await call()
                return
            except TelegramForbiddenError:
                raise Blocked(chat_id) from None
            except TelegramRetryAfter as exc:
                wait = float(exc.retry_after)
                self.log.emit("companion.rate_limited", chat=chat_id, retry_after=wait)
                if wait > MAX_RETRY_AFTER or attempt == TRIES:
                    raise
                await self.sleep(wait)
            except (TelegramServerError, TelegramNetworkError) as exc:
                self.log.emit("companion.platform_error", chat=chat_id,
                              error=type(exc).__name__, attempt=attempt)
                if attempt == TRIES:
                    raise
                await self.sleep(pause)
                pause *= 2


def incoming(message: Message) -> Incoming | None:
    """An update as the gateway sees it; None for what it never answers."""
    if message.from_user is None or message.from_user.is_bot:
        return None
    handle = None
    if message.from_user.username:
        with contextlib.suppress(BadInput):
            handle = normalize_handle(message.from_user.username, NAME)
    return Incoming(chat_id=message.chat.id, user_id=message.from_user.id,
                    message_id=message.message_id,
                    at=message.date if message.date.tzinfo else message.date.replace(tzinfo=UTC),
                    text=message.text, language_code=message.from_user.language_code,
                    private=message.chat.type == "private", handle=handle)


class Companion:
    """Polling, the gateway and its timers, for one bot, until `stop` is set."""

    def __init__(self, gateway: Gateway, bot: Bot, log: EventLog,
                 clock: Callable[[], datetime], *, pass_every: float, tick: float = TICK,
                 first_pass: float | None = None, rng: random.Random | None = None) -> None:
        self.gateway, self.bot, self.log, self.clock = gateway, bot, log, clock
        self.pass_every, self.tick = pass_every, tick
        self.first_pass = pass_every if first_pass is None else first_pass
        self.rng = rng or random.Random()  # noqa: S311
        self.dispatcher = Dispatcher()
        self.dispatcher.message()(self._on_message)
        self.dispatcher.edited_message()(self._on_edit)

    async def _on_message(self, message: Message) -> None:
        try:
            arrived = incoming(message)
            if arrived is not None:
                await self.gateway.on_message(arrived)
        except Exception as exc:  # noqa: BLE001 — one bad update never stops the bot
            self.log.emit("companion.update_failed", error=type(exc).__name__)

    async def _on_edit(self, message: Message) -> None:
        pass  # an edited message was answered as first written; it is not answered again

    async def run(self, stop: threading.Event) -> None:
        await self.bot.delete_webhook()
        await self.bot.set_my_commands([BotCommand(command=c, description=DESCRIPTIONS[c])
                                        for c in COMMANDS])
        self.gateway.sweep()
        polling = asyncio.create_task(self.dispatcher.start_polling(
            self.bot, handle_signals=False, polling_timeout=10))
        timers = asyncio.create_task(self._timers(stop))
        self.log.emit("companion.start", bot=self.gateway.bot)
        try:
            while not stop.is_set() and not polling.done():
                await asyncio.sleep(0.2)
        finally:
            timers.cancel()
            with contextlib.suppress(Exception):
                await self.dispatcher.stop_polling()
            for task in (polling, timers):
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(task, timeout=15)
            await self.gateway.drain()
            await self.bot.session.close()
            self.log.emit("companion.stop", bot=self.gateway.bot)

    async def _timers(self, stop: threading.Event) -> None:
        store = self.gateway.store
        # When the pass is due lives in the store: a restart keeps the schedule.
        if store.due_at(NOTES_JOB) is None:
            store.set_due(NOTES_JOB, self.clock() + timedelta(seconds=self.first_pass))
        passing: asyncio.Task[None] | None = None
        while not stop.is_set():
            await asyncio.sleep(self.tick)
            for step in (self.gateway.release_pending, self.gateway.check_in):
                try:
                    await step()
                except Exception as exc:  # noqa: BLE001 — a step that fails tries next tick
                    self.log.emit("companion.timer_failed", error=type(exc).__name__)
            due = store.due_at(NOTES_JOB)
            if (due is None or self.clock() >= due) and (passing is None or passing.done()):
                # The next one is set first: a pass that crashes the process is not retried
                # in a loop at every start.
                store.set_due(NOTES_JOB, self.clock() + timedelta(seconds=self.pass_every))
                # Its own task: a long pass must not hold back held answers and check-ins.
                passing = asyncio.create_task(self._pass_and_sweep())
        if passing is not None and not passing.done():
            await asyncio.wait([passing], timeout=30)

    async def _pass_and_sweep(self) -> None:
        try:
            await self.gateway.memory_pass()
        except Exception as exc:  # noqa: BLE001
            self.log.emit("companion.timer_failed", error=type(exc).__name__)
        try:
            self.gateway.sweep()  # whatever the pass did
        except Exception as exc:  # noqa: BLE001
            self.log.emit("companion.timer_failed", error=type(exc).__name__)


async def serve(app: App, log: EventLog, stop: threading.Event) -> None:
    """Run the companion of the configured bot until `stop` is set (`tactful run`, through the
    plugin's service: plugin.py)."""
    from tactful.core.responders.choose import responder_for
    from tactful.core.send import credentials
    from tactful.core.send.adapters import settings_for

    config = app.config
    timers = check_timers(config.companion)  # BadInput (exit 2) below a production floor
    settings = settings_for(NAME, config)
    token = credentials.read(NAME, settings.account, ("token",))["token"]
    bot = make_bot(token, settings.base_url)
    me = await bot.get_me()
    # To the microsecond: pacing subtracts the responder's thinking time (timers.py).
    clock = precise_clock(app.settings.tz, app.now)
    channel = TelegramChannel(bot, log)
    gateway = Gateway(
        home=app.home.root, bot=(me.username or settings.account).lower(),
        config=config.companion, persona_name=config.persona.name,
        default_tz=config.persona.timezone,
        responder=responder_for(config.companion.responder, config, app.plugins,
                                where="companion.responder"),
        channel=channel, gate=app.make_gate(), log=log, clock=clock)
    try:
        companion = Companion(gateway, bot, log, clock, pass_every=timers.pass_every,
                              tick=timers.release_tick, first_pass=timers.first_pass)
        await companion.run(stop)
    finally:
        gateway.close()
