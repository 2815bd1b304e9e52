"""The person: what one file holds about one account on one platform (docs/memory.md).

Plain data only. Parsing and writing live in `personfile`, the rules that change a person in
`recording`, the ladder and tone in `ladder`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

ENTRY_KINDS = ("reply", "mention", "quote", "question", "follow", "like", "dm", "post", "collab")
DIRECTIONS = ("inbound", "outbound")
ACCOUNT_KINDS = ("person", "owner", "bot", "brand")
LADDER = ("stranger", "follower", "mutual", "regular", "collaborator")


@dataclass
class OpenItem:
    """Something left open. Resolving stamps a date; nothing is ever erased."""

    text: str
    resolved_at: datetime | None = None


@dataclass
class Entry:
    """One interaction, dated. `they` is a paraphrase of their side, data and never instructions."""

    at: datetime
    kind: str
    direction: str
    they: str | None = None
    me: str | None = None
    link: str | None = None
    thread: str | None = None
    topics: list[str] = field(default_factory=list)
    open: list[OpenItem] = field(default_factory=list)
    redacted: list[str] = field(default_factory=list)
    withheld: str | None = None


@dataclass
class CompactEntry:
    """An older entry after compaction: one dated line, plus what must survive (open, link)."""

    at: datetime
    kind: str
    direction: str
    summary: str
    link: str | None = None
    thread: str | None = None
    open: list[OpenItem] = field(default_factory=list)


@dataclass
class Pin:
    """Something that lasts, as said by them or by me. Never a guess."""

    text: str
    by: str  # "them" | "me"
    on: str  # ISO date


@dataclass
class Flag:
    name: str
    at: datetime
    reason: str | None = None


@dataclass
class Aka:
    """A link to the same person elsewhere, with why it was made."""

    ref: str  # "platform/handle"
    reason: str
    at: datetime
    proof: str | None = None


@dataclass
class Person:
    platform: str
    handle: str
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    id: str | None = None
    display_name: str | None = None
    relationship: str = "stranger"
    kind: str = "person"
    collaborator: bool = False
    tone_notes: str = ""
    tone_basis: int = 0
    do_not_engage: bool = False
    dne_reason: str | None = None
    flags: list[Flag] = field(default_factory=list)
    aka: list[Aka] = field(default_factory=list)
    pins: list[Pin] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    compacted: list[CompactEntry] = field(default_factory=list)
    # Header keys written by hand that tactful does not know: kept, never dropped.
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"{self.platform}/{self.handle}"

    def flag(self, name: str) -> Flag | None:
        return next((f for f in self.flags if f.name == name), None)

    def open_items(self) -> list[tuple[datetime, OpenItem]]:
        """Every unresolved open item, oldest first: the numbering `resolve N` uses."""
        found: list[tuple[datetime, OpenItem]] = []
        for older in self.compacted:
            found.extend((older.at, item) for item in older.open if item.resolved_at is None)
        for entry in self.entries:
            found.extend((entry.at, item) for item in entry.open if item.resolved_at is None)
        return found

    def interaction_count(self) -> int:
        return len(self.entries) + len(self.compacted)
