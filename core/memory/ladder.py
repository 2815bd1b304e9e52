"""The relationship ladder and the tone notes, computed from history (docs/memory.md).

The ladder only climbs: the rung stored in the file is a floor, so compaction or a quiet month
never demotes anyone. Tone notes are feature words counted from their paraphrased side; they
never quote anyone.
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo
from itertools import pairwise

from tactful.core.memory.clock import local_day
from tactful.core.memory.person import LADDER, Person

# The kinds by which someone "reaches me" (docs/memory.md); an inbound like does not.
REACHING = frozenset({"reply", "mention", "quote", "question", "dm", "follow", "collab"})


def computed_rung(person: Person, tz: tzinfo) -> str:
    history = [(e.at, e.kind, e.direction) for e in person.compacted]
    history += [(e.at, e.kind, e.direction) for e in person.entries]
    inbound = [item for item in history if item[2] == "inbound"]
    rung = "stranger"
    if any(kind in REACHING for _, kind, _ in inbound):
        rung = "follower"
        if any(kind == "follow" and d == "outbound" for _, kind, d in history):
            rung = "mutual"
    if len(history) >= 3 and len(inbound) >= 2 and _two_days(history, tz):
        rung = "regular"
    if person.collaborator or any(kind == "collab" for _, kind, _ in history):
        rung = "collaborator"
    return rung


def _two_days(history: list[tuple[datetime, str, str]], tz: tzinfo) -> bool:
    """Whether the history spans two days or more of the persona's calendar (asked of every
    person written: a sync-log of thousands stops at the second day instead of converting
    every moment)."""
    first = None
    for at, _, _ in history:
        day = local_day(at, tz)
        if first is None:
            first = day
        elif day != first:
            return True
    return False


def climb(person: Person, tz: tzinfo) -> str:
    """The higher of the stored rung and the computed one."""
    stored = LADDER.index(person.relationship) if person.relationship in LADDER else 0
    return LADDER[max(stored, LADDER.index(computed_rung(person, tz)))]


_PLAYFUL = re.compile(r"\b(haha+|hehe+|lol|lmao|rofl|jk)\b|[😂🤣😄😆😉😜🙃😅]|[:;]-?[)pD]|!!",
                      re.IGNORECASE)
_WARM = re.compile(r"\b(thanks?|thank you|thx|ty|appreciate\w*|love[ds]?|glad|kind|"
                   r"grateful|cheers|congrats\w*)\b|[❤💜💙🙏🥰😊]", re.IGNORECASE)
_TECHNICAL = re.compile(
    r"\b(api|sdk|eval\w*|benchmark\w*|latency|gpu|cuda|python|rust|typescript|model\w*|"
    r"token\w*|prompt\w*|dataset\w*|fine-?tun\w*|inference|embedding\w*|llm\w*|"
    r"repo\w*|commit\w*|compiler|kernel|database|sql|regex|docker|deploy\w*)\b|`",
    re.IGNORECASE)
_CRITICAL = re.compile(r"\b(disagree\w*|wrong|doubt\w*|skeptic\w*|not convinced|nope|"
                       r"overhyped|misleading)\b", re.IGNORECASE)


# What the scrubber left in place of a secret ("[redacted:phone]"): tactful's words, not
# theirs, so no feature is read from it (its ":p" would read as a playful face).
_MARKER = re.compile(r"\[redacted:[a-z0-9_-]{1,40}\]")


def tone(person: Person) -> tuple[str, int]:
    """Feature words and how many of their notes they were counted from."""
    texts = [_MARKER.sub(" ", e.they) for e in person.entries
             if e.direction == "inbound" and e.they]
    features: list[str] = []
    if texts:
        share = max(1, len(texts) // 3)

        def often(pattern: re.Pattern[str]) -> bool:
            return sum(1 for t in texts if pattern.search(t)) >= share

        questions = sum(1 for t in texts if "?" in t)
        questions += sum(1 for e in person.entries if e.kind == "question"
                         and e.direction == "inbound" and not (e.they and "?" in e.they))
        if questions >= share:
            features.append("asks questions")
        if often(_PLAYFUL):
            features.append("playful")
        if often(_WARM):
            features.append("warm")
        if often(_TECHNICAL):
            features.append("technical")
        if often(_CRITICAL):
            features.append("critical")
        average = sum(len(t) for t in texts) / len(texts)
        if average < 40:
            features.append("brief")
        elif average > 200:
            features.append("detailed")
    ordered = sorted(person.entries, key=lambda e: e.at)
    if any(a.direction == "outbound" and b.direction == "inbound" and b.kind != "like"
           for a, b in pairwise(ordered)):
        features.append("replies back")
    return ", ".join(features), len(texts)
