"""What memory needs to know of the configuration, without importing the config loader."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import tzinfo

from tactful.core.memory.clock import DEFAULT_TIMEZONE, zone


@dataclass(frozen=True)
class MemorySettings:
    tz: tzinfo = field(default_factory=lambda: zone(DEFAULT_TIMEZONE))
    compact_after: int = 50
    keep_full: int = 20
    owners: frozenset[str] = frozenset()  # "platform/handle" of the persona's owner accounts
