"""Forgetting is complete (docs/log.md): nothing of the person is left anywhere under the home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .recording_adapter import add_inbound

UNIQUE = "zxqvplonkerwug"  # a word only the forgotten person ever said
HANDLE = "forget_me_please"


def everything_under(home: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in home.rglob("*") if p.is_file())


def names_under(home: Path) -> str:
    return "\n".join(str(p.relative_to(home)) for p in home.rglob("*"))


@pytest.fixture
def remembered(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", HANDLE, "--kind", "reply", "--they", f"my {UNIQUE} recipe",
               "--id", "5550001", "--display-name", "Forget Me", "--open",
               f"send the {UNIQUE} link").code == 0
    assert cli("pin", "x", HANDLE, f"calls it {UNIQUE}", "--by", "them").code == 0
    assert cli("remember", "bluesky", HANDLE, "--kind", "reply", "--they", "hello",
               "--display-name", "Forget Me").code == 0
    assert cli("remember", "x", "bystander", "--kind", "reply", "--they", "keep me").code == 0
    assert cli("search", UNIQUE).out.count(HANDLE) >= 1
    events = [
        {"time": "2026-11-29T10:00:00-05:00", "platform": "x", "handle": f"@{HANDLE}",
         "id": "5550001", "action": "reply", "text": f"about your {UNIQUE}", "url": None,
         "in_reply_to": None, "thread": None, "dry_run": False, "they": f"{UNIQUE} again"},
        {"time": "2026-11-29T10:05:00-05:00", "platform": "x", "handle": "bystander",
         "id": None, "action": "reply", "text": "hello bystander", "url": None,
         "in_reply_to": None, "thread": None, "dry_run": False},
    ]
    (home / "engagement.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (home / "outbox").mkdir()
    (home / "outbox" / "dry-run.jsonl").write_text(json.dumps(events[0]) + "\n")
    assert UNIQUE.encode() in everything_under(home)


def test_forget_leaves_no_trace(  # type: ignore[no-untyped-def]
        cli, home: Path, tmp_path: Path, remembered) -> None:
    old_log = tmp_path / "old-engagement.jsonl"
    old_log.write_bytes((home / "engagement.jsonl").read_bytes())
    result = cli("forget", "x", HANDLE)
    assert result.code == 0, result.err
    assert "1 log event," in result.out and "tombstone written" in result.out
    assert UNIQUE.encode() not in everything_under(home)
    assert f"x/{HANDLE}".encode() not in everything_under(home)
    assert f"x/@{HANDLE}".encode() not in everything_under(home)
    assert HANDLE not in names_under(home).replace(f"people/bluesky/{HANDLE}", "")
    assert not (home / "people" / "x" / f"{HANDLE}.md").exists()
    # the bluesky account was linked as the same person: the link is gone, the account stays
    assert cli("card", "bluesky", HANDLE, "--json").code == 0
    assert json.loads(cli("card", "bluesky", HANDLE, "--json").out)["aka"] == []
    # everyone else is untouched
    assert "hello bystander" in (home / "engagement.jsonl").read_text()
    assert cli("search", "keep").out.count("bystander") >= 1
    assert 'stranger, first real contact' in cli("card", "x", HANDLE).out
    stones = (home / "tombstones.jsonl").read_text()
    assert HANDLE not in stones and "5550001" not in stones
    assert len(stones.splitlines()) == 2  # one for the handle, one for the stable id
    # an old copy of the log, synced again, does not bring them back
    synced = cli("sync-log", "--log", str(old_log))
    assert synced.code == 0, synced.err
    assert not (home / "people" / "x" / f"{HANDLE}.md").exists()
    assert UNIQUE.encode() not in everything_under(home)


def test_forget_keep_dne_keeps_only_what_keeps_the_whole_person_flagged(  # type: ignore[no-untyped-def]
        cli, home: Path, remembered) -> None:
    assert cli("dne", "x", HANDLE, "on").code == 0
    assert cli("forget", "x", HANDLE, "--keep-dne").code == 0
    path = home / "people" / "x" / f"{HANDLE}.md"
    kept = path.read_text()
    assert "do_not_engage: true" in kept
    assert '"5550001"' in kept and f"bluesky/{HANDLE}" in kept  # the id and the link, no more
    assert "Forget Me" not in kept and "Entries" not in kept
    assert UNIQUE.encode() not in everything_under(home)
    assert cli("check", "x", HANDLE).code == 3
    # the same person elsewhere stays flagged: the other side keeps its link
    assert cli("check", "bluesky", HANDLE).code == 3
    # and so does the account under a new handle, by its id
    assert cli("remember", "x", "renamed_forgetme", "--kind", "reply", "--they", "hi",
               "--id", "5550001").code == 0
    assert cli("check", "x", "renamed_forgetme").code == 3


def test_forget_a_corrupt_file_still_forgets(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    path = home / "people" / "x" / f"{HANDLE}.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"garbage {UNIQUE}\n")
    assert cli("forget", "x", HANDLE).code == 0
    assert not path.exists()


@pytest.mark.parametrize("where", ["x/Troll.md", "x/troll.MD", "x/ troll.md", "X/troll.md"])
def test_forget_removes_a_hand_made_file_for_them_under_any_spelling(  # type: ignore[no-untyped-def]
        cli, home: Path, where: str) -> None:
    assert cli("remember", "x", "someone", "--kind", "reply", "--they", "hi").code == 0
    copy = home / "people" / where
    copy.parent.mkdir(exist_ok=True)
    copy.write_text("---\nplatform: x\nhandle: troll\n---\nzqx private note\n",
                    encoding="utf-8")
    result = cli("forget", "x", "troll")
    assert result.code == 0, result.err
    assert not copy.exists()
    assert not any(b"zqx private" in p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert (home / "people" / "x" / "someone.md").exists()


def test_forget_bad_handle_is_exit_2(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    home.mkdir()
    assert cli("forget", "x", "../people").code == 2
    assert list(home.iterdir()) == []


def test_forget_touches_only_their_archive_lines(cli, home: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TACTFUL_NOW", "2026-11-29T12:00:00-05:00")
    for handle in ("al", "alice"):
        assert cli("remember", "x", handle, "--kind", "reply", "--they", "hi",
                   "--open", f"talk to {handle}").code == 0
    assert cli("resolve", "x", "alice", "1").code == 0
    assert cli("resolve", "x", "al", "1").code == 0
    archive = home / "hot-archive.md"
    assert "x/@alice" in archive.read_text() and "x/@al " in archive.read_text()
    assert cli("forget", "x", "al").code == 0
    text = archive.read_text()
    assert "x/@alice" in text and "x/@al " not in text and "x/@al:" not in text


def test_forget_a_corrupt_file_removes_links_to_it(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    for platform in ("x", "bluesky"):
        assert cli("remember", platform, "sam", "--kind", "reply", "--they", "hi",
                   "--display-name", "Sam").code == 0
    assert json.loads(cli("card", "bluesky", "sam", "--json").out)["aka"]
    with open(home / "people" / "x" / "sam.md", "a") as f:
        f.write("junk\n")
    assert cli("forget", "x", "sam").code == 0
    assert json.loads(cli("card", "bluesky", "sam", "--json").out)["aka"] == []
    assert b"x/sam" not in everything_under(home)


def test_forget_matches_log_platforms_in_any_case(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "alice", "--kind", "reply", "--they", "hi").code == 0
    (home / "engagement.jsonl").write_text(json.dumps(
        {"time": "2026-11-29T10:00:00-05:00", "platform": "X", "handle": "@Alice",
         "action": "reply", "text": f"{UNIQUE} words"}) + "\n")
    assert UNIQUE in cli("export", "x", "alice").out
    assert cli("forget", "x", "alice").code == 0
    assert UNIQUE.encode() not in everything_under(home)


# ---- the send pipeline's stores: the inbox, the ledger, the engagement log ----------------------

def test_forget_blanks_inbox_items_that_mention_them_whatever_the_adapter_said(
        cli, batch_config: Path, home: Path) -> None:
    # The recorder adapter fills no Inbound.mentions (the field is optional): forget must find
    # the mention in the text itself.
    add_inbound("1", "alice", "my friend @bob lives on elm street now")
    assert cli("--config", str(batch_config), "routine", "run", "reply").code == 0
    assert cli("forget", "recorder", "bob").code == 0
    assert b"elm street" not in (home / "inbox.sqlite").read_bytes()


def test_forget_removes_log_events_that_mention_them(cli, recorder, keyring_log,
                                                    home: Path) -> None:
    assert cli("send", "recorder", "--to", "alice",
               "--text", "ask @bob about his divorce").code == 0
    assert cli("forget", "recorder", "bob").code == 0
    assert "@bob" not in (home / "engagement.jsonl").read_text()


def test_forget_leaves_neither_their_handle_nor_their_id_in_the_inbox_or_the_ledger(
        cli, bluesky_emulator, home: Path) -> None:
    # Bluesky post URLs and at:// URIs name the author by handle or DID.
    bluesky = bluesky_emulator
    alice = bluesky.canonical("alice")
    did = bluesky.add_user(alice)
    bluesky.add_post(alice, f"@{bluesky.persona} how does the desk work?")
    assert cli("--config", str(bluesky.config), "routine", "run", "reply").code == 0
    assert len(bluesky.sent()) == 1
    assert cli("forget", "bluesky", alice).code == 0
    left = {name: [who for who in (alice, did) if who.encode() in (home / name).read_bytes()]
            for name in ("inbox.sqlite", "ledger.sqlite")}
    assert left == {"inbox.sqlite": [], "ledger.sqlite": []}


def _companion_user(home: Path, chat_id: int, handle: str) -> None:
    from datetime import UTC, datetime

    from tactful.core.companion.store import CompanionStore

    store = CompanionStore(home, "friendbot")
    try:
        store.touch_user(chat_id, language_code="en", at=datetime(2026, 11, 1, tzinfo=UTC),
                         tz_default="UTC", handle=handle)
    finally:
        store.close()


def _companion_users(home: Path) -> list[int]:
    from tactful.core.companion.store import CompanionStore

    store = CompanionStore(home, "friendbot")
    try:
        return [user.chat_id for user in store.users()]
    finally:
        store.close()


def test_forget_reaches_a_companion_store_through_the_service_its_plugin_registers(
        cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Core imports no companion of any platform: the Telegram plugin's service offers its
    chats, the application registers that store with memory's forget, and forget erases."""
    assert cli("remember", "telegram", "chatty", "--kind", "dm", "--id", "700").code == 0
    _companion_user(home, 700, "chatty")
    _companion_user(home, 800, "someone_else")
    done = cli("forget", "telegram", "chatty")
    assert done.code == 0, done.err
    assert "1 telegram companion chats deleted" in done.out
    assert _companion_users(home) == [800]


# ---- a realistic history: nothing of the person anywhere, in any file, after forget ------------

GONE = "mallory_writes"
OLD = "mallory_old"  # the same account before a rename: the same stable id
GONE_ID = "9990001"
GONE_NAME = "Mallory Quill"
PHRASE = "purple marmalade theorem"  # what she wrote, quoted by others
WORD = "qwzmarvelloquist"  # a word only she used


def _log_event(handle: str, day: int, **more: object) -> dict[str, object]:
    return {"time": f"2026-11-{day:02d}T10:00:00-05:00", "platform": "recorder",
            "handle": handle, "id": None, "action": "reply", "text": f"reply {day} to {handle}",
            "url": f"https://recorder.example/p/{day}", "in_reply_to": None, "thread": None,
            "dry_run": False, **more}


def _needles() -> list[bytes]:
    found = [GONE, OLD, GONE_ID, GONE_NAME, GONE_NAME.lower(), PHRASE, WORD, "Mallory"]
    return [n.encode() for n in found]


def _left(home: Path) -> dict[str, list[str]]:
    """Every file under the home (sqlite, WAL and journals included) holding a needle."""
    hits: dict[str, list[str]] = {}
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            lower = data.lower()
            found = [n.decode() for n in _needles() if n in data or n.lower() in lower]
            if found:
                hits[str(path.relative_to(home))] = found
    return hits


def test_forget_leaves_no_byte_of_the_person_under_the_home_after_a_realistic_history(
        cli, batch_config: Path, home: Path, tmp_path: Path) -> None:
    cfg = ("--config", str(batch_config))
    # Her account under its old handle, then renamed: two files, one id.
    assert cli(*cfg, "remember", "recorder", OLD, "--kind", "reply", "--inbound", "--they",
               f"my {PHRASE} holds, {WORD}", "--id", GONE_ID, "--display-name", GONE_NAME,
               "--at", "2026-11-01T10:00:00-05:00").code == 0
    assert cli(*cfg, "remember", "recorder", GONE, "--kind", "mention", "--inbound", "--they",
               f"still on the {PHRASE}", "--id", GONE_ID, "--display-name", GONE_NAME,
               "--open", "send her the marmalade paper").code == 0
    assert cli(*cfg, "pin", "recorder", GONE, f"says {WORD} a lot", "--by", "them").code == 0
    # Others who mention her, quote her, name her without an @.
    assert cli(*cfg, "remember", "recorder", "bob", "--kind", "reply", "--inbound", "--they",
               f"as @{GONE} put it, the {PHRASE} is wrong").code == 0
    assert cli(*cfg, "remember", "recorder", "bob", "--kind", "reply", "--inbound", "--they",
               "nice weather for a walk today").code == 0
    assert cli(*cfg, "remember", "recorder", "carol", "--kind", "question", "--inbound",
               "--they", f"have you met {GONE_NAME}?", "--me", "not yet",
               "--topic", "meetups").code == 0
    assert cli(*cfg, "pin", "recorder", "carol", f"works with {GONE}", "--by", "me").code == 0
    assert cli(*cfg, "remember", "recorder", "dave", "--kind", "reply", "--inbound", "--they",
               "the eval harness is great").code == 0
    assert cli(*cfg, "journal", f"long talk with {GONE_NAME} about the {PHRASE}").code == 0
    assert cli(*cfg, "journal", "shipped the eval harness").code == 0
    # Inbox items: hers, and others that name her without an @, answered by the batch replier.
    add_inbound("71", GONE, f"ping about the {PHRASE}", user_id=GONE_ID)
    add_inbound("72", "bob", f"did {GONE} reply to you?", user_id="4242")
    add_inbound("73", "dave", "what about latency?", user_id="4343")
    assert cli(*cfg, "routine", "run", "reply").code == 0
    # Old logs: her events under both handles and by id alone, one dated in the future.
    events = [_log_event(OLD, 2, id=GONE_ID, they=f"{WORD} again"),
              _log_event(GONE, 3, they=f"the {PHRASE}"),
              _log_event("bob", 4, text=f"I agree with {GONE} here"),
              _log_event("dave", 5)]
    with (home / "engagement.jsonl").open("a") as f:
        f.write("".join(json.dumps(e) + "\n" for e in events))
    assert cli(*cfg, "sync-log").code == 0
    old_log = tmp_path / "old-engagement.jsonl"
    old_log.write_bytes((home / "engagement.jsonl").read_bytes() + "".join(
        json.dumps(e) + "\n" for e in [
            _log_event(GONE, 6, time="2099-01-01T10:00:00-05:00", they=f"the {PHRASE}"),
            _log_event("mallory_new", 7, id=GONE_ID, they=WORD)]).encode())
    assert _left(home), "the history must hold her before the forget"
    dave_before = cli(*cfg, "card", "recorder", "dave", "--json").out

    result = cli(*cfg, "forget", "recorder", GONE)
    assert result.code == 0, result.err
    assert _left(home) == {}
    # An old log, with a future-dated event and her id under a new handle, brings nothing back.
    assert cli(*cfg, "sync-log", "--log", str(old_log)).code == 0
    assert cli(*cfg, "reindex").code == 0
    assert _left(home) == {}
    assert not (home / "people" / "recorder" / f"{GONE}.md").exists()
    assert not (home / "people" / "recorder" / f"{OLD}.md").exists()
    # The others keep their history: bob's unrelated entry, dave's card unchanged.
    assert "nice weather" in (home / "people" / "recorder" / "bob.md").read_text()
    assert len(json.loads(cli(*cfg, "card", "recorder", "bob", "--json").out)["recent"]) >= 2
    assert cli(*cfg, "card", "recorder", "dave", "--json").out == dave_before
    assert "shipped the eval harness" in "".join(
        p.read_text() for p in (home / "journal").glob("*.md"))


def test_a_forgotten_persons_post_fetched_again_stays_forgotten(home: Path) -> None:
    from datetime import UTC, datetime

    from tactful.core.inbound.inbox import Inbox
    from tactful.core.memory.traces import Trace
    from tactful.core.send.adapter import Author, Inbound, PostRef

    home.mkdir(parents=True)
    post = Inbound(post=PostRef("recorder", "91", "https://recorder.example/p/91"),
                   author=Author(handle="gone_user", id="8880001"), text=f"my {UNIQUE} story",
                   at=datetime(2026, 11, 30, 9, 0, tzinfo=UTC))
    inbox = Inbox(home)
    try:
        assert inbox.add("recorder", [post], None) == 1
        assert inbox.forget_trace(Trace.of("recorder", ["gone_user"], ids=["8880001"])) == 1
        assert inbox.add("recorder", [post], None) == 0  # known as forgotten, by a hash
        assert inbox.waiting("recorder") == []
    finally:
        inbox.close()
    raw = (home / "inbox.sqlite").read_bytes()
    assert UNIQUE.encode() not in raw and b"gone_user" not in raw and b"8880001" not in raw
