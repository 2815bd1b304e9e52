"""Check-ins (docs/companion.md): the friend writes first now and then, when every rule allows it.

Pure policy, no I/O and no clock: the gateway keeps a `CheckinState` per user, asks `due` now
and then, and sends what it says through the pipeline's guards. Check-ins never count toward the
daily cap or the sliding window (limits.py): the caller must not add their times to the ones it
passes to `limits.decide`.

The caller keeps the state: on each check-in sent it appends the time to `checkins_sent`, sets
`last_checkin_at` and adds one to `unanswered`; on each message from the user it sets
`last_user_at` and resets `unanswered` to 0 ("a message from the user resets the counters").
`due` does not rely on that reset alone: a user message later than the last check-in counts as
an answer, whatever `unanswered` says. `paused` is /pause; `blocked` is set when the platform
says the bot was blocked, and stays until the user writes again.

Choices made here (also in docs/companion.md, "Check-ins"):

- The brakes, checked first, on the real `now`: blocked, paused, quiet hours in the user's zone
  (`(22, 8)` holds from 22:00 to 07:59 and may wrap midnight; equal hours mean none), and at
  most `per_week` check-ins in any rolling 7 days (`per_week` 0: none at all).
- "day2" once the user is `DAY2_AFTER` in, until `WEEK1_AFTER`, if none was sent yet. "week1"
  from `WEEK1_AFTER` until `WEEK1_UNTIL`, if none was sent since `WEEK1_AFTER`. Both only when
  the user has been quiet for `ONBOARDING_QUIET` (a friend does not check in on someone they
  talked to an hour ago) and the last check-in is `MIN_GAP` old. One missed (paused, or the user
  was busy talking) is skipped, not made up later.
- "nudge" from `WEEK1_AFTER` on, once `NUDGE_QUIET` has passed since the last contact either way
  (the user's message, or a check-in).
- Back-off: after `unanswered_before_backoff` unanswered in a row only a nudge, and only after
  `BACKOFF_QUIET` since the last contact; one more unanswered and nothing at all until the user
  writes.
- The schedule (not the brakes) is read at `now` minus a jitter of 0..`JITTER_HOURS` from `rng`,
  so check-ins do not land on the hour like a timer. For a stable time per user, seed `rng` from
  something stable (the chat and its last contact); a fresh `rng` per call still obeys every
  rule, it only fires nearer the earliest moment.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Literal

DAY2_AFTER = timedelta(days=2)  # "a couple of days after the start"
WEEK1_AFTER = timedelta(days=7)  # "about a week in"
WEEK1_UNTIL = timedelta(days=14)  # a week-one check-in not sent by then is skipped
ONBOARDING_QUIET = timedelta(days=1)  # the user is quiet this long before day2 or week1
MIN_GAP = timedelta(days=2)  # between any two check-ins
NUDGE_QUIET = timedelta(days=4)  # "occasional nudges after a quiet stretch"
BACKOFF_QUIET = timedelta(days=14)  # after unanswered ones: only after this long, and once
WEEK = timedelta(days=7)  # the rolling window of the weekly maximum
JITTER_HOURS = 6.0  # the schedule is read up to this many hours late

Kind = Literal["day2", "week1", "nudge"]
_HOURS = re.compile(r"\s*(\d{1,2})\s*-\s*(\d{1,2})\s*")


@dataclass(frozen=True)
class CheckinState:
    """What the caller keeps per user; all times aware (any zone), `tz` is the user's zone."""

    started_at: datetime
    last_user_at: datetime | None
    last_checkin_at: datetime | None
    checkins_sent: tuple[datetime, ...]
    unanswered: int
    paused: bool
    blocked: bool
    tz: tzinfo


@dataclass(frozen=True)
class Checkin:
    """A check-in to send now, and which one (the prompt says how to open it)."""

    kind: Kind


def due(state: CheckinState, now: datetime, *, quiet_hours: tuple[int, int], per_week: int,
        unanswered_before_backoff: int, rng: random.Random) -> Checkin | None:
    """The check-in to send to this user at `now`, or None when none is due or a brake holds."""
    jitter = timedelta(hours=rng.uniform(0.0, JITTER_HOURS))
    current = _utc(now)
    sent = sorted({_utc(t) for t in state.checkins_sent}
                  | ({_utc(state.last_checkin_at)} if state.last_checkin_at else set()))
    if state.blocked or state.paused or not hours_ok(current, state.tz, quiet_hours):
        return None
    if sum(1 for t in sent if t > current - WEEK) >= per_week:
        return None

    at = current - jitter  # the schedule is read a little late
    start = _utc(state.started_at)
    user = _utc(state.last_user_at) if state.last_user_at else None
    last_sent = sent[-1] if sent else None
    answered = user is not None and (last_sent is None or user > last_sent)
    unanswered = 0 if answered else state.unanswered
    last_contact = max(t for t in (start, user, last_sent) if t is not None)

    if unanswered > unanswered_before_backoff:
        return None  # stopped for good, until the user writes
    if unanswered == unanswered_before_backoff:
        return Checkin("nudge") if at - last_contact >= BACKOFF_QUIET else None

    user_quiet = at - (user or start) >= ONBOARDING_QUIET
    gap_ok = last_sent is None or at - last_sent >= MIN_GAP
    if start + DAY2_AFTER <= at < start + WEEK1_AFTER:
        none_yet = not any(t >= start for t in sent)
        return Checkin("day2") if none_yet and user_quiet and gap_ok else None
    if start + WEEK1_AFTER <= at < start + WEEK1_UNTIL and not any(
            t >= start + WEEK1_AFTER for t in sent) and user_quiet and gap_ok:
        return Checkin("week1")
    if at >= start + WEEK1_AFTER and at - last_contact >= NUDGE_QUIET:
        return Checkin("nudge")
    return None


def hours_ok(now: datetime, tz: tzinfo, quiet_hours: tuple[int, int]) -> bool:
    """False from the first quiet hour until the last one ends, in `tz`; the range may wrap
    midnight ((22, 8): 22:00 to 07:59 is quiet). Equal hours mean no quiet hours."""
    begin, end = quiet_hours
    hour = _utc(now).astimezone(tz).hour
    if begin == end:
        return True
    quiet = begin <= hour < end if begin < end else hour >= begin or hour < end
    return not quiet


def parse_quiet_hours(text: str) -> tuple[int, int]:
    """"22-8" (the config's `quiet_hours`, already checked there) as (22, 8)."""
    match = _HOURS.fullmatch(text)
    if match is None or not all(0 <= int(h) <= 23 for h in match.groups()):
        raise ValueError("quiet hours are START-END on a 24-hour clock, e.g. 22-8")
    return int(match.group(1)), int(match.group(2))


def _utc(value: datetime) -> datetime:
    """Absolute time: comparisons within one zone would read wall clocks and ignore `fold`."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("check-ins need aware datetimes (with a time zone), got a naive one")
    return value.astimezone(UTC)
