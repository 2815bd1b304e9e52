"""The retention sweep: history goes 30 days after the user's own last message; notes stay."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tactful.core.companion.retention import sweep
from tactful.core.companion.session import Notes, Session
from tactful.core.companion.store import CompanionStore

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
