"""The Facebook adapter's plugin: registers a factory, the platform's facts and the demo's
emulator, and imports nothing heavy. The factory imports the offline adapter (no HTTP library);
httpx comes with the session, the emulator only with `tactful demo`.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from tactful.core.hookspecs import Register, hookimpl

from .platform import PLATFORM

if TYPE_CHECKING:
    from tactful.core.send.adapter import Adapter, AdapterSettings


def make_adapter(settings: AdapterSettings) -> Adapter:
    from tactful.adapters.meta.facebook.adapter import FacebookAdapter

    return FacebookAdapter(settings)


class Demo:
    """Facebook in `tactful demo`: a Page on the emulator, its token, and the demo's people as
    Facebook knows them, by numeric user id. What arrives is comments on the Page's newest
    post; Facebook has no bot accounts to write in."""

    bots_write = False

    def __init__(self) -> None:
        from tactful.adapters.meta.facebook.emulator import FacebookEmulator

        self.emulator = FacebookEmulator()
        self.emulator.add_page_post("notes from the eval bench")
        self.emulator.start()

    def credentials(self) -> dict[str, str]:
        return {"access_token": self.emulator.token}

    def handle(self, name: str) -> str:
        """The same id for the same name, every run: a person's file keeps its name. Facebook
        always shows a display name, so the person gets one from their name."""
        digest = int(hashlib.sha256(name.encode()).hexdigest()[:10], 16)
        user_id = str(100_000_000_000_000 + digest % 10**12)
        self.emulator.add_user(user_id, display_name=name.replace("_", " ").title())
        return user_id

    def sent(self) -> list[tuple[str, str]]:
        return [(str(m["reply_to"] or m["post"]), str(m["text"])) for m in self.emulator.sent()]


@hookimpl
def register_adapters(register: Register) -> None:
    register(PLATFORM.name, make_adapter)


@hookimpl
def register_platforms(register: Register) -> None:
    register(PLATFORM.name, PLATFORM)


@hookimpl
def register_emulators(register: Register) -> None:
    register(PLATFORM.name, Demo)
