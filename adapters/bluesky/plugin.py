"""The Bluesky plugin: registers the adapter factory, and imports nothing heavy (SPEC §14).

Loaded through the `tactful` entry point like any third-party plugin. The factory imports the
offline adapter only when Bluesky is used; atproto waits until `Adapter.open`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tactful.core.hookspecs import Register, hookimpl

if TYPE_CHECKING:
    from tactful.adapters.bluesky.adapter import BlueskyAdapter
    from tactful.core.send.adapter import AdapterSettings


def make_adapter(settings: AdapterSettings) -> BlueskyAdapter:
    from tactful.adapters.bluesky.adapter import BlueskyAdapter

    return BlueskyAdapter(settings)


@hookimpl
def register_adapters(register: Register) -> None:
    register("bluesky", make_adapter)
