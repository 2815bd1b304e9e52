"""/forget, /delete and /export: a word the user sent is found nowhere under the home afterwards.

"Nowhere" is checked the hard way: every byte of every file under the home, the SQLite file and
any journal beside it included.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tactful.core.companion import erasure
from tactful.core.companion.session import Notes, Session
from tactful.core.companion.store import CompanionStore

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
