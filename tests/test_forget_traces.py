"""Forgetting leaves no byte of the person in what is not theirs (docs/memory.md, "Forgetting"):
the forms a name takes in other people's text, and the files an interrupted write leaves."""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

GONE = "quill_writes"
GONE_ID = "7770001"
NAME = "José Quill"
WORD = "zorbelquantish"  # a word only she used


def _everything(home: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in home.rglob("*") if p.is_file())


def _remember_her(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", GONE, "--kind", "reply", "--inbound", "--they",
               f"my {WORD} story", "--id", GONE_ID, "--display-name", NAME).code == 0


def test_a_forgotten_persons_name_written_with_a_combining_accent_in_anothers_entry_is_gone(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    _remember_her(cli)
    nfd = unicodedata.normalize("NFD", NAME)
    assert cli("remember", "x", "bob", "--kind", "reply", "--inbound", "--they",
               f"met {nfd} at the fair").code == 0
    assert nfd.encode() in _everything(home)
    assert cli("forget", "x", GONE).code == 0
    assert nfd.encode() not in _everything(home)


def test_a_forgotten_persons_handle_in_fullwidth_letters_in_anothers_entry_is_gone(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    _remember_her(cli)
    wide = "＠ＱＵＩＬＬ＿ＷＲＩＴＥＳ"
    assert cli("remember", "x", "bob", "--kind", "reply", "--inbound", "--they",
               f"ask {wide} about it").code == 0
    assert cli("forget", "x", GONE).code == 0
    assert wide.encode() not in _everything(home)


def test_a_forgotten_persons_handle_in_another_case_in_a_pin_or_a_link_is_gone(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    _remember_her(cli)
    assert cli("pin", "x", "carol", "friend of @Quill_Writes", "--by", "me").code == 0
    assert cli("remember", "x", "dan", "--kind", "reply", "--they", "hi",
               "--link", f"https://x.com/{GONE}/status/12").code == 0
    assert cli("forget", "x", GONE).code == 0
    assert GONE.encode() not in _everything(home).lower()


def test_a_crashed_reindex_leaves_no_half_built_index_holding_them(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    _remember_her(cli)
    assert cli("reindex").code == 0
    shutil.copy(home / "index.sqlite", home / ".index.sqlite.new-99999")
    assert cli("forget", "x", GONE).code == 0
    assert WORD.encode() not in _everything(home)


def test_their_handle_nested_or_their_id_as_a_number_in_anothers_log_line_is_gone(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    _remember_her(cli)
    events = [{"time": "2026-11-29T10:00:00-05:00", "platform": "x", "handle": "bob",
               "id": None, "action": "reply", "text": "hello", "url": None,
               "in_reply_to": int(GONE_ID), "thread": None, "dry_run": False,
               "meta": {"quoted": f"@{GONE}"}}]
    (home / "engagement.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    assert cli("forget", "x", GONE).code == 0
    data = _everything(home)
    assert GONE.encode() not in data and GONE_ID.encode() not in data
    kept = json.loads((home / "engagement.jsonl").read_text().strip())
    assert kept["handle"] == "bob" and kept["text"] == "hello"  # bob's line stays


def test_a_backup_of_anothers_file_naming_them_is_gone(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    _remember_her(cli)
    assert cli("remember", "x", "bob", "--kind", "reply", "--they", f"as @{GONE} said").code == 0
    bob = home / "people" / "x" / "bob.md"
    shutil.copy(bob, bob.with_name("bob.md~"))
    assert cli("forget", "x", GONE).code == 0
    assert GONE.encode() not in _everything(home)


def test_an_interrupted_write_of_anothers_file_quoting_them_leaves_no_temp_file(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    from tactful.core.memory.atomic import temp_prefix
    _remember_her(cli)
    assert cli("remember", "x", "bob", "--kind", "reply", "--they", "hi").code == 0
    bob = home / "people" / "x" / "bob.md"
    (bob.parent / (temp_prefix("bob.md") + "abc123")).write_text(
        bob.read_text() + f"\n- they: as @{GONE} said, {WORD}\n")
    assert cli("forget", "x", GONE).code == 0
    assert WORD.encode() not in _everything(home)


def test_an_interrupted_write_of_anothers_file_quoting_them_leaves_no_staged_temp_file(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    # Person files are written in people/.staging/<platform>/ before they take their name
    # (docs/search-and-desk.md): a writer killed there leaves its temp file in that folder.
    from tactful.core.memory.atomic import temp_prefix
    _remember_her(cli)
    assert cli("remember", "x", "bob", "--kind", "reply", "--they", "hi").code == 0
    bob = home / "people" / "x" / "bob.md"
    stage = home / "people" / ".staging" / "x"
    (stage / (temp_prefix("bob.md") + "abc123")).write_text(
        bob.read_text() + f"\n- they: as @{GONE} said, {WORD}\n")
    result = cli("forget", "x", GONE)
    assert result.code == 0 and "not swept" not in result.err
    assert WORD.encode() not in _everything(home)


def test_an_old_temp_file_of_the_journal_naming_them_is_gone(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    import os

    from tactful.core.memory.atomic import temp_prefix
    _remember_her(cli)
    assert cli("journal", "shipped the harness").code == 0
    month = next((home / "journal").glob("*.md"))
    left = month.parent / (temp_prefix(month.name) + "zz9")
    left.write_text(month.read_text() + f"\ntalked with {NAME}\n")
    os.utime(left, (1_700_000_000, 1_700_000_000))  # left long ago by a crashed write
    result = cli("forget", "x", GONE)
    assert result.code == 0 and "not swept" not in result.err
    assert NAME.encode() not in _everything(home)
    assert not left.exists() and month.exists()


def test_a_temp_file_naming_them_that_may_be_a_write_in_flight_is_reported(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    _remember_her(cli)
    assert cli("journal", "shipped the harness").code == 0
    month = next((home / "journal").glob("*.md"))
    left = month.parent / ".tmp-0123456789abcdef.fresh"
    left.write_text(f"talked with {NAME}")
    result = cli("forget", "x", GONE)
    assert result.code == 0
    assert "not swept" in result.err and "run forget again" in result.err
    assert NAME not in result.err  # the warning names the file, never the person


def test_a_forget_interrupted_after_her_file_went_still_finds_her_quotes_when_run_again(  # type: ignore[no-untyped-def]
        cli, home: Path, monkeypatch) -> None:
    import fcntl
    import os

    phrase = "purple marmalade theorem"
    assert cli("remember", "x", GONE, "--kind", "reply", "--inbound", "--they",
               f"my {phrase} holds", "--id", GONE_ID).code == 0
    assert cli("remember", "x", "bob", "--kind", "reply", "--inbound", "--they",
               f"someone said the {phrase} is wrong").code == 0
    monkeypatch.setenv("TACTFUL_LOCK_TIMEOUT", "0.3")
    lock = home / ".locks" / "desk.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another process holds the desk
        assert cli("forget", "x", GONE).code != 0
    finally:
        os.close(fd)
    assert cli("forget", "x", GONE).code == 0
    assert phrase.encode() not in _everything(home)


def _hand_edit_header(path: Path, line: str) -> None:
    text = path.read_text()
    path.write_text(text.replace("\n---\n", f"\n{line}\n---\n", 1))


def test_a_forgotten_persons_handle_in_anothers_hand_written_tone_notes_is_gone(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    _remember_her(cli)
    assert cli("remember", "x", "bob", "--kind", "reply", "--they", "hi").code == 0
    bob = home / "people" / "x" / "bob.md"
    bob.write_text(bob.read_text().replace("tone_notes: brief", f"tone_notes: like @{GONE}"))
    assert cli("forget", "x", GONE).code == 0
    assert GONE.encode() not in _everything(home)


def test_a_forgotten_persons_handle_in_the_reason_of_anothers_aka_link_is_gone(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    _remember_her(cli)
    assert cli("remember", "x", "bob", "--kind", "reply", "--they", "hi").code == 0
    assert cli("remember", "bluesky", "bob", "--kind", "reply", "--they", "hi").code == 0
    bob = home / "people" / "x" / "bob.md"
    bob.write_text(bob.read_text().replace(
        "aka: []", f"aka:\n- {{ref: bluesky/bob, reason: 'told by @{GONE}', "
                   "at: '2026-11-01T10:00:00-05:00'}"))
    assert cli("forget", "x", GONE).code == 0
    assert GONE.encode() not in _everything(home)
    card = json.loads(cli("card", "x", "bob", "--json").out)
    assert [link["ref"] for link in card["aka"]] == ["bluesky/bob"]  # the link itself stays


def test_a_forgotten_person_in_a_list_or_mapping_of_anothers_header_is_gone(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    _remember_her(cli)
    assert cli("remember", "x", "bob", "--kind", "reply", "--they", "hi").code == 0
    bob = home / "people" / "x" / "bob.md"
    _hand_edit_header(bob, f"friends: [{GONE}, carol]\nnotes: {{met: '{NAME}'}}")
    assert cli("forget", "x", GONE).code == 0
    data = _everything(home)
    assert GONE.encode() not in data and NAME.encode() not in data
    assert "carol" in bob.read_text()  # the rest of the list stays


def test_a_forgotten_persons_numeric_id_padded_with_zeros_in_anothers_link_is_gone(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    _remember_her(cli)
    assert cli("remember", "x", "bob", "--kind", "reply", "--they", "hi",
               "--link", f"https://facebook.example/profile.php?id=000{GONE_ID}").code == 0
    assert cli("forget", "x", GONE).code == 0
    assert f"000{GONE_ID}".encode() not in _everything(home)


def test_a_forgotten_email_contact_leaves_neither_slug_nor_name_in_others_files(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    assert cli("remember", "email", "ada_lovelace", "--kind", "dm", "--they",
               f"asked about the {WORD} talk", "--display-name", "Ada Lovelace").code == 0
    assert cli("remember", "x", "ada", "--kind", "reply", "--they", "hi").code == 0
    assert cli("link", "email:ada_lovelace", "x:@ada", "--proof",
               "https://example.org/ada_lovelace").code == 0
    assert cli("remember", "x", "bob", "--kind", "reply", "--they",
               "Ada Lovelace mailed me").code == 0
    assert cli("journal", "emailed ada_lovelace").code == 0
    assert cli("forget", "email", "ada_lovelace").code == 0
    data = _everything(home)
    assert b"ada_lovelace" not in data and b"Ada Lovelace" not in data
    assert WORD.encode() not in data
    assert (home / "people" / "x" / "ada.md").exists()  # the linked account stays


def test_another_users_companion_chat_keeps_no_line_naming_or_quoting_them(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    from datetime import UTC, datetime

    from tactful.core.companion.session import Session

    _remember_her(cli)
    at = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    chat = Session(home, "friendbot", 800)
    chat.extend([("user", f"my friend @{GONE} told me about {WORD}", at),
                 ("bot", "tell me more about the garden", at),
                 ("user", f"she wrote: my {WORD} story, in a group", at)])
    chat.write_notes(f"- has a friend {NAME}\n- likes gardens", "brief")
    chat.write_prompt(f"You talk with someone whose friend is {NAME}.")
    done = cli("forget", "x", GONE)
    assert done.code == 0, done.err
    assert "4 companion chat lines blanked" in done.out
    data = _everything(home)
    assert GONE.encode() not in data and WORD.encode() not in data
    assert NAME.encode() not in data
    assert [turn.text for turn in chat.history()] == ["tell me more about the garden"]
    assert chat.notes().memory == "- likes gardens"


def test_a_forgotten_persons_file_misnamed_by_hand_is_gone_and_still_finds_their_quotes(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    _remember_her(cli)
    assert cli("remember", "x", "bob", "--kind", "reply", "--they",
               f"she said my {WORD} story twice").code == 0
    her = home / "people" / "x" / f"{GONE}.md"
    shutil.copy(her, her.with_name("QUILL_WRITES.md"))
    her.rename(her.with_name("Quill_Writes.md"))
    done = cli("forget", "x", GONE)
    assert done.code == 0, done.err
    assert "file removed" in done.out
    assert WORD.encode() not in _everything(home)
    assert sorted(p.name for p in (home / "people" / "x").iterdir()) == ["bob.md"]


def test_a_forget_refused_while_another_holds_the_index_and_run_again_leaves_nothing(  # type: ignore[no-untyped-def]
        cli, home: Path, monkeypatch) -> None:
    import fcntl
    import os

    _remember_her(cli)
    assert cli("remember", "x", "bob", "--kind", "reply", "--they",
               f"she said my {WORD} story twice").code == 0
    assert cli("reindex").code == 0
    monkeypatch.setenv("TACTFUL_LOCK_TIMEOUT", "0.3")
    fd = os.open(home / ".locks" / "index.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a reindex of another process
        refused = cli("forget", "x", GONE)
        assert refused.code == 4 and "the lock on the index" in refused.err
    finally:
        os.close(fd)
    assert cli("forget", "x", GONE).code == 0
    assert WORD.encode() not in _everything(home)


def test_an_old_log_synced_after_the_forget_brings_back_no_line_of_another_naming_them(  # type: ignore[no-untyped-def]
        cli, home: Path, tmp_path: Path) -> None:
    _remember_her(cli)
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({
        "time": "2026-11-20T10:00:00-05:00", "platform": "x", "handle": "bob", "id": None,
        "action": "reply", "text": f"I agree with @{GONE.upper()} here",
        "url": f"https://x.com/{GONE}/status/0{GONE_ID}", "in_reply_to": None, "thread": None,
        "dry_run": False, "they": f"ask user {GONE_ID}, not me"}) + "\n")
    assert cli("forget", "x", GONE).code == 0
    assert cli("sync-log", "--log", str(old)).code == 0
    data = _everything(home)
    assert GONE.encode() not in data.lower() and GONE_ID.encode() not in data
    bob = json.loads(cli("card", "x", "bob", "--json").out)
    assert bob["handle"] == "bob"  # bob's contact itself is kept


def test_a_config_comment_naming_them_leaves_no_copy_kept_for_check(  # type: ignore[no-untyped-def]
        cli, home: Path, tmp_path: Path) -> None:
    _remember_her(cli)
    config = tmp_path / "tactful.yaml"
    config.write_text(f"# @{GONE} asked to be left alone\npersona:\n  timezone: UTC\n",
                      encoding="utf-8")
    assert cli("--home", str(home), "--config", str(config), "check", "x", "bob").code == 0
    assert list((home / ".cache" / "config").glob("*.json"))  # check kept its copy
    assert cli("forget", "x", GONE).code == 0
    assert GONE.encode() not in _everything(home)


def test_a_config_copy_of_an_older_version_naming_them_across_a_line_break_goes(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    # Copies kept before this version held the config's text, as JSON: the line break between
    # her first and last name is the two characters backslash and n there, which the file
    # itself never held. Such a copy stays until the next `check` rewrites it.
    _remember_her(cli)
    first, last = NAME.split()
    copies = home / ".cache" / "config"
    copies.mkdir(parents=True, exist_ok=True)  # remember keeps where the user's config goes
    old = {"format": 1, "path": "/elsewhere/tactful.yaml", "code": [],
           "text": f"# never answer {first}\n# {last} again\npersona:\n  timezone: UTC\n",
           "values": {"timezone": "UTC", "owners": [], "compact_after": 50, "keep_full": 20}}
    (copies / "0badcafe.json").write_text(json.dumps(old, ensure_ascii=False), encoding="utf-8")
    assert cli("forget", "x", GONE).code == 0
    assert not any(first.encode() in p.read_bytes() for p in copies.glob("*.json"))
