"""The rules that change a person: remember, pin, resolve, flag, dne, set (docs/memory.md).

Every piece of text passes the same gate before it touches a Person: collapsed to one line,
checked for instruction-like content (never stored; a `prompt-injection` flag instead),
scrubbed of secrets (each kind noted), and capped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlsplit

from tactful.core.errors import BadInput
from tactful.core.memory import ladder
from tactful.core.memory.compaction import compact
from tactful.core.memory.injection import injection_reason
from tactful.core.memory.person import (
    ACCOUNT_KINDS,
    DIRECTIONS,
    ENTRY_KINDS,
    Entry,
    Flag,
    OpenItem,
    Person,
    Pin,
)
from tactful.core.memory.scrub import scrub
from tactful.core.memory.settings import MemorySettings
from tactful.core.memory.text import cut, one_line

THEIR_SIDE_LIMIT = 300
MY_SIDE_LIMIT = 4096
SHORT_LIMIT = 300
NAME_LIMIT = 100
TOPIC_LIMIT = 40
INJECTION_FLAG = "prompt-injection"

_FLAG_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")


@dataclass(frozen=True)
class Screened:
    """One text through the privacy gate, before its cap: withheld (instruction-like, with the
    reason), or collapsed to one line and scrubbed (with the kinds removed). It depends on the
    text alone, so a batch (sync-log) may work it out once per distinct text, or in a helper
    process, and get what `Gate.text` gets."""

    text: str | None
    withheld: str | None = None
    redacted: tuple[str, ...] = ()


def screen(raw: str) -> Screened:
    reason = injection_reason(raw)
    if reason is not None:
        return Screened(None, reason)
    scrubbed = scrub(one_line(raw))
    return Screened(scrubbed.text, None, scrubbed.kinds)


@dataclass
class Gate:
    """Collects what the privacy gate did across the fields of one change."""

    redacted: set[str] = field(default_factory=set)
    withheld: str | None = None

    def text(self, raw: str | None, limit: int) -> str | None:
        if raw is None:
            return None
        return self.take(screen(raw), limit)

    def take(self, screened: Screened, limit: int) -> str | None:
        """What `text` makes of a text already screened: the cap, and the gate's record."""
        if screened.withheld is not None:
            self.withheld = self.withheld or screened.withheld
            return None
        assert screened.text is not None
        self.redacted.update(screened.redacted)
        return cut(screened.text, limit)


@dataclass(frozen=True)
class Outcome:
    """What a change did, for the one line the command prints. Never carries their text."""

    redacted: tuple[str, ...] = ()
    withheld: str | None = None
    note: str = ""


def new_person(platform: str, handle: str, settings: MemorySettings) -> Person:
    person = Person(platform=platform, handle=handle)
    if f"{platform}/{handle}" in settings.owners:
        person.kind = "owner"
    return person


def check_url(raw: str, what: str) -> str:
    value = raw.strip()
    try:
        parts = urlsplit(value)
        userinfo = parts.username is not None or parts.password is not None
    except ValueError:
        parts, userinfo = urlsplit(""), False
    if parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() for c in value):
        raise BadInput(f"{what}: not an http(s) URL; give the post's full address")
    if userinfo:
        raise BadInput(f"{what}: the URL carries a user name or password; give the public address")
    return value


def _flag(person: Person, name: str, reason: str | None, at: datetime) -> None:
    existing = person.flag(name)
    if existing is None:
        person.flags.append(Flag(name=name, at=at, reason=reason))
    else:
        existing.at, existing.reason = at, reason or existing.reason


def _note_injection(person: Person, gate: Gate, at: datetime) -> None:
    if gate.withheld is not None:
        _flag(person, INJECTION_FLAG, gate.withheld, at)


def validate_entry(kind: str, direction: str, link: str | None) -> str | None:
    """Check what can be checked before any lock is taken; returns the clean link."""
    if kind not in ENTRY_KINDS:
        raise BadInput(f"--kind {kind!r} is not a kind; use one of: {', '.join(ENTRY_KINDS)}")
    if direction not in DIRECTIONS:
        raise BadInput(f"direction {direction!r}: use --inbound or --outbound")
    return check_url(link, "--link") if link is not None else None


def validate_flag_name(name: str) -> None:
    if not _FLAG_NAME.fullmatch(name):
        raise BadInput(f"flag name {name[:40]!r}: use lower-case letters, digits and '-'")


def remember(person: Person, *, kind: str, direction: str, at: datetime,
             they: str | None = None, me: str | None = None, link: str | None = None,
             topics: list[str] | None = None, open_items: list[str] | None = None,
             thread: str | None = None, display_name: str | None = None,
             person_id: str | None = None) -> Outcome:
    gate = Gate()
    entry = Entry(at=at, kind=kind, direction=direction)
    clean_link = validate_entry(kind, direction, link)
    # Every field passes the gate, links and thread ids too: a query string can carry an
    # e-mail or a key, and a "thread id" is whatever the caller typed.
    entry.link = gate.text(clean_link, SHORT_LIMIT * 2)
    entry.thread = gate.text(thread, SHORT_LIMIT) or None if thread is not None else None
    entry.they = gate.text(they, THEIR_SIDE_LIMIT)
    entry.me = gate.text(me, MY_SIDE_LIMIT)
    for topic in topics or []:
        clean = gate.text(topic.replace(",", " "), TOPIC_LIMIT)
        if clean:
            entry.topics.append(clean)
    for item in open_items or []:
        clean = gate.text(item, SHORT_LIMIT)
        if clean:
            entry.open.append(OpenItem(clean))
    name = gate.text(display_name, NAME_LIMIT)
    if gate.withheld is not None:
        # Nothing of an instruction-like message is kept: not their side, not what it made me say.
        entry.they = entry.me = None
        entry.topics, entry.open = [], []
        entry.withheld = f"{INJECTION_FLAG} ({gate.withheld}); content not stored"
        name = None
    entry.redacted = sorted(gate.redacted)
    if name:
        person.display_name = name
    if person_id is not None:
        person.id = person_id
    person.entries.append(entry)
    _note_injection(person, gate, at)
    return Outcome(tuple(entry.redacted), gate.withheld)


def pin(person: Person, text: str, by: str, at: datetime) -> Outcome:
    if by not in ("them", "me"):
        raise BadInput(f"--by {by!r}: a pin is said by 'them' or 'me', never guessed")
    gate = Gate()
    clean = gate.text(text, SHORT_LIMIT)
    _note_injection(person, gate, at)
    if gate.withheld is not None:
        return Outcome(withheld=gate.withheld, note="pin not stored")
    if not clean:
        raise BadInput("the pin is empty; give what was said")
    person.pins.append(Pin(text=clean, by=by, on=at.date().isoformat()))
    return Outcome(tuple(sorted(gate.redacted)), note=f"pin {len(person.pins)}")


def unpin(person: Person, number: int) -> Outcome:
    if not 1 <= number <= len(person.pins):
        raise BadInput(f"{person.ref} has {len(person.pins)} pins; {number} is not one of them")
    person.pins.pop(number - 1)
    return Outcome(note=f"unpinned {number}")


def resolve(person: Person, number: int, at: datetime) -> Outcome:
    items = person.open_items()
    if not 1 <= number <= len(items):
        raise BadInput(
            f"{person.ref} has {len(items)} open threads; {number} is not one of them "
            f"(see `tactful card {person.platform} {person.handle}`)"
        )
    items[number - 1][1].resolved_at = at
    return Outcome(note=f"resolved open thread {number}")


def flag(person: Person, name: str, reason: str | None, at: datetime) -> Outcome:
    validate_flag_name(name)
    gate = Gate()
    clean = gate.text(reason, SHORT_LIMIT)
    _flag(person, name, clean, at)
    _note_injection(person, gate, at)
    return Outcome(tuple(sorted(gate.redacted)), gate.withheld, note=f"flagged {name}")


def unflag(person: Person, name: str) -> Outcome:
    if person.flag(name) is None:
        raise BadInput(f"{person.ref} has no flag {name[:40]!r}")
    person.flags = [f for f in person.flags if f.name != name]
    return Outcome(note=f"removed flag {name}")


def do_not_engage(person: Person, on: bool, reason: str | None, at: datetime) -> Outcome:
    gate = Gate()
    person.do_not_engage = on
    person.dne_reason = gate.text(reason, SHORT_LIMIT) if on else None
    _note_injection(person, gate, at)
    if person.first_seen is None:
        person.first_seen = at
    return Outcome(note="do-not-engage ON" if on else "do-not-engage off")


def set_fields(person: Person, *, kind: str | None = None, collaborator: bool | None = None,
               display_name: str | None = None, person_id: str | None = None,
               at: datetime) -> Outcome:
    if kind is not None:
        if kind not in ACCOUNT_KINDS:
            raise BadInput(f"--kind {kind!r}: an account is one of {', '.join(ACCOUNT_KINDS)}")
        person.kind = kind
    if collaborator is not None:
        person.collaborator = collaborator
    gate = Gate()
    name = gate.text(display_name, NAME_LIMIT)
    if name:
        person.display_name = name
    if person_id is not None:
        person.id = person_id
    _note_injection(person, gate, at)
    if person.first_seen is None:
        person.first_seen = at
    return Outcome(tuple(sorted(gate.redacted)), gate.withheld, note="set")


def refresh(person: Person, settings: MemorySettings) -> None:
    """Recompute what follows from history: order, seen times, ladder, tone, compaction."""
    person.entries.sort(key=lambda e: e.at)
    times = [e.at for e in person.entries] + [c.at for c in person.compacted]
    if times:
        first, last = min(times), max(times)
        person.first_seen = min(first, person.first_seen) if person.first_seen else first
        person.last_seen = max(last, person.last_seen) if person.last_seen else last
    compact(person, settings.compact_after, settings.keep_full)
    person.relationship = ladder.climb(person, settings.tz)
    person.tone_notes, person.tone_basis = ladder.tone(person)
