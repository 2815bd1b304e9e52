"""The guarded send pipeline (docs/sending.md) through `tactful send`, with a recording adapter
and a recording keyring: who was checked, what was read, what was sent, in which order."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tactful.core.errors import DoNotEngage, Refused

from . import recording_adapter as platform
from . import recording_keyring
from .conftest import run_process, tree
from .sending import guard_plugin, posting_key_read, sent


def refused_before_anything(keyring_log: Path) -> None:
    assert recording_keyring.accesses() == []
    assert platform.calls() == []
    assert sent() == []


# ---- the hard stops: nothing read, nothing sent ---------------------------------------------

def test_a_flagged_target_exits_3_and_reads_no_key(cli, recorder, keyring_log) -> None:
    assert cli("dne", "recorder", "mallory", "on", "--reason", "asked").code == 0
    result = cli("send", "recorder", "--to", "@Mallory", "--text", "hello there")
    assert result.code == 3, result.err
    assert "recorder/@mallory (target) is do-not-engage" in result.err
    assert "hello there" not in result.err
    refused_before_anything(keyring_log)


def test_a_flagged_mention_exits_3(cli, recorder, keyring_log) -> None:
    cli("dne", "recorder", "mallory", "on")
    result = cli("send", "recorder", "--to", "alice", "--text", "cc @alice and @MALLORY!")
    assert result.code == 3
    assert "(mention)" in result.err
    refused_before_anything(keyring_log)


def test_a_flagged_author_found_by_the_one_read_exits_3_before_posting_keys(
        cli, recorder, keyring_log) -> None:
    cli("dne", "recorder", "mallory", "on")
    platform.add_post("77", "mallory", user_id="u-9")
    result = cli("send", "recorder", "--reply-to", "https://recorder.example/p/77",
                 "--text", "thanks!")
    assert result.code == 3, result.err
    assert "(author)" in result.err
    assert recording_keyring.reads() == ["recorder/default/read_token"]
    assert platform.calls() == ["open", "author", "close"]
    assert sent() == []


def test_a_renamed_flagged_author_is_caught_by_the_stable_id(cli, recorder, keyring_log) -> None:
    cli("remember", "recorder", "oldname", "--kind", "reply", "--they", "hi", "--id", "u-9")
    cli("dne", "recorder", "oldname", "on")
    platform.add_post("78", "newname", user_id="u-9")
    result = cli("send", "recorder", "--reply-to", "78", "--text", "thanks!")
    assert result.code == 3, result.err
    assert "same account id u-9" in result.err
    assert sent() == []


def test_an_unreadable_home_exits_4(cli, recorder, keyring_log, tmp_path: Path) -> None:
    result = cli("--home", str(tmp_path / "nowhere"), "send", "recorder", "--to", "alice",
                 "--text", "hi")
    assert result.code == 4, result.err
    refused_before_anything(keyring_log)


def test_a_corrupt_person_file_exits_4(cli, recorder, keyring_log, home: Path) -> None:
    cli("remember", "recorder", "alice", "--kind", "reply", "--they", "hi")
    path = home / "people" / "recorder" / "alice.md"
    path.write_text(path.read_text().replace("---", "--- :", 1))
    before = tree(home / "people")
    result = cli("send", "recorder", "--to", "alice", "--text", "hello")
    assert result.code == 4, result.err
    assert tree(home / "people") == before
    refused_before_anything(keyring_log)


def test_do_not_engage_wins_over_unreadable_memory(cli, recorder, keyring_log, home) -> None:
    cli("remember", "recorder", "alice", "--kind", "reply", "--they", "hi")
    (home / "people" / "recorder" / "alice.md").write_text("garbage\n")
    cli("dne", "recorder", "mallory", "on")
    result = cli("send", "recorder", "--to", "alice", "--text", "hi @mallory")
    assert result.code == 3
    refused_before_anything(keyring_log)


def test_a_memory_module_that_fails_to_import_exits_4(recorder, keyring_log,
                                                      tmp_path: Path) -> None:
    poison = tmp_path / "poison"
    poison.mkdir()
    (poison / "sitecustomize.py").write_text(
        "import sys\n"
        "class Poison:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'tactful.core.memory.check':\n"
        "            raise ImportError('simulated broken install', name=name)\n"
        "sys.meta_path.insert(0, Poison())\n")
    env = {"PYTHONPATH": os.pathsep.join([str(poison), os.environ["PYTHONPATH"]])}
    result = run_process("send", "recorder", "--to", "alice", "--text", "hi", env=env)
    assert result.returncode == 4, result.stderr
    assert "memory" in result.stderr and "Traceback" not in result.stderr
    refused_before_anything(keyring_log)


# ---- dry run -----------------------------------------------------------------------------------

def test_dry_run_writes_the_outbox_and_reads_nothing(cli, recorder, keyring_log, home) -> None:
    result = cli("send", "recorder", "--to", "alice", "--text", "hi @bob", "--dry-run")
    assert result.code == 0, result.err
    assert "dry run" in result.out and "hi @bob" in result.out
    refused_before_anything(keyring_log)
    [line] = (home / "outbox" / "dry-run.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["handle"] == "alice" and record["mentions"] == ["bob"]
    assert record["dry_run"] is True and record["text"] == "hi @bob"
    assert not (home / "people" / "recorder" / "alice.md").exists()


def test_dry_run_from_the_config_reads_nothing(cli, recorder, keyring_log, tmp_path) -> None:
    config = tmp_path / "tactful.yaml"
    config.write_text("platforms:\n  recorder:\n    dry_run: true\n")
    platform.add_post("5", "alice")
    result = cli("--config", str(config), "send", "recorder", "--reply-to", "5", "--text", "hi")
    assert result.code == 0, result.err
    refused_before_anything(keyring_log)


def test_a_dry_run_of_a_flagged_target_still_exits_3(cli, recorder, keyring_log, home) -> None:
    cli("dne", "recorder", "mallory", "on")
    result = cli("send", "recorder", "--to", "mallory", "--text", "hi", "--dry-run")
    assert result.code == 3
    assert not (home / "outbox").exists()


# ---- a send, and memory written at once --------------------------------------------------------

def test_a_reply_goes_out_and_memory_has_it(cli, recorder, keyring_log, home) -> None:
    platform.add_post("10", "alice", user_id="u-1", thread="9")
    result = cli("send", "recorder", "--reply-to", "10", "--text", "glad it worked, @bob")
    assert result.code == 0, result.err
    assert result.out.strip() == "sent reply to recorder/@alice: https://recorder.example/p/1"
    assert sent() == [{"text": "glad it worked, @bob", "reply_to": "10", "to": None, "id": "1"}]
    # the author read, then @bob resolved to its id, all before the posting key
    assert platform.calls() == ["open", "author", "resolve", "enable_posting", "send", "close"]
    assert recording_keyring.reads() == ["recorder/default/read_token",
                                         "recorder/default/post_token"]
    card = cli("card", "recorder", "alice", "--json")
    data = json.loads(card.out)
    assert data["known"] and data["entries"] == 1
    text = (home / "people" / "recorder" / "alice.md").read_text()
    assert "glad it worked, @bob" in text and "https://recorder.example/p/1" in text
    assert "u-1" in text
    [event] = [json.loads(x) for x in (home / "engagement.jsonl").read_text().splitlines()]
    assert event["action"] == "reply" and event["url"] == "https://recorder.example/p/1"
    assert event["thread"] == "9" and event["dry_run"] is False
    assert (home / "hot.md").exists()


def test_a_sync_after_a_send_adds_nothing_twice(cli, recorder, keyring_log, home) -> None:
    platform.add_post("10", "alice")
    cli("send", "recorder", "--reply-to", "10", "--text", "hello")
    before = (home / "people" / "recorder" / "alice.md").read_text()
    assert cli("sync-log").code == 0
    assert (home / "people" / "recorder" / "alice.md").read_text().count("hello") == \
        before.count("hello")


def test_a_post_to_no_one_goes_to_the_journal(cli, recorder, keyring_log, home) -> None:
    result = cli("send", "recorder", "--text", "a thought for the day")
    assert result.code == 0, result.err
    assert platform.calls() == ["open", "enable_posting", "send", "close"]
    journal = "".join(p.read_text() for p in (home / "journal").glob("*.md"))
    assert "a thought for the day" in journal


def test_mentions_carry_the_stable_ids_memory_knows(cli, recorder, keyring_log) -> None:
    cli("remember", "recorder", "bob", "--kind", "reply", "--they", "hi", "--id", "u-22")
    assert cli("send", "recorder", "--to", "alice", "--text", "meet @bob and @carol").code == 0
    [details] = [d for call, d in platform.calls_with_details() if call == "send"]
    assert details["mentions"] == {"bob": "u-22", "carol": None}


# ---- the ledger: idempotent across reruns and crashes ------------------------------------------

def test_the_same_reply_twice_is_refused_unless_again(cli, recorder, keyring_log) -> None:
    platform.add_post("10", "alice")
    assert cli("send", "recorder", "--reply-to", "10", "--text", "one").code == 0
    reads = len(recording_keyring.reads())
    second = cli("send", "recorder", "--reply-to", "10", "--text", "two")
    assert second.code == 5 and "already replied" in second.err
    assert len(recording_keyring.reads()) == reads  # refused before the keyring
    assert cli("send", "recorder", "--reply-to", "10", "--text", "two", "--again").code == 0
    assert [s["text"] for s in sent()] == ["one", "two"]


def test_a_crash_between_pending_and_sent_never_posts_twice(recorder, keyring_log) -> None:
    platform.add_post("10", "alice")
    platform.fail_next("crash")
    first = run_process("send", "recorder", "--reply-to", "10", "--text", "hello")
    assert first.returncode == 9  # killed with the post out and the ledger still pending
    assert len(sent()) == 1
    rerun = run_process("send", "recorder", "--reply-to", "10", "--text", "hello")
    assert rerun.returncode == 5, rerun.stderr
    assert "pending" in rerun.stderr
    assert len(sent()) == 1


def test_a_failure_before_the_platform_took_the_post_lets_a_retry_go(
        cli, recorder, keyring_log) -> None:
    platform.add_post("10", "alice")
    platform.fail_next("rate")
    limited = cli("send", "recorder", "--reply-to", "10", "--text", "hello")
    assert limited.code == 5 and "retry in 42 s" in limited.err
    assert platform.calls().count("send") == 1  # not retried blindly
    assert cli("send", "recorder", "--reply-to", "10", "--text", "hello").code == 0
    assert len(sent()) == 1


def test_a_timeout_after_sending_keeps_the_ledger_pending(cli, recorder, keyring_log) -> None:
    platform.add_post("10", "alice")
    platform.fail_next("maybe")
    first = cli("send", "recorder", "--reply-to", "10", "--text", "hello")
    assert first.code == 5 and "may have gone out" in first.err
    again = cli("send", "recorder", "--reply-to", "10", "--text", "hello")
    assert again.code == 5 and "pending" in again.err
    assert len(sent()) == 1


def test_a_failed_again_never_erases_the_record_of_a_reply_that_went_out(
        cli, recorder, keyring_log) -> None:
    platform.add_post("10", "alice")
    assert cli("send", "recorder", "--reply-to", "10", "--text", "one").code == 0
    platform.fail_next("down")
    retry = cli("send", "recorder", "--reply-to", "10", "--text", "two", "--again")
    assert retry.code == 5, retry.err  # nothing went out this time
    later = cli("send", "recorder", "--reply-to", "10", "--text", "three")
    assert later.code == 5 and "already replied" in later.err, (later.code, later.err)
    assert [s["text"] for s in sent()] == ["one"]


def test_a_post_the_batch_answered_is_not_answered_again_through_the_apps_url(
        cli, bluesky_emulator) -> None:
    # The batch knows the post by its at://did:... URI; the app shows a link that names the
    # handle. Both spellings must lead to the one ledger record.
    bluesky = bluesky_emulator
    alice = bluesky.canonical("alice")
    bluesky.add_user(alice)
    url = bluesky.add_post(alice, f"@{bluesky.persona} how does the desk work?")
    run = cli("--config", str(bluesky.config), "routine", "run", "reply")
    assert run.code == 0, run.out + run.err
    assert len(bluesky.sent()) == 1
    by_hand = cli("--config", str(bluesky.config), "send", "bluesky", "--reply-to", url,
                  "--text", "it is rebuilt after every write")
    assert by_hand.code == 5, (by_hand.code, by_hand.out, by_hand.err)
    assert len(bluesky.sent()) == 1


# ---- bots: one reply per thread ----------------------------------------------------------------

def test_a_bot_gets_one_reply_per_thread(cli, recorder, keyring_log) -> None:
    cli("set", "recorder", "botty", "--kind", "bot")
    platform.add_post("20", "botty", thread="20")
    platform.add_post("21", "botty", thread="20")
    platform.add_post("30", "botty", thread="30")
    assert cli("send", "recorder", "--reply-to", "20", "--text", "hi bot").code == 0
    second = cli("send", "recorder", "--reply-to", "21", "--text", "hi again")
    assert second.code == 5 and "bot" in second.err
    assert cli("send", "recorder", "--reply-to", "30", "--text", "new thread").code == 0
    assert [s["reply_to"] for s in sent()] == ["20", "30"]


def test_a_bot_the_platform_reports_counts_too(cli, recorder, keyring_log) -> None:
    platform.add_post("40", "autobot", is_bot=True, thread="40")
    platform.add_post("41", "autobot", is_bot=True, thread="40")
    assert cli("send", "recorder", "--reply-to", "40", "--text", "hi").code == 0
    assert cli("send", "recorder", "--reply-to", "41", "--text", "hi").code == 5


def test_a_named_bot_target_is_still_looked_up_for_its_thread(cli, recorder,
                                                             keyring_log) -> None:
    cli("set", "recorder", "botty", "--kind", "bot")
    platform.add_post("50", "botty", thread="50")
    platform.add_post("51", "botty", thread="50")
    assert cli("send", "recorder", "--to", "botty", "--reply-to", "50", "--text", "a").code == 0
    assert cli("send", "recorder", "--to", "botty", "--reply-to", "51", "--text", "b").code == 5


def test_a_bot_the_platform_reports_gets_one_reply_per_thread_even_when_named_with_to(
        cli, recorder, keyring_log) -> None:
    # Nothing in memory says it is a bot: only the author read does, so it happens with --to too.
    platform.add_post("40", "autobot", is_bot=True, thread="40")
    platform.add_post("41", "autobot", is_bot=True, thread="40")
    assert cli("send", "recorder", "--to", "autobot", "--reply-to", "40", "--text", "a").code == 0
    second = cli("send", "recorder", "--to", "autobot", "--reply-to", "41", "--text", "b")
    assert second.code == 5, (second.code, second.err)
    assert [s["reply_to"] for s in sent()] == ["40"]


def test_two_processes_never_both_reply_in_one_bot_thread(
        cli, recorder, keyring_log, monkeypatch: pytest.MonkeyPatch) -> None:
    # A second `tactful send` runs to completion while the first is between its checks and its
    # claim (reading its posting keys): the window any two concurrent batches or sends have.
    from .recording_adapter import RecorderSession

    cli("set", "recorder", "botty", "--kind", "bot")
    platform.add_post("20", "botty", thread="20")
    platform.add_post("21", "botty", thread="20")
    enable = RecorderSession.enable_posting
    other: list[Any] = []

    def meanwhile(self: RecorderSession, credentials: Any) -> None:
        enable(self, credentials)
        if not other:
            other.append(run_process("send", "recorder", "--reply-to", "21", "--text", "b"))

    monkeypatch.setattr(RecorderSession, "enable_posting", meanwhile)
    first = cli("send", "recorder", "--reply-to", "20", "--text", "a")
    assert other and other[0].returncode == 0, other[0].stderr
    assert first.code == 5, (first.code, first.out, first.err)
    assert [s["reply_to"] for s in sent()] == ["21"]


# ---- quotas and plugin guards ------------------------------------------------------------------

def test_the_platform_quota_and_the_operator_limit(cli, recorder, keyring_log, tmp_path) -> None:
    config = tmp_path / "tactful.yaml"
    config.write_text("platforms:\n  recorder:\n    limits: {post: 2}\n")
    for n in range(2):
        assert cli("--config", str(config), "send", "recorder", "--text", f"post {n}").code == 0
    over = cli("--config", str(config), "send", "recorder", "--text", "post 3")
    assert over.code == 5 and "limit of 2" in over.err
    assert len(sent()) == 2


def test_the_adapters_published_quota(cli, recorder, keyring_log) -> None:
    for n in range(6):
        platform.add_post(str(100 + n), f"user{n}")
    codes = [cli("send", "recorder", "--reply-to", str(100 + n), "--text", "hi").code
             for n in range(6)]
    assert codes == [0, 0, 0, 0, 0, 5]


def test_replies_sent_with_again_each_count_toward_the_quota(cli, recorder, keyring_log) -> None:
    platform.add_post("10", "alice")
    codes = [cli("send", "recorder", "--reply-to", "10", "--text", f"take {n}",
                 *(["--again"] if n else [])).code for n in range(6)]
    assert codes == [0, 0, 0, 0, 0, 5], codes


# ---- bad input: a clear line, exit 2, nothing sent ---------------------------------------------

@pytest.mark.parametrize(("argv", "message"), [
    (["send", "mastodon", "--text", "hi"], "unknown platform 'mastodon'"),
    (["send", "recorder", "--text", "hi", "--reply-to", "../../etc/passwd"],
     "is not a recorder post"),
    (["send", "recorder", "--text", "x" * 101], "101 characters; recorder allows 100"),
    # Telegram counts UTF-16 code units: 2049 emoji are 4098 of them.
    (["send", "telegram", "--to", "12345", "--text", "🙂" * 2049],
     "4098 UTF-16 code units; telegram allows 4096"),
    (["send", "recorder", "--text", "   "], "--text is empty"),
    (["send", "recorder", "--text", "hi", "--to", "a/b"], "contains '/'"),
    (["send", "recorder", "--text", "hi", "--to", "me@example.com"], "e-mail"),
])
def test_bad_input_exits_2_and_sends_nothing(cli, recorder, keyring_log, argv, message) -> None:
    result = cli(*argv)
    assert result.code == 2, result.err
    assert message in result.err
    assert len([x for x in result.err.splitlines()
                if "warning:" not in x and "note:" not in x]) == 1
    refused_before_anything(keyring_log)


def test_text_that_is_not_utf8_is_bad_input_not_an_internal_error(
        cli, recorder, keyring_log) -> None:
    # A lone surrogate: what Python makes of argv bytes that are not UTF-8.
    result = cli("send", "recorder", "--to", "bob", "--text", "caf\udce9 later?")
    assert result.code == 2, (result.code, result.err)


def test_a_missing_credential_names_the_command_that_stores_it(cli, recorder,
                                                              keyring_log) -> None:
    data = json.loads(keyring_log.read_text())
    del data["tactful\x00recorder/default/post_token"]
    keyring_log.write_text(json.dumps(data))
    result = cli("send", "recorder", "--to", "alice", "--text", "hi")
    assert result.code == 2
    assert "store it with: tactful credentials set recorder post_token" in result.err
    assert sent() == []


# ---- when memory cannot be written after the post is out ---------------------------------------

def test_a_failed_memory_write_keeps_the_post_and_prints_the_command(
        cli, recorder, keyring_log, home, read_only) -> None:
    import shlex

    cli("remember", "recorder", "alice", "--kind", "reply", "--they", "hi")
    read_only(home / "people" / "recorder")
    result = cli("send", "recorder", "--to", "alice", "--text", "it's done; 'quoted' too")
    assert result.code == 0, result.err
    assert len(sent()) == 1
    [line] = [x for x in result.err.splitlines() if "record it with: " in x]
    command = shlex.split(line[line.index("tactful --home"):])
    assert command[0] == "tactful"
    _thaw(home / "people" / "recorder")
    assert cli(*command[1:]).code == 0
    card = json.loads(cli("card", "recorder", "alice", "--json").out)
    assert card["entries"] == 2
    text = (home / "people" / "recorder" / "alice.md").read_text()
    assert "it's done; 'quoted' too" in text and "https://recorder.example/p/1" in text


def _thaw(root: Path) -> None:
    import shutil
    import subprocess

    if os.geteuid() == 0:
        subprocess.run([shutil.which("chattr") or "chattr", "-R", "-i", str(root)], check=True)
    else:
        for path in [root, *root.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)


def test_a_ledger_failure_after_the_post_went_out_still_exits_0_and_records_the_post(
        cli, recorder, keyring_log, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Once the post is out it stands (docs/sending.md, memory at once): what could not be
    # written is reported, with the command that records it.
    from tactful.core.errors import MemoryUnavailable
    from tactful.core.send.ledger import Ledger

    def locked(self, *args: object, **kwargs: object) -> None:
        raise MemoryUnavailable(f"the send ledger {self.path} cannot be used: database is locked")

    monkeypatch.setattr(Ledger, "mark_sent", locked)
    result = cli("send", "recorder", "--to", "alice", "--text", "see you at the meetup")
    assert len(sent()) == 1  # the post is out
    assert result.code == 0, (result.code, result.err)
    assert (home / "people" / "recorder" / "alice.md").exists() or "tactful --home" in result.err


def test_the_recovery_command_records_a_reply_that_starts_with_a_dash(
        cli, recorder, keyring_log, home: Path, read_only) -> None:
    import shlex

    cli("remember", "recorder", "alice", "--kind", "reply", "--they", "hi")
    read_only(home / "people" / "recorder")
    result = cli("send", "recorder", "--to", "alice", "--text=-_-")
    assert result.code == 0, result.err
    [line] = [x for x in result.err.splitlines() if "record it with: " in x]
    command = shlex.split(line[line.index("tactful --home"):])
    _thaw(home / "people" / "recorder")
    rerun = cli(*command[1:])
    assert rerun.code == 0, rerun.err


# ---- guards from plugins -----------------------------------------------------------------------


def test_a_plugin_guard_refuses_before_any_key(cli, recorder, keyring_log) -> None:
    seen = []

    def quiet_hours(attempt) -> None:  # type: ignore[no-untyped-def]
        seen.append((attempt.platform, attempt.action, attempt.to, attempt.mentions))
        raise Refused("quiet hours: no posts before 8:00")

    with guard_plugin(quiet_hours):
        result = cli("send", "recorder", "--to", "alice", "--text", "hi @bob")
    assert result.code == 5 and "quiet hours" in result.err
    assert seen == [("recorder", "dm", "alice", ["bob"])]
    refused_before_anything(keyring_log)


def test_a_plugin_guard_that_breaks_refuses_and_is_named(cli, recorder, keyring_log) -> None:
    def broken(attempt) -> None:  # type: ignore[no-untyped-def]
        raise KeyError("oops")

    with guard_plugin(broken):
        result = cli("send", "recorder", "--to", "alice", "--text", "hi")
    assert result.code == 1
    assert "guard 'test-guard' of plugin 'guards-plugin' failed" in result.err
    refused_before_anything(keyring_log)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_plugin_guard_written_as_async_def_is_not_taken_as_passed(
        cli, recorder, keyring_log) -> None:
    async def nobody_today(attempt) -> None:  # type: ignore[no-untyped-def]
        raise DoNotEngage("refused: nobody today")

    with guard_plugin(nobody_today):
        result = cli("send", "recorder", "--to", "alice", "--text", "hi")
    assert result.code != 0 and sent() == [] and not posting_key_read(), result


def test_a_plugin_guard_that_answers_false_is_not_taken_as_passed(
        cli, recorder, keyring_log) -> None:
    with guard_plugin(lambda attempt: False):
        result = cli("send", "recorder", "--to", "alice", "--text", "hi")
    assert result.code != 0 and sent() == [] and not posting_key_read(), result


# ---- the keyring -------------------------------------------------------------------------------

def test_a_keyring_that_raises_is_a_clear_exit_2(cli, recorder, keyring_log) -> None:
    import keyring

    keyring.set_keyring(recording_keyring.BrokenKeyring())
    result = cli("send", "recorder", "--to", "alice", "--text", "hi")
    assert result.code == 2
    assert "the keyring failed (RuntimeError: the keyring daemon is not answering)" in result.err
    assert "Traceback" not in result.err and sent() == []


def test_no_keyring_backend_says_how_to_configure_one(recorder, keyring_log) -> None:
    env = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    result = run_process("send", "recorder", "--to", "alice", "--text", "hi", env=env)
    assert result.returncode == 2, result.stderr
    assert "no usable keyring backend" in result.stderr
    assert "TACTFUL_KEYRING_KEY_FILE" in result.stderr and "Traceback" not in result.stderr
    result = run_process("credentials", "check", "recorder", env=env)
    assert result.returncode == 2 and "no usable keyring backend" in result.stderr


def test_credentials_come_from_stdin_and_check_never_shows_them(recorder, keyring_log) -> None:
    import subprocess
    import sys

    def tactful(*argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tactful.core.cli", *argv], input=stdin,
                              capture_output=True, text=True, timeout=60, check=False)

    stored = tactful("credentials", "set", "recorder", "read_token", "--account", "main",
                     stdin="s3cret-value\n")
    assert stored.returncode == 0, stored.stderr
    assert "s3cret-value" not in stored.stdout + stored.stderr
    assert ["set", "tactful", "recorder/main/read_token"] in \
        [list(a) for a in recording_keyring.accesses()]
    check = tactful("credentials", "check", "recorder", "--account", "main")
    assert check.returncode == 2
    assert "recorder/main/read_token: stored (reading)" in check.stdout
    assert "recorder/main/post_token: MISSING (posting)" in check.stdout
    assert "tactful credentials set recorder post_token --account main" in check.stderr
    assert "s3cret-value" not in check.stdout + check.stderr
    empty = tactful("credentials", "set", "recorder", "post_token", stdin="\n")
    assert empty.returncode == 2 and "never taken from the command line" in empty.stderr
    unknown = tactful("credentials", "set", "recorder", "password", stdin="x\n")
    assert unknown.returncode == 2 and "use one of: read_token, post_token" in unknown.stderr
    assert tactful("credentials", "check", "recorder").returncode == 0


# ---- plugins that are missing or broken --------------------------------------------------------

def test_a_configured_platform_without_an_adapter(cli, recorder, keyring_log, tmp_path) -> None:
    config = tmp_path / "tactful.yaml"
    config.write_text("platforms:\n  mastodon:\n    account: me\n")
    result = cli("--config", str(config), "send", "mastodon", "--text", "hi")
    assert result.code == 2
    assert "unknown platform 'mastodon'" in result.err
    checked = cli("--config", str(config), "config", "check")
    assert checked.code == 2
    assert "platforms.mastodon: no adapter is installed" in checked.err
    typo = tmp_path / "typo.yaml"
    typo.write_text("platforms:\n  blusky:\n    account: me\n")
    result = cli("--config", str(typo), "config", "check")
    assert result.code == 2 and "did you mean 'bluesky'?" in result.err


def test_a_plugin_that_fails_to_load_stops_every_send_until_it_is_disabled(
        cli, recorder, keyring_log, tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist = site / "tactful_recorder-0.1.dist-info"
    (dist / "entry_points.txt").write_text(
        "[tactful]\nrecorder = tests.recording_adapter\nzzbroken = zz_broken_plugin\n")
    (site / "zz_broken_plugin.py").write_text("raise RuntimeError('boom at import')\n")
    for extra in ([], ["--dry-run"]):
        result = cli("send", "recorder", "--to", "alice", "--text", "hi", *extra)
        assert result.code == 4, result.err
        assert "plugin 'zzbroken' (zz_broken_plugin) failed to load: RuntimeError: boom" \
            in result.err
        assert "plugins: {disabled: [zzbroken]}" in result.err
    refused_before_anything(keyring_log)
    assert sent() == []
    config = tmp_path / "tactful.yaml"
    config.write_text("plugins:\n  disabled: [zzbroken]\n")
    result = cli("--config", str(config), "send", "recorder", "--to", "alice", "--text", "hi")
    assert result.code == 0, result.err
    assert len(sent()) == 1


# ---- forgetting reaches the ledger and the outbox ----------------------------------------------

def test_forget_blanks_the_ledger_and_the_outbox(cli, recorder, keyring_log, home) -> None:
    import sqlite3

    platform.add_post("10", "alice")
    assert cli("send", "recorder", "--reply-to", "10", "--text", "secret plans").code == 0
    assert cli("send", "recorder", "--to", "bob", "--text", "ask @alice",
               "--dry-run").code == 0
    assert cli("forget", "recorder", "alice").code == 0
    ledger = sqlite3.connect(home / "ledger.sqlite")
    rows = ledger.execute("SELECT handle, text, state FROM sends").fetchall()
    assert rows and set(rows) == {(None, None, "sent")}  # by URL and by id, both blanked
    assert b"secret plans" not in (home / "ledger.sqlite").read_bytes()
    assert "alice" not in (home / "outbox" / "dry-run.jsonl").read_text()
    again = cli("send", "recorder", "--reply-to", "10", "--text", "secret plans")
    assert again.code == 5  # forgetting never re-opens a reply that went out


# ---- in-process callers (routines) use the same pipeline ---------------------------------------

def test_the_pipeline_in_process(recorder, keyring_log, home) -> None:
    from tactful.core.cli.context import Context
    from tactful.core.errors import DoNotEngage
    from tactful.core.send.pipeline import Pipeline, SendRequest

    context = Context()
    pipeline = Pipeline(context.make_gate())
    outcome = pipeline.send(SendRequest("recorder", "hello", to="alice"))
    assert outcome.sent is not None and outcome.sent.url == "https://recorder.example/p/1"
    context.people.change("recorder", "mallory",
                          lambda p: setattr(p, "do_not_engage", True))
    with pytest.raises(DoNotEngage):
        pipeline.send(SendRequest("recorder", "hi @mallory", to="alice"))
    assert len(sent()) == 1


def test_any_command_whose_memory_cannot_import_refuses_with_4(recorder, keyring_log,
                                                               tmp_path: Path) -> None:
    poison = tmp_path / "poison2"
    poison.mkdir()
    (poison / "sitecustomize.py").write_text(
        "import sys\n"
        "class Poison:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'tactful.core.memory.store':\n"
        "            raise ImportError('simulated broken install', name=name)\n"
        "sys.meta_path.insert(0, Poison())\n")
    env = {"PYTHONPATH": os.pathsep.join([str(poison), os.environ["PYTHONPATH"]])}
    for argv in (["send", "recorder", "--to", "alice", "--text", "hi"], ["check", "x", "bob"]):
        result = run_process(*argv, env=env)
        assert result.returncode == 4, result.stderr
        assert "memory module cannot be loaded" in result.stderr
    refused_before_anything(keyring_log)


# ---- public interactions only ------------------------------------------------------------------

def test_a_private_message_is_refused_by_default_and_allowed_by_config(
        cli, recorder, keyring_log, tmp_path) -> None:
    # On the recorder, as on Telegram, a chat named by a number is a private chat.
    refused = cli("send", "recorder", "--to", "12345", "--text", "just between us")
    assert refused.code == 5, refused.err
    assert "public interactions" in refused.err and "allow_private: true" in refused.err
    refused_before_anything(keyring_log)
    config = tmp_path / "private.yaml"
    config.write_text("platforms:\n  recorder:\n    allow_private: true\n")
    assert cli("--config", str(config), "send", "recorder", "--to", "12345",
               "--text", "just between us").code == 0
    assert len(sent()) == 1


# ---- the ledger and the outbox keep no raw text ------------------------------------------------

PHONE = "+44 20 7946 0958"


def _ledger_texts(home: Path) -> list[str | None]:
    import sqlite3

    db = sqlite3.connect(home / "ledger.sqlite")
    try:
        return [t for (t,) in db.execute("SELECT text FROM sends ORDER BY started")]
    finally:
        db.close()


def test_the_ledger_scrubs_my_text_and_drops_it_once_memory_has_it(
        cli, recorder, keyring_log, home) -> None:
    platform.add_post("10", "alice")
    platform.add_post("11", "bob")
    assert cli("send", "recorder", "--reply-to", "10", "--text", f"call me on {PHONE}").code == 0
    platform.fail_next("maybe")  # it may have gone out: the row stays pending, with its text
    assert cli("send", "recorder", "--reply-to", "11", "--text", f"or on {PHONE}").code != 0
    texts = _ledger_texts(home)
    assert None in texts  # the remembered send keeps no text
    assert "or on [redacted:phone]" in texts  # the pending one, scrubbed
    assert PHONE.encode() not in (home / "ledger.sqlite").read_bytes()
    assert "call me on [redacted:phone]" in (home / "people" / "recorder" / "alice.md").read_text()


def test_the_dry_run_outbox_is_scrubbed(cli, recorder, keyring_log, home) -> None:
    assert cli("send", "recorder", "--to", "bob", "--text", f"ring {PHONE}",
               "--dry-run").code == 0
    [line] = (home / "outbox" / "dry-run.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["text"] == "ring [redacted:phone]" and record["redacted"] == ["phone"]


def test_a_ledger_from_before_scrubbing_is_migrated_on_open(home: Path) -> None:
    import sqlite3

    from tactful.core.send.ledger import _MIGRATIONS, Ledger

    home.mkdir(parents=True)
    db = sqlite3.connect(home / "ledger.sqlite")
    for script in _MIGRATIONS:
        db.executescript(script)
    db.execute(f"PRAGMA user_version = {len(_MIGRATIONS)}")
    db.executemany("INSERT INTO sends (key, platform, action, text, state, started, remembered) "
                   "VALUES (?, 'recorder', 'reply', ?, ?, '2026-11-30T09:00:00+00:00', ?)",
                   [("k1", f"sent to {PHONE} long ago", "sent", 1),
                    ("k2", f"pending to {PHONE}", "pending", 0)])
    db.commit()
    db.close()
    Ledger(home).close()
    assert sorted(map(str, _ledger_texts(home))) == ["None", "pending to [redacted:phone]"]
    raw = (home / "ledger.sqlite").read_bytes()
    assert PHONE.encode() not in raw and b"long ago" not in raw
