"""The companion's timers, read from its config, with their production minimums
(docs/companion.md, "Timers").

Every pause the companion waits can be set: the typing pace, the tick that looks at held
messages and check-ins, the jitter after a window opens, the window itself, the memory pass's
interval and its first run. In production each has a floor, so a slip in a config file cannot
turn the companion into something that types instantly, answers held messages on the dot or
rewrites notes every few seconds. Below those floors only with `TACTFUL_COMPANION_TEST_TIMERS=1`
in the environment: a test run, never a deployment (it is an environment variable, not a config
key, so a config file copied into production cannot carry it along).

The clock here has sub-second resolution: pacing subtracts the responder's thinking time from
the first typing pause, and a clock of whole seconds would be off by up to one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, tzinfo

from tactful.core.config.values import CompanionConfig
from tactful.core.errors import BadInput

TEST_TIMERS = "TACTFUL_COMPANION_TEST_TIMERS"

# The production floors: (config key, the least value, its unit).
MINIMUMS: tuple[tuple[str, float, str], ...] = (
    ("typing_pace", 0.5, "× the typing formula"),
    ("release_tick_seconds", 5.0, "seconds"),
    ("release_jitter_min_seconds", 1.0, "seconds"),
    ("release_jitter_max_seconds", 5.0, "seconds"),
    ("window_minutes", 1.0, "minutes"),
    ("memory_pass_hours", 1.0, "hours"),
    ("first_pass_minutes", 5.0, "minutes"),
)


@dataclass(frozen=True)
class Timers:
    """Every timer in seconds (the typing pace is a factor)."""

    typing_pace: float = 1.0
    release_tick: float = 15.0
    release_jitter: tuple[float, float] = (3.0, 30.0)
    pass_every: float = 6 * 3600.0
    first_pass: float = 6 * 3600.0

    @classmethod
    def of(cls, config: CompanionConfig) -> Timers:
        every = config.memory_pass_hours * 3600.0
        first = every if config.first_pass_minutes is None else config.first_pass_minutes * 60
        return cls(typing_pace=config.typing_pace, release_tick=config.release_tick_seconds,
                   release_jitter=(config.release_jitter_min_seconds,
                                   config.release_jitter_max_seconds),
                   pass_every=every, first_pass=first)


def test_mode(environ: dict[str, str] | None = None) -> bool:
    return (environ if environ is not None else dict(os.environ)).get(TEST_TIMERS) == "1"


def check(config: CompanionConfig, environ: dict[str, str] | None = None) -> Timers:
    """The timers of `config`, or BadInput naming the first one below its production floor
    (unless in test mode) or a jitter whose least is above its most."""
    if not test_mode(environ):
        for key, least, unit in MINIMUMS:
            value = getattr(config, key)
            if value is not None and value < least:
                raise BadInput(f"companion.{key} is {value:g}, below its production minimum "
                               f"of {least:g} {unit}; raise it (shorter timers are for tests: "
                               f"{TEST_TIMERS}=1, see docs/companion.md)")
    if config.release_jitter_min_seconds > config.release_jitter_max_seconds:
        raise BadInput("companion.release_jitter_min_seconds is above "
                       "companion.release_jitter_max_seconds; make the least the smaller one")
    return Timers.of(config)


def precise_clock(tz: tzinfo, frozen: Callable[[], datetime]) -> Callable[[], datetime]:
    """Now, to the microsecond, in `tz`; `frozen` when the time is pinned (`TACTFUL_NOW`)."""
    if os.environ.get("TACTFUL_NOW"):
        return frozen

    def now() -> datetime:
        return datetime.now(tz)

    return now
