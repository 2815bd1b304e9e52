"""Compaction: past `compact_after` entries, keep the latest `keep_full` in full (docs/memory.md).

Each older entry becomes one dated line. What must never be lost stays with it: every open item
(resolved or not), the link and the thread. Flags live in the header and are untouched.
"""

from __future__ import annotations

from tactful.core.memory.person import CompactEntry, Entry, Person
from tactful.core.memory.text import cut

SUMMARY_PART = 90


def summarize(entry: Entry) -> str:
    if entry.withheld is not None:
        return f"content withheld: {entry.withheld}"
    parts = []
    if entry.they:
        parts.append(f'they: "{cut(entry.they, SUMMARY_PART)}"')
    if entry.me:
        parts.append(f"me: {cut(entry.me, SUMMARY_PART)}")
    if entry.topics:
        parts.append(f"[{', '.join(entry.topics)}]")
    return " / ".join(parts) or entry.kind


def compact(person: Person, compact_after: int, keep_full: int) -> int:
    """Compact in place; returns how many entries became lines."""
    if len(person.entries) <= compact_after:
        return 0
    older, person.entries = person.entries[:-keep_full], person.entries[-keep_full:]
    person.compacted.extend(
        CompactEntry(at=e.at, kind=e.kind, direction=e.direction, summary=summarize(e),
                     link=e.link, thread=e.thread, open=e.open)
        for e in older
    )
    person.compacted.sort(key=lambda c: c.at)
    return len(older)
