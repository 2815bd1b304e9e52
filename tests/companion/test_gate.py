"""Every message the companion sends passes the one send gate (docs/sending.md): replies, the
hold line, check-ins and answers to commands are checked for every party they reach, counted
by the platform's limits, and written to the outbox instead when the platform is in dry run."""

from __future__ import annotations

import asyncio
import io
import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tactful.adapters.telegram.emulator import TelegramEmulator
from tactful.core.companion.gateway import Incoming
from tactful.core.config.values import CompanionConfig, Config, PlatformConfig
from tactful.core.send.attempt import SendRequest
from tactful.core.send.gate import Gate

from .conftest import Clock, Scripted, World, make_gateway


async def test_a_reply_that_mentions_a_flagged_account_is_never_sent(world: World,
                                                                     cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("--home", str(world.home), "dne", "telegram", "mallory", "on").code == 0
    world.responder.replies = ["You should ask @mallory about that!"]
    await world.say("nina_n", "who knows about sourdough?")
    assert world.texts() == []
    refused = [json.loads(line) for line in world.log.getvalue().splitlines()
               if '"companion.refused"' in line]
    assert refused and refused[0]["reason"] == "DoNotEngage"
    assert "sourdough" not in world.log.getvalue() and "mallory" not in world.log.getvalue()


async def test_a_user_flagged_by_id_who_writes_with_a_username_is_never_answered(
        world: World, cli) -> None:  # type: ignore[no-untyped-def]
    message = world.incoming("olga_o", "hello")
    assert cli("--home", str(world.home), "dne", "telegram", str(message.user_id),
               "on").code == 0
    await world.gateway.on_message(replace(message, handle="olga_o"))
    await world.gateway.drain()
    assert world.texts() == [] and world.responder.prompts == []


async def test_a_platform_in_dry_run_sends_nothing_and_keeps_no_text(world: World) -> None:
    gateway = world.gateway
    config = Config(platforms={"telegram": PlatformConfig(dry_run=True)})
    gateway.gate = Gate.for_home(world.home, config=config, clock=world.clock)
    await world.say("pia_p", "good morning")
    assert world.texts() == []
    outbox = (world.home / "outbox" / "dry-run.jsonl").read_text().splitlines()
    assert [json.loads(line)["text"] for line in outbox] == [""]  # private: no text kept


async def test_the_operators_daily_limit_holds_for_the_companion_too(world: World) -> None:
    config = Config(platforms={"telegram": PlatformConfig(limits={"dm": 1})})
    world.gateway.gate = Gate.for_home(world.home, config=config, clock=world.clock)
    world.responder.replies = ["Hello!"]
    await world.say("quin_q", "hi")
    await world.say("rosa_r", "hi")
    assert world.texts() == ["Hello!"]


async def test_the_channel_sends_nothing_the_gate_did_not_admit(world: World) -> None:
    ticket = world.gateway.gate.admit(SendRequest("telegram", "hello there", to="1",
                                                  action="dm", private=True,
                                                  inbound_keys=("t/1/1",)))
    with pytest.raises(RuntimeError, match="gate ticket"):
        await world.gateway.channel.send(1, "something else", ticket=ticket)  # type: ignore[arg-type]
    assert world.texts() == []


@pytest.mark.parametrize(("writers", "flagged"), [
    ([("5550001", None)], "5550001"),  # a member without a username, flagged by id
    ([("troll_t", "troll_t"), ("nina_n", "nina_n")], "troll_t"),  # joined with another's
], ids=["by-id", "joined"])
async def test_a_group_member_flagged_while_their_message_waits_is_not_answered(
        home: Path, cli, writers: list[tuple[str, str | None]], flagged: str) -> None:  # type: ignore[no-untyped-def]
    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
        gateway = make_gateway(emulator, home, Scripted(["Sure, happy to help!"]), clock, [],
                               io.StringIO(), CompanionConfig(groups=True))
        try:
            group = int(emulator.add_group("book club"))
            ids = {}
            for who, handle in writers:
                ids[who] = int(emulator.add_user(who))
                ref = emulator.add_post(who, "anyone here?", chat=str(group))
                await gateway.on_message(Incoming(group, ids[who], int(ref.split("/")[1]),
                                                  clock(), "anyone here?", private=False,
                                                  handle=handle))
            assert cli("--home", str(home), "dne", "telegram", flagged, "on").code == 0
            await asyncio.wait_for(gateway.drain(), timeout=20)
            assert [m["text"] for m in emulator.sent()] == []
        finally:
            await gateway.channel.bot.session.close()  # type: ignore[attr-defined]
            gateway.close()


async def test_a_user_flagged_in_the_middle_of_a_paced_reply_gets_no_further_part(
        home: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
        reply = "First thought here.\n\nSecond thought, a bit longer than the first one."
        gateway = make_gateway(emulator, home, Scripted([reply]), clock, [], io.StringIO(),
                               CompanionConfig())
        try:
            ref = emulator.add_post("5550001", "hello?")
            chat, message_id = (int(x) for x in ref.split("/"))
            pauses: list[float] = []

            async def sleep(seconds: float) -> None:
                pauses.append(seconds)
                if len(pauses) == 3:  # join pause, typing before part 1, typing before part 2
                    assert cli("--home", str(home), "dne", "telegram", str(chat),
                               "on").code == 0
                await asyncio.sleep(0)

            gateway.sleep = sleep  # type: ignore[method-assign]
            await gateway.on_message(Incoming(chat, chat, message_id, clock(), "hello?"))
            await asyncio.wait_for(gateway.drain(), timeout=20)
            assert len(pauses) >= 3, pauses
            assert [m["text"] for m in emulator.sent()] == ["First thought here."]
        finally:
            await gateway.channel.bot.session.close()  # type: ignore[attr-defined]
            gateway.close()


async def test_a_user_flagged_by_username_gets_no_check_in(world: World, cli) -> None:  # type: ignore[no-untyped-def]
    # Operators know handles, not ids: the username must be checked at every turn, not only
    # when a message arrives.
    await world.say("dne_a", "hi, nice to meet you", handle="dne_a")
    before = len(world.texts())
    assert cli("--home", str(world.home), "dne", "telegram", "dne_a", "on").code == 0
    world.clock.now = datetime(2026, 12, 3, 14, 0, tzinfo=UTC)  # a day-2 check-in is due
    assert await asyncio.wait_for(world.gateway.check_in(), timeout=20) == 0
    assert world.texts()[before:] == []


async def test_a_held_message_of_a_user_flagged_by_username_is_not_answered(
        world: World, cli) -> None:  # type: ignore[no-untyped-def]
    for n in range(3):
        await world.say("dne_b", f"message {n}", handle="dne_b")
        world.clock.advance(seconds=30)
    await world.say("dne_b", "one more", handle="dne_b")  # over the window: held
    assert world.gateway.store.pending(world.chat_id("dne_b"))
    before = len(world.texts())
    assert cli("--home", str(world.home), "dne", "telegram", "dne_b", "on").code == 0
    world.clock.advance(minutes=11)
    assert await asyncio.wait_for(world.gateway.release_pending(), timeout=20) == 0
    assert world.texts()[before:] == []
