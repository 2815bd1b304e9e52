"""The companion's private database and session folders: real SQLite, real files."""

from __future__ import annotations

import json
import sqlite3
import stat
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from tactful.core.companion import session as session_module
from tactful.core.companion.session import NOTE_LIMIT, Notes, Session, chat_ids_on_disk
from tactful.core.companion.store import MIGRATIONS, CompanionStore
from tactful.core.errors import BadInput, MemoryUnavailable

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
BOT = "friendbot"


@pytest.fixture
def store(home: Path) -> Iterator[CompanionStore]:
    opened = CompanionStore(home, BOT)
    yield opened
    opened.close()


def add(store: CompanionStore, chat_id: int, at: datetime = T0, *,
        tz: str = "Europe/Amsterdam", language: str | None = "nl") -> None:
    store.touch_user(chat_id, language_code=language, at=at, tz_default=tz)


# ---- the file -----------------------------------------------------------------------------------

def test_database_is_private_and_versioned(home: Path, store: CompanionStore) -> None:
    path = home / "companion" / BOT / "companion.sqlite"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_a_newer_schema_is_refused(home: Path, store: CompanionStore) -> None:
    store.close()
    with sqlite3.connect(home / "companion" / BOT / "companion.sqlite") as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(MemoryUnavailable, match="upgrade tactful"):
        CompanionStore(home, BOT)


def test_reopening_keeps_everything(home: Path, store: CompanionStore) -> None:
    add(store, 7)
    code = store.invite_code(7)
    store.close()
    again = CompanionStore(home, BOT)
    try:
        user = again.user(7)
        assert user is not None and user.invite_code == code
    finally:
        again.close()


@pytest.mark.parametrize("bot", ["../evil", "a/b", "", ".", "..", "x" * 65, "bot name"])
def test_a_bot_name_that_is_a_path_trick_is_refused(home: Path, bot: str) -> None:
    with pytest.raises(BadInput):
        CompanionStore(home, bot)
    assert not (home / "companion").exists()


def test_times_are_stored_as_utc_text(home: Path, store: CompanionStore) -> None:
    amsterdam = timezone(timedelta(hours=1))
    add(store, 7, datetime(2026, 3, 2, 13, 0, tzinfo=amsterdam))
    with sqlite3.connect(home / "companion" / BOT / "companion.sqlite") as db:
        (started,) = db.execute("SELECT started_at FROM users").fetchone()
    assert started == "2026-03-02T12:00:00.000000+00:00"


def test_a_naive_time_is_refused(store: CompanionStore) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        add(store, 7, datetime(2026, 3, 2, 12, 0))


# ---- users --------------------------------------------------------------------------------------

def test_first_contact_creates_the_user_and_later_ones_keep_it(store: CompanionStore) -> None:
    assert store.user(7) is None
    first = store.touch_user(7, language_code="nl-BE", at=T0, tz_default="Europe/Brussels")
    assert (first.chat_id, first.language_code, first.timezone) == (7, "nl-BE", "Europe/Brussels")
    assert first.started_at == T0
    assert (first.paused, first.blocked, first.unanswered, first.invited_count) == (
        False, False, 0, 0)
    later = store.touch_user(7, language_code="de", at=T0 + timedelta(days=3),
                             tz_default="America/New_York")
    assert later.started_at == T0
    assert later.timezone == "Europe/Brussels"
    assert later.language_code == "de"
    unchanged = store.touch_user(7, language_code=None, at=T0 + timedelta(days=4),
                                 tz_default="UTC")
    assert unchanged.language_code == "de"


def test_an_unknown_time_zone_is_refused(store: CompanionStore) -> None:
    with pytest.raises(BadInput, match="time zone"):
        add(store, 7, tz="Mars/Olympus")
    add(store, 7)
    with pytest.raises(BadInput):
        store.set_timezone(7, "Nowhere/Town")
    store.set_timezone(7, "Asia/Tokyo")
    user = store.user(7)
    assert user is not None and user.timezone == "Asia/Tokyo"


def test_user_messages_move_last_user_at_and_reset_checkins(store: CompanionStore) -> None:
    add(store, 7)
    store.record_checkin(7, T0 + timedelta(hours=1))
    store.record_checkin(7, T0 + timedelta(days=2))
    user = store.user(7)
    assert user is not None and user.unanswered == 2
    assert user.checkins_sent == (T0 + timedelta(hours=1), T0 + timedelta(days=2))
    assert user.last_checkin_at == T0 + timedelta(days=2)
    store.record_user_message(7, T0 + timedelta(days=3))
    user = store.user(7)
    assert user is not None
    assert user.unanswered == 0
    assert user.last_user_at == T0 + timedelta(days=3)
    assert len(user.checkins_sent) == 2  # the weekly count still sees them
    store.record_user_message(7, T0 + timedelta(days=1))  # late delivery: never moves back
    user = store.user(7)
    assert user is not None and user.last_user_at == T0 + timedelta(days=3)


def test_bot_messages_move_only_last_bot_at(store: CompanionStore) -> None:
    add(store, 7)
    store.record_user_message(7, T0)
    store.record_bot_message(7, T0 + timedelta(days=10))
    user = store.user(7)
    assert user is not None
    assert user.last_bot_at == T0 + timedelta(days=10)
    assert user.last_user_at == T0
    assert store.message_times(7, T0 - timedelta(days=1)) == [T0]


def test_message_times_since_and_pruned_after_two_days(store: CompanionStore) -> None:
    add(store, 7)
    add(store, 8)
    times = [T0 + timedelta(minutes=m) for m in (0, 5, 9, 30)]
    for at in reversed(times):
        store.record_user_message(7, at)
    store.record_user_message(8, T0)
    assert store.message_times(7, T0) == times
    assert store.message_times(7, T0 + timedelta(minutes=5)) == times[1:]
    assert store.message_times(8, T0) == [T0]
    store.record_user_message(7, T0 + timedelta(days=2, minutes=6))
    assert store.message_times(7, T0 - timedelta(days=1)) == [
        *times[2:], T0 + timedelta(days=2, minutes=6)]
    assert store.message_times(8, T0) == [T0]  # another user's times are theirs
    assert store.prune(T0 + timedelta(days=3)) >= 1
    assert store.message_times(8, T0) == []


def test_setters_on_an_unknown_chat_change_nothing(store: CompanionStore) -> None:
    store.record_user_message(99, T0)
    store.record_bot_message(99, T0)
    store.set_paused(99, True)
    store.record_checkin(99, T0)
    store.mark_pass(99, T0)
    assert store.user(99) is None
    assert store.message_times(99, T0 - timedelta(days=1)) == []
    assert store.users() == []
    with pytest.raises(LookupError):
        store.invite_code(99)


def test_pause_and_block(store: CompanionStore) -> None:
    add(store, 7)
    store.set_paused(7, True)
    store.set_blocked(7, True)
    user = store.user(7)
    assert user is not None and user.paused and user.blocked
    store.set_paused(7, False)
    store.set_blocked(7, False)
    user = store.user(7)
    assert user is not None and not user.paused and not user.blocked


def test_users_lists_everyone_with_their_checkins(store: CompanionStore) -> None:
    add(store, 9)
    add(store, -100123)  # a group chat
    store.record_checkin(9, T0)
    listed = store.users()
    assert [u.chat_id for u in listed] == [-100123, 9]
    assert listed[1].checkins_sent == (T0,)
    assert listed[0].checkins_sent == ()


# ---- invites ------------------------------------------------------------------------------------

def test_invite_codes_are_stable_unguessable_and_count_only(home: Path,
                                                            store: CompanionStore) -> None:
    add(store, 7)
    add(store, 8)
    code = store.invite_code(7)
    assert store.invite_code(7) == code
    assert len(code) == 12 and code.replace("-", "").replace("_", "").isalnum()
    assert store.invite_code(8) != code
    assert store.record_arrival(code) is True
    assert store.record_arrival(code) is True
    assert store.record_arrival("nope") is False
    assert store.record_arrival("../x") is False
    user = store.user(7)
    assert user is not None and user.invited_count == 2
    with sqlite3.connect(home / "companion" / BOT / "companion.sqlite") as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info(users)")}
    assert "invited_by" not in columns
    assert store.stats(T0)["invites"] == 2


# ---- held messages ------------------------------------------------------------------------------

def test_held_messages_oldest_first_taken_once(store: CompanionStore) -> None:
    add(store, 7)
    store.hold(7, 12, "second", T0 + timedelta(seconds=5), T0 + timedelta(minutes=3))
    store.hold(7, 11, "first", T0, T0 + timedelta(minutes=3))
    store.hold(7, 11, "first again", T0, T0 + timedelta(minutes=9))  # redelivered: kept once
    store.hold(8, 1, "other chat", T0, T0 + timedelta(minutes=1))
    assert [p.text for p in store.pending(7)] == ["first", "second"]
    assert store.pending(7)[0].release_at == T0 + timedelta(minutes=3)
    taken = store.take_pending(7)
    assert [(p.message_id, p.text, p.at) for p in taken] == [
        (11, "first", T0), (12, "second", T0 + timedelta(seconds=5))]
    assert store.take_pending(7) == []
    assert store.pending(7) == []
    assert [p.text for p in store.pending(8)] == ["other chat"]


def test_due_pending_by_the_earliest_release(store: CompanionStore) -> None:
    store.hold(7, 1, "a", T0, T0 + timedelta(minutes=2))
    store.hold(7, 2, "b", T0, T0 + timedelta(minutes=8))
    store.hold(8, 1, "c", T0, T0 + timedelta(minutes=5))
    assert store.due_pending(T0 + timedelta(minutes=1)) == []
    assert store.due_pending(T0 + timedelta(minutes=2)) == [7]
    assert store.due_pending(T0 + timedelta(minutes=5)) == [7, 8]
    assert store.clear_pending(7) == 2
    assert store.due_pending(T0 + timedelta(hours=1)) == [8]


def test_take_pending_from_two_threads_gives_each_message_once(home: Path) -> None:
    stores = [CompanionStore(home, BOT) for _ in range(2)]
    for n in range(50):
        stores[0].hold(7, n, f"m{n}", T0 + timedelta(seconds=n), T0)
    got: list[list[int]] = [[], []]

    def take(i: int) -> None:
        for _ in range(25):
            got[i].extend(p.message_id for p in stores[i].take_pending(7))

    threads = [threading.Thread(target=take, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for opened in stores:
        opened.close()
    assert sorted(got[0] + got[1]) == list(range(50))


# ---- the memory pass's view ---------------------------------------------------------------------

def test_chats_for_pass_wrote_since_and_quiet(store: CompanionStore) -> None:
    now = T0 + timedelta(hours=6)
    for chat in (1, 2, 3, 4):
        add(store, chat)
    store.record_user_message(1, now - timedelta(minutes=20))  # quiet exactly long enough
    store.record_user_message(2, now - timedelta(minutes=19))  # not yet quiet
    store.record_user_message(3, now - timedelta(hours=3))
    store.mark_pass(3, now - timedelta(hours=2))  # nothing new since its pass
    # 4 never wrote
    assert store.chats_for_pass(now, 20) == [1]
    assert store.chats_not_quiet(now, 20) == [2]
    store.mark_pass(1, now)
    assert store.chats_for_pass(now, 20) == []
    store.record_user_message(3, now - timedelta(minutes=90))
    assert store.chats_for_pass(now, 20) == [3]


def test_summaries_newest_first_and_only_for_known_users(store: CompanionStore) -> None:
    add(store, 7)
    assert store.save_summary(7, T0, "notes rewritten") is True
    assert store.save_summary(7, T0 + timedelta(hours=6), "notes rewritten again") is True
    assert store.save_summary(99, T0, "for nobody") is False
    assert [s.text for s in store.summaries(10)] == ["notes rewritten again", "notes rewritten"]
    assert [s.text for s in store.summaries(1)] == ["notes rewritten again"]
    assert store.summaries(1)[0].at == T0 + timedelta(hours=6)
    store.prune(T0 + timedelta(days=30, hours=1))
    assert [s.text for s in store.summaries(10)] == ["notes rewritten again"]


def test_stats_are_counts(store: CompanionStore) -> None:
    now = T0 + timedelta(days=10)
    for chat in (1, 2, 3, 4):
        add(store, chat)
    store.record_user_message(1, now - timedelta(hours=2))
    store.record_user_message(2, now - timedelta(days=3))
    store.record_user_message(3, now - timedelta(days=9))
    store.set_paused(2, True)
    store.set_blocked(3, True)
    store.hold(1, 5, "wait", now, now)
    store.hold(1, 6, "more", now, now)
    assert store.stats(now) == {"users": 4, "active_24h": 1, "active_7d": 2, "paused": 1,
                                "blocked": 1, "pending": 2, "invites": 0}
    assert all(isinstance(v, int) for v in store.stats().values())


def test_delete_user_removes_every_row(home: Path, store: CompanionStore) -> None:
    add(store, 7)
    add(store, 8)
    store.record_user_message(7, T0)
    store.record_checkin(7, T0)
    store.hold(7, 1, "held", T0, T0)
    store.save_summary(7, T0, "ok")
    store.invite_code(7)
    store.delete_user(7)
    assert store.user(7) is None
    assert store.user(8) is not None
    with sqlite3.connect(home / "companion" / BOT / "companion.sqlite") as db:
        for table in ("users", "message_times", "checkins", "pending", "summaries"):
            count = db.execute(f"SELECT count(*) FROM {table} WHERE chat_id = 7").fetchone()[0]  # noqa: S608
            assert count == 0, table


# ---- session folders ----------------------------------------------------------------------------

@pytest.mark.parametrize("chat_id", ["7", "../7", 7.0, True, None])
def test_a_chat_id_must_be_an_int(home: Path, chat_id: object) -> None:
    with pytest.raises(BadInput):
        Session(home, BOT, chat_id)  # type: ignore[arg-type]


def test_group_chats_have_negative_decimal_folders(home: Path) -> None:
    session = Session(home, BOT, -100123)
    session.append("user", "hallo", T0)
    assert session.folder == home / "companion" / BOT / "-100123"
    assert stat.S_IMODE(session.folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((session.folder / "history.jsonl").stat().st_mode) == 0o600
    assert chat_ids_on_disk(home, BOT) == [-100123]


def test_history_appends_in_order_and_reads_recent(home: Path) -> None:
    session = Session(home, BOT, 7)
    assert session.recent(5) == []
    assert not session.folder.exists()  # reading creates nothing
    for n in range(5):
        session.append("user" if n % 2 == 0 else "bot", f"line {n}", T0 + timedelta(minutes=n))
    recent = session.recent(3)
    assert [(t.role, t.text) for t in recent] == [("user", "line 2"), ("bot", "line 3"),
                                                  ("user", "line 4")]
    assert recent[0].at == T0 + timedelta(minutes=2)
    assert session.recent(0) == []
    raw = (session.folder / "history.jsonl").read_text().splitlines()
    assert json.loads(raw[0]) == {"role": "user", "text": "line 0",
                                  "time": "2026-03-02T12:00:00.000000+00:00"}
    with pytest.raises(ValueError):
        session.append("system", "x", T0)  # type: ignore[arg-type]


def test_history_is_capped(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_module, "HISTORY_CAP", 4)
    session = Session(home, BOT, 7)
    for n in range(6):
        session.append("user", f"m{n}", T0)
    assert [t.text for t in session.recent(10)] == ["m2", "m3", "m4", "m5"]


def test_a_torn_line_is_skipped(home: Path) -> None:
    session = Session(home, BOT, 7)
    session.append("user", "kept", T0)
    with (session.folder / "history.jsonl").open("a") as handle:
        handle.write('{"role": "user", "text": "half\n[1,2]\n{"role":"x","text":"a","time":"b"}\n')
    session.append("bot", "also kept", T0)
    assert [t.text for t in session.history()] == ["kept", "also kept"]


def test_appends_from_two_threads_lose_nothing(home: Path) -> None:
    def write(role: str) -> None:
        session = Session(home, BOT, 7)
        for n in range(30):
            session.append(role, f"{role}{n}", T0)  # type: ignore[arg-type]

    threads = [threading.Thread(target=write, args=(role,)) for role in ("user", "bot")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    texts = [t.text for t in Session(home, BOT, 7).history()]
    assert sorted(texts) == sorted([f"user{n}" for n in range(30)] +
                                   [f"bot{n}" for n in range(30)])


def test_notes_are_written_whole_and_capped(home: Path) -> None:
    session = Session(home, BOT, 7)
    assert session.notes() == Notes("", "")
    session.write_notes("Has a dog, Pip.", "Short, no emoji.")
    assert session.notes() == Notes("Has a dog, Pip.", "Short, no emoji.")
    long = ("word " * 1000).strip()
    session.write_notes(long, "ok")
    memory = session.notes().memory
    assert len(memory) <= NOTE_LIMIT and memory.endswith("word")
    assert long.startswith(memory)


def test_write_notes_with_a_stale_fingerprint_writes_nothing(home: Path) -> None:
    session = Session(home, BOT, 7)
    session.append("user", "hi", T0)
    token = session.fingerprint()
    session.append("user", "again", T0)
    assert session.write_notes("new", "new", expect=token) is False
    assert session.notes() == Notes("", "")
    assert session.write_notes("new", "new", expect=session.fingerprint()) is True
    assert session.notes() == Notes("new", "new")


def test_reset_keeps_the_notes_and_remove_takes_all(home: Path) -> None:
    session = Session(home, BOT, 7)
    session.append("user", "hi", T0)
    session.write_prompt("the prompt")
    session.write_notes("memory", "style")
    assert session.prompt() == "the prompt"
    session.reset()
    assert session.recent(10) == []
    assert session.prompt() == ""
    assert session.notes() == Notes("memory", "style")
    session.clear_notes()
    assert session.notes() == Notes("", "")
    session.append("user", "hi", T0)
    session.remove()
    assert not session.folder.exists()
    assert chat_ids_on_disk(home, BOT) == []
    Session(home, BOT, 8).reset()  # a chat with no folder: nothing made
    assert not (home / "companion" / BOT / "8").exists()


def test_drop_before_keeps_newer_lines(home: Path) -> None:
    session = Session(home, BOT, 7)
    for days in (40, 31, 30, 2):
        session.append("user", f"{days} days", T0 - timedelta(days=days))
    assert session.drop_before(T0 - timedelta(days=30)) == 3
    assert [t.text for t in session.history()] == ["2 days"]
    assert session.drop_before(T0 - timedelta(days=30)) == 0
    assert session.drop_before(T0) == 1
    assert not (session.folder / "history.jsonl").exists()


def test_writes_made_together_are_one_commit_or_none(store: CompanionStore) -> None:
    add(store, 7)
    commits: list[str] = []
    store.db.set_trace_callback(
        lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None)
    with store.together():
        store.record_user_message(7, T0 + timedelta(minutes=1))
        store.hold(7, 1, "first", T0, T0 + timedelta(minutes=5), kind="queued")
    assert len(commits) == 1
    assert [p.text for p in store.pending(7)] == ["first"]
    with pytest.raises(RuntimeError), store.together():
        store.hold(7, 2, "second", T0, T0 + timedelta(minutes=5), kind="queued")
        store.record_user_message(7, T0 + timedelta(minutes=2))
        raise RuntimeError("the turn broke")
    assert [p.text for p in store.pending(7)] == ["first"]  # none of it
    assert store.user(7).last_user_at == T0 + timedelta(minutes=1)  # type: ignore[union-attr]


def test_the_memory_pass_schedule_survives_reopening(home: Path) -> None:
    store = CompanionStore(home, "persona")
    assert store.due_at("memory-pass") is None
    store.set_due("memory-pass", T0)
    store.set_due("memory-pass", T0 + timedelta(hours=6))
    store.close()
    reopened = CompanionStore(home, "persona")
    try:
        assert reopened.due_at("memory-pass") == T0 + timedelta(hours=6)
    finally:
        reopened.close()
