"""What tactful's core must know of Instagram without loading its plugin or httpx: its name,
and that its handles are plain usernames. The entry of the static table
(`[project.entry-points."tactful.platforms"]`); it imports nothing but memory's `Platform`.
"""

from __future__ import annotations

from tactful.core.memory.platforms import Platform

PLATFORM = Platform("instagram")
