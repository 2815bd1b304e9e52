"""What tactful's core must know of Instagram without loading its plugin or httpx: its name,
that its handles are plain usernames, its one option and what its account looks like. The
entry of the static table (`[project.entry-points."tactful.platforms"]`); it imports nothing
but memory's `Platform`.
"""

from __future__ import annotations

from tactful.core.memory.platforms import Option, Platform

# `platforms.<name>.timeout`: a hung platform must not hang a batch
TIMEOUT = Option("timeout", 10.0, above=0, at_most=120, help="seconds per request")

PLATFORM = Platform("instagram", options=(TIMEOUT,),
                    account_pattern=r"[A-Za-z0-9._]{1,30}",
                    account_hint="write the persona's Instagram username, e.g. galatea")
