"""`tactful companion stats`: counts and neutral summaries for the operator, never a chat."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tactful.core.companion.session import Session
from tactful.core.companion.store import CompanionStore


def test_stats_show_counts_and_summaries_and_no_chat(cli, home: Path) -> None:
    at = datetime.now(UTC)
    store = CompanionStore(home, "friendbot")
    try:
        for chat in (101, 102, 103):
            store.touch_user(chat, language_code="en", at=at, tz_default="UTC")
            store.record_user_message(chat, at)
        store.set_paused(102, True)
        store.hold(103, 7, "a secret held message", at, at)
        assert store.save_summary(101, at, "Notes rewritten; both shorter than before.")
    finally:
        store.close()
    Session(home, "friendbot", 101).append("user", "a secret chat line", at)
    result = cli("companion", "stats")
    assert result.code == 0, result.err
    first, *rest = result.out.splitlines()
    assert first.startswith("friendbot: users 3,") and "paused 1" in first
    assert "pending 1" in first
    assert rest and rest[0].endswith("Notes rewritten; both shorter than before.")
    assert "secret" not in result.out


def test_stats_of_a_home_without_a_companion(cli, home: Path) -> None:
    (home / "people").mkdir(parents=True)
    result = cli("companion", "stats")
    assert result.code == 0 and "no bot has run" in result.out


def test_stats_count_activity_at_the_tactful_clock(cli, home: Path,  # type: ignore[no-untyped-def]
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # TACTFUL_NOW freezes every command's clock, this one's too.
    monkeypatch.setenv("TACTFUL_NOW", "2026-01-01T12:00:00+00:00")
    store = CompanionStore(home, "friendbot")
    try:
        at = datetime(2026, 1, 1, 11, 0, tzinfo=UTC)  # an hour before the tactful "now"
        store.touch_user(101, language_code="en", at=at, tz_default="UTC")
        store.record_user_message(101, at)
    finally:
        store.close()
    result = cli("companion", "stats")
    assert result.code == 0, result.err
    assert "active 24h 1," in result.out
