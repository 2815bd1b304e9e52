"""The companion on many workers (docs/companion.md, "Running on many workers"): a real private
PostgreSQL cluster, one `tactful companion poll` and two to four `tactful companion worker`
processes, the Telegram emulator (in the test's process) and a real command responder.

PostgreSQL that cannot start fails these tests with the reason (pgcluster.py); they never skip.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tactful.adapters.telegram.emulator import TelegramEmulator

from . import pgcluster

ACCOUNT = "pal_bot"
RESPONDER = Path(__file__).with_name("echo_responder.py")
SECRET = "zxqvplonkerwug"  # a word only the user ever says
_databases = itertools.count(1)


@pytest.fixture(scope="session")
def postgres() -> Iterator[pgcluster.Cluster]:
    cluster = pgcluster.start("postgres_unused")
    yield cluster
    cluster.stop()


@dataclass
class Fleet:
    """The poller, the workers and what they share; `stop` ends every process."""

    tmp: Path
    cluster: pgcluster.Cluster
    dbname: str
    emulator: TelegramEmulator
    config: Path
    folder: Path  # the responder's
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return self.tmp / "home"

    @property
    def dsn(self) -> str:
        return self.cluster.dsn(self.dbname)

    def start(self, role: str) -> subprocess.Popen[bytes]:
        log = self.tmp / f"{role}-{len(self.processes)}.log"
        env = {**os.environ, "TACTFUL_COMPANION_TEST_TIMERS": "1"}
        with log.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "tactful", "--config", str(self.config), "companion",
                 "poll" if role == "poller" else "worker"],
                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=self.tmp)
        self.processes.append(process)
        self.logs.append(log)
        return process

    def workers(self, count: int) -> list[subprocess.Popen[bytes]]:
        """`count` more workers, once each of them (and the poller) is up."""
        started = [self.start("worker") for _ in range(count)]
        self.ready()
        return started

    def ready(self) -> None:
        def up() -> bool:
            running = [p for p in self.processes if p.poll() is None]
            return len(self.events("companion.worker_start")) + \
                len(self.events("companion.poller_start")) >= len(running)
        self.until(up, 240)  # a loaded machine starts Python slowly

    def say(self, who: str, text: str) -> None:
        self.emulator.add_post(who, text)

    def texts_to(self, who: str) -> list[str]:
        chat = self.emulator.add_user(who)
        return [m["text"] for m in self.emulator.sent() if m["chat_id"] == chat]

    def sql(self, query: str) -> str:
        return self.cluster.psql(query, dbname=self.dbname).strip()

    def until(self, condition: Callable[[], bool], seconds: float = 120) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if condition():
                return
            for process, log in zip(self.processes, self.logs, strict=True):
                if process.poll() not in (None, -signal.SIGKILL, 0):
                    raise AssertionError(f"{log.name} ended with {process.returncode}:\n"
                                         f"{log.read_text()[-2000:]}")
            time.sleep(0.05)
        raise AssertionError("condition never became true; logs:\n" + "\n".join(
            f"--- {log.name}\n{log.read_text()[-1500:]}" for log in self.logs))

    def queue_empty(self) -> bool:
        return self.sql("SELECT count(*) FROM companion_persona.updates") == "0" and \
            self.sql("SELECT count(*) FROM companion_persona.pending") == "0"

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=40)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def events(self, name: str) -> list[tuple[int, dict[str, Any]]]:
        """(process index, event) for each event called `name` in the processes' logs."""
        found = []
        for index, log in enumerate(self.logs):
            for line in log.read_text(errors="replace").splitlines():
                if line.startswith("{") and f'"{name}"' in line:
                    found.append((index, json.loads(line)))
        return found


def _config(emulator: TelegramEmulator, dsn: str, folder: Path, **companion: object) -> str:
    settings = {"responder": "echo", "database": dsn, "join_seconds": 0, "typing_pace": 0,
                "release_tick_seconds": 0.2, "release_jitter_min_seconds": 0,
                "release_jitter_max_seconds": 0, "window_messages": 100, "daily_cap": 1000,
                "checkins": False, "parallel_turns": 2, **companion}
    lines = "".join(f"  {k}: {json.dumps(v)}\n" for k, v in settings.items())
    return ("persona:\n  name: galatea\n  timezone: UTC\n"
            f"platforms:\n  telegram:\n    account: {ACCOUNT}\n    mode: companion\n"
            f"    base_url: {emulator.base_url}\n"
            "responders:\n  echo:\n    kind: command\n"
            f"    command: {json.dumps([sys.executable, str(RESPONDER), str(folder)])}\n"
            "    timeout: 60\n"
            f"companion:\n{lines}")


@pytest.fixture
def make_fleet(tmp_path: Path, postgres: pgcluster.Cluster,
               keyring_log: Path) -> Iterator[Callable[..., Fleet]]:
    from tests import recording_keyring

    made: list[Fleet] = []
    emulators: list[TelegramEmulator] = []

    def make(**companion: object) -> Fleet:
        emulator = TelegramEmulator().start()
        emulators.append(emulator)
        recording_keyring.store("telegram", ACCOUNT, "token", emulator.token)
        dbname = f"fleet_{next(_databases)}_{os.getpid()}"
        postgres.psql(f"CREATE DATABASE {dbname}", dbname="postgres")
        folder = tmp_path / "responder"
        folder.mkdir()
        (tmp_path / "home" / "people").mkdir(parents=True)
        config = tmp_path / "tactful.yaml"
        config.write_text(_config(emulator, postgres.dsn(dbname), folder, **companion))
        fleet = Fleet(tmp_path, postgres, dbname, emulator, config, folder)
        made.append(fleet)
        return fleet

    yield make
    for fleet in made:
        fleet.stop()
    for emulator in emulators:
        emulator.stop()


def _tokens(texts: list[str]) -> list[str]:
    return [t for text in texts if text.startswith("got ") for t in text[4:].split()]


def test_every_message_is_answered_once_and_in_order_per_chat_across_three_workers(
        make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet()
    fleet.start("poller")
    fleet.workers(3)
    chats = [f"user{n}" for n in range(6)]
    expected = {who: [f"c{n}-m{m}" for m in range(8)] for n, who in enumerate(chats)}
    for m in range(8):
        for n, who in enumerate(chats):
            fleet.say(who, f"message c{n}-m{m}")
        time.sleep(0.05)
    fleet.until(lambda: all(len(_tokens(fleet.texts_to(who))) >= 8 for who in chats), 120)
    fleet.until(fleet.queue_empty)
    time.sleep(1)  # a second answer would come now
    for who in chats:
        assert _tokens(fleet.texts_to(who)) == expected[who], who
    turning = {index for index, _ in fleet.events("companion.turn")}
    assert len(turning) >= 2, "the work was not shared between workers"


def test_a_worker_killed_mid_turn_leaves_the_answer_to_another_once(
        make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet()
    fleet.start("poller")
    fleet.workers(3)
    (fleet.folder / "slow").touch()
    fleet.say("kim", "SLOW k1-m1")
    fleet.until(lambda: (fleet.folder / "drafting").exists())
    victim = int((fleet.folder / "drafting").read_text())
    assert victim in [p.pid for p in fleet.processes[1:]], "the draft is a worker's"
    os.kill(victim, signal.SIGKILL)  # mid-draft: nothing claimed, nothing sent yet
    (fleet.folder / "go").touch()  # the orphaned draft may finish: it has nobody to tell
    fleet.until(lambda: _tokens(fleet.texts_to("kim")) == ["k1-m1"])
    fleet.say("kim", "and k1-m2")
    fleet.until(lambda: _tokens(fleet.texts_to("kim")) == ["k1-m1", "k1-m2"])
    fleet.until(fleet.queue_empty)
    time.sleep(1.5)  # a second answer would come now
    assert fleet.texts_to("kim") == ["got k1-m1", "got k1-m2"]


def _held_in(root: Path, patterns: dict[str, bytes], skip: tuple[Path, ...] = ()) -> list[str]:
    """Every file under `root` (but not under `skip`) holding one of the byte patterns, as
    "what: path"."""
    hits = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and \
                not any(path.is_relative_to(folder) for folder in skip):
            data = path.read_bytes()
            hits += [f"{what}: {path}" for what, pattern in patterns.items() if pattern in data]
    return hits


def test_delete_leaves_no_trace_of_the_user_in_any_table_wal_file_or_dump(
        make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet(window_messages=2)
    fleet.start("poller")
    fleet.workers(2)
    chat = int(fleet.emulator.add_user("dana"))
    for n, text in enumerate((f"remember {SECRET} d1-m1", f"and {SECRET} again d1-m2",
                              f"held over the window: {SECRET} d1-m3"), start=1):
        fleet.say("dana", text)  # the third waits in `pending`: two answers and a hold line
        fleet.until(lambda n=n: len(fleet.texts_to("dana")) == n)  # type: ignore[misc]
    fleet.until(lambda: fleet.sql("SELECT count(*) FROM companion_persona.pending") == "1")
    fleet.say("dana", "/delete")
    fleet.until(lambda: len(fleet.events("companion.scrubbed")) == 1)
    fleet.until(lambda: fleet.sql("SELECT count(*) FROM companion_persona.updates") == "0")
    for table in ("users", "pending", "message_times", "checkins", "summaries", "updates"):
        assert fleet.sql(f"SELECT count(*) FROM companion_persona.{table}") == "0", table  # noqa: S608 — constant names
    assert fleet.sql("SELECT count(*) FROM tactful_send.sends WHERE handle IS NOT NULL "
                     "OR text IS NOT NULL OR person_id IS NOT NULL") == "0"
    patterns = {"the word": SECRET.encode(), "the chat id": str(chat).encode(),
                "the chat id (binary)": chat.to_bytes(8, "little", signed=True)}
    # Other tests' databases (the cluster is shared; their users have the same ids) aside:
    # every other file of the cluster, the WAL, the catalogs and this database's own.
    query = "SELECT oid FROM pg_database WHERE datname LIKE 'fleet%' AND datname <> '{}'"
    others = tuple(fleet.cluster.data / "base" / oid
                   for oid in fleet.sql(query.format(fleet.dbname)).split())
    assert _held_in(fleet.cluster.data, patterns, others) == []
    assert list((fleet.cluster.data / "pg_wal").glob("0*")), "the WAL was scanned too"
    dump = fleet.cluster.run("pg_dump", "-h", str(fleet.cluster.socket_dir), "-p",
                             str(fleet.cluster.port), "-U", "postgres", fleet.dbname).stdout
    assert "CREATE TABLE companion_persona.pending" in dump
    assert SECRET not in dump and str(chat) not in dump
    assert _held_in(fleet.home, patterns) == []


def test_the_window_limit_counts_messages_answered_by_another_worker(
        make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet(window_messages=3)
    fleet.start("poller")
    first = fleet.workers(1)[0]
    for n in (1, 2):
        fleet.say("lena", f"hello l1-m{n}")
        fleet.until(lambda n=n: len(fleet.texts_to("lena")) == n)  # type: ignore[misc]
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=40) == 0
    fleet.workers(1)  # another process, knowing only the database
    for n in (3, 4):
        fleet.say("lena", f"hello l1-m{n}")
        fleet.until(lambda n=n: len(fleet.texts_to("lena")) == n)  # type: ignore[misc]
    texts = fleet.texts_to("lena")
    assert _tokens(texts) == ["l1-m1", "l1-m2", "l1-m3"]
    assert not texts[3].startswith("got "), "the fourth in ten minutes is held"
    assert fleet.sql("SELECT count(*) FROM companion_persona.pending WHERE kind = 'held'") == "1"
    held = fleet.events("companion.held")
    assert [(index, event["reason"]) for index, event in held] == [(2, "window")]
    stats = subprocess.run([sys.executable, "-m", "tactful", "--config", str(fleet.config),
                            "companion", "stats"], capture_output=True, text=True, timeout=60,
                           check=True).stdout
    assert stats.startswith("persona: users 1, ") and "pending 1" in stats, stats


def test_a_do_not_engage_user_is_answered_by_no_worker(
        make_fleet: Callable[..., Fleet]) -> None:
    from tactful.core.cli.main import main

    fleet = make_fleet()
    fleet.emulator.add_user("mallory")
    assert main(["dne", "telegram", "mallory", "on", "--reason", "asked to be left alone"]) == 0
    fleet.start("poller")
    fleet.workers(3)
    for n in range(4):
        fleet.say("mallory", f"talk to me x1-m{n}")
        fleet.say("nina", f"hi n1-m{n}")
    fleet.until(lambda: len(_tokens(fleet.texts_to("nina"))) == 4)
    fleet.until(fleet.queue_empty)
    time.sleep(1.5)  # an answer to mallory would come now
    assert fleet.texts_to("mallory") == []
    assert len(fleet.events("companion.ignored")) == 4


def test_a_worker_whose_database_cannot_be_reached_says_so_in_one_line_and_sends_nothing(
        make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet()
    text = fleet.config.read_text()
    fleet.config.write_text(re.sub(r"  database: .*\n",
                                   '  database: "host=/nonexistent-socket-dir port=1"\n', text))
    done = subprocess.run([sys.executable, "-m", "tactful", "--config", str(fleet.config),
                           "companion", "worker"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TACTFUL_COMPANION_TEST_TIMERS": "1"},
                          check=False)
    assert done.returncode == 4
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "companion.database" in lines[0] and "cannot be reached" in \
        lines[0], done.stderr
    assert fleet.emulator.sent() == []
    assert not [r for r in fleet.emulator.requests if fleet.emulator.method(r) == "getupdates"]


def test_a_database_password_in_the_config_is_refused_and_never_shown(
        make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet()
    text = fleet.config.read_text()
    fleet.config.write_text(re.sub(r"  database: .*\n",
                                   '  database: "postgresql://tactful:hunter2@db/tactful"\n',
                                   text))
    done = subprocess.run([sys.executable, "-m", "tactful", "--config", str(fleet.config),
                           "companion", "worker"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 2
    assert "companion.database" in done.stderr and "hunter2" not in done.stderr
    assert fleet.emulator.sent() == []


def test_a_worker_refuses_a_cluster_that_would_keep_deleted_messages_in_its_wal(
        make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet()
    fleet.cluster.psql("ALTER SYSTEM SET wal_recycle = on", dbname="postgres")
    fleet.cluster.psql("SELECT pg_reload_conf()", dbname="postgres")
    try:
        done = subprocess.run([sys.executable, "-m", "tactful", "--config", str(fleet.config),
                               "companion", "worker"], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "TACTFUL_COMPANION_TEST_TIMERS": "1"},
                              check=False)
    finally:
        fleet.cluster.psql("ALTER SYSTEM RESET wal_recycle", dbname="postgres")
        fleet.cluster.psql("SELECT pg_reload_conf()", dbname="postgres")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "wal_recycle must be off" in lines[0], done.stderr
    assert fleet.emulator.sent() == []


def test_an_update_telegram_delivers_twice_is_queued_once(
        make_fleet: Callable[..., Fleet]) -> None:
    from tactful.adapters.telegram.workers import store_updates
    from tactful.core.companion.postgres import PostgresStore

    fleet = make_fleet()
    store = PostgresStore(fleet.home, "persona", fleet.dsn)
    try:
        for _ in range(2):  # the poller died before Telegram heard the offset
            store_updates(store.db, "unused", [(41, 700, "{}"), (42, 700, "{}")], 43)
        store_updates(store.db, "unused", [(40, 700, "{}")], 41)  # an old offset never wins
        assert fleet.sql("SELECT update_id FROM companion_persona.updates "
                         "ORDER BY 1").split() == ["40", "41", "42"]
        assert fleet.sql("SELECT next_update FROM companion_persona.poller") == "43"
    finally:
        store.close()


def test_the_operators_forget_deletes_the_persons_chat_from_the_shared_database(
        make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet()
    fleet.start("poller")
    fleet.workers(1)
    fleet.say("olga", f"remember {SECRET} o1-m1")
    fleet.until(lambda: _tokens(fleet.texts_to("olga")) == ["o1-m1"])
    fleet.until(fleet.queue_empty)
    fleet.stop()
    done = subprocess.run([sys.executable, "-m", "tactful", "--config", str(fleet.config),
                           "forget", "telegram", "olga"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert fleet.sql("SELECT count(*) FROM companion_persona.users") == "0"
    assert _held_in(fleet.home, {"the word": SECRET.encode()}) == []


def test_a_worker_killed_while_its_answer_may_be_out_is_never_answered_twice(
        make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet()
    fleet.start("poller")
    victim = fleet.workers(1)[0]
    # Telegram takes the answer but is slow to say so: the worker dies in between, with the
    # ledger claimed and nothing marked sent.
    fleet.emulator.stall_next(6, method="sendMessage")
    fleet.say("pia", "hello p1-m1")
    fleet.until(lambda: any(c.get("text") == "got p1-m1"
                            for c in fleet.emulator.calls("sendMessage")))
    os.kill(victim.pid, signal.SIGKILL)
    fleet.workers(2)
    time.sleep(2)  # the new workers' release timers see the message still waiting
    # Telegram finishes taking the dead worker's answer; only then does the user write again
    # (else the emulator would list the two answers in the order they completed).
    fleet.until(lambda: "got p1-m1" in fleet.texts_to("pia"))
    fleet.say("pia", "and p1-m2")
    fleet.until(lambda: "got p1-m2" in fleet.texts_to("pia"))
    fleet.until(fleet.queue_empty)
    time.sleep(1.5)  # a second answer would come now
    assert fleet.texts_to("pia") == ["got p1-m1", "got p1-m2"]
    assert fleet.sql("SELECT count(*) FROM tactful_send.sends WHERE state = 'pending'") == "1"


def test_a_poller_killed_mid_poll_and_started_again_loses_and_repeats_no_message(
        make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet()
    poller = fleet.start("poller")
    fleet.workers(1)
    fleet.say("quinn", "hello q1-m1")
    fleet.until(lambda: _tokens(fleet.texts_to("quinn")) == ["q1-m1"])
    # Telegram is slow to answer the next poll: the poller dies with that poll in flight, and
    # with messages Telegram holds for it that nobody confirmed.
    fleet.emulator.stall_next(30, method="getUpdates")
    fleet.say("quinn", "and q1-m2")
    polls = len(fleet.emulator.calls("getUpdates"))
    fleet.until(lambda: len(fleet.emulator.calls("getUpdates")) > polls)
    fleet.say("quinn", "and q1-m3")
    os.kill(poller.pid, signal.SIGKILL)
    poller.wait()
    fleet.start("poller")
    fleet.ready()
    fleet.say("quinn", "and q1-m4")
    fleet.until(lambda: len(_tokens(fleet.texts_to("quinn"))) >= 4)
    fleet.until(fleet.queue_empty)
    time.sleep(1.5)  # a second answer would come now
    assert _tokens(fleet.texts_to("quinn")) == ["q1-m1", "q1-m2", "q1-m3", "q1-m4"]
