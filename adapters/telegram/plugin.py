"""The Telegram adapter's plugin: registers a factory, imports nothing heavy (docs/hooks.md).

The factory imports the offline adapter when the platform is first used; the adapter imports
aiogram only when a session is opened, after every guard has passed. Besides the adapter it
declares the platform's facts (platform.py, the same object as the static table's entry), the
companion as a service `tactful run` starts when `platforms.telegram.mode` is `companion`, and
the emulator `tactful demo` runs on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tactful.core.hookspecs import (
    RegisterAdapters,
    RegisterEmulators,
    RegisterPlatforms,
    RegisterServices,
    hookimpl,
)

from .platform import CHATS, NAME, PLATFORM, Chats

if TYPE_CHECKING:
    import threading

    from tactful.core.app import App
    from tactful.core.schedule.events import EventLog
    from tactful.core.send.adapter import Adapter, AdapterSettings


def make_adapter(settings: AdapterSettings) -> Adapter:
    from tactful.adapters.telegram.adapter import TelegramAdapter

    return TelegramAdapter(settings)


class Companion:
    """The Telegram companion (docs/companion.md) as a service of `tactful run`: aiogram long
    polling into the core's gateway, on an event loop of its own."""

    chats: Chats = CHATS  # so that `tactful forget` reaches the companion's store

    def wanted(self, app: App) -> bool:
        # With companion.database, the companion runs as one poller and many workers
        # (`tactful companion poll` / `worker`), never inside `tactful run`: two getUpdates
        # consumers would steal each other's updates.
        return app.config.platform(NAME).mode == "companion" and \
            not app.config.companion.database

    def _many(self, app: App) -> None:
        from tactful.core.errors import BadInput

        if app.config.platform(NAME).mode != "companion":
            raise BadInput("companion: platforms.telegram.mode is not companion; set it "
                           "(docs/companion.md, \"Running on many workers\")")

    def serve(self, app: App, log: EventLog, stop: threading.Event) -> None:
        import asyncio

        from tactful.adapters.telegram.companion import serve

        asyncio.run(serve(app, log, stop))

    def poll(self, app: App, log: EventLog, stop: threading.Event) -> None:
        """The one poller of many workers (docs/companion.md, "Running on many workers")."""
        import asyncio

        from tactful.adapters.telegram.workers import serve_poller

        self._many(app)
        asyncio.run(serve_poller(app, log, stop))

    def work(self, app: App, log: EventLog, stop: threading.Event) -> None:
        """One of the workers that answer from the shared queue."""
        import asyncio

        from tactful.adapters.telegram.workers import serve_worker

        self._many(app)
        asyncio.run(serve_worker(app, log, stop))


class Demo:
    """Telegram in `tactful demo`: the Bot API emulator on loopback, the token it accepts, and
    the demo's people as Telegram usernames. Bots cannot write to bots, so no bot writes in."""

    bots_write = False

    def __init__(self) -> None:
        from tactful.adapters.telegram.emulator import TelegramEmulator

        self.emulator = TelegramEmulator()
        self.emulator.start()

    def credentials(self) -> dict[str, str]:
        return self.emulator.credentials

    def handle(self, name: str) -> str:
        return name

    def sent(self) -> list[tuple[str, str]]:
        return [(str(m.get("reply_to") or m.get("chat_id")), str(m["text"]))
                for m in self.emulator.sent()]


@hookimpl
def register_adapters(register: RegisterAdapters) -> None:
    register(NAME, make_adapter)


@hookimpl
def register_platforms(register: RegisterPlatforms) -> None:
    register(NAME, PLATFORM)


@hookimpl
def register_services(register: RegisterServices) -> None:
    register("telegram-companion", Companion())


@hookimpl
def register_emulators(register: RegisterEmulators) -> None:
    register(NAME, Demo)

