"""/forget, /delete and /export: a word the user sent is found nowhere under the home afterwards.

"Nowhere" is checked the hard way: every byte of every file under the home, the SQLite file and
any journal beside it included.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tactful.adapters.telegram.emulator import TelegramEmulator
from tactful.core.companion import erasure, phrases
from tactful.core.companion.gateway import Incoming
from tactful.core.companion.session import Notes, Session
from tactful.core.companion.store import CompanionStore
from tactful.core.config.values import CompanionConfig
from tactful.core.memory.atomic import temp_prefix

from .conftest import UNIQUE, Clock, Gated, Scripted, World, make_gateway, until

BOT = "friendbot"
NOW = datetime(2026, 5, 4, 20, 0, tzinfo=UTC)
WORD = "Quokkaflumph"  # sent by the user; appears nowhere else
OTHER = "Brimblewomp"  # another user's word, which must survive


@pytest.fixture
def store(home: Path) -> Iterator[CompanionStore]:
    opened = CompanionStore(home, BOT)
    yield opened
    opened.close()


def places_holding(home: Path, word: str) -> list[str]:
    """Every file under home whose bytes contain the word, in any case, as UTF-8 or UTF-16."""
    needles = [form.encode(codec) for form in (word, word.lower(), word.upper())
               for codec in ("utf-8", "utf-16-le")]
    return sorted(str(p.relative_to(home)) for p in home.rglob("*")
                  if p.is_file() and any(n in p.read_bytes() for n in needles))


def a_user_who_said(store: CompanionStore, home: Path, chat_id: int, word: str) -> Session:
    """The word in the history, the composed prompt, both notes, and a held message."""
    store.touch_user(chat_id, language_code="de", at=NOW - timedelta(days=2),
                     tz_default="Europe/Berlin")
    session = Session(home, BOT, chat_id)
    for n in range(30):  # enough rows that the database has real pages to reuse
        at = NOW - timedelta(hours=30 - n)
        store.record_user_message(chat_id, at)
        session.append("user", f"line {n}: my cat is called {word}", at)
        session.append("bot", f"{word} is a lovely name", at + timedelta(seconds=3))
        store.record_bot_message(chat_id, at + timedelta(seconds=3))
    session.write_prompt(f"... what you remember: cat {word} ...")
    session.write_notes(f"Has a cat called {word}.", f"Calls everyone {word}.")
    for n in range(5):
        store.hold(chat_id, 1000 + n, f"held: {word} did something again ({n})",
                   NOW, NOW + timedelta(minutes=4))
    store.set_paused(chat_id, True)
    store.invite_code(chat_id)
    store.record_checkin(chat_id, NOW - timedelta(days=1))
    return session


def test_the_word_is_everywhere_before(home: Path, store: CompanionStore) -> None:
    """The search itself works: it finds the word in the files and in the database."""
    a_user_who_said(store, home, 7, WORD)
    found = places_holding(home, WORD)
    assert f"companion/{BOT}/companion.sqlite" in found
    assert {f"companion/{BOT}/7/{name}" for name in
            ("history.jsonl", "prompt.md", "memory.md", "style.md")} <= set(found)


def test_delete_leaves_no_trace(home: Path, store: CompanionStore) -> None:
    session = a_user_who_said(store, home, 7, WORD)
    other = a_user_who_said(store, home, 8, OTHER)
    store.save_summary(7, NOW, "Memory pass done.")
    erasure.delete(store, home, BOT, 7)
    assert places_holding(home, WORD) == []
    assert not session.folder.exists()
    assert store.user(7) is None
    assert store.pending(7) == []
    assert store.message_times(7, NOW - timedelta(days=5)) == []
    assert store.summaries(10) == []
    assert not [p for p in home.rglob("*") if p.name.endswith(("-journal", "-wal", "-shm"))]
    assert not [p for p in home.rglob("*") if "7" in p.relative_to(home).parts]  # none named
    # the other user keeps everything
    assert other.notes().memory == f"Has a cat called {OTHER}."
    assert len(store.pending(8)) == 5
    assert f"companion/{BOT}/companion.sqlite" in places_holding(home, OTHER)


def test_delete_of_a_chat_with_nothing_is_harmless(home: Path, store: CompanionStore) -> None:
    erasure.delete(store, home, BOT, 12345)
    assert store.user(12345) is None


def test_forget_clears_notes_history_and_held_but_keeps_the_user(home: Path,
                                                                  store: CompanionStore) -> None:
    session = a_user_who_said(store, home, 7, WORD)
    other = a_user_who_said(store, home, 8, OTHER)
    erasure.forget(store, home, BOT, 7)
    assert places_holding(home, WORD) == []
    assert not [p for p in home.rglob("*") if p.name.endswith(("-journal", "-wal", "-shm"))]
    assert session.notes() == Notes("", "")
    assert session.recent(50) == []
    assert session.prompt() == ""
    assert store.pending(7) == []
    user = store.user(7)
    assert user is not None and user.paused  # the pause still applies
    assert len(store.message_times(7, NOW - timedelta(days=2))) == 30  # and so do the limits
    assert len(other.recent(100)) == 60 and len(store.pending(8)) == 5


def test_after_forget_the_next_message_starts_from_nothing(home: Path,
                                                           store: CompanionStore) -> None:
    session = a_user_who_said(store, home, 7, WORD)
    erasure.forget(store, home, BOT, 7)
    session.append("user", "hello again", NOW + timedelta(minutes=1))
    assert [t.text for t in session.recent(50)] == ["hello again"]
    assert session.notes() == Notes("", "")
    assert places_holding(home, WORD) == []


def test_export_holds_both_notes(home: Path, store: CompanionStore) -> None:
    a_user_who_said(store, home, 7, WORD)
    text = erasure.export(home, BOT, 7).decode("utf-8")
    assert f"Has a cat called {WORD}." in text
    assert f"Calls everyone {WORD}." in text
    assert "line 3" not in text  # notes only, never the history
    assert text.startswith("# ")


def test_export_of_empty_notes(home: Path) -> None:
    text = erasure.export(home, BOT, 7).decode("utf-8")
    assert text.count("(nothing yet)") == 2
    assert not (home / "companion" / BOT / "7").exists()


# ---- in the gateway: a command waits for the turn in flight, and nothing undoes it ------------

async def _command_while_drafting(world: World, handle: str,
                                  command: str) -> asyncio.Task[None]:
    """Send `command` while a turn drafts, and give it 2 s: it must wait for the turn's lock,
    so it finishes only once the responder's gate opens."""
    task = asyncio.create_task(world.gateway.on_message(world.incoming(handle, command)))
    await asyncio.wait({task}, timeout=2)
    return task


async def test_delete_during_a_turn_leaves_no_words_and_nothing_is_sent_after_the_goodbye(
        world: World) -> None:
    gate = Gated(reply="Sounds lovely, tell me more!")
    world.gateway.responder = gate
    message = world.incoming("del_a", f"my cat is called {UNIQUE}")
    await world.gateway.on_message(message)
    try:
        await until(gate.entered.is_set, 5)  # the turn is drafting now
        command = await _command_while_drafting(world, "del_a", "/delete")
    finally:
        gate.opened.set()
    await asyncio.wait_for(world.gateway.drain(), timeout=20)
    await asyncio.wait_for(command, timeout=20)
    assert world.gateway.store.user(message.chat_id) is None
    assert places_holding(world.home, UNIQUE) == []
    assert world.texts()[-1] in phrases.variants("deleted", "en")  # nothing after the goodbye


async def test_forget_during_a_turn_is_not_undone_by_the_turn(world: World) -> None:
    gate = Gated(reply="Sounds lovely, tell me more!")
    world.gateway.responder = gate
    message = world.incoming("fgt_a", f"my cat is called {UNIQUE}")
    await world.gateway.on_message(message)
    try:
        await until(gate.entered.is_set, 5)
        command = await _command_while_drafting(world, "fgt_a", "/forget")
    finally:
        gate.opened.set()
    await asyncio.wait_for(world.gateway.drain(), timeout=20)
    await asyncio.wait_for(command, timeout=20)
    assert places_holding(world.home, UNIQUE) == []


async def test_forget_in_the_join_pause_is_not_undone_by_the_pause(world: World) -> None:
    gateway = world.gateway
    gate = threading.Event()

    def slow() -> str:
        gate.wait(10)
        return "Sure."

    world.responder.replies = [slow, "Later answer."]
    first = world.incoming("forget_a", "first message")
    await gateway.on_message(first)
    await until(lambda: len(world.responder.prompts) == 1)  # its turn holds the chat lock
    world.clock.advance(seconds=1)
    await gateway.on_message(world.incoming("forget_a", f"secret {UNIQUE}"))  # in the pause
    forget = asyncio.create_task(gateway.on_message(world.incoming("forget_a", "/forget")))
    await asyncio.sleep(0.05)
    gate.set()
    await asyncio.wait_for(forget, timeout=20)
    await asyncio.wait_for(gateway.drain(), timeout=20)
    history = Session(world.home, "persona", first.chat_id).recent(10)
    assert not any(UNIQUE in t.text for t in history), history
    assert not any(UNIQUE in p.user for p in world.responder.prompts[1:])


async def test_delete_erases_even_when_the_confirmation_cannot_be_sent(world: World) -> None:
    message = await world.say("gone_a", f"my secret word is {UNIQUE}")
    world.emulator.fail_method("sendMessage", 502, times=10)
    with contextlib.suppress(Exception):  # the adapter would catch and log it
        await asyncio.wait_for(world.gateway.on_message(world.incoming("gone_a", "/delete")),
                               timeout=20)
    assert world.gateway.store.user(message.chat_id) is None
    assert places_holding(world.home, UNIQUE) == []


async def test_delete_leaves_no_trace_of_the_chat_in_the_send_ledger(world: World) -> None:
    # The key (a hash) may stay, so that a restart never answers twice; who and when may not.
    await world.say("led_a", "/help")  # a command's answer, settled under its inbound key
    message = await world.say("led_a", "hello there")
    await world.say("led_a", "/delete")
    chat = re.compile(rf"(?<!\d){message.chat_id}(?!\d)")
    with contextlib.closing(sqlite3.connect(world.home / "ledger.sqlite")) as db:
        rows = db.execute("SELECT * FROM sends").fetchall()
    assert rows  # the sends are still known (by their hashed keys)
    assert [v for row in rows for v in row if isinstance(v, str) and chat.search(v)] == []


async def test_forget_removes_a_leftover_temp_file_of_the_history(world: World) -> None:
    message = await world.say("tmp_a", f"my word is {UNIQUE}")
    folder = Session(world.home, "persona", message.chat_id).folder
    history = (folder / "history.jsonl").read_bytes()
    (folder / (temp_prefix("history.jsonl") + "k3j9x2")).write_bytes(history)  # a crash
    await world.say("tmp_a", "/forget")
    assert places_holding(world.home, UNIQUE) == []


async def test_a_do_not_engage_user_can_still_delete_their_data(world: World, cli) -> None:  # type: ignore[no-untyped-def]
    # "Never answered" does not mean "never erased".
    message = await world.say("dnd_a", f"remember {UNIQUE}")
    Session(world.home, "persona", message.chat_id).write_notes(f"Said {UNIQUE}.", "short")
    assert cli("--home", str(world.home), "dne", "telegram", str(message.chat_id),
               "on").code == 0
    before = len(world.texts())
    await world.say("dnd_a", "/delete")
    assert world.texts()[before:] == []  # still never answered ...
    assert world.gateway.store.user(message.chat_id) is None  # ... but erased
    assert places_holding(world.home, UNIQUE) == []


async def test_a_do_not_engage_member_cannot_erase_a_group(home: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (home / "people").mkdir(parents=True)
    with TelegramEmulator() as emulator:
        clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
        gateway = make_gateway(emulator, home, Scripted(["Hello group!"]), clock, [],
                               io.StringIO(), CompanionConfig(groups=True))
        try:
            group = int(emulator.add_group("book club"))
            ref = emulator.add_post("rosa_r", f"the word is {UNIQUE}", chat=str(group))
            rosa = int(emulator.add_user("rosa_r"))
            await gateway.on_message(Incoming(group, rosa, int(ref.split("/")[1]), clock(),
                                              f"the word is {UNIQUE}", private=False))
            await gateway.drain()
            assert Session(home, "persona", group).recent(5)
            troll = int(emulator.add_user("troll_t"))
            assert cli("--home", str(home), "dne", "telegram", str(troll), "on").code == 0
            ref = emulator.add_post("troll_t", "/delete", chat=str(group))
            await gateway.on_message(Incoming(group, troll, int(ref.split("/")[1]), clock(),
                                              "/delete", private=False))
            await gateway.drain()
            assert Session(home, "persona", group).recent(5)  # the group's talk is still there
            assert gateway.store.user(group) is not None
        finally:
            await gateway.channel.bot.session.close()  # type: ignore[attr-defined]
            gateway.close()
