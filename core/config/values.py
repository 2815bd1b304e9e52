"""The values of the configuration, as the rest of tactful reads them.

Kept apart from the schema that checks a file, so that a run without a config file (and every
`tactful check` that never needs more) imports only these few small classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class PersonaConfig:
    """Who the persona is: its name, its time zone, and the operator's own accounts."""

    name: str = "persona"
    timezone: str = "America/New_York"
    owners: tuple[str, ...] = ()  # "platform:handle", normalized


@dataclass(frozen=True)
class MemoryConfig:
    """Where memory lives and when person files are compacted (SPEC §2, §4)."""

    home: Path | None = None  # absolute when set; None: --home, $TACTFUL_HOME or the data dir
    compact_after: int = 50
    keep_full: int = 20


@dataclass(frozen=True)
class PlatformConfig:
    """One platform: which stored account to use, dry run, and the server to talk to."""

    account: str | None = None
    dry_run: bool = False
    base_url: str | None = None
    mode: str | None = None  # Telegram only: "persona" (also when None) or "companion"
    # The most sends of an action (reply, post, mention, quote, dm) in a rolling 24 hours; the
    # pipeline also keeps to the quotas a platform publishes, whichever is lower.
    limits: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Config:
    """The whole configuration, and the file it came from."""

    persona: PersonaConfig = field(default_factory=PersonaConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    platforms: dict[str, PlatformConfig] = field(default_factory=dict)
    source: Path | None = None  # the file read, or None for the built-in defaults

    def platform(self, name: str) -> PlatformConfig:
        """The settings of one platform, defaults when the file does not name it."""
        return self.platforms.get(name) or PlatformConfig()
