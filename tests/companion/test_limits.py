"""Limits: the sliding window and the daily cap in the user's own time zone; and in the gateway,
held messages that wait for their window, are answered once, and count when answered."""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tactful.adapters.telegram.companion import Companion
from tactful.core.companion.limits import (
    RELEASE_JITTER_MAX,
    RELEASE_JITTER_MIN,
    Allowed,
    Held,
    decide,
    next_midnight,
    release_at,
)

from .conftest import UNIQUE, Gated, World, until

AMSTERDAM = ZoneInfo("Europe/Amsterdam")
LOS_ANGELES = ZoneInfo("America/Los_Angeles")
HAVANA = ZoneInfo("America/Havana")  # skips midnight when summer time starts
BASE = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
WINDOW = {"window_messages": 20, "window_minutes": 10, "daily_cap": 150}
NO_WINDOW = {"window_messages": 10_000, "window_minutes": 10}


class FixedRandom(random.Random):
    def __init__(self, fraction: float) -> None:
        super().__init__(0)
        self.fraction = fraction

    def random(self) -> float:
        return self.fraction


def burst(count: int, start: datetime = BASE, every: timedelta = timedelta(seconds=10)
          ) -> list[datetime]:
    return [start + every * i for i in range(count)]


# ---- the window ----------------------------------------------------------------------------

def test_the_twentieth_is_allowed_and_the_twenty_first_held() -> None:
    now = BASE + timedelta(minutes=5)
    assert decide(burst(19), now, UTC, **WINDOW) == Allowed()
    assert decide(burst(20), now, UTC, **WINDOW) == Held(BASE + timedelta(minutes=10), "window")


def test_allowed_again_exactly_when_the_oldest_leaves() -> None:
    leaves = BASE + timedelta(minutes=10)
    assert decide(burst(20), leaves, UTC, **WINDOW) == Allowed()
    assert isinstance(decide(burst(20), leaves - timedelta(microseconds=1), UTC, **WINDOW), Held)


def test_times_in_any_order() -> None:
    times = burst(20)
    random.Random(3).shuffle(times)
    assert decide(times, BASE + timedelta(minutes=5), UTC, **WINDOW) == Held(
        BASE + timedelta(minutes=10), "window")


def test_an_over_full_window_waits_for_enough_to_leave() -> None:
    # 22 inside a window of 20 (the limit was lowered): two must leave before one more fits.
    held = decide(burst(22), BASE + timedelta(minutes=5), UTC, **WINDOW)
    assert held == Held(BASE + timedelta(seconds=20, minutes=10), "window")


def test_old_messages_do_not_count() -> None:
    times = burst(30, start=BASE - timedelta(hours=1))
    assert decide(times, BASE, UTC, **WINDOW) == Allowed()


def test_the_window_is_absolute_time_on_the_night_the_clocks_go_back() -> None:
    # 02:55 summer time, then ten minutes later it is 02:05 winter time.
    first = datetime(2026, 10, 25, 2, 55, tzinfo=AMSTERDAM, fold=0)
    held = decide([first], first + timedelta(minutes=1), AMSTERDAM, window_messages=1,
                  window_minutes=10, daily_cap=150)
    assert isinstance(held, Held)
    assert held.until == datetime(2026, 10, 25, 1, 5, tzinfo=UTC)  # 02:05 winter time
    assert held.until.tzinfo is UTC


def test_wall_clocks_that_repeat_are_not_confused() -> None:
    summer = datetime(2026, 10, 25, 2, 50, tzinfo=AMSTERDAM, fold=0)  # 00:50 UTC
    winter = datetime(2026, 10, 25, 2, 10, tzinfo=AMSTERDAM, fold=1)  # 01:10 UTC, 20 min later
    assert decide([summer], winter, AMSTERDAM, window_messages=1, window_minutes=10,
                  daily_cap=150) == Allowed()


# ---- the daily cap -------------------------------------------------------------------------

EVENING_UTC = [datetime(2026, 6, 10, 21, minute, tzinfo=UTC) for minute in (30, 40, 50)]


def test_the_same_instants_are_one_day_in_los_angeles_and_two_in_amsterdam() -> None:
    now = datetime(2026, 6, 10, 22, 30, tzinfo=UTC)  # 00:30 in Amsterdam, 15:30 in LA
    assert decide(EVENING_UTC, now, AMSTERDAM, daily_cap=3, **NO_WINDOW) == Allowed()
    assert decide(EVENING_UTC, now, LOS_ANGELES, daily_cap=3, **NO_WINDOW) == Held(
        datetime(2026, 6, 11, 0, 0, tzinfo=LOS_ANGELES), "daily")


def test_held_until_local_midnight() -> None:
    now = datetime(2026, 6, 10, 21, 55, tzinfo=UTC)  # 23:55 in Amsterdam
    held = decide(EVENING_UTC, now, AMSTERDAM, daily_cap=3, **NO_WINDOW)
    assert held == Held(datetime(2026, 6, 10, 22, 0, tzinfo=UTC), "daily")
    assert isinstance(held, Held)
    assert held.until.tzinfo is UTC
    assert decide(EVENING_UTC, held.until, AMSTERDAM, daily_cap=3, **NO_WINDOW) == Allowed()
    assert decide(EVENING_UTC, now, AMSTERDAM, daily_cap=4, **NO_WINDOW) == Allowed()


def test_a_twenty_five_hour_day_is_one_day() -> None:
    # 25 October 2026: Amsterdam's clocks go back. 00:30 and 23:30 local are 24 hours apart
    # and still the same day; a rolling 24 hours would have let the third message through.
    times = [datetime(2026, 10, 25, 0, 30, tzinfo=AMSTERDAM),
             datetime(2026, 10, 25, 12, 0, tzinfo=AMSTERDAM)]
    now = datetime(2026, 10, 25, 23, 30, tzinfo=AMSTERDAM)
    assert now.astimezone(UTC) - times[0].astimezone(UTC) == timedelta(hours=24)
    assert decide(times, now, AMSTERDAM, daily_cap=2, **NO_WINDOW) == Held(
        datetime(2026, 10, 25, 23, 0, tzinfo=UTC), "daily")


def test_a_twenty_three_hour_day_is_one_day() -> None:
    # 29 March 2026: the clocks go forward. The message at 23:30 the evening before is less
    # than 24 hours earlier, but it was yesterday.
    yesterday = datetime(2026, 3, 28, 23, 30, tzinfo=AMSTERDAM)
    now = datetime(2026, 3, 29, 23, 10, tzinfo=AMSTERDAM)
    assert now.astimezone(UTC) - yesterday.astimezone(UTC) < timedelta(hours=23)
    assert decide([yesterday], now, AMSTERDAM, daily_cap=1, **NO_WINDOW) == Allowed()
    early = datetime(2026, 3, 29, 1, 30, tzinfo=AMSTERDAM)  # still winter time
    assert decide([early], now, AMSTERDAM, daily_cap=1, **NO_WINDOW) == Held(
        datetime(2026, 3, 29, 22, 0, tzinfo=UTC), "daily")


def test_a_skipped_midnight_is_the_first_instant_of_the_day() -> None:
    evening = datetime(2026, 3, 7, 20, 0, tzinfo=HAVANA)
    midnight = next_midnight(evening, HAVANA)
    assert midnight == datetime(2026, 3, 8, 5, 0, tzinfo=UTC)
    local = midnight.astimezone(HAVANA)
    assert (local.day, local.hour, local.utcoffset()) == (8, 1, timedelta(hours=-4))
    assert next_midnight(midnight - timedelta(microseconds=1), HAVANA) == midnight
    assert next_midnight(midnight, HAVANA) == datetime(2026, 3, 9, 4, 0, tzinfo=UTC)


# ---- both, and the release -----------------------------------------------------------------

def test_both_limits_the_later_wins() -> None:
    tz = AMSTERDAM
    late = datetime(2026, 6, 10, 23, 55, tzinfo=tz)
    times = burst(3, start=late - timedelta(minutes=2))
    # The window (until 00:03) ends after midnight (00:00): the window is the reason.
    assert decide(times, late, tz, window_messages=3, window_minutes=10, daily_cap=3) == Held(
        datetime(2026, 6, 11, 0, 3, tzinfo=tz), "window")
    # Earlier in the evening midnight is later than the window (20:08): the day is the reason.
    early = datetime(2026, 6, 10, 20, 0, tzinfo=tz)
    times = burst(3, start=early - timedelta(minutes=2))
    assert decide(times, early, tz, window_messages=3, window_minutes=10, daily_cap=3) == Held(
        datetime(2026, 6, 11, 0, 0, tzinfo=tz), "daily")


def test_a_tie_is_the_daily_cap() -> None:
    tz = AMSTERDAM
    times = [datetime(2026, 6, 10, 23, 55, tzinfo=tz)]
    now = datetime(2026, 6, 10, 23, 56, tzinfo=tz)
    assert decide(times, now, tz, window_messages=1, window_minutes=5, daily_cap=1) == Held(
        datetime(2026, 6, 11, 0, 0, tzinfo=tz), "daily")


def test_release_comes_a_few_seconds_to_half_a_minute_after() -> None:
    until = datetime(2026, 6, 11, 0, 0, tzinfo=AMSTERDAM)
    assert release_at(until, FixedRandom(0.0)) == until + timedelta(seconds=RELEASE_JITTER_MIN)
    assert release_at(until, FixedRandom(1.0)) == until + timedelta(seconds=RELEASE_JITTER_MAX)
    assert (RELEASE_JITTER_MIN, RELEASE_JITTER_MAX) == (3.0, 30.0)
    seeded = [release_at(until, random.Random(seed)) - until for seed in range(50)]
    assert all(timedelta(seconds=3) <= gap <= timedelta(seconds=30) for gap in seeded)
    assert len(set(seeded)) == 50  # not a timer: every release is a little different
    assert release_at(until, random.Random(9)) == release_at(until, random.Random(9))


def test_release_counts_real_seconds_across_the_clock_change() -> None:
    until = datetime(2026, 10, 25, 2, 59, 50, tzinfo=AMSTERDAM, fold=0)
    released = release_at(until, FixedRandom(1.0))
    assert released == datetime(2026, 10, 25, 1, 0, 20, tzinfo=UTC)  # 02:00:20 winter time
    assert released.tzinfo is UTC


def test_naive_times_are_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        decide([datetime(2026, 1, 1, 12, 0)], BASE, UTC, **WINDOW)
    with pytest.raises(ValueError, match="aware"):
        decide([], datetime(2026, 1, 1, 12, 0), UTC, **WINDOW)
    with pytest.raises(ValueError, match="aware"):
        release_at(datetime(2026, 1, 1, 12, 0), FixedRandom(0.5))


# ---- in the gateway: held messages wait for their window, and their answer counts -------------

async def test_the_answer_to_held_messages_counts_toward_the_window(world: World) -> None:
    for n in range(3):  # 12:00:00, 12:00:30, 12:01:00: the window of 3 is full
        await world.say("lim_a", f"message {n}")
        world.clock.advance(seconds=30)
    await world.say("lim_a", "held one")  # 12:01:30, held until 12:10:00 (+3-30 s)
    world.clock.now = datetime(2026, 11, 30, 12, 10, 31, tzinfo=UTC)
    assert await asyncio.wait_for(world.gateway.release_pending(), timeout=20) == 1
    world.clock.advance(seconds=9)
    await world.say("lim_a", "again 1")  # 12:10:40: in the last 10 min: 12:01:00, the release
    world.clock.advance(seconds=10)
    await world.say("lim_a", "again 2")  # 12:10:50: 12:01:00, release, 12:10:40 -> full
    assert world.gateway.store.pending(world.chat_id("lim_a")), \
        "a fourth answer went out within 10 minutes with a window of 3"


async def test_a_tick_during_the_join_pause_turn_leaves_a_held_message_held(
        world: World) -> None:
    # The chat's queued row is due, its held row is not: only what is due is answered.
    gateway = world.gateway
    for n in (1, 2):
        await world.say("early_a", f"message {n}")
        world.clock.advance(seconds=30)
    gate = threading.Event()

    def slow() -> str:
        gate.wait(10)
        return "Sure thing."

    world.responder.replies = [slow]
    await gateway.on_message(world.incoming("early_a", "message 3"))  # queued, the pause runs
    await until(lambda: len(world.responder.prompts) == 3)  # its turn is drafting
    over = world.incoming("early_a", "message 4 over the window")
    await gateway.on_message(over)  # the window (3 in 10 min) is full: held
    held = gateway.store.pending(over.chat_id, kind="held")
    assert [p.text for p in held] == ["message 4 over the window"]
    opens = held[0].release_at
    world.clock.advance(seconds=5)  # the 15-second timer tick comes while the model thinks
    tick = asyncio.create_task(gateway.release_pending())
    await asyncio.sleep(0.05)
    gate.set()
    await asyncio.wait_for(gateway.drain(), timeout=20)
    await asyncio.wait_for(tick, timeout=20)
    assert world.clock() < opens  # the window is still closed ...
    assert not any("message 4" in p.user for p in world.responder.prompts)  # ... not answered
    assert gateway.store.pending(over.chat_id, kind="held")  # still waiting


async def test_after_a_restart_a_queued_row_is_answered_without_the_held_one(
        world: World) -> None:
    gateway = world.gateway
    for n in (1, 2):
        await world.say("early_b", f"message {n}")
        world.clock.advance(seconds=30)
    await gateway.on_message(world.incoming("early_b", "message 3"))  # queued
    over = world.incoming("early_b", "message 4 over the window")
    await gateway.on_message(over)  # held for ~9 minutes
    world.crash_in_join_pause()
    opens = gateway.store.pending(over.chat_id, kind="held")[0].release_at
    world.clock.advance(seconds=10)
    await gateway.release_pending()  # the first tick after the restart
    assert world.clock() < opens
    assert "message 3" in world.responder.prompts[-1].user  # the queued one: right
    assert "message 4" not in world.responder.prompts[-1].user  # the held one: too early


async def test_a_queued_message_redelivered_after_a_restart_is_counted_once(
        world: World) -> None:
    message = world.incoming("again_a", "hello?")
    await world.gateway.on_message(message)
    world.crash_in_join_pause()
    await world.gateway.on_message(message)  # Telegram redelivers it after the restart
    times = world.gateway.store.message_times(message.chat_id,
                                              datetime(2026, 11, 29, tzinfo=UTC))
    assert len(times) == 1, times


async def test_a_queued_message_redelivered_after_a_restart_gets_no_hold_line(
        world: World) -> None:
    for n in (1, 2):
        await world.say("again_b", f"message {n}")
        world.clock.advance(seconds=30)
    message = world.incoming("again_b", "message 3")
    await world.gateway.on_message(message)  # the third in the window: let through, queued
    world.crash_in_join_pause()
    before = list(world.texts())
    await world.gateway.on_message(message)  # redelivered
    assert world.texts() == before, world.texts()[len(before):]  # no "give me a moment"


async def test_stopping_during_a_held_release_keeps_the_held_messages(world: World) -> None:
    # Answered, or still held for the next start: never silently dropped.
    for n in range(3):
        await world.say("stp_a", f"message {n}")
        world.clock.advance(seconds=30)
    await world.say("stp_a", f"please remember {UNIQUE}")  # held
    chat = world.chat_id("stp_a")
    gate = Gated(reply="Sorry for the wait!")
    world.gateway.responder = gate
    world.clock.advance(minutes=11)
    companion = Companion(world.gateway, world.gateway.channel.bot,  # type: ignore[attr-defined]
                          world.gateway.log, world.clock, pass_every=3600, tick=0.02)
    stop = threading.Event()
    timers = asyncio.create_task(companion._timers(stop))
    try:
        await until(gate.entered.is_set, 5)  # the held answer is being drafted ...
        stop.set()
        timers.cancel()  # ... when `tactful run` gets SIGTERM (as Companion.run stops)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(timers, timeout=20)
    finally:
        gate.opened.set()
    sent = world.texts_to("stp_a")
    kept = [p.text for p in world.gateway.store.pending(chat)]
    assert "Sorry for the wait!" in sent or any(UNIQUE in text for text in kept)


async def test_held_messages_share_one_release_and_merge_into_one_answer_in_order(
        world: World) -> None:
    for n in range(3):  # 12:00:00, 12:00:30, 12:01:00: the window of 3 is full
        await world.say("mrg_a", f"message {n}")
        world.clock.advance(seconds=30)
    before = len(world.texts_to("mrg_a"))
    for n in range(6):  # six over the window, each drawing from the jitter if it could
        await world.say("mrg_a", f"held {n}")
        world.clock.advance(seconds=20)
    world.clock.now = datetime(2026, 11, 30, 12, 10, 1, tzinfo=UTC)  # the window opened ...
    await world.say("mrg_a", "held late")  # ... but its release has not come: this one waits
    chat = world.chat_id("mrg_a")
    held = world.gateway.store.pending(chat, kind="held")
    assert len(held) == 7
    assert len({p.release_at for p in held}) == 1  # one release time for the chat
    assert len(world.texts_to("mrg_a")) == before + 1  # one hold line, not one per message
    world.clock.now = held[0].release_at
    assert await asyncio.wait_for(world.gateway.release_pending(), timeout=20) == 1
    assert await world.gateway.release_pending() == 0
    prompt = world.responder.prompts[-1].user
    order = [prompt.index(f"held {n}") for n in range(6)] + [prompt.index("held late")]
    assert order == sorted(order)  # merged, in the order they were written
    assert len(world.texts_to("mrg_a")) == before + 2  # the hold line and one answer
    assert not world.gateway.store.pending(chat)


async def test_a_longer_hold_moves_the_whole_chats_release(world: World) -> None:
    # Held by the window until 12:10; then the operator lowers the daily cap, and the next
    # message is held until midnight: every held message of the chat waits for midnight.
    for n in range(3):
        await world.say("mrg_b", f"message {n}")
        world.clock.advance(seconds=30)
    await world.say("mrg_b", "held 1")
    chat = world.chat_id("mrg_b")
    [first] = world.gateway.store.pending(chat, kind="held")
    assert first.release_at < datetime(2026, 11, 30, 12, 11, tzinfo=UTC)
    world.gateway.config = replace(world.gateway.config, daily_cap=3)
    await world.say("mrg_b", "held 2")
    releases = {p.release_at for p in world.gateway.store.pending(chat, kind="held")}
    assert len(releases) == 1
    assert releases.pop() > datetime(2026, 11, 30, 23, 0, tzinfo=UTC)  # Amsterdam midnight
    world.clock.now = datetime(2026, 11, 30, 12, 11, tzinfo=UTC)
    assert await world.gateway.release_pending() == 0  # held 1 waits with held 2
