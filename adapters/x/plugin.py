"""The X plugin: registers the adapter factory, the platform's facts and the demo's emulator.

Loading this module must stay cheap (docs/hooks.md): it imports neither tweepy nor the adapter; the
factory imports the offline adapter when the platform is first used, and the adapter imports
tweepy only when a session is opened. The emulator is imported only by `tactful demo`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tactful.core.hookspecs import RegisterAdapters, RegisterEmulators, RegisterPlatforms, hookimpl

from .platform import PLATFORM

if TYPE_CHECKING:
    from tactful.adapters.x.adapter import XAdapter
    from tactful.core.send.adapter import AdapterSettings


def make_adapter(settings: AdapterSettings) -> XAdapter:
    from tactful.adapters.x.adapter import XAdapter

    return XAdapter(settings)


class Demo:
    """X in `tactful demo`: the API emulator on loopback, dummy keys it accepts, and the demo's
    people as X usernames."""

    bots_write = True

    def __init__(self) -> None:
        from tactful.adapters.x.emulator import XEmulator

        self.emulator = XEmulator()
        self.emulator.start()

    def credentials(self) -> dict[str, str]:
        return {"bearer_token": "demo", "consumer_key": "demo", "consumer_secret": "demo",
                "access_token": "demo", "access_token_secret": "demo"}

    def handle(self, name: str) -> str:
        return name

    def sent(self) -> list[tuple[str, str]]:
        return [(str(m.get("reply_to")), str(m["text"])) for m in self.emulator.sent()]


@hookimpl
def register_adapters(register: RegisterAdapters) -> None:
    register(PLATFORM.name, make_adapter)


@hookimpl
def register_platforms(register: RegisterPlatforms) -> None:
    register(PLATFORM.name, PLATFORM)


@hookimpl
def register_emulators(register: RegisterEmulators) -> None:
    register(PLATFORM.name, Demo)
