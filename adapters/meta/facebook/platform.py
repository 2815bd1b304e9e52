"""What tactful's core must know of Facebook without loading its plugin or httpx: a person is
their numeric user id (the Graph API names a commenter only by `from.id` and a display name,
and names are not unique), so handles are ids only, and "0700" is "700". The entry of the static
table (`[project.entry-points."tactful.platforms"]`); it imports nothing but memory's `Platform`.
"""

from __future__ import annotations

from tactful.core.memory.platforms import Platform

PLATFORM = Platform("facebook", numeric_ids=True, handles_are_ids=True)
