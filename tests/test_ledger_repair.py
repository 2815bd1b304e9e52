"""The ledger's repair (docs/sending.md, "The ledger"): a send that went out but whose memory was
never written is recorded by the next run, exactly once, and never while its own sender is
still alive to write it. Real `tactful` processes, the real ledger, real locks; a send is held
on the recording platform (`fail_next("hold")`) once the post is out, and memory is held by
taking the lock its write needs, so each interleaving happens for certain."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tactful.core.memory.atomic import locked
from tactful.core.memory.home import Home
from tactful.core.send.ledger import Ledger

from . import recording_adapter as platform
from .conftest import run_process
from .sending import sent

ALICE_POST = "https://recorder.example/p/1"  # the first post the platform takes
REPAIRED = "was never written to memory"


def start(*argv: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tactful.core.cli", *argv],
                            env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for(condition: Callable[[], object], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def rows(home: Path) -> list[tuple[str, int, str | None]]:
    """(state, remembered, owner) of each send, alias spellings left out."""
    db = sqlite3.connect(home / "ledger.sqlite", timeout=15)
    try:
        return db.execute("SELECT state, remembered, owner FROM sends WHERE alias = 0 "
                          "ORDER BY started").fetchall()
    finally:
        db.close()


def logged(home: Path, url: str) -> int:
    """Lines of the engagement log that record the send with this URL."""
    log = home / "engagement.jsonl"
    if not log.exists():
        return 0
    return sum(json.loads(line).get("url") == url for line in log.read_text().splitlines())


def in_person_file(home: Path, handle: str, url: str) -> int:
    path = home / "people" / "recorder" / f"{handle}.md"
    return path.read_text().count(url) if path.exists() else 0


def alice_send_held() -> subprocess.Popen[str]:
    """`tactful send` replying to alice, held by the platform once it has taken the post (the
    locks its memory needs were found free before: the caller takes one, then lets go)."""
    platform.add_post("10", "alice")
    platform.fail_next("hold")
    sender = start("send", "recorder", "--reply-to", "10", "--text", "hello alice",
                   env={"TACTFUL_LOCK_TIMEOUT": "60"})
    wait_for(platform.held().exists, "the platform to take the post")
    return sender


def killed_before_memory(home: Path) -> None:
    """A sender killed -9 after the platform took its post and the ledger said `sent`, before
    a line of memory was written."""
    sender = alice_send_held()
    with locked(home / ".locks" / "engagement.lock"):
        platform.let_go()
        wait_for(lambda: [r[0] for r in rows(home)] == ["sent"], "the ledger to say sent")
        time.sleep(0.2)  # well inside its wait for the engagement log
        sender.kill()
        sender.communicate(timeout=30)
    assert sender.returncode == -9
    assert logged(home, ALICE_POST) == 0 and in_person_file(home, "alice", ALICE_POST) == 0


def test_two_senders_at_once_each_write_their_own_send_to_memory_once(
        recorder, keyring_log, home: Path) -> None:
    alice_lock = Home(home).person_lock("recorder", "alice")
    first = alice_send_held()
    with locked(alice_lock):
        platform.let_go()
        # The first sender has marked its post sent and waits to write alice's file: the
        # moment a second sender's repair used to take it for a send a crash left unrecorded.
        wait_for(lambda: [r[0] for r in rows(home)] == ["sent"], "the ledger to say sent")
        second = run_process("send", "recorder", "--to", "bob", "--text", "hello bob",
                             env={"TACTFUL_LOCK_TIMEOUT": "5"})
    _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert second.returncode == 0, second.stderr
    assert REPAIRED not in second.stderr and REPAIRED not in err
    assert len(sent()) == 2
    assert logged(home, ALICE_POST) == 1 and in_person_file(home, "alice", ALICE_POST) == 1
    bob_post = "https://recorder.example/p/2"
    assert logged(home, bob_post) == 1 and in_person_file(home, "bob", bob_post) == 1
    assert [r[:2] for r in rows(home)] == [("sent", 1), ("sent", 1)]


def test_a_batch_run_while_a_send_writes_its_memory_leaves_that_send_to_its_sender(
        batch_config: Path, home: Path) -> None:
    alice_lock = Home(home).person_lock("recorder", "alice")
    first = alice_send_held()
    platform.add_inbound("30", "carol", "loved your post on sqlite indexes")
    with locked(alice_lock):
        platform.let_go()
        wait_for(lambda: [r[0] for r in rows(home)] == ["sent"], "the ledger to say sent")
        batch = run_process("routine", "run", "reply", env={"TACTFUL_LOCK_TIMEOUT": "5"})
    _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert batch.returncode == 0, batch.stderr
    assert "batch.repaired" not in batch.stderr and "1 answered" in batch.stdout
    assert logged(home, ALICE_POST) == 1 and in_person_file(home, "alice", ALICE_POST) == 1
    assert [r[:2] for r in rows(home)] == [("sent", 1), ("sent", 1)]


def test_a_sender_killed_before_memory_was_written_is_repaired_exactly_once_by_the_next_run(
        recorder, keyring_log, home: Path) -> None:
    killed_before_memory(home)
    rerun = run_process("send", "recorder", "--to", "bob", "--text", "hello bob")
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stderr.count(REPAIRED) == 1
    assert logged(home, ALICE_POST) == 1 and in_person_file(home, "alice", ALICE_POST) == 1
    later = run_process("send", "recorder", "--to", "carol", "--text", "hello carol")
    assert later.returncode == 0 and REPAIRED not in later.stderr
    assert logged(home, ALICE_POST) == 1 and in_person_file(home, "alice", ALICE_POST) == 1
    assert len(sent()) == 3  # the repair posts nothing
    assert all(r[:2] == ("sent", 1) for r in rows(home))


def test_two_repairers_racing_record_the_send_once(recorder, keyring_log, home: Path) -> None:
    killed_before_memory(home)
    [(_, _, dead)] = rows(home)
    with locked(home / ".locks" / "engagement.lock"):
        # Both start while the memory write they would make waits: one takes the send and
        # waits for the log; the other finds it taken by a live repairer and goes on.
        racers = [start("send", "recorder", "--to", who, "--text", "hi", "--preview",
                        env={"TACTFUL_LOCK_TIMEOUT": "60"}) for who in ("bob", "carol")]
        wait_for(lambda: rows(home)[0][2] != dead, "a repairer to take the send")
        wait_for(lambda: any(r.poll() is not None for r in racers),
                 "the repairer that found it taken to finish", timeout=30)
    said = [r.communicate(timeout=60) for r in racers]
    assert [r.returncode for r in racers] == [0, 0], said
    assert sum(err.count(REPAIRED) for _, err in said) == 1
    assert logged(home, ALICE_POST) == 1 and in_person_file(home, "alice", ALICE_POST) == 1
    assert [r[:2] for r in rows(home)] == [("sent", 1)]


def test_a_send_held_by_another_open_ledger_in_this_process_is_left_to_it(
        home: Path) -> None:
    # Two routines of `tactful run` are two ledgers in one process: a pid says nothing here.
    home.mkdir()
    at = datetime(2026, 11, 30, 12, tzinfo=UTC)
    sender, repairer = Ledger(home), Ledger(home)
    try:
        [key] = sender.claim(["k"], platform="recorder", action="post", reply_to=None,
                             handle=None, thread=None, mentions=[], text="hello", at=at,
                             again=False)
        sender.mark_sent([key], post_id="1", url=ALICE_POST, at=at)
        assert [row.key for row in repairer.unremembered()] == [key]
        assert repairer.take(key) is None  # its sender is still open
        sender.close()
        taken = repairer.take(key)
        assert taken is not None and taken.text == "hello"
        assert Ledger(home).take(key) is None  # now held by the repairer
    finally:
        repairer.close()


def test_a_send_whose_memory_write_failed_is_repaired_even_while_its_sender_stays_open(
        home: Path) -> None:
    home.mkdir()
    at = datetime(2026, 11, 30, 12, tzinfo=UTC)
    sender, repairer = Ledger(home), Ledger(home)
    try:
        keys = sender.claim(["k", "k-url"], platform="recorder", action="post", reply_to=None,
                            handle=None, thread=None, mentions=[], text="hello", at=at,
                            again=False)
        sender.mark_sent(keys, post_id="1", url=ALICE_POST, at=at)
        sender.disown(keys)  # what `Ticket.settle` does when memory was not written
        assert repairer.take("k") is not None
    finally:
        sender.close()
        repairer.close()


@pytest.mark.parametrize("owner", [None, "not-a-token"])
def test_rows_from_before_owners_are_repaired_and_unreadable_owners_are_not(
        home: Path, owner: str | None) -> None:
    home.mkdir()
    Ledger(home).close()  # the current schema
    db = sqlite3.connect(home / "ledger.sqlite")
    db.execute("INSERT INTO sends (key, platform, action, state, started, remembered, owner, "
               "text) VALUES ('k', 'recorder', 'post', 'sent', '2026-11-30', 0, ?, 'hi')",
               (owner,))
    db.commit()
    db.close()
    ledger = Ledger(home)
    try:
        assert (ledger.take("k") is not None) == (owner is None)
    finally:
        ledger.close()


def test_a_ledger_from_before_holders_is_migrated_and_its_unrecorded_send_repaired(
        home: Path) -> None:
    from tactful.core.send.ledger import _MIGRATIONS, _PY_MIGRATIONS

    home.mkdir()
    db = sqlite3.connect(home / "ledger.sqlite")
    for script in _MIGRATIONS:
        db.executescript(script)
    db.execute(f"PRAGMA user_version = {len(_MIGRATIONS) + 1}")  # scrubbed, no holders yet
    db.execute("INSERT INTO sends (key, platform, action, state, started, remembered, text) "
               "VALUES ('k', 'recorder', 'post', 'sent', '2026-11-30', 0, 'hi')")
    db.commit()
    db.close()
    ledger = Ledger(home)
    try:
        (version,) = ledger.db.execute("PRAGMA user_version").fetchone()
        assert version == len(_MIGRATIONS) + len(_PY_MIGRATIONS)
        taken = ledger.take("k")
        assert taken is not None and taken.text == "hi"
    finally:
        ledger.close()
