"""Time in tactful: aware datetimes, ISO 8601 with offset in files, the persona's zone on screen.

`TACTFUL_NOW` (an ISO timestamp) freezes the clock for tests and the demo, so a whole process
sees one consistent "now" without any test reaching into the code.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tactful.core.errors import BadInput

DEFAULT_TIMEZONE = "America/New_York"


@lru_cache(maxsize=16)
def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise BadInput(
            f"unknown time zone {name!r}; use an IANA name such as 'America/New_York'"
        ) from exc


def now(tz: tzinfo) -> datetime:
    frozen = os.environ.get("TACTFUL_NOW")
    if frozen:
        return parse_timestamp(frozen, tz, what="TACTFUL_NOW")
    return datetime.now(tz).replace(microsecond=0)


EARLIEST, LATEST = 1970, 2200


def sane(value: datetime) -> bool:
    """A time every zone can show: year 1970 to 2200 wherever it is read (no overflow later)."""
    try:
        year = value.astimezone(UTC).year
    except (OverflowError, ValueError):
        return False
    return EARLIEST <= year <= LATEST and EARLIEST <= value.year <= LATEST


def parse_timestamp(text: str, tz: tzinfo, *, what: str = "timestamp") -> datetime:
    """Parse ISO 8601; a time without offset is taken in the persona's zone."""
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise BadInput(
            f"{what}: {text[:60]!r} is not an ISO 8601 time; write e.g. 2026-10-29T09:05:00-04:00"
        ) from exc
    if value.tzinfo is None:
        value = value.replace(tzinfo=tz)
    if not sane(value):
        raise BadInput(f"{what}: {text[:60]!r} is outside {EARLIEST}–{LATEST}; check the year")
    return value.replace(microsecond=0)


def read_time(value: object, tz: tzinfo) -> datetime | None:
    """A time as files and the log hold it (ISO text, or what YAML made of it), or None when it
    is not one tactful can use. A time without offset is the persona's."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=tz)
    return parsed if sane(parsed) else None


def to_file(value: datetime, tz: tzinfo) -> str:
    """The form stored in files: ISO 8601 with offset, in the persona's zone, to the second."""
    return value.astimezone(tz).isoformat(timespec="seconds")


_US_STYLE = re.compile(r"^([A-Z])[SD]T$")


def zone_label(value: datetime) -> str:
    """'ET' for EST/EDT and the like (one label all year); otherwise the zone's own name."""
    name = value.tzname() or ""
    match = _US_STYLE.match(name)
    if match:
        return f"{match.group(1)}T"
    return name or value.strftime("%z")


def on_screen(value: datetime, tz: tzinfo, *, with_zone: bool = True) -> str:
    local = value.astimezone(tz)
    text = local.strftime("%Y-%m-%d %H:%M")
    return f"{text} {zone_label(local)}" if with_zone else text


def local_day(value: datetime, tz: tzinfo) -> str:
    return value.astimezone(tz).date().isoformat()
