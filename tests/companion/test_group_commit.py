"""Group commit (docs/companion.md, "Throughput"): the turns in flight share durable commits, a
send never goes out before its claim is committed (also across a kill -9 and a restart), and
erasure under group commit still leaves no byte behind."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tactful.adapters.emulation import Request
from tactful.adapters.telegram.emulator import TelegramEmulator
from tactful.core.companion.store import CompanionStore
from tactful.core.config.values import CompanionConfig
from tactful.core.send.ledger import send_key

from .conftest import UNIQUE, Clock, Scripted, World, make_gateway
from .test_erasure import places_holding

BOT = "persona"


def change_counter(database: Path) -> int:
    """SQLite's own file change counter (header bytes 24-27): one more for every commit that
    changed the file, whoever counts it."""
    with open(database, "rb") as handle:
        handle.seek(24)
        return int.from_bytes(handle.read(4), "big")


def committed_keys(ledger: Path) -> set[str]:
    """The send keys on disk, read by a connection of its own (which sees committed rows only,
    and rolls back what a killed process left half-written)."""
    db = sqlite3.connect(ledger, timeout=15)
    try:
        return {key for (key,) in db.execute("SELECT key FROM sends")}
    finally:
        db.close()


def claim_key(bot: str, chat: int | str, message: int | str) -> str:
    return send_key("telegram", "dm", f"{bot}/{chat}/{message}", None, "")


def claimed(claims: set[str], bot: str, chat: str, message: str) -> bool:
    """A claim for the answer to this message (a reply, or a command's answer)."""
    return claim_key(bot, chat, message) in claims or \
        claim_key(bot, chat, f"{message}/answer") in claims


async def _twenty_at_once(world: World, prefix: str) -> list[int]:
    messages = [world.incoming(f"{prefix}_{n:02d}", f"hello {n}") for n in range(20)]
    await asyncio.gather(*(world.gateway.on_message(m) for m in messages))
    await asyncio.wait_for(world.gateway.drain(), timeout=30)
    return [m.chat_id for m in messages]


async def _commits_of_twenty_turns(home: Path, *, group_commit: bool) -> int:
    """Twenty users write at once (twenty turns in parallel allowed); the durable commits of
    the store and the ledger their turns cost, by the files' own counters."""
    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        clock = Clock(datetime(2026, 11, 30, 12, tzinfo=UTC))
        gateway = make_gateway(emulator, home, Scripted(["Noted!"]), clock, [], io.StringIO(),
                               CompanionConfig(window_messages=30, daily_cap=50,
                                               parallel_turns=20),
                               group_commit=group_commit)
        world = World(emulator, gateway, gateway.responder, clock, [], io.StringIO(), home)
        try:
            await world.say("warm_up", "hi")  # both files exist, the schema is made
            store_file = home / "companion" / BOT / "companion.sqlite"
            ledger_file = home / "ledger.sqlite"
            before = change_counter(store_file) + change_counter(ledger_file)
            counted = gateway.store.commits + gateway.gate.ledger.commits
            chats = await _twenty_at_once(world, "many")
            answered = Counter(m["chat_id"] for m in emulator.sent())
            assert all(answered[str(chat)] == 1 for chat in chats)
            commits = change_counter(store_file) + change_counter(ledger_file) - before
            # The counter the bench reports is the files' own.
            assert gateway.store.commits + gateway.gate.ledger.commits - counted == commits
            return commits
        finally:
            await gateway.channel.bot.session.close()  # type: ignore[attr-defined]
            gateway.close()


async def test_twenty_turns_at_once_share_their_durable_commits(home: Path) -> None:
    commits = await _commits_of_twenty_turns(home, group_commit=True)
    # Under two per turn for both files together (today's path: five, see the next test);
    # how many turns share a round depends on the machine's load.
    assert 0 < commits < 40, commits


async def test_without_group_commit_each_turn_pays_its_own_commits(home: Path) -> None:
    """The comparison the previous test stands on: the same twenty turns, today's path."""
    commits = await _commits_of_twenty_turns(home, group_commit=False)
    assert commits >= 20 * 4, commits


async def test_delete_among_turns_in_flight_leaves_no_word_and_the_others_are_answered(
        world: World, home: Path) -> None:
    await world.say("eraser", f"my cat is called {UNIQUE}")
    assert places_holding(home, UNIQUE)
    world.responder.replies = ["Noted!"]
    others = [world.incoming(f"busy_{n:02d}", f"hello {n}") for n in range(12)]
    delete = world.incoming("eraser", "/delete")
    await asyncio.gather(*(world.gateway.on_message(m) for m in [*others[:6], delete,
                                                                *others[6:]]))
    await asyncio.wait_for(world.gateway.drain(), timeout=30)
    assert places_holding(home, UNIQUE) == []
    assert world.gateway.store.user(delete.chat_id) is None
    answered = Counter(m["chat_id"] for m in world.emulator.sent())
    assert all(answered[str(m.chat_id)] == 1 for m in others)


async def test_forget_right_after_a_word_arrives_in_the_same_round_leaves_no_word(
        world: World, home: Path) -> None:
    """The word is written into the group's open transaction, then /forget commits the group
    and erases: neither the database, its journal nor the files keep it."""
    world.responder.replies = ["Noted!"]
    chat = world.chat_id("quick_forget")
    await asyncio.gather(world.gateway.on_message(world.incoming("quick_forget",
                                                                 f"secret {UNIQUE}")),
                         world.gateway.on_message(world.incoming("quick_forget", "/forget")))
    await asyncio.wait_for(world.gateway.drain(), timeout=30)
    await world.gateway.on_message(world.incoming("quick_forget", "/forget"))
    assert world.gateway.store.user(chat) is not None  # the user row stays
    assert places_holding(home, UNIQUE) == []


# ---- a real process, killed -----------------------------------------------------------------

CHILD = """
import asyncio, os, random, sys, threading
from datetime import UTC, datetime
from pathlib import Path
from tactful.adapters.telegram.companion import Companion, TelegramChannel, make_bot
from tactful.core.companion.gateway import Gateway
from tactful.core.config.values import CompanionConfig
from tactful.core.schedule.events import EventLog
from tactful.core.send.gate import Gate

class Instant:
    def draft(self, prompt):
        return "Noted, thanks!"

async def main(home, base_url, token):
    bot = make_bot(token, base_url)
    log = EventLog(stream=open(os.devnull, "w"))
    config = CompanionConfig(join_seconds=0, window_messages=1000, daily_cap=1000,
                             parallel_turns=8, typing_pace=0)
    gateway = Gateway(home=Path(home), bot="crash", config=config, persona_name="galatea",
                      default_tz="UTC", responder=Instant(), channel=TelegramChannel(bot, log),
                      gate=Gate.for_home(Path(home)), log=log,
                      clock=lambda: datetime.now(UTC), rng=random.Random(1))
    companion = Companion(gateway, bot, log, gateway.clock, pass_every=86400, tick=0.2)
    await companion.run(threading.Event())

asyncio.run(main(*sys.argv[1:4]))
"""


def _start(home: Path, emulator: TelegramEmulator) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", CHILD, str(home), emulator.base_url,
                             emulator.token], stdout=subprocess.DEVNULL)


def _until(condition: object, seconds: float, step: float = 0.005) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("condition never became true")
        time.sleep(step)


def test_a_process_killed_mid_flight_left_no_answer_without_its_claim_and_a_restart_never_answers_twice(  # noqa: E501
        home: Path) -> None:
    (home / "people").mkdir(parents=True)
    count = 120
    with TelegramEmulator() as emulator:
        users = [emulator.add_user(f"crash_{n:03d}") for n in range(count)]
        child = _start(home, emulator)
        sends: list[str] = []

        def kill_at_the_fifteenth_send(request: Request) -> bool:
            # Killed the moment the 15th message reaches the platform, before it is answered:
            # whatever the process had not committed by then (a commit still running
            # included) is rolled back, as after a crash. The message itself is delivered.
            if emulator.method(request) == "sendmessage":
                sends.append(str(emulator.params(request)["chat_id"]))
                if len(sends) == 15:
                    os.kill(child.pid, signal.SIGKILL)
                    child.wait(timeout=30)
            return False  # never stall anything: only look

        emulator.stall_next(0, match=kill_at_the_fifteenth_send)
        try:
            _until(lambda: emulator.calls("getUpdates"), 60, 0.05)
            # Every other message a command: its answer goes out with no typing round trip
            # between the claim and the send.
            refs = [emulator.add_post(f"crash_{n:03d}", "/help" if n % 2 else f"hello {n}")
                    for n in range(count)]
            _until(lambda: child.poll() is not None, 60, 0.05)
        finally:
            child.kill()
            child.wait(timeout=30)
        _until(lambda: len(emulator.sent()) >= 15, 10)
        first = Counter(str(m["chat_id"]) for m in emulator.sent())
        # Killed mid-flight: with 8 turns at a time, most messages still wait in the store.
        assert 0 < len(first) < count
        message_of = dict(ref.split("/") for ref in refs)
        claims = committed_keys(home / "ledger.sqlite")
        assert claimed(claims, "crash", sends[14], message_of[sends[14]])  # the last one out
        assert all(claimed(claims, "crash", chat, message_of[chat]) for chat in first)

        polled = len(emulator.calls("getUpdates"))
        again = _start(home, emulator)  # the restart answers what was left, never twice
        try:
            _until(lambda: len(emulator.calls("getUpdates")) > polled, 60, 0.05)
            stable: list[int] = []

            def settled() -> bool:
                stable.append(len(emulator.sent()))
                return len(stable) > 60 and len(set(stable[-60:])) == 1

            _until(settled, 120, 0.05)  # three seconds without a new answer
        finally:
            again.kill()
            again.wait(timeout=30)
    answered = Counter(str(m["chat_id"]) for m in emulator.sent())
    assert set(answered) <= set(users)
    assert max(answered.values()) == 1, [c for c, n in answered.items() if n > 1]
    assert len(answered) > len(first)


def test_an_answer_waits_for_its_claim_to_be_committed_even_when_the_commit_is_held_up(
        home: Path) -> None:
    """A reader holds the ledger (its shared lock keeps any commit back): the claim is written,
    but until it can be committed the answer does not go out."""
    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        chat = emulator.add_user("patient")
        child = _start(home, emulator)
        try:
            _until(lambda: emulator.calls("getUpdates"), 60, 0.05)
            reader = sqlite3.connect(home / "ledger.sqlite", timeout=15, isolation_level=None)
            try:
                reader.execute("BEGIN")
                reader.execute("SELECT count(*) FROM sends").fetchone()  # the shared lock
                message = emulator.add_post("patient", "hello").split("/")[1]
                time.sleep(3)  # time enough to claim, and to send were it not waiting
                assert emulator.sent() == []
                keys = {k for (k,) in reader.execute("SELECT key FROM sends")}
                assert claim_key("crash", chat, message) not in keys  # not committed yet
            finally:
                reader.execute("ROLLBACK")
                reader.close()
            _until(lambda: len(emulator.sent()) == 1, 60, 0.05)
            assert claim_key("crash", chat, message) in committed_keys(home / "ledger.sqlite")
        finally:
            child.kill()
            child.wait(timeout=30)


async def test_a_claim_whose_commit_fails_sends_nothing_and_the_next_message_works(
        world: World, home: Path) -> None:
    """A reader holds the ledger past the gateway's busy timeout: the round holding the claim
    cannot commit, is rolled back, and the turn sends nothing (fail closed)."""
    await world.say("warm_up", "hi")
    world.gateway.gate.ledger.db.execute("PRAGMA busy_timeout = 200")
    sent = len(world.emulator.sent())
    reader = sqlite3.connect(home / "ledger.sqlite", timeout=15, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM sends").fetchone()  # the shared lock
        message = world.incoming("unlucky", "hello")
        await world.gateway.on_message(message)
        await asyncio.wait_for(world.gateway.drain(), timeout=30)
    finally:
        reader.execute("ROLLBACK")
        reader.close()
    assert len(world.emulator.sent()) == sent
    assert claim_key(BOT, message.chat_id, message.message_id) not in \
        committed_keys(home / "ledger.sqlite")
    assert '"reason": "MemoryUnavailable"' in world.log.getvalue()
    await world.say("unlucky", "hello again")
    assert len(world.emulator.sent()) == sent + 1


async def test_a_write_block_that_fails_holds_the_file_no_longer_than_one_round(
        home: Path) -> None:
    """Its transaction is undone and the round still ends it: another process can write the
    file again (a `tactful send`, the memory pass's own connection)."""
    store = CompanionStore(home, BOT, group_commit=True)
    try:
        with pytest.raises(RuntimeError), store.together():
            store.set_due("job", datetime(2026, 12, 1, tzinfo=UTC))
            raise RuntimeError("a bug in the middle of the block")
        await asyncio.sleep(0.5)  # one round, and then some
        other = sqlite3.connect(store.path, timeout=0.5, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")  # the write lock is free
            other.execute("ROLLBACK")
        finally:
            other.close()
        assert store.due_at("job") is None
    finally:
        store.close()


async def test_a_user_marked_do_not_engage_while_an_answer_waits_for_its_commit_round_gets_nothing(  # type: ignore[no-untyped-def]
        world: World, home: Path, cli) -> None:
    """The gate said yes, then the answer waited for the round holding its claim (a reader
    keeps the ledger's commit back); meanwhile the operator marked them do-not-engage. The
    line must not go out when the round finally commits."""
    await world.say("rosa_r", "hi")  # known to the store; the ledger exists
    sent = len(world.emulator.sent())
    reader = sqlite3.connect(home / "ledger.sqlite", timeout=15, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM sends").fetchone()  # the shared lock
        message = world.incoming("rosa_r", "/help")
        task = asyncio.create_task(world.gateway.on_message(message))
        await asyncio.sleep(1.5)  # admitted and claimed; its round waits on the reader
        assert len(world.emulator.sent()) == sent
        assert cli("--home", str(home), "dne", "telegram", str(message.user_id), "on").code == 0
    finally:
        reader.execute("ROLLBACK")
        reader.close()
    await asyncio.wait_for(task, timeout=30)
    await asyncio.wait_for(world.gateway.drain(), timeout=30)
    assert len(world.emulator.sent()) == sent
