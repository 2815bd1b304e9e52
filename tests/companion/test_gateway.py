"""The companion's gateway with the real aiogram against the Telegram emulator: a turn, a burst,
pacing, limits, failures, a restart mid-turn, forgetting, check-ins, /timezone, a message
delivered twice, drafts that hang, and logs without text."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import random
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tactful.adapters.telegram.companion import Companion
from tactful.adapters.telegram.emulator import TelegramEmulator
from tactful.core.companion import pacing, phrases
from tactful.core.companion.gateway import Incoming, _time_zone
from tactful.core.companion.session import Session
from tactful.core.config.values import CompanionConfig
from tactful.core.responders.base import DraftFailed, Prompt
from tactful.core.send.gate import Ticket

from .conftest import UNIQUE, Clock, Scripted, World, found, make_gateway, until


async def test_a_turn_answers_paces_and_remembers_the_talk(world: World) -> None:
    await world.gateway.on_message(world.incoming("alice_a", f"my {UNIQUE} interview is "
                                                  "tomorrow"))
    await world.gateway.drain()
    assert world.texts() == ["Good luck tomorrow! Tell me how it goes."]
    prompt = world.responder.prompts[0]
    assert f"my {UNIQUE} interview is tomorrow" in prompt.user
    assert "<message>" in prompt.user and "galatea" in prompt.system
    chat = int(world.emulator.add_user("alice_a"))
    history = Session(world.home, "persona", chat).recent(10)
    assert [t.role for t in history] == ["user", "bot"]
    assert world.emulator.chat_actions == [(chat, "typing")]


async def test_a_burst_of_three_is_answered_once_joined(world: World) -> None:
    for text in ("hey", "so guess what", "I got the job!"):
        await world.gateway.on_message(world.incoming("bob_b", text))
    await world.gateway.drain()
    assert len(world.responder.prompts) == 1
    assert "hey\nso guess what\nI got the job!" in world.responder.prompts[0].user
    assert len(world.texts()) == 1


async def test_pacing_splits_the_reply_and_types_by_the_formula(world: World) -> None:
    reply = ("That is wonderful news. I am so happy for you!\n\n"
             "How did the last round go? Did they ask about the project you told me about?")
    world.responder.replies = [reply]
    await world.gateway.on_message(world.incoming("carol_c", "I got the job"))
    await world.gateway.drain()
    parts = pacing.split(reply)
    assert world.texts() == parts and 1 < len(parts) <= 4
    expected = pacing.typing_delays(parts, thinking=0.0, rng=_rng_after_join())
    join = world.gateway.config.join_seconds
    assert world.sleeps == [join, *expected]
    assert all(1.0 <= d <= 7.0 for d in expected)


def _rng_after_join() -> random.Random:
    return random.Random(7)  # the join pause draws nothing from it


async def test_over_the_window_the_message_waits_and_is_answered_once(world: World) -> None:
    for n in range(3):
        await world.gateway.on_message(world.incoming("dave_d", f"message {n}"))
        await world.gateway.drain()
        world.clock.advance(seconds=30)
    answered = len(world.texts())
    await world.gateway.on_message(world.incoming("dave_d", "one more"))
    await world.gateway.on_message(world.incoming("dave_d", "and another"))
    held_lines = world.texts()[answered:]
    assert len(held_lines) == 1  # one friendly line, not one per message
    assert "3" not in held_lines[0] and "limit" not in held_lines[0].lower()
    assert await world.gateway.release_pending() == 0  # the window is still closed
    world.clock.advance(minutes=10)
    assert await world.gateway.release_pending() == 1
    assert "one more\nand another" in world.responder.prompts[-1].user
    assert await world.gateway.release_pending() == 0


async def test_a_responder_that_fails_gets_an_honest_line_and_nothing_stored(
        world: World) -> None:
    world.responder.replies = [DraftFailed("test", "crashed"), "   ", "back to normal"]
    alice = world.incoming("erin_e", "first")
    await world.gateway.on_message(alice)
    await world.gateway.drain()
    world.clock.advance(minutes=1)
    await world.gateway.on_message(world.incoming("erin_e", "second"))
    await world.gateway.drain()
    world.clock.advance(minutes=1)
    await world.gateway.on_message(world.incoming("erin_e", "third"))
    await world.gateway.drain()
    texts = world.texts()
    assert len(texts) == 3 and texts[2] == "back to normal"
    honest = set(phrases.variants("failed", "en"))
    assert texts[0] in honest and texts[1] in honest
    history = Session(world.home, "persona", alice.chat_id).recent(10)
    assert [t.role for t in history] == ["user", "user", "user", "bot"]


async def test_a_responder_that_hangs_is_given_up_at_the_turn_timeout(home: Path) -> None:
    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
        responder = Scripted([lambda: (time.sleep(3), "too late")[1]])
        config = CompanionConfig(turn_timeout=1)
        gateway = make_gateway(emulator, home, responder, clock, [], io.StringIO(), config)
        try:
            ref = emulator.add_post("frank_f", "hello?")
            chat, message = (int(x) for x in ref.split("/"))
            started = time.monotonic()
            await gateway.on_message(Incoming(chat, chat, message, clock(), "hello?"))
            await gateway.drain()
            assert time.monotonic() - started < 2.9
            assert len(emulator.sent()) == 1 and emulator.sent()[0]["text"] != "too late"
        finally:
            await gateway.channel.bot.session.close()  # type: ignore[attr-defined]
            gateway.close()


class Crash(BaseException):
    pass


async def test_a_restart_in_the_middle_of_a_turn_never_answers_twice(world: World) -> None:
    world.responder.replies = ["First part here.\n\nSecond part here."]
    message = world.incoming("gina_g", "tell me two things")
    world.gateway.store.touch_user(message.chat_id, language_code="en", at=message.at,
                                   tz_default="UTC")
    channel = world.gateway.channel
    real_send = channel.send
    calls = 0

    async def dying_send(chat_id: int, text: str, *, ticket: Ticket) -> None:
        nonlocal calls
        calls += 1
        await real_send(chat_id, text, ticket=ticket)
        raise Crash  # the process dies after the first message went out

    channel.send = dying_send  # type: ignore[method-assign]
    with pytest.raises(Crash):
        await world.gateway.turn(message.chat_id, [(message.message_id, "tell me two things")],
                                 mode="reply")
    assert world.texts() == ["First part here."]
    channel.send = real_send  # type: ignore[method-assign]
    restarted = make_gateway(world.emulator, world.home, world.responder, world.clock, [],
                         io.StringIO(), world.gateway.config)
    try:
        assert not await restarted.turn(message.chat_id,
                                        [(message.message_id, "tell me two things")],
                                        mode="reply")
    finally:
        await restarted.channel.bot.session.close()  # type: ignore[attr-defined]
        restarted.close()
    assert world.texts() == ["First part here."]


async def test_forget_and_delete_leave_no_trace(world: World) -> None:
    await world.gateway.on_message(world.incoming("hank_h", f"my dog is called {UNIQUE}"))
    await world.gateway.drain()
    chat = int(world.emulator.add_user("hank_h"))
    Session(world.home, "persona", chat).write_notes(f"Has a dog called {UNIQUE}.", "short")
    await world.gateway.on_message(world.incoming("hank_h", "/forget"))
    assert found(world.home, UNIQUE) == []
    world.responder.replies = ["Hi again!"]
    world.clock.advance(minutes=1)
    await world.gateway.on_message(world.incoming("hank_h", "hello"))
    await world.gateway.drain()
    assert UNIQUE not in world.responder.prompts[-1].system + world.responder.prompts[-1].user
    await world.gateway.on_message(world.incoming("hank_h", f"one more {UNIQUE}"))
    await world.gateway.on_message(world.incoming("hank_h", "/delete"))
    await world.gateway.drain()
    assert found(world.home, UNIQUE) == []
    assert world.gateway.store.user(chat) is None




async def test_check_ins_keep_every_brake(world: World) -> None:
    await world.gateway.on_message(world.incoming("ivy_i", "hi, nice to meet you"))
    await world.gateway.drain()
    chat = int(world.emulator.add_user("ivy_i"))
    world.responder.replies = ["How did the week start?"]
    # Day 2 in Amsterdam at 03:00: quiet hours, nothing.
    world.clock.now = datetime(2026, 12, 2, 2, 0, tzinfo=UTC)
    assert await world.gateway.check_in() == 0
    # Paused: nothing.
    await world.gateway.on_message(world.incoming("ivy_i", "/pause"))
    world.clock.now = datetime(2026, 12, 2, 14, 0, tzinfo=UTC)
    assert await world.gateway.check_in() == 0
    await world.gateway.on_message(world.incoming("ivy_i", "/resume"))
    world.clock.now = datetime(2026, 12, 3, 14, 0, tzinfo=UTC)
    sent = await world.gateway.check_in()
    assert sent == 1 and world.texts()[-1] == "How did the week start?"
    # Blocked: the send fails once, and the user is never written to again.
    world.emulator.block("ivy_i")
    world.clock.now = datetime(2026, 12, 10, 14, 0, tzinfo=UTC)
    before = len(world.emulator.requests)
    await world.gateway.check_in()
    assert world.gateway.store.user(chat).blocked  # type: ignore[union-attr]
    world.clock.now = datetime(2026, 12, 20, 14, 0, tzinfo=UTC)
    mid = len(world.emulator.requests)
    assert await world.gateway.check_in() == 0
    assert len(world.emulator.requests) == mid and mid >= before


async def test_telegram_429_is_waited_out_with_its_retry_after(world: World) -> None:
    world.emulator.fail_method("sendMessage", 429, retry_after=3)
    await world.gateway.on_message(world.incoming("jack_j", "hi"))
    await world.gateway.drain()
    assert world.texts() == ["Good luck tomorrow! Tell me how it goes."]
    assert 3.0 in world.sleeps


async def test_what_is_not_text_or_not_private_is_ignored(world: World) -> None:
    await world.gateway.on_message(world.incoming("kim_k", None))
    await world.gateway.on_message(replace(world.incoming("kim_k", "hello group"),
                                           private=False))
    await world.gateway.on_message(world.incoming("kim_k", "x" * 20000))
    await world.gateway.drain()
    assert len(world.responder.prompts) == 1  # only the long text was answered
    assert world.texts() == ["Good luck tomorrow! Tell me how it goes."]


async def test_a_do_not_engage_user_is_never_answered(world: World, cli) -> None:
    message = world.incoming("liam_l", "hello")
    assert cli("--home", str(world.home), "dne", "telegram", "liam_l", "on").code == 0
    await world.gateway.on_message(replace(message, handle="liam_l"))
    chat_only = world.incoming("mia_m", "hello")
    assert cli("--home", str(world.home), "dne", "telegram", str(chat_only.user_id),
               "on").code == 0
    await world.gateway.on_message(chat_only)
    await world.gateway.drain()
    assert world.texts() == [] and world.responder.prompts == []


async def test_no_log_line_carries_message_text(world: World, caplog) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level("DEBUG")
    world.responder.replies = [f"Oh, {UNIQUE}? Tell me more."]
    for text in (f"so {UNIQUE} happened", "/memory", "/export", "/invite", "/help"):
        await world.gateway.on_message(world.incoming("noah_n", text))
        await world.gateway.drain()
        world.clock.advance(minutes=1)
    logged = world.log.getvalue() + "\n".join(r.getMessage() for r in caplog.records)
    assert "companion.turn" in world.log.getvalue()
    assert UNIQUE not in logged and "Tell me more" not in logged


async def test_the_companion_polls_the_emulator_end_to_end(home: Path) -> None:
    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
        responder = Scripted(["Hello there! How was your day?"])
        log = io.StringIO()
        gateway = make_gateway(emulator, home, responder, clock, [], log,
                           CompanionConfig(join_seconds=0))
        bot = gateway.channel.bot  # type: ignore[attr-defined]
        companion = Companion(gateway, bot, gateway.log, clock, pass_every=3600, tick=0.1)
        stop = threading.Event()
        task = asyncio.create_task(companion.run(stop))
        try:
            emulator.add_post("olga_o", "hi!")
            for _ in range(100):
                if emulator.sent():
                    break
                await asyncio.sleep(0.05)
        finally:
            stop.set()
            await asyncio.wait_for(task, timeout=20)
            gateway.close()
        assert [m["text"] for m in emulator.sent()] == ["Hello there! How was your day?"]
        assert {c["command"] for c in emulator.commands} >= {"memory", "forget", "delete"}
        assert "companion.stop" in log.getvalue()


def test_tactful_run_starts_the_companion_and_stops_on_sigterm(tmp_path: Path, home: Path,
                                                              keyring_log: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    from .. import recording_keyring

    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        recording_keyring.store("telegram", "persona", "token", emulator.token)
        config = tmp_path / "tactful.yaml"
        config.write_text(f"platforms:\n  telegram:\n    account: persona\n"
                          f"    base_url: {emulator.base_url}\n    mode: companion\n"
                          "responders:\n  friend:\n    kind: template\n"
                          "companion:\n  responder: friend\n  join_seconds: 0\n")
        process = subprocess.Popen([sys.executable, "-m", "tactful.core.cli", "--config",
                                    str(config), "run"], stderr=subprocess.PIPE, text=True,
                                   env={**os.environ})
        try:
            deadline = time.monotonic() + 60
            while not emulator.commands and time.monotonic() < deadline:
                time.sleep(0.1)
            emulator.add_post("pat_p", "hi there")
            while not emulator.sent() and time.monotonic() < deadline:
                time.sleep(0.1)
            process.send_signal(signal.SIGTERM)
            _, err = process.communicate(timeout=40)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == 0, err[-2000:]
        assert len(emulator.sent()) >= 1
        assert "companion.start" in err and "companion.stop" in err
        assert "hi there" not in err


async def test_in_a_group_no_member_can_read_or_erase_what_all_share(home: Path) -> None:
    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
        responder = Scripted(["Hello group!"])
        gateway = make_gateway(emulator, home, responder, clock, [], io.StringIO(),
                           CompanionConfig(groups=True))
        try:
            group = int(emulator.add_group("book club"))
            ref = emulator.add_post("quinn_q", f"the word is {UNIQUE}", chat=str(group))
            user = int(emulator.add_user("quinn_q"))
            await gateway.on_message(Incoming(group, user, int(ref.split("/")[1]), clock(),
                                              f"the word is {UNIQUE}", private=False))
            await gateway.drain()
            for command in ("/memory", "/delete", "/forget", "/export"):
                ref = emulator.add_post("quinn_q", command, chat=str(group))
                await gateway.on_message(Incoming(group, user, int(ref.split("/")[1]),
                                                  clock(), command, private=False))
            await gateway.drain()
            assert [m["text"] for m in emulator.sent()] == ["Hello group!"]
            assert Session(home, "persona", group).recent(5)  # nothing erased by a member
        finally:
            await gateway.channel.bot.session.close()  # type: ignore[attr-defined]
            gateway.close()


async def test_a_restart_in_the_join_pause_loses_nothing(world: World) -> None:
    message = world.incoming("rita_r", "are you there?")
    await world.gateway.on_message(message)
    for buffer in world.gateway._buffers.values():  # the process dies in the pause
        assert buffer.timer is not None
        buffer.timer.cancel()
    world.gateway._buffers.clear()
    assert world.texts() == []
    restarted = make_gateway(world.emulator, world.home, world.responder, world.clock, [],
                         io.StringIO(), world.gateway.config)
    try:
        world.clock.advance(seconds=10)
        assert await restarted.release_pending() == 1
        assert await restarted.release_pending() == 0
    finally:
        await restarted.channel.bot.session.close()  # type: ignore[attr-defined]
        restarted.close()
    assert world.texts() == ["Good luck tomorrow! Tell me how it goes."]
    assert "are you there?" in world.responder.prompts[-1].user


def test_tactful_run_without_the_bot_token_says_how_to_store_it(tmp_path: Path, home: Path,
                                                              keyring_log: Path) -> None:
    import subprocess
    import sys

    (home / "people").mkdir(parents=True)
    config = tmp_path / "tactful.yaml"
    config.write_text("platforms:\n  telegram:\n    account: friendbot\n    mode: companion\n"
                      "    base_url: http://127.0.0.1:9\n")
    result = subprocess.run([sys.executable, "-m", "tactful.core.cli", "--config", str(config),
                             "run"], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2, result.stderr[-1500:]
    assert "tactful credentials set telegram token --account friendbot" in result.stderr
    assert "Traceback" not in result.stderr


async def test_timezone_sets_the_clock_the_daily_cap_counts_in(world: World) -> None:
    await world.say("sam_s", "/timezone america/los_angeles")
    chat = int(world.emulator.add_user("sam_s"))
    assert world.gateway.store.user(chat).timezone == "America/Los_Angeles"  # type: ignore[union-attr]
    assert "America/Los_Angeles" in world.texts()[-1]
    await world.say("sam_s", "/timezone Mars/Olympus_Mons")
    assert world.gateway.store.user(chat).timezone == "America/Los_Angeles"  # type: ignore[union-attr]
    assert "/timezone Europe/London" in world.texts()[-1]
    await world.say("sam_s", "/timezone", language_code="de")
    assert "America/Los_Angeles" in world.texts()[-1] and "Zeitzone" in world.texts()[-1]
    await world.say("sam_s", "/timezone Europe/Berlin")  # the same day: once a day
    assert world.gateway.store.user(chat).timezone == "America/Los_Angeles"  # type: ignore[union-attr]


async def test_changing_the_time_zone_does_not_reset_the_daily_cap(world: World) -> None:
    # A zone whose midnight just passed would start a fresh "day" for the cap.
    gateway = world.gateway
    gateway.config = CompanionConfig(window_messages=100, window_minutes=10, daily_cap=3)
    world.clock.now = datetime(2026, 11, 30, 11, 50, tzinfo=UTC)  # 12:50 in Amsterdam
    for n in range(3):
        await world.say("cap_a", f"message {n}")
        world.clock.advance(minutes=1)
    world.clock.now = datetime(2026, 11, 30, 12, 1, tzinfo=UTC)
    await world.say("cap_a", "/timezone Asia/Kamchatka")  # UTC+12: "tomorrow" began at 12:00
    over = await world.say("cap_a", "message over the cap")
    assert world.gateway.store.pending(over.chat_id, kind="held"), \
        "the fourth message of the day was answered: the cap was reset by a zone change"


def test_timezone_refuses_the_hosts_localtime() -> None:
    # `localtime` and `Factory` are the server's own zone, not one the user can name.
    assert _time_zone("localtime") is None
    assert _time_zone("Factory") is None
    assert phrases.pick("timezone_unknown", "en", random.Random(1))


# ---- one message, one answer ----------------------------------------------------------------

def _message_part(prompt: Prompt) -> str:
    return prompt.user.split("<message>", 1)[1].split("</message>", 1)[0] \
        if "<message>" in prompt.user else ""


async def test_a_redelivered_answered_message_is_not_answered_again(world: World) -> None:
    # Joined with a new message, it must not ride along under the new message's ledger key.
    first = await world.say("dup_a", f"my {UNIQUE} question")
    assert len(world.responder.prompts) == 1
    world.clock.advance(minutes=1)
    await world.gateway.on_message(first)  # Telegram delivers it again after a restart ...
    await world.gateway.on_message(world.incoming("dup_a", "and a new thing"))  # ... + a new one
    await asyncio.wait_for(world.gateway.drain(), timeout=20)
    assert UNIQUE not in _message_part(world.responder.prompts[-1])


async def test_a_tick_during_a_failing_turn_apologizes_once_for_one_message(
        world: World) -> None:
    gateway = world.gateway
    gate = threading.Event()

    def hangs_then_fails() -> str:
        gate.wait(10)
        raise RuntimeError("model down")

    world.responder.replies = [hangs_then_fails]
    message = world.incoming("twice_a", "are you there?")
    await gateway.on_message(message)
    await until(lambda: len(world.responder.prompts) == 1)
    world.clock.advance(seconds=5)
    tick = asyncio.create_task(gateway.release_pending())
    await asyncio.sleep(0.05)
    gate.set()
    await asyncio.wait_for(gateway.drain(), timeout=20)
    await asyncio.wait_for(tick, timeout=20)
    assert len(world.texts()) == 1, world.texts()  # one honest line for one message
    history = Session(world.home, "persona", message.chat_id).recent(10)
    assert [t.text for t in history].count("are you there?") == 1


async def test_start_after_unblocking_clears_the_block(world: World) -> None:
    message = await world.say("unb_a", "hi, nice to meet you")
    world.gateway.store.set_blocked(message.chat_id, True)  # an earlier send got a 403
    await world.say("unb_a", "/start")  # they unblocked the bot and pressed Restart
    user = world.gateway.store.user(message.chat_id)
    assert user is not None and not user.blocked


# ---- drafts that hang, updates that do not parse ----------------------------------------------

class Stuck:
    """The first `stuck` drafts hang (until `opened`, at most 15 s); later ones answer."""

    def __init__(self, stuck: int) -> None:
        self.stuck, self.calls = stuck, 0
        self.lock = threading.Lock()
        self.opened = threading.Event()

    def draft(self, prompt: Prompt) -> str:
        with self.lock:
            self.calls += 1
            n = self.calls
        if n <= self.stuck:
            self.opened.wait(15)
            return "too late"
        return "I'm here again!"


async def test_timed_out_drafts_do_not_starve_the_next_turn(home: Path) -> None:
    # A thread cannot be cancelled: drafts that outlived `turn_timeout` must not fill the
    # executor every later turn waits in.
    (home / "people").mkdir(parents=True)
    workers = min(32, (os.cpu_count() or 1) + 4)  # the default executor's size
    responder = Stuck(workers)
    with TelegramEmulator() as emulator:
        clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
        config = CompanionConfig(turn_timeout=1, parallel_turns=workers + 2)
        gateway = make_gateway(emulator, home, responder, clock, [], io.StringIO(), config)
        try:
            for n in range(workers):  # these drafts hang past the turn timeout
                ref = emulator.add_post(f"slow_{n}", "hello?")
                chat, message = (int(x) for x in ref.split("/"))
                await gateway.on_message(Incoming(chat, chat, message, clock(), "hello?"))
            await asyncio.wait_for(gateway.drain(), timeout=20)
            ref = emulator.add_post("fresh_z", "hi!")
            chat, message = (int(x) for x in ref.split("/"))
            await gateway.on_message(Incoming(chat, chat, message, clock(), "hi!"))
            await asyncio.wait_for(gateway.drain(), timeout=20)
            last = [m["text"] for m in emulator.sent() if m["chat_id"] == str(chat)]
        finally:
            responder.opened.set()
            await gateway.channel.bot.session.close()  # type: ignore[attr-defined]
            gateway.close()
        assert last == ["I'm here again!"]


async def test_a_malformed_update_logs_no_message_text(home: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    # aiogram's decode error quotes the whole getUpdates answer; none of it may reach a log.
    caplog.set_level("DEBUG")
    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        user = int(emulator.add_user("mal_a"))
        poison = {"update_id": 900, "message": {
            "message_id": 5, "date": "not a date", "text": f"my secret is {UNIQUE}",
            "chat": {"id": user, "type": "private"},
            "from": {"id": user, "is_bot": False, "first_name": "M"}}}
        emulator.fail_next(200, {"ok": True, "result": [poison]},
                           match=lambda r: emulator.method(r) == "getupdates", times=2)
        clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
        log = io.StringIO()
        gateway = make_gateway(emulator, home, Scripted(["Hi!"]), clock, [], log,
                               CompanionConfig(join_seconds=0))
        bot = gateway.channel.bot  # type: ignore[attr-defined]
        companion = Companion(gateway, bot, gateway.log, clock, pass_every=3600, tick=0.1)
        stop = threading.Event()
        task = asyncio.create_task(companion.run(stop))
        try:
            for _ in range(200):  # up to 10 s: the poison answer is served twice
                if len(emulator.calls("getUpdates")) >= 3:
                    break
                await asyncio.sleep(0.05)
        finally:
            stop.set()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, timeout=20)
            gateway.close()
    logged = log.getvalue() + "\n".join(r.getMessage() for r in caplog.records)
    assert "ClientDecodeError" in logged or len(emulator.calls("getUpdates")) >= 3
    assert UNIQUE not in logged


async def test_in_a_group_start_and_help_get_the_one_on_one_line_and_nothing_else(
        home: Path) -> None:
    # The default config (groups off), through polling: what Telegram delivers in a group.
    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
        responder = Scripted(["Hello group!"])
        gateway = make_gateway(emulator, home, responder, clock, [], io.StringIO(),
                               CompanionConfig(join_seconds=0))
        bot = gateway.channel.bot  # type: ignore[attr-defined]
        companion = Companion(gateway, bot, gateway.log, clock, pass_every=3600, tick=0.1)
        stop = threading.Event()
        task = asyncio.create_task(companion.run(stop))
        group = emulator.add_group("book club")
        try:
            await until(lambda: bool(emulator.commands))  # polling has started
            for text in ("hello everyone", "/start", f"/memory {UNIQUE}", "/help@persona_bot",
                         "/delete"):
                emulator.add_post("gus_g", text, chat=group)
            await until(lambda: len(emulator.sent()) >= 2)
            await asyncio.sleep(0.5)  # time for anything more to (wrongly) go out
        finally:
            stop.set()
            await asyncio.wait_for(task, timeout=20)
            gateway.close()
        line = phrases.pick("group_ignored", "en", random.Random(0))
        assert [(m["chat_id"], m["text"]) for m in emulator.sent()] == [(group, line)] * 2
        assert responder.prompts == []
        assert not (home / "companion" / "persona" / group).exists()
        assert found(home, UNIQUE) == []


async def test_a_message_arriving_while_the_answer_goes_out_loses_neither_answer(
        world: World) -> None:
    # The first turn's answer is claimed and on its way (the platform is slow) when the user
    # writes again: that turn must end as it began, and the new message get its own answer.
    world.emulator.stall_next(1.5, method="sendMessage")
    first = world.incoming("nat_n", "how was your day")
    await world.gateway.on_message(first)
    await until(lambda: bool(world.emulator.calls("sendMessage")))
    second = world.incoming("nat_n", "and mine was long")
    await world.gateway.on_message(second)
    await asyncio.wait_for(world.gateway.drain(), timeout=20)
    assert world.texts_to("nat_n") == ["Good luck tomorrow! Tell me how it goes."] * 2
    assert world.gateway._answered(first.chat_id, first.message_id)
    assert world.gateway._answered(second.chat_id, second.message_id)
