"""The Threads adapter's plugin: registers a factory, the platform's facts and the demo's
emulator, and imports nothing heavy (docs/hooks.md).

The factory imports the offline adapter, which itself imports no HTTP library; httpx is
imported only when a session is opened. The emulator is imported only by `tactful demo`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tactful.core.hookspecs import Register, hookimpl

from .platform import PLATFORM

if TYPE_CHECKING:
    from tactful.core.send.adapter import Adapter, AdapterSettings


def make_adapter(settings: AdapterSettings) -> Adapter:
    from tactful.adapters.meta.threads.adapter import ThreadsAdapter

    return ThreadsAdapter(settings)


class Demo:
    """Threads in `tactful demo`: the Graph API emulator on loopback, the token it accepts, and
    the demo's people as Threads usernames (dots where the others have underscores)."""

    bots_write = True

    def __init__(self) -> None:
        from tactful.adapters.meta.threads.emulator import ThreadsEmulator

        self.emulator = ThreadsEmulator()
        self.emulator.start()

    def credentials(self) -> dict[str, str]:
        return {"access_token": self.emulator.token}

    def handle(self, name: str) -> str:
        return name.replace("_", ".")

    def sent(self) -> list[tuple[str, str]]:
        return [(str(m.get("reply_to")), str(m["text"])) for m in self.emulator.sent()]


@hookimpl
def register_adapters(register: Register) -> None:
    register(PLATFORM.name, make_adapter)


@hookimpl
def register_platforms(register: Register) -> None:
    register(PLATFORM.name, PLATFORM)


@hookimpl
def register_emulators(register: Register) -> None:
    register(PLATFORM.name, Demo)
