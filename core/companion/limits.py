"""Limits (docs/companion.md): a sliding window and a daily cap per user, so a free companion stays
affordable, without ever feeling like a wall.

This module only decides; it does no I/O and reads no clock. Over a limit the gateway stores
the message, sends the one friendly "hold" line (phrases.py) and answers at `release_at(until)`.

Choices made here (also in docs/companion.md, "Limits"):

- `times` should be the times of the user's messages that were let through (answered at once,
  or joined into a burst), not of messages being held. Held messages are answered once, merged,
  when the hold ends; the caller then records one time for that answer. So a user who keeps
  typing while held does not push their own answer further away, and `until` is exactly when
  that answer may go.
- The window: a message at `t` is inside it while `now - window < t`, so it leaves exactly at
  `t + window`. With `window_messages` inside, the next is held until enough leave that it would
  fit (with exactly `window_messages` inside: when the oldest leaves).
- The day is the calendar day in the user's zone `tz`, however long it is: 23 or 25 hours on a
  day the clocks change. Over the cap, the hold lasts until the next local midnight; where a
  zone skips midnight (Cuba in March, for one) that is the first instant of the new day.
- Both limits at once: the later `until` wins, with its reason; on a tie, "daily".
- All arithmetic is on absolute time, never on wall clocks, so a window that spans the night
  the clocks change is still exactly `window_minutes` long. `until` and `release_at` are given
  in UTC: a wall-clock time in the hour that repeats when the clocks go back carries `fold=1`,
  and such a time never compares equal to a time in another zone (PEP 495), a trap for any
  caller that stores or compares it. Convert with `.astimezone(tz)` only to show it.
- Times later than `now` (a clock stepped back) still count: being strict is the safe side.
- Check-ins (checkins.py) never count toward these limits; neither do the bot's own messages.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta, tzinfo
from typing import Literal

RELEASE_JITTER_MIN = 3.0  # seconds after the hold ends: at least a beat ...
RELEASE_JITTER_MAX = 30.0  # ... at most half a minute, so the answer never feels like a timer

Reason = Literal["window", "daily"]


@dataclass(frozen=True)
class Allowed:
    """The message may be answered now."""


@dataclass(frozen=True)
class Held:
    """The message waits until `until` (aware, UTC) because of `reason`."""

    until: datetime
    reason: Reason


def decide(times: Sequence[datetime], now: datetime, tz: tzinfo, *, window_messages: int,
           window_minutes: float, daily_cap: int) -> Allowed | Held:
    """May the user's message at `now` be answered now, given their earlier `times` (any order,
    not including this one)? See the module docstring for what `times` should hold."""
    stamps = [_utc(t) for t in times]
    current = _utc(now)
    holds: list[Held] = []

    window = timedelta(minutes=window_minutes)
    inside = sorted(t for t in stamps if t > current - window)
    if len(inside) >= window_messages:
        # The message that must leave for this one to fit: the oldest when the window is exactly
        # full, a later one when it is over-full (the limits changed, or the clock stepped back).
        leaving = inside[len(inside) - window_messages]
        holds.append(Held(leaving + window, "window"))

    today = current.astimezone(tz).date()
    if sum(1 for t in stamps if t.astimezone(tz).date() == today) >= daily_cap:
        holds.append(Held(next_midnight(current, tz), "daily"))

    if not holds:
        return Allowed()
    return max(holds, key=lambda hold: (hold.until, hold.reason == "daily"))


def release_at(until: datetime, rng: random.Random,
               jitter: tuple[float, float] = (RELEASE_JITTER_MIN, RELEASE_JITTER_MAX)
               ) -> datetime:
    """When to answer the held messages (UTC): a few seconds to half a minute (`jitter`, in
    seconds) after `until`."""
    jitter_delta = timedelta(seconds=rng.uniform(*jitter))
    return _utc(until) + jitter_delta


def next_midnight(now: datetime, tz: tzinfo) -> datetime:
    """The first instant (UTC) of the next calendar day in `tz`."""
    tomorrow = _utc(now).astimezone(tz).date() + timedelta(days=1)
    # A midnight the clocks skip has no wall time; read with fold=0 (PEP 495) it lands on the
    # instant the day begins (01:00 new time), which is what "midnight" means that day.
    return datetime.combine(tomorrow, time(0), tzinfo=tz).astimezone(UTC)


def _utc(value: datetime) -> datetime:
    """Absolute time: comparisons within one zone would read wall clocks and ignore `fold`."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("limits need aware datetimes (with a time zone), got a naive one")
    return value.astimezone(UTC)
