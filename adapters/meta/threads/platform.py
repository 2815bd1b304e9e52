"""What tactful's core must know of Threads without loading its plugin or httpx: its name, and
that its handles are plain usernames. The entry of the static table
(`[project.entry-points."tactful.platforms"]`); it imports nothing but memory's `Platform`.
"""

from __future__ import annotations

from tactful.core.memory.platforms import Option, Platform

# `platforms.<name>.timeout`: a hung platform must not hang a batch
TIMEOUT = Option("timeout", 10.0, above=0, at_most=120, help="seconds per request")

PLATFORM = Platform("threads", options=(TIMEOUT,))
