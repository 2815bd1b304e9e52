"""The values of the configuration, as the rest of tactful reads them.

Kept apart from the schema that checks a file, so that a run without a config file (and every
`tactful check` that never needs more) imports only these few small classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .view import COMPACT_AFTER, KEEP_FULL, TIMEZONE


@dataclass(frozen=True)
class PersonaConfig:
    """Who the persona is: its name, its time zone, and the operator's own accounts."""

    name: str = "persona"
    # Not written: the documented default, and `tactful config check` says so
    # (docs/scheduling.md), so it is never a silent choice.
    timezone: str = TIMEZONE
    owners: tuple[str, ...] = ()  # "platform:handle", normalized


@dataclass(frozen=True)
class MemoryConfig:
    """Where memory lives and when person files are compacted (docs/memory.md)."""

    home: Path | None = None  # absolute when set; None: --home, $TACTFUL_HOME or the data dir
    compact_after: int = COMPACT_AFTER
    keep_full: int = KEEP_FULL


@dataclass(frozen=True)
class PlatformConfig:
    """One platform: which stored account to use, dry run, and the server to talk to."""

    account: str | None = None
    dry_run: bool = False
    base_url: str | None = None
    # One of the modes the platform's plugin declares, None meaning the first (on Telegram:
    # "persona" or "companion"); a platform without modes has no such key.
    mode: str | None = None
    # The most sends of an action (reply, post, mention, quote, dm) in a rolling 24 hours; the
    # pipeline also keeps to the quotas a platform publishes, whichever is lower.
    limits: dict[str, int] = field(default_factory=dict)
    # Private messages (a dm, a private chat) in persona mode: off, public interactions only
    # (docs/sending.md). The companion mode is private by nature and needs no such key.
    allow_private: bool = False
    # The options the platform declares (`Platform.options`, e.g. `timeout`) that the file
    # writes, by name; `AdapterSettings.options` adds the declared defaults of the others.
    options: dict[str, object] = field(default_factory=dict)


RESPONDER_KINDS = ("template", "command", "openai")


@dataclass(frozen=True)
class ResponderConfig:
    """A model backend that drafts text (`responders.<name>`)."""

    kind: str = "template"
    command: tuple[str, ...] = ()  # command: the program and its arguments (no shell)
    timeout: int = 60  # seconds a draft may take before it is abandoned
    base_url: str | None = None  # openai: any OpenAI-compatible endpoint, e.g. a local server
    model: str | None = None  # openai: the model name


@dataclass(frozen=True)
class RoutineConfig:
    """A routine (`routines.<name>`): what kind, when, and with what."""

    kind: str = ""  # a routine kind a plugin registers: batch-reply, sync-log, ...
    schedule: str | None = None  # cron syntax; None: only `tactful routine run NAME`
    timezone: str | None = None  # of the schedule; None: the persona's time zone
    platform: str | None = None  # batch-reply: which platform
    responder: str | None = None  # batch-reply: which responder drafts (default: template)
    max_per_run: int = 5
    pause: int = 30  # seconds between two sends of one run
    dry_run: bool = False
    enabled: bool = True


# Phrases are matched case-insensitively as whole words in what someone wrote.
DEFAULT_LEAVE_ALONE = ("stop replying to me", "leave me alone", "stop messaging me",
                       "don't reply to me", "do not reply to me", "stop tagging me",
                       "unsubscribe", "go away bot", "stop @ing me")
DEFAULT_SPAM = ("dm me for", "click the link in my bio", "check my profile", "free followers",
                "promo code", "limited offer", "whatsapp me")
DEFAULT_FARM = ("follow for follow", "f4f", "like for like", "l4l", "drop your handle",
                "follow back", "gm to everyone who", "engagement group")
DEFAULT_CRYPTO = ("airdrop", "presale", "memecoin", "100x", "to the moon", "connect your wallet",
                  "pump", "nft drop", "token launch")
DEFAULT_RAGEBAIT = ("ratio", "cope harder", "seethe", "you people are", "nobody asked",
                    "touch grass")


@dataclass(frozen=True)
class EngagementConfig:
    """What the worth-engaging test looks for (`engagement`); each list replaces its default."""

    leave_alone: tuple[str, ...] = DEFAULT_LEAVE_ALONE
    spam: tuple[str, ...] = DEFAULT_SPAM
    engagement_farm: tuple[str, ...] = DEFAULT_FARM
    crypto_shill: tuple[str, ...] = DEFAULT_CRYPTO
    ragebait: tuple[str, ...] = DEFAULT_RAGEBAIT


@dataclass(frozen=True)
class CompanionConfig:
    """The companion (`companion`, docs/companion.md), used on a chat platform whose mode is
    companion (`platforms.telegram.mode: companion`). Times are in the user's own time zone
    where a rule says "day" or "night"."""

    responder: str | None = None  # a name under `responders:`; None: the template responder
    prompt: Path | None = None  # a file with the persona and mode blocks; None: a built-in one
    window_messages: int = 20  # the sliding window: at most this many messages ...
    window_minutes: float = 10  # ... in this many minutes
    daily_cap: int = 150  # messages per user per day, counted in the user's time zone
    join_seconds: int = 3  # messages closer than this are answered once, joined
    parallel_turns: int = 4  # turns running at once, across all chats
    turn_timeout: int = 60  # seconds a responder may take for one turn
    history_days: int = 30  # history is deleted this long after the user's last message
    memory_pass_hours: float = 6
    # The timers (docs/companion.md, "Timers"): below their production minimums only with
    # TACTFUL_COMPANION_TEST_TIMERS=1 in the environment.
    first_pass_minutes: float | None = None  # the first memory pass; None: a full interval
    typing_pace: float = 1.0  # a factor on every typing pause; 0: none
    release_tick_seconds: float = 15  # between looks at held messages and check-ins
    release_jitter_min_seconds: float = 3  # a held answer goes this long after the window ...
    release_jitter_max_seconds: float = 30  # ... at the latest this long after it
    quiet_minutes: int = 20  # a chat is rewritten by the memory pass only after this quiet
    pass_messages: int = 40  # the last this many messages go into the memory pass
    default_timezone: str | None = None  # for users who set none; None: persona.timezone
    checkins: bool = True
    quiet_hours: str = "22-8"  # no check-ins from 22:00 to 08:00, user time
    checkins_per_week: int = 2
    unanswered_before_backoff: int = 2
    groups: bool = False  # answer in group chats too (off: ignored)
    # PostgreSQL shared by many workers (docs/companion.md, "Running on many workers"); None:
    # the embedded SQLite store, one process. A libpq DSN without a password.
    database: str | None = None


@dataclass(frozen=True)
class PluginsConfig:
    """Which plugins to leave alone (`plugins`): entry-point names of the group `tactful`."""

    disabled: tuple[str, ...] = ()  # never imported; a name no plugin has is only a warning


@dataclass(frozen=True)
class Config:
    """The whole configuration, and the file it came from."""

    persona: PersonaConfig = field(default_factory=PersonaConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    platforms: dict[str, PlatformConfig] = field(default_factory=dict)
    responders: dict[str, ResponderConfig] = field(default_factory=dict)
    routines: dict[str, RoutineConfig] = field(default_factory=dict)
    engagement: EngagementConfig = field(default_factory=EngagementConfig)
    companion: CompanionConfig = field(default_factory=CompanionConfig)
    plugins: PluginsConfig = field(default_factory=PluginsConfig)
    source: Path | None = None  # the file read, or None for the built-in defaults
    # key path ("routines.morning.kind") -> the line it is written on, for messages
    lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    @property
    def defaults_only(self) -> bool:
        """True when no config file was found and these are the built-in defaults.

        An empty file that was found is a file: its Config has a source and this is False.
        """
        return self.source is None

    def where(self, key: str) -> str:
        """`file:line: key` for a message about a key: the line of the key, else of the
        nearest section above it that is written; `key` alone without a file."""
        if self.source is None:
            return key
        path = key
        while path and path not in self.lines:
            path = path.rpartition(".")[0]
        line = f":{self.lines[path]}" if path else ""
        return f"{self.source}{line}: {key}"

    def platform(self, name: str) -> PlatformConfig:
        """The settings of one platform, defaults when the file does not name it."""
        return self.platforms.get(name) or PlatformConfig()
