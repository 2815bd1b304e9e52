"""Cron schedules read as wall-clock times in a time zone, the way `tactful run` fires them.

APScheduler's `CronTrigger` steps through the cron fields; this module fixes two things about
using it directly: weekday numbers (cron counts from Sunday = 0, APScheduler 3 from Monday)
and the night the clocks go back (see `Cron`). The config check, `routine list` and the
scheduler all read schedules through here, so they never disagree.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from importlib import import_module
from typing import Protocol

from tactful.core.memory.clock import zone as load_zone

# ---- reading a schedule without APScheduler -------------------------------------------------
# The config is read by every command, `tactful check` included, and APScheduler takes a fifth
# of a second to import: so the file is checked here, field by field, and APScheduler is loaded
# only by what fires schedules (`routine list`, `tactful run`).

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_FIELDS = (("minute", 0, 59, ()), ("hour", 0, 23, ()), ("day of month", 1, 31, ()),
           ("month", 1, 12, _MONTHS), ("weekday", 0, 7, ("sun", "mon", "tue", "wed", "thu",
                                                        "fri", "sat")))
_PART = re.compile(r"(\*|[0-9a-z]+(?:-[0-9a-z]+)?)(?:/([0-9]+))?")


def validate(schedule: str) -> str:
    """The schedule's five fields, normalized; ValueError naming the field that is wrong."""
    fields = schedule.split()
    if len(fields) != 5:
        raise ValueError("a cron schedule has five fields: minute hour day month weekday")
    for text, (name, low, high, names) in zip(fields, _FIELDS, strict=True):
        for part in text.lower().split(","):
            match = _PART.fullmatch(part)
            if match is None:
                raise ValueError(f"the {name} field {text!r} is not cron syntax")
            span, step = match.groups()
            if step is not None and int(step) < 1:
                raise ValueError(f"the {name} field {text!r} has a step of 0")
            if span == "*":
                continue
            bounds = []
            for value in span.split("-"):
                if value.isdigit():
                    number = int(value)
                elif value in names:
                    number = names.index(value) + (1 if name == "month" else 0)
                else:
                    raise ValueError(f"the {name} field {text!r}: {value!r} is not a {name}")
                if not low <= number <= high:
                    raise ValueError(f"the {name} field {text!r}: {number} is outside "
                                     f"{low}-{high}")
                bounds.append(number)
            if len(bounds) == 2 and bounds[0] > bounds[1]:
                raise ValueError(f"the {name} field {text!r}: a range runs low to high")
    return " ".join(fields)


# ---- firing ------------------------------------------------------------------------------------

class _Trigger(Protocol):
    def get_next_fire_time(self, previous_fire_time: datetime | None,
                           now: datetime) -> datetime | None: ...


_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_NUMERIC = re.compile(r"(\d+)(?:-(\d+))?")


def _weekdays(field: str) -> str:
    """Cron counts weekdays from Sunday = 0 (and 7); APScheduler 3 from Monday = 0. Numbers are
    spelled as day names, which both read alike, so `1-5` stays Monday to Friday."""
    names: list[str] = []
    for part in field.split(","):
        body, slash, step_text = part.partition("/")
        step = int(step_text) if step_text.isdigit() else 0 if slash else 1
        match = _NUMERIC.fullmatch(body)
        if body == "*" and not slash:
            return "*"
        if body == "*":
            first, last = 0, 6
        elif match:
            first = int(match.group(1))
            last = int(match.group(2)) if match.group(2) else (6 if slash else first)
        else:
            names.append(part)  # names already, or nonsense APScheduler will refuse itself
            continue
        if step < 1 or not 0 <= first <= last <= 7:
            names.append(part)
            continue
        names.extend(_DAYS[day % 7] for day in range(first, last + 1, step))
    return ",".join(dict.fromkeys(names))


def _triggers(schedule: str) -> tuple[_Trigger, ...]:
    # Imported by name: APScheduler ships no type information, and this keeps strict mypy
    # honest without an ignore that a later stub package would turn into an error.
    cron_trigger = import_module("apscheduler.triggers.cron").CronTrigger
    minute, hour, day, month, weekday = schedule.split()
    weekday = _weekdays(weekday)

    def trigger(day: str, weekday: str) -> _Trigger:
        # In UTC, which has no DST: it walks wall-clock times; Cron maps them into the zone.
        made: _Trigger = cron_trigger(minute=minute, hour=hour, day=day, month=month,
                                      day_of_week=weekday, timezone=UTC)
        return made

    if day.startswith("*") or weekday.startswith("*"):
        return (trigger(day, weekday),)
    # Cron fires when EITHER the day of month or the weekday matches, if both are restricted;
    # APScheduler requires both. Two triggers, earliest wins.
    return trigger(day, "*"), trigger("*", weekday)


MAX_REPEATS = 24 * 60  # wall times passed over while the clocks go back: at most a day's minutes


class Cron:
    """A five-field cron schedule read as wall-clock times in one time zone.

    Why not APScheduler's own zone handling: in 3.x, across the hour the clocks go back, its
    "next fire" can lie before the previous one, which would make a loop fire without end.
    So APScheduler steps through wall-clock times (in UTC, which has no DST) and each is
    placed in the zone here: a wall time that happens twice fires the first time only; one
    that does not exist (the clocks go forward) fires an hour later, as its offset says.
    """

    def __init__(self, schedule: str, zone: str) -> None:
        if len(schedule.split()) != 5:
            raise ValueError("a cron schedule has five fields: minute hour day month weekday")
        self.schedule, self.zone = schedule, zone
        self._zone = load_zone(zone)
        self._triggers = _triggers(schedule)

    def next_fire(self, after: datetime, *, inclusive: bool = True) -> datetime | None:
        """The first fire at (or, not inclusive, strictly after) `after`; None: never again."""
        moment = after.astimezone(UTC)
        wall = self._next_wall(after.astimezone(self._zone).replace(tzinfo=None), inclusive)
        for _ in range(MAX_REPEATS):
            if wall is None:
                return None
            # fold=0: the first of a repeated time; a time in the gap keeps the offset before
            # it, so 02:30 that does not exist becomes 03:30.
            fire = wall.replace(tzinfo=self._zone, fold=0).astimezone(UTC)
            # Compared in UTC: two times in one tzinfo compare by wall clock, fold ignored.
            if fire > moment or (inclusive and fire == moment):
                return fire.astimezone(self._zone)
            wall = self._next_wall(wall, inclusive=False)  # already passed: the clocks went back
        return None

    def _next_wall(self, wall: datetime, inclusive: bool) -> datetime | None:
        # APScheduler counts whole seconds and starts from the next one: one microsecond past
        # a time therefore means "strictly after".
        start = wall.replace(tzinfo=UTC)
        if not inclusive:
            start += timedelta(microseconds=1)
        fires = [f for f in (t.get_next_fire_time(None, start) for t in self._triggers)
                 if f is not None]
        return min(fires).replace(tzinfo=None) if fires else None


def next_fire(schedule: str, zone: str, after: datetime) -> datetime | None:
    """When a schedule fires next, at or after `after`, as `tactful run` will fire it."""
    return Cron(schedule, zone).next_fire(after)
