"""The Bluesky plugin: registers the adapter factory, the platform's facts and the demo's
emulator, and imports nothing heavy (docs/hooks.md).

Loaded through the `tactful` entry point like any third-party plugin. The factory imports the
offline adapter only when Bluesky is used; atproto waits until `Adapter.open`. The emulator is
imported only by `tactful demo`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tactful.core.hookspecs import RegisterAdapters, RegisterEmulators, RegisterPlatforms, hookimpl

from .platform import PLATFORM

if TYPE_CHECKING:
    from tactful.adapters.bluesky.adapter import BlueskyAdapter
    from tactful.core.send.adapter import AdapterSettings


def make_adapter(settings: AdapterSettings) -> BlueskyAdapter:
    from tactful.adapters.bluesky.adapter import BlueskyAdapter

    return BlueskyAdapter(settings)


class Demo:
    """Bluesky in `tactful demo`: the XRPC emulator on loopback, an app password it accepts, and
    the demo's people as handles under bsky.social."""

    bots_write = True

    def __init__(self) -> None:
        from tactful.adapters.bluesky.emulator import BlueskyEmulator

        self.emulator = BlueskyEmulator()
        self.emulator.start()

    def credentials(self) -> dict[str, str]:
        return {"app_password": "demo-app-password"}

    def handle(self, name: str) -> str:
        return f"{name.replace('_', '-')}{PLATFORM.short_handle_suffix}"

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
