"""`--json` on every command that reports: one JSON object each, times in ISO 8601 with their
offset (docs/cli.md), parsed here as a script would parse them."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from . import recording_adapter as platform

NOW = "2026-11-29T12:00:00-05:00"
TIME_KEYS = ("at", "generated_at", "last_seen", "next_run", "started_at", "finished_at")


@pytest.fixture(autouse=True)
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TACTFUL_NOW", NOW)


def document(result: Any) -> dict[str, Any]:
    """The one JSON object a command printed, with every time in it checked."""
    parsed = json.loads(result.out)
    assert isinstance(parsed, dict), "--json prints one object, never a bare list"
    for key, value in _walk(parsed):
        if key in TIME_KEYS and value is not None:
            assert isinstance(value, str), (key, value)
            assert datetime.fromisoformat(value).utcoffset() is not None, (key, value)
    return parsed


def _walk(value: Any) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            found.append((key, inner))
            found += _walk(inner)
    elif isinstance(value, list):
        for inner in value:
            found += _walk(inner)
    return found


def test_check_json_gives_each_verdict_and_the_exit_code(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "bob", "--kind", "reply", "--they", "hi").code == 0
    assert cli("dne", "x", "troll", "on").code == 0
    result = cli("check", "x", "bob", "troll", "nobody", "--json")
    assert result.code == 3
    data = document(result)
    by_handle = {r["handle"]: r for r in data["results"]}
    assert by_handle["troll"]["do_not_engage"] is True and by_handle["troll"]["exit_code"] == 3
    assert by_handle["bob"]["known"] is True and by_handle["bob"]["last_seen"] == NOW
    assert by_handle["nobody"] == {**by_handle["nobody"], "known": False, "status": "stranger"}
    assert data["exit_code"] == 3


def test_search_json_gives_times_in_iso_not_unix_numbers(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "quantization",
               "--at", "2026-11-15T12:00:00-05:00").code == 0
    data = document(cli("search", "quantization", "--json"))
    assert data["query"] == "quantization"
    entry = next(h for h in data["results"] if h["kind"] == "entry")
    assert entry["at"] == "2026-11-15T12:00:00-05:00"


def test_hot_json_gives_the_desk_by_section(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "bob", "--kind", "question", "--they", "when is the talk?",
               "--open", "owe them the date").code == 0
    data = document(cli("hot", "--json"))
    assert data["generated_at"] == NOW
    assert data["path"] == str(home / "hot.md")
    assert any(line.startswith("x/@bob") for line in data["active_now"])
    assert [line.endswith("owe them the date") for line in data["answers_i_owe"]] == [True]
    assert data["standing_rules"].startswith("(none yet")


def test_send_json_says_what_was_sent_and_its_url(cli, recorder: Path) -> None:  # type: ignore[no-untyped-def]
    platform.add_post("77", "alice", user_id="u-1")
    result = cli("send", "recorder", "--reply-to", "https://recorder.example/p/77",
                 "--text", "thanks, alice", "--json")
    assert result.code == 0, result.err
    data = document(result)
    assert (data["status"], data["action"], data["to"]) == ("sent", "reply", "alice")
    assert data["text"] == "thanks, alice"
    assert data["in_reply_to"] == "https://recorder.example/p/77"
    assert data["url"].startswith("https://recorder.example/p/") and data["url"] != \
        data["in_reply_to"]
    assert data["at"] == NOW


def test_send_dry_run_json_says_what_it_could_not_check(cli, recorder: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("send", "recorder", "--reply-to", "https://recorder.example/p/9",
                 "--text", "hello", "--dry-run", "--json")
    assert result.code == 0, result.err
    data = document(result)
    assert data["status"] == "dry_run" and data["url"] is None and data["unchecked"]


def test_routine_list_and_run_json(cli, batch_config: Path) -> None:  # type: ignore[no-untyped-def]
    listed = document(cli("routine", "list", "--json"))
    by_name = {r["name"]: r for r in listed["routines"]}
    assert by_name["reply"]["schedule"] is None and by_name["reply"]["next_run"] is None
    assert by_name["nightly-sync"]["next_run"] == "2026-11-29T22:30:00-05:00"
    assert by_name["reply"]["installed"] is True
    platform.add_inbound("1", "alice", "loved your post on sqlite indexes")
    result = cli("routine", "run", "reply", "--preview", "--json")
    assert result.code == 0, result.err
    ran = document(result)
    assert ran["routine"] == "reply" and ran["preview"] is True and ran["exit_code"] == 0
    assert ran["counts"]["answered"] == 1
    assert ran["started_at"] == ran["finished_at"] == NOW


def test_credentials_check_json_never_holds_a_value(cli, recorder: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("credentials", "check", "recorder", "--json")
    assert result.code == 0, result.err
    data = document(result)
    assert [(r["field"], r["stored"], r["role"]) for r in data["credentials"]] == [
        ("read_token", True, "reading"), ("post_token", True, "posting")]
    assert "r-token" not in result.out and "p-token" not in result.out
    assert data["missing"] == 0 and data["fix"] is None


def test_config_check_json(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "tactful.yaml").write_text("persona:\n  name: gal\n  timezone: Europe/Paris\n")
    data = document(cli("config", "check", "--json"))
    assert data == {**data, "ok": True, "source": str(tmp_path / "tactful.yaml"),
                    "persona": "gal", "timezone": "Europe/Paris"}


def test_a_refusal_prints_no_json_only_the_one_line_and_the_code(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("check", "x", "bob", "--json")  # no memory home: refused, exit 4
    assert result.code == 4 and result.out == "" and result.err.count("\n") == 1
