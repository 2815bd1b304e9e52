"""The retention sweep: history goes 30 days after the user's own last message; notes stay."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tactful.adapters.telegram.companion import Companion
from tactful.core.companion.retention import sweep
from tactful.core.companion.session import Notes, Session
from tactful.core.companion.store import CompanionStore

from .conftest import UNIQUE, Picky, World, found

BOT = "friendbot"
NOW = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def store(home: Path) -> Iterator[CompanionStore]:
    opened = CompanionStore(home, BOT)
    yield opened
    opened.close()


def user_wrote(store: CompanionStore, home: Path, chat_id: int, ago: timedelta) -> Session:
    """A chat whose user's last message was `ago` before NOW, with a prompt and both notes."""
    at = NOW - ago
    store.touch_user(chat_id, language_code="en", at=at - timedelta(days=1), tz_default="UTC")
    store.record_user_message(chat_id, at)
    session = Session(home, BOT, chat_id)
    session.append("user", "remember my exam", at)
    session.append("bot", "good luck with it", at + timedelta(seconds=5))
    session.write_prompt("composed prompt")
    session.write_notes("Exam in June.", "Brief.")
    return session


def files(session: Session) -> set[str]:
    return {p.name for p in session.folder.iterdir()} if session.folder.exists() else set()


def run(store: CompanionStore, home: Path, now: datetime = NOW) -> int:
    return sweep(store, home, BOT, now, history_days=30)


def test_29_days_is_kept_31_is_reset_and_the_notes_stay(home: Path,
                                                        store: CompanionStore) -> None:
    kept = user_wrote(store, home, 1, timedelta(days=29))
    gone = user_wrote(store, home, 2, timedelta(days=31))
    assert run(store, home) == 1
    assert files(kept) == {"history.jsonl", "prompt.md", "memory.md", "style.md"}
    assert [t.text for t in kept.recent(5)] == ["remember my exam", "good luck with it"]
    assert files(gone) == {"memory.md", "style.md"}
    assert gone.notes() == Notes("Exam in June.", "Brief.")
    assert store.user(2) is not None  # the user row stays: limits and pause still apply
    assert run(store, home) == 0  # nothing left to delete


def test_exactly_history_days_is_gone(home: Path, store: CompanionStore) -> None:
    session = user_wrote(store, home, 1, timedelta(days=30))
    assert run(store, home) == 1
    assert session.recent(5) == []


def test_bot_messages_do_not_extend_the_window(home: Path, store: CompanionStore) -> None:
    session = user_wrote(store, home, 1, timedelta(days=31))
    recent = NOW - timedelta(days=1)
    session.append("bot", "checking in: how did the exam go?", recent)
    store.record_bot_message(1, recent)
    store.record_checkin(1, recent)
    assert run(store, home) == 1
    assert session.recent(5) == []
    assert session.prompt() == ""


def test_a_user_who_never_wrote_counts_from_the_start(home: Path, store: CompanionStore) -> None:
    store.touch_user(3, language_code=None, at=NOW - timedelta(days=31), tz_default="UTC")
    session = Session(home, BOT, 3)
    session.append("bot", "welcome!", NOW - timedelta(days=31))
    session.append("bot", "a check-in", NOW - timedelta(days=2))
    assert run(store, home) == 1
    assert session.recent(5) == []


def test_a_folder_the_database_lost_is_judged_by_its_own_history(home: Path,
                                                                 store: CompanionStore) -> None:
    old = Session(home, BOT, 41)
    old.append("user", "long ago", NOW - timedelta(days=31))
    old.append("bot", "later bot line", NOW - timedelta(days=1))
    fresh = Session(home, BOT, 42)
    fresh.append("user", "recently", NOW - timedelta(days=2))
    assert run(store, home) == 1
    assert old.recent(5) == []
    assert [t.text for t in fresh.recent(5)] == ["recently"]


def test_an_active_chat_loses_only_its_old_lines(home: Path, store: CompanionStore) -> None:
    session = user_wrote(store, home, 1, timedelta(days=1))
    lines = (session.folder / "history.jsonl").read_text()
    (session.folder / "history.jsonl").write_text(
        '{"role": "user", "text": "ancient", "time": "2026-04-01T00:00:00.000000+00:00"}\n'
        + lines)
    assert run(store, home) == 0
    assert [t.text for t in session.recent(5)] == ["remember my exam", "good luck with it"]


def test_the_sweep_prunes_message_times(home: Path, store: CompanionStore) -> None:
    user_wrote(store, home, 1, timedelta(days=3))
    assert store.message_times(1, NOW - timedelta(days=5)) != []
    run(store, home)
    assert store.message_times(1, NOW - timedelta(days=5)) == []


def test_a_sweep_of_an_empty_home_does_nothing(home: Path, store: CompanionStore) -> None:
    assert run(store, home) == 0


# ---- in the running companion -------------------------------------------------------------------

async def test_the_retention_sweep_runs_even_when_the_memory_pass_fails(world: World) -> None:
    await world.say("old_z", f"long ago I said {UNIQUE}")
    chat = world.chat_id("old_z")
    world.gateway.responder = Picky("long ago")
    world.clock.advance(days=31)  # history due for deletion; the chat is also due for a pass
    companion = Companion(world.gateway, world.gateway.channel.bot,  # type: ignore[attr-defined]
                          world.gateway.log, world.clock, pass_every=0, tick=0.02)
    stop = threading.Event()
    timers = asyncio.create_task(companion._timers(stop))
    try:
        await asyncio.sleep(0.5)  # ~25 ticks, each with a pass and (meant to be) a sweep
    finally:
        stop.set()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(timers, timeout=20)
    assert not (Session(world.home, "persona", chat).folder / "history.jsonl").exists()


async def test_retention_drops_old_lines_from_the_composed_prompt_too(world: World) -> None:
    # prompt.md shows the last turn's history lines: they go when the history's lines go.
    await world.say("ret_a", f"on day zero I said {UNIQUE}")
    world.clock.advance(days=25)
    world.responder.replies = ["Nice to hear from you."]
    await world.say("ret_a", "hello again")  # prompt.md now shows the day-0 line
    world.clock.advance(days=15)  # day 40: the day-0 line is past 30 days
    world.gateway.sweep()
    session = Session(world.home, "persona", world.chat_id("ret_a"))
    assert all(UNIQUE not in turn.text for turn in session.history())  # history: gone
    assert found(world.home, UNIQUE) == []  # ... and everywhere else
