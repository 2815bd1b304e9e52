"""The Threads adapter's plugin: registers a factory and imports nothing heavy (SPEC §14).

The factory imports the offline adapter, which itself imports no HTTP library; httpx is
imported only when a session is opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tactful.core.hookspecs import Register, hookimpl

if TYPE_CHECKING:
    from tactful.core.send.adapter import Adapter, AdapterSettings


def make_adapter(settings: AdapterSettings) -> Adapter:
    from tactful.adapters.threads.adapter import ThreadsAdapter

    return ThreadsAdapter(settings)


@hookimpl
def register_adapters(register: Register) -> None:
    register("threads", make_adapter)
