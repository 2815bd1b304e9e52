"""The Telegram adapter's plugin: registers a factory, imports nothing heavy (SPEC §14).

The factory imports the offline adapter when the platform is first used; the adapter imports
aiogram only when a session is opened, after every guard has passed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tactful.core.hookspecs import Register, hookimpl

if TYPE_CHECKING:
    from tactful.core.send.adapter import Adapter, AdapterSettings


def make_adapter(settings: AdapterSettings) -> Adapter:
    from tactful.adapters.telegram.adapter import TelegramAdapter

    return TelegramAdapter(settings)


@hookimpl
def register_adapters(register: Register) -> None:
    register("telegram", make_adapter)
