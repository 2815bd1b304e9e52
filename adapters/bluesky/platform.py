"""What tactful's core must know of Bluesky without loading its plugin or atproto.

The entry of the static table (`[project.entry-points."tactful.platforms"]`): handles are
domain names and keep their dots, and those under bsky.social, the default domain of the
sign-up, compare as the bare name when automatic links look for the same person elsewhere
(`ada.bsky.social` and x's `ada`). It imports nothing but memory's `Platform`.
"""

from __future__ import annotations

from tactful.core.memory.platforms import Platform

PLATFORM = Platform("bluesky", short_handle_suffix=".bsky.social")
