"""The X plugin: registers the adapter factory, and nothing more.

Loading this module must stay cheap (SPEC §14): it imports neither tweepy nor the adapter; the
factory imports the offline adapter when the platform is first used, and the adapter imports
tweepy only when a session is opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tactful.core.hookspecs import Register, hookimpl

if TYPE_CHECKING:
    from tactful.adapters.x.adapter import XAdapter
    from tactful.core.send.adapter import AdapterSettings


def make_adapter(settings: AdapterSettings) -> XAdapter:
    from tactful.adapters.x.adapter import XAdapter

    return XAdapter(settings)


@hookimpl
def register_adapters(register: Register) -> None:
    register("x", make_adapter)
