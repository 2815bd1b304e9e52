"""What tactful's core must know of e-mail contacts without loading a plugin: the platform
`email` is memory only. People met by e-mail are remembered, flagged and checked like anyone,
and linked to their social accounts (`aka`), but tactful never sends e-mail and has no adapter
for it: `tactful send email` is refused.

A person's file is named by a slug the operator chooses (`ada_lovelace`), never by the
address: an address is refused as a handle everywhere (docs/memory.md, E-mail contacts). The
entry of the static table (`[project.entry-points."tactful.platforms"]`); it imports nothing
but memory's `Platform`.
"""

from __future__ import annotations

from tactful.core.memory.platforms import Platform

PLATFORM = Platform("email", memory_only=True)
