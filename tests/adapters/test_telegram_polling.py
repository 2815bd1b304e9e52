"""The emulator serves aiogram's own long polling, as the companion will use it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator

import pytest
from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.types import BotCommand, BufferedInputFile, Message

from tactful.adapters.telegram.emulator import TelegramEmulator


@pytest.fixture
def emulator() -> Iterator[TelegramEmulator]:
    with TelegramEmulator() as emulator:
        yield emulator


async def test_a_dispatcher_polls_the_emulator(emulator: TelegramEmulator) -> None:
    api = TelegramAPIServer.from_base(emulator.base_url)
    bot = Bot(emulator.token, session=AiohttpSession(api=api, timeout=5))
    dispatcher = Dispatcher()
    handled = asyncio.Event()
    texts: list[str | None] = []

    @dispatcher.message()
    async def answer(message: Message, bot: Bot) -> None:
        texts.append(message.text)
        await bot.send_chat_action(message.chat.id, "typing")
        await message.answer("hello back")
        notes = BufferedInputFile(b"likes short answers", filename="notes.txt")
        await bot.send_document(message.chat.id, notes, caption="your notes")
        handled.set()

    await bot.delete_webhook()
    await bot.set_my_commands([BotCommand(command="memory", description="what I remember")])
    alice = emulator.add_user("alice_dev")
    emulator.add_post("alice_dev", "hi bot")
    polling = asyncio.create_task(
        dispatcher.start_polling(bot, handle_signals=False, polling_timeout=1))
    try:
        await asyncio.wait_for(handled.wait(), timeout=8)
        # The next getUpdates carries the offset that confirms the handled update.
        deadline = time.monotonic() + 3
        while emulator.pending_updates() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await asyncio.wait_for(dispatcher.stop_polling(), timeout=5)
        await asyncio.wait_for(polling, timeout=5)
    finally:
        if not polling.done():
            polling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await polling
        await bot.session.close()

    assert texts == ["hi bot"]
    assert emulator.pending_updates() == []
    assert [(p["chat_id"], p["text"], p["document"]) for p in emulator.sent()] == [
        (alice, "hello back", None), (alice, "your notes", "notes.txt")]
    assert emulator.documents[0]["data"] == b"likes short answers"
    assert emulator.chat_actions == [(int(alice), "typing")]
    assert emulator.commands == [{"command": "memory", "description": "what I remember"}]
    methods = {TelegramEmulator.method(r) for r in emulator.requests}
    assert {"getme", "getupdates", "deletewebhook", "setmycommands"} <= methods
