"""The companion's timers: each one configurable, production minimums unless in test mode, the
memory pass on demand (`tactful companion pass`) and on a schedule that survives a restart, and
a clock fine enough for pacing to subtract the responder's thinking time."""

from __future__ import annotations

import asyncio
import io
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tactful.adapters.telegram.companion import Companion
from tactful.adapters.telegram.emulator import TelegramEmulator
from tactful.core.companion import pacing
from tactful.core.companion.gateway import NOTES_JOB
from tactful.core.companion.session import Session
from tactful.core.companion.store import CompanionStore
from tactful.core.companion.timers import TEST_TIMERS, check, precise_clock
from tactful.core.config.values import CompanionConfig
from tactful.core.errors import BadInput

from .. import recording_keyring
from ..conftest import command_responder
from .conftest import NOTES_REPLY, Clock, Scripted, World, make_gateway

# A responder program: the notes of a memory pass for a memory-pass prompt, a reply otherwise.
RESPONDER = f"""\
import sys
prompt = sys.stdin.read()
if prompt.lstrip().startswith("You keep two short notes"):
    print({NOTES_REPLY!r})
elif "neutral" in prompt.lower() and "summary" in prompt.lower():
    print("Rewrote two notes after a short chat.")
else:
    print("Hello! Nice to hear from you.")
"""

# ---- minimums ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key, value", [
    ("typing_pace", 0.0), ("release_tick_seconds", 0.1), ("release_jitter_min_seconds", 0.0),
    ("release_jitter_max_seconds", 4.0), ("window_minutes", 0.05), ("memory_pass_hours", 0.01),
    ("first_pass_minutes", 0.0)])
def test_a_timer_below_its_production_minimum_is_refused_outside_test_mode(
        key: str, value: float) -> None:
    short = replace(CompanionConfig(), **{key: value})
    with pytest.raises(BadInput, match=f"companion.{key} is .*production minimum"):
        check(short, environ={})
    assert check(short, environ={TEST_TIMERS: "1"}) is not None


def test_the_default_timers_pass_in_production_and_mean_what_they_say() -> None:
    timers = check(CompanionConfig(), environ={})
    assert timers.release_tick == 15 and timers.release_jitter == (3, 30)
    assert timers.pass_every == timers.first_pass == 6 * 3600  # the first after a full interval
    assert check(CompanionConfig(first_pass_minutes=10), environ={}).first_pass == 600


def test_a_jitter_whose_least_is_above_its_most_is_refused() -> None:
    with pytest.raises(BadInput, match="release_jitter_min_seconds is above"):
        check(CompanionConfig(release_jitter_min_seconds=40), environ={TEST_TIMERS: "1"})


def test_tactful_run_refuses_a_short_timer_outside_test_mode(tmp_path: Path, home: Path,
                                                           keyring_log: Path) -> None:
    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        recording_keyring.store("telegram", "persona", "token", emulator.token)
        config = tmp_path / "tactful.yaml"
        config.write_text(f"platforms:\n  telegram:\n    account: persona\n"
                          f"    base_url: {emulator.base_url}\n    mode: companion\n"
                          "companion:\n  release_tick_seconds: 0.1\n")
        env = {k: v for k, v in os.environ.items() if k != TEST_TIMERS}
        done = subprocess.run([sys.executable, "-m", "tactful.core.cli", "--config",
                               str(config), "run"], capture_output=True, text=True, env=env,
                              timeout=60, check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "companion.release_tick_seconds is 0.1" in done.stderr


def test_config_check_refuses_a_short_timer_outside_test_mode_as_run_would(
        tmp_path: Path) -> None:
    config = tmp_path / "tactful.yaml"
    config.write_text("platforms:\n  telegram:\n    account: persona\n    mode: companion\n"
                      "companion:\n  release_tick_seconds: 0.1\n")
    env = {k: v for k, v in os.environ.items() if k != TEST_TIMERS}
    command = [sys.executable, "-m", "tactful.core.cli", "--config", str(config), "config",
               "check"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60,
                          check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "companion.release_tick_seconds is 0.1" in done.stderr
    passed = subprocess.run(command, capture_output=True, text=True, env={**env, TEST_TIMERS: "1"},
                            timeout=60, check=False)
    assert passed.returncode == 0, passed.stderr[-2000:]


# ---- the timers in the gateway ----------------------------------------------------------------

async def test_typing_pace_scales_every_pause(world: World) -> None:
    world.gateway.timers = replace(world.gateway.timers, typing_pace=0.5)
    world.responder.replies = ["Good luck tomorrow!\n\nTell me how it goes."]
    await world.say("pace_a", "big day tomorrow")
    full = pacing.typing_delays(["Good luck tomorrow!", "Tell me how it goes."], thinking=0,
                                rng=random.Random(7))
    assert world.sleeps[-2:] == pytest.approx([d * 0.5 for d in full])


async def test_the_release_jitter_is_the_configured_range(world: World) -> None:
    world.gateway.timers = replace(world.gateway.timers, release_jitter=(0.0, 0.0))
    for n in range(3):  # 12:00:00, 12:00:30, 12:01:00: the window of 3 is full
        await world.say("jit_a", f"message {n}")
        world.clock.advance(seconds=30)
    await world.say("jit_a", "held")
    [held] = world.gateway.store.pending(world.chat_id("jit_a"), kind="held")
    assert held.release_at == datetime(2026, 11, 30, 12, 10, tzinfo=UTC)  # the window opens


# ---- the memory pass: on demand, and on a schedule a restart keeps ----------------------------

async def test_companion_pass_rewrites_the_notes_now(world: World, tmp_path: Path,
                                                     cli) -> None:  # type: ignore[no-untyped-def]
    await world.say("pass_a", "I love tea")
    chat = world.chat_id("pass_a")
    assert Session(world.home, "persona", chat).notes().memory == ""
    script = tmp_path / "responder.py"
    script.write_text(RESPONDER)
    config = tmp_path / "tactful.yaml"
    config.write_text("responders:\n  friend:\n    "
                      + command_responder(script).replace("\n", "\n    ")
                      + "\ncompanion:\n  responder: friend\n  quiet_minutes: 0\n")
    result = cli("--config", str(config), "companion", "pass")
    assert result.code == 0, result.err
    assert "persona: rewritten 1" in result.out
    assert Session(world.home, "persona", chat).notes().memory == "Likes tea."
    assert "tea" not in result.out.replace("Likes tea", "")  # counts only, never the chat


async def test_companion_pass_for_a_bot_that_never_ran_says_which_do(
        world: World, cli) -> None:  # type: ignore[no-untyped-def]
    await world.say("pass_b", "hello")
    result = cli("companion", "pass", "--bot", "nobody")
    assert result.code == 2
    assert "no bot 'nobody'" in result.err and "persona" in result.err


async def test_after_a_restart_the_memory_pass_keeps_its_schedule(world: World) -> None:
    world.gateway.config = replace(world.gateway.config, quiet_minutes=0)
    world.responder.replies = ["Hi!"]
    await world.say("sched_a", "hello")
    bot = world.gateway.channel.bot  # type: ignore[attr-defined]

    async def run_for(companion: Companion, seconds: float) -> None:
        stop = threading.Event()
        timers = asyncio.create_task(companion._timers(stop))
        await asyncio.sleep(seconds)
        stop.set()
        await asyncio.wait_for(timers, timeout=20)

    first = Companion(world.gateway, bot, world.gateway.log, world.clock, pass_every=3600,
                      tick=0.02)
    await run_for(first, 0.1)
    due = world.gateway.store.due_at(NOTES_JOB)
    assert due == datetime(2026, 11, 30, 13, 0, tzinfo=UTC)  # a full interval after the start
    world.clock.advance(minutes=50)  # the process restarts at 12:50
    log = io.StringIO()
    restarted = make_gateway(world.emulator, world.home, Scripted([NOTES_REPLY]), world.clock,
                             [], log, world.gateway.config)
    try:
        second = Companion(restarted, bot, restarted.log, world.clock, pass_every=3600,
                           tick=0.02)
        await run_for(second, 0.1)
        assert "companion.memory_pass" not in log.getvalue()  # 12:50: not due yet
        world.clock.advance(minutes=11)  # 13:01: due by the schedule kept from before
        await run_for(second, 0.3)
        assert "companion.memory_pass" in log.getvalue()
        assert restarted.store.due_at(NOTES_JOB) == datetime(2026, 11, 30, 14, 1,
                                                             tzinfo=UTC)
    finally:
        restarted.close()


def test_tactful_run_with_test_timers_runs_a_memory_pass(tmp_path: Path, home: Path,
                                                         keyring_log: Path) -> None:
    # A black box: a config with short timers, a user who writes, and the pass is seen.
    (home / "people").mkdir(parents=True)
    script = tmp_path / "responder.py"
    script.write_text(RESPONDER)
    with TelegramEmulator() as emulator:
        recording_keyring.store("telegram", "persona", "token", emulator.token)
        config = tmp_path / "tactful.yaml"
        config.write_text(
            f"platforms:\n  telegram:\n    account: persona\n"
            f"    base_url: {emulator.base_url}\n    mode: companion\n"
            "responders:\n  friend:\n    " + command_responder(script).replace("\n", "\n    ")
            + "\ncompanion:\n  responder: friend\n  join_seconds: 0\n  quiet_minutes: 0\n"
            "  typing_pace: 0\n  release_tick_seconds: 0.1\n  first_pass_minutes: 0.02\n"
            "  memory_pass_hours: 0.0003\n")
        process = subprocess.Popen([sys.executable, "-m", "tactful.core.cli", "--config",
                                    str(config), "run"], stderr=subprocess.PIPE, text=True,
                                   env={**os.environ, TEST_TIMERS: "1"})
        notes: list[Path] = []
        try:
            deadline = time.monotonic() + 60
            while not emulator.commands and time.monotonic() < deadline:
                time.sleep(0.1)
            emulator.add_post("tea_t", "I drink tea every morning")
            while not notes and time.monotonic() < deadline:
                time.sleep(0.2)
                notes = list(home.glob("companion/*/*/memory.md"))
            while not _summaries(home) and time.monotonic() < deadline:
                time.sleep(0.2)  # the pass's last step: its summary, then its log line
            time.sleep(1)
            process.send_signal(signal.SIGTERM)
            _, err = process.communicate(timeout=40)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == 0, err[-2000:]
        assert [m["text"] for m in emulator.sent()] == ["Hello! Nice to hear from you."]
        assert notes and notes[0].read_text().strip() == "Likes tea."
        assert '"event": "companion.memory_pass"' in err
        assert "every morning" not in err


def _summaries(home: Path) -> int:
    store = CompanionStore(home, "persona")
    try:
        return len(store.summaries(10))
    finally:
        store.close()


# ---- the clock ----------------------------------------------------------------------------------

def test_the_companion_clock_has_sub_second_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TACTFUL_NOW", raising=False)
    clock = precise_clock(UTC, lambda: datetime(2000, 1, 1, tzinfo=UTC))
    readings = {clock().microsecond for _ in range(50) if not time.sleep(0.003)}
    assert len(readings) > 1  # a whole-second clock reads 0 every time
    monkeypatch.setenv("TACTFUL_NOW", "2026-01-01T00:00:00+00:00")
    pinned = precise_clock(UTC, lambda: datetime(2000, 1, 1, tzinfo=UTC))
    assert pinned() == datetime(2000, 1, 1, tzinfo=UTC)  # a pinned time stays pinned


async def test_pacing_subtracts_the_thinking_time_to_the_millisecond(home: Path) -> None:
    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        clock = precise_clock(UTC, lambda: datetime(2000, 1, 1, tzinfo=UTC))

        def slow() -> str:
            time.sleep(0.35)
            return "That sounds like a lovely plan for the weekend."

        sleeps: list[float] = []
        log = io.StringIO()
        gateway = make_gateway(emulator, home, Scripted([slow]), Clock(clock()), sleeps, log,
                               CompanionConfig(join_seconds=0))
        gateway.clock = clock
        try:
            ref = emulator.add_post("think_t", "weekend plans")
            chat, message = (int(x) for x in ref.split("/"))
            gateway.store.touch_user(chat, language_code="en", at=clock(), tz_default="UTC")
            await gateway.turn(chat, [(message, "weekend plans")], mode="reply")
        finally:
            await gateway.channel.bot.session.close()  # type: ignore[attr-defined]
            gateway.close()
    [turn] = [json.loads(line) for line in log.getvalue().splitlines()
              if '"companion.turn"' in line]
    thinking = turn["thinking_ms"] / 1000
    assert 0.33 <= thinking < 0.9  # a whole-second clock says 0 or 1
    [full] = pacing.typing_delays(["That sounds like a lovely plan for the weekend."],
                                  thinking=0, rng=random.Random(7))
    assert sleeps[0] == pytest.approx(full - thinking, abs=0.002)

