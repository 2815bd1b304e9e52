"""The Instagram adapter's plugin: registers a factory, the platform's facts and the demo's
emulator, and imports nothing heavy. The factory imports the offline adapter (no HTTP library);
httpx comes with the session, the emulator only with `tactful demo`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tactful.core.hookspecs import Register, hookimpl

from .platform import PLATFORM

if TYPE_CHECKING:
    from tactful.core.send.adapter import Adapter, AdapterSettings


def make_adapter(settings: AdapterSettings) -> Adapter:
    from tactful.adapters.meta.instagram.adapter import InstagramAdapter

    return InstagramAdapter(settings)


class Demo:
    """Instagram in `tactful demo`: the emulator on loopback, the token it accepts, and the
    demo's people as Instagram usernames. What arrives is comments on the persona's newest
    photo; Instagram has no bot accounts to write in."""

    bots_write = False

    def __init__(self) -> None:
        from tactful.adapters.meta.instagram.emulator import InstagramEmulator

        self.emulator = InstagramEmulator("galatea")
        self.emulator.add_media("notes from the eval bench")
        self.emulator.start()

    def credentials(self) -> dict[str, str]:
        return {"access_token": self.emulator.token}

    def handle(self, name: str) -> str:
        return name

    def sent(self) -> list[tuple[str, str]]:
        return [(str(m["reply_to"] or m["media"]), str(m["text"])) for m in self.emulator.sent()]


@hookimpl
def register_adapters(register: Register) -> None:
    register(PLATFORM.name, make_adapter)


@hookimpl
def register_platforms(register: Register) -> None:
    register(PLATFORM.name, PLATFORM)


@hookimpl
def register_emulators(register: Register) -> None:
    register(PLATFORM.name, Demo)
