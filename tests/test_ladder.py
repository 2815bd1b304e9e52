"""The relationship ladder, fixed kinds and tone notes, computed from history (docs/memory.md)."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tactful.core.memory import ladder, recording
from tactful.core.memory.person import Person
from tactful.core.memory.settings import MemorySettings

TZ = ZoneInfo("America/New_York")
DAY1 = datetime(2026, 10, 27, 10, 0, tzinfo=TZ)


def person_with(*steps: tuple[str, str, int]) -> Person:
    person = Person(platform="x", handle="someone")
    for n, (kind, direction, day) in enumerate(steps):
        recording.remember(person, kind=kind, direction=direction,
                           at=DAY1 + timedelta(days=day, minutes=n),
                           they="hi" if direction == "inbound" else None)
        recording.refresh(person, MemorySettings(tz=TZ))
    return person


@pytest.mark.parametrize(("steps", "rung"), [
    ([("like", "outbound", 0)], "stranger"),
    ([("reply", "outbound", 0), ("follow", "outbound", 0)], "stranger"),
    ([("like", "inbound", 0)], "stranger"),  # a like does not reach me
    ([("follow", "inbound", 0)], "follower"),
    ([("mention", "inbound", 0)], "follower"),
    ([("dm", "inbound", 0)], "follower"),
    ([("follow", "inbound", 0), ("follow", "outbound", 0)], "mutual"),
    # three interactions, two inbound, but one day: not yet a regular
    ([("reply", "inbound", 0), ("reply", "outbound", 0), ("reply", "inbound", 0)], "follower"),
    # two days but only one inbound
    ([("reply", "inbound", 0), ("reply", "outbound", 1), ("reply", "outbound", 1)], "follower"),
    ([("reply", "inbound", 0), ("reply", "outbound", 0), ("reply", "inbound", 1)], "regular"),
    ([("collab", "outbound", 0)], "collaborator"),
])
def test_rungs(steps: list[tuple[str, str, int]], rung: str) -> None:
    assert person_with(*steps).relationship == rung


def test_collaborator_set_by_hand() -> None:
    person = person_with(("reply", "inbound", 0))
    recording.set_fields(person, collaborator=True, at=DAY1)
    recording.refresh(person, MemorySettings(tz=TZ))
    assert person.relationship == "collaborator"


def test_the_ladder_only_climbs() -> None:
    person = person_with(("reply", "inbound", 0), ("reply", "outbound", 0), ("reply", "inbound", 1))
    assert person.relationship == "regular"
    # History that alone would compute lower (entries gone by hand, a long silence) never demotes.
    person.entries = person.entries[:1]
    recording.refresh(person, MemorySettings(tz=TZ))
    assert ladder.computed_rung(person, TZ) == "follower"
    assert person.relationship == "regular"


def test_fixed_kinds_stay_as_set() -> None:
    person = person_with(("reply", "inbound", 0))
    recording.set_fields(person, kind="bot", at=DAY1)
    for day in range(1, 4):
        recording.remember(person, kind="reply", direction="inbound", at=DAY1 + timedelta(days=day))
        recording.refresh(person, MemorySettings(tz=TZ))
    assert person.kind == "bot"


def test_owner_accounts_from_settings() -> None:
    owners = MemorySettings(tz=TZ, owners=frozenset({"x/me_irl"}))
    person = recording.new_person("x", "me_irl", owners)
    assert person.kind == "owner"
    assert recording.new_person("x", "other", MemorySettings(tz=TZ)).kind == "person"


def test_days_are_counted_in_the_persona_zone() -> None:
    # 23:30 and 00:30 New York time are two days there, although one day in UTC... and back.
    late = datetime(2026, 10, 27, 23, 30, tzinfo=TZ)
    person = Person(platform="x", handle="owl")
    for n, direction in enumerate(["inbound", "outbound", "inbound"]):
        recording.remember(person, kind="reply", direction=direction,
                           at=late + timedelta(minutes=30 * n))
    recording.refresh(person, MemorySettings(tz=TZ))
    assert person.relationship == "regular"
    recording.refresh(person, MemorySettings(tz=ZoneInfo("UTC")))
    assert ladder.computed_rung(person, ZoneInfo("UTC")) == "follower"


def test_tone_uses_feature_words_and_never_quotes() -> None:
    person = Person(platform="x", handle="chatty")
    texts = ["haha does the API stream tokens?", "thanks! what GPU did you use?",
             "lol ok, appreciate the benchmark"]
    for n, they in enumerate(texts):
        recording.remember(person, kind="reply", direction="outbound",
                           at=DAY1 + timedelta(hours=2 * n), me="sure")
        recording.remember(person, kind="reply", direction="inbound",
                           at=DAY1 + timedelta(hours=2 * n + 1), they=they)
    recording.refresh(person, MemorySettings(tz=TZ))
    notes = person.tone_notes.split(", ")
    assert {"asks questions", "playful", "warm", "technical", "replies back"} <= set(notes)
    assert person.tone_basis == 3
    vocabulary = {"asks questions", "playful", "warm", "technical", "critical", "brief",
                  "detailed", "replies back"}
    assert set(notes) <= vocabulary


def test_tone_reads_nothing_from_redaction_markers() -> None:
    person = Person(platform="x", handle="private")
    for n in range(3):
        recording.remember(person, kind="reply", direction="inbound",
                           at=DAY1 + timedelta(hours=n),
                           they="you can reach me on +44 20 7946 0958 or mail me at "
                                "pat@example.com, my card is 4111 1111 1111 1111")
    assert "[redacted:phone]" in (person.entries[0].they or "")
    recording.refresh(person, MemorySettings(tz=TZ))
    assert "playful" not in person.tone_notes
    assert person.tone_notes == ""  # nothing of the markers reads as a feature
