"""Check-ins: when the friend writes first, and every brake that stops it."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tactful.core.companion import phrases
from tactful.core.companion.checkins import (
    BACKOFF_QUIET,
    DAY2_AFTER,
    JITTER_HOURS,
    NUDGE_QUIET,
    WEEK1_AFTER,
    WEEK1_UNTIL,
    Checkin,
    CheckinState,
    due,
    hours_ok,
    parse_quiet_hours,
)
from tactful.core.responders.base import DraftFailed

from .conftest import Gated, World, until

AMSTERDAM = ZoneInfo("Europe/Amsterdam")
LOS_ANGELES = ZoneInfo("America/Los_Angeles")
START = datetime(2026, 6, 1, 10, 0, tzinfo=AMSTERDAM)  # a Monday, 10:00 in Amsterdam
DAY = timedelta(days=1)


class FixedRandom(random.Random):
    def __init__(self, fraction: float) -> None:
        super().__init__(0)
        self.fraction = fraction

    def random(self) -> float:
        return self.fraction


def state(**changes: object) -> CheckinState:
    """A user who pressed Start at START and has not written since."""
    fresh = CheckinState(started_at=START, last_user_at=None, last_checkin_at=None,
                         checkins_sent=(), unanswered=0, paused=False, blocked=False,
                         tz=AMSTERDAM)
    return replace(fresh, **changes)  # type: ignore[arg-type]


def sent(*days: float, **changes: object) -> CheckinState:
    """A user who got check-ins on these days after START, none answered unless told."""
    times = tuple(START + DAY * d for d in days)
    fields: dict[str, object] = {"checkins_sent": times, "last_checkin_at": times[-1],
                                 "unanswered": len(times)}
    fields.update(changes)
    return state(**fields)


def check(user: CheckinState, now: datetime, *, jitter: float = 0.0, per_week: int = 2,
          backoff: int = 2, quiet: tuple[int, int] = (22, 8)) -> Checkin | None:
    return due(user, now, quiet_hours=quiet, per_week=per_week,
               unanswered_before_backoff=backoff, rng=FixedRandom(jitter))


# ---- the schedule --------------------------------------------------------------------------

def test_day_two() -> None:
    assert check(state(), START + DAY2_AFTER - timedelta(seconds=1)) is None
    assert check(state(), START + DAY2_AFTER) == Checkin("day2")
    assert DAY2_AFTER == 2 * DAY


def test_not_on_someone_who_just_wrote() -> None:
    now = START + 3 * DAY
    assert check(state(last_user_at=now - timedelta(hours=23)), now) is None
    assert check(state(last_user_at=now - timedelta(hours=24)), now) == Checkin("day2")


def test_about_a_week_in() -> None:
    after_day2 = sent(2)
    assert check(after_day2, START + WEEK1_AFTER - timedelta(seconds=1)) is None
    assert check(after_day2, START + WEEK1_AFTER) == Checkin("week1")
    assert WEEK1_AFTER == 7 * DAY


def test_no_nudges_in_the_first_week() -> None:
    # Day 2 went out; six days of quiet would earn a nudge later on, not in the first week.
    assert check(sent(2), START + 6 * DAY) is None


def test_a_late_day_two_keeps_its_distance_from_week_one() -> None:
    late = sent(6)
    assert check(late, START + 7 * DAY) is None
    assert check(late, START + 8 * DAY) == Checkin("week1")


def test_a_missed_week_one_is_not_made_up() -> None:
    # Paused through the second week: at day 14 the week-one slot is gone, a nudge it is.
    user = sent(2, unanswered=0, last_user_at=START + 3 * DAY)
    assert check(user, START + WEEK1_UNTIL - timedelta(seconds=1)) == Checkin("week1")
    assert check(user, START + WEEK1_UNTIL) == Checkin("nudge")


def test_nudges_after_a_quiet_stretch() -> None:
    answered = sent(2, 7, unanswered=0, last_user_at=START + 8 * DAY)
    assert check(answered, START + 8 * DAY + NUDGE_QUIET - timedelta(seconds=1)) is None
    assert check(answered, START + 8 * DAY + NUDGE_QUIET) == Checkin("nudge")
    assert NUDGE_QUIET == 4 * DAY


def test_jitter_reads_the_schedule_a_little_late() -> None:
    at = START + DAY2_AFTER
    assert check(state(), at, jitter=0.5) is None  # 3 of JITTER_HOURS = 6
    assert check(state(), at + timedelta(hours=3), jitter=0.5) == Checkin("day2")
    assert check(state(), at + timedelta(hours=JITTER_HOURS), jitter=1.0) == Checkin("day2")
    seeded = [due(state(), at + timedelta(hours=2), quiet_hours=(22, 8), per_week=2,
                  unanswered_before_backoff=2, rng=random.Random(seed)) for seed in range(40)]
    assert None in seeded and Checkin("day2") in seeded  # some users get it later than others


# ---- the brakes ----------------------------------------------------------------------------

def test_quiet_hours_wrap_midnight() -> None:
    def at(hour: int, minute: int = 0) -> datetime:
        return datetime(2026, 6, 3, hour, minute, tzinfo=AMSTERDAM)

    quiet = (22, 8)
    assert [hours_ok(at(h), AMSTERDAM, quiet) for h in (21, 22, 23, 0, 3, 7, 8)] == [
        True, False, False, False, False, False, True]
    assert hours_ok(at(21, 59), AMSTERDAM, quiet)
    assert not hours_ok(at(7, 59), AMSTERDAM, quiet)
    assert [hours_ok(at(h), AMSTERDAM, (1, 6)) for h in (0, 1, 5, 6)] == [
        True, False, False, True]
    assert all(hours_ok(at(h), AMSTERDAM, (8, 8)) for h in range(24))  # equal: none


def test_quiet_hours_are_the_users_own() -> None:
    now = datetime(2026, 6, 4, 6, 30, tzinfo=UTC)  # 08:30 in Amsterdam, 23:30 in LA
    assert hours_ok(now, AMSTERDAM, (22, 8))
    assert not hours_ok(now, LOS_ANGELES, (22, 8))
    assert check(state(), now) == Checkin("day2")
    assert check(state(tz=LOS_ANGELES), now) is None
    evening = datetime(2026, 6, 3, 22, 30, tzinfo=AMSTERDAM)
    assert check(state(), evening) is None
    assert check(state(), evening, quiet=(23, 7)) == Checkin("day2")


def test_at_most_per_week_in_any_rolling_seven_days() -> None:
    # Nudges on days 24 and 25 were answered on day 26; by day 30 another is due by the quiet
    # stretch, but two in the last seven days is the maximum until day 31.
    user = sent(24, 25, unanswered=0, last_user_at=START + 26 * DAY)
    assert check(user, START + 30 * DAY) is None
    assert check(user, START + 31 * DAY - timedelta(seconds=1)) is None
    assert check(user, START + 31 * DAY) == Checkin("nudge")
    assert check(user, START + 30 * DAY, per_week=3) == Checkin("nudge")
    assert check(user, START + 60 * DAY, per_week=0) is None


def test_the_weekly_maximum_counts_the_last_check_in_even_if_not_in_the_list() -> None:
    user = sent(24, unanswered=0, last_checkin_at=START + 25 * DAY,
                last_user_at=START + 26 * DAY)
    assert check(user, START + 30 * DAY) is None
    assert check(user, START + 30 * DAY, per_week=3) == Checkin("nudge")


def test_back_off_after_two_unanswered() -> None:
    ignored = sent(2, 7)  # day 2 and week 1, no answer
    assert check(ignored, START + 7 * DAY + NUDGE_QUIET) is None
    assert check(ignored, START + 7 * DAY + BACKOFF_QUIET - timedelta(seconds=1)) is None
    assert check(ignored, START + 7 * DAY + BACKOFF_QUIET) == Checkin("nudge")
    assert BACKOFF_QUIET == 14 * DAY


def test_one_more_unanswered_and_it_stops_for_good() -> None:
    stopped = sent(2, 7, 21)
    assert all(check(stopped, START + d * DAY) is None for d in (25, 40, 100, 365))
    assert check(stopped, START + 100 * DAY, backoff=3) == Checkin("nudge")


def test_a_message_from_the_user_resets_the_counters() -> None:
    stopped = sent(2, 7, 21)
    wrote = START + 30 * DAY
    # The caller resets `unanswered`; even before it does, a later message counts as an answer.
    for user in (replace(stopped, last_user_at=wrote),
                 replace(stopped, last_user_at=wrote, unanswered=0)):
        assert check(user, wrote + NUDGE_QUIET - timedelta(seconds=1)) is None
        assert check(user, wrote + NUDGE_QUIET) == Checkin("nudge")
    # A message from before the last check-in is no answer to it.
    assert check(replace(stopped, last_user_at=START + 20 * DAY), START + 60 * DAY) is None


def test_never_when_paused_or_blocked() -> None:
    now = START + DAY2_AFTER
    assert check(state(), now) == Checkin("day2")
    assert check(state(paused=True), now) is None
    assert check(state(blocked=True), now) is None
    nudge_time = START + 40 * DAY
    answered = sent(2, 7, unanswered=0, last_user_at=START + 8 * DAY)
    assert check(answered, nudge_time) == Checkin("nudge")
    assert check(replace(answered, paused=True), nudge_time) is None
    assert check(replace(answered, blocked=True, last_user_at=START + 30 * DAY),
                 nudge_time) is None


# ---- input ---------------------------------------------------------------------------------

def test_quiet_hours_from_the_config() -> None:
    assert parse_quiet_hours("22-8") == (22, 8)
    assert parse_quiet_hours(" 0 - 23 ") == (0, 23)
    for bad in ("24-1", "22", "x-8", "22-8-9"):
        with pytest.raises(ValueError, match="24-hour"):
            parse_quiet_hours(bad)


def test_naive_times_are_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        check(state(), datetime(2026, 6, 5, 12, 0))
    with pytest.raises(ValueError, match="aware"):
        check(state(started_at=datetime(2026, 6, 1, 12, 0)), START + 3 * DAY)


# ---- in the gateway ----------------------------------------------------------------------------

async def test_a_check_in_whose_draft_fails_sends_nothing(world: World) -> None:
    # The user wrote nothing: an apology would be unprompted, and it would come every tick.
    await world.say("chk_a", "hi, nice to meet you")
    before = len(world.texts())
    world.responder.replies = [DraftFailed("test", "down")]
    world.clock.now = datetime(2026, 12, 3, 14, 0, tzinfo=UTC)  # day 3, 15:00 in Amsterdam
    for _ in range(3):  # three timer ticks
        await asyncio.wait_for(world.gateway.check_in(), timeout=20)
        world.clock.advance(seconds=15)
    assert world.texts()[before:] == []


async def test_pause_during_a_check_in_round_stops_that_users_check_in(world: World) -> None:
    await world.say("pau_a", "hi, nice to meet you")
    await world.say("pau_b", "hello from me too")
    gate = Gated(reply="How did the week start?")
    world.gateway.responder = gate
    world.clock.now = datetime(2026, 12, 3, 14, 0, tzinfo=UTC)  # both are due a day-2 check-in
    round_ = asyncio.create_task(world.gateway.check_in())
    try:
        await until(gate.entered.is_set, 5)  # the round drafts pau_a's check-in
        await world.gateway.on_message(world.incoming("pau_b", "/pause"))
    finally:
        gate.opened.set()
    await asyncio.wait_for(round_, timeout=20)
    assert world.texts_to("pau_b")[-1] in phrases.variants("paused", "en")  # nothing after it
