"""Who a person is (docs/sending.md): a stable id that outlives a rename, handles in every
spelling a platform accepts, `aka` links between one person's accounts (however they were
written), hand edits of person files, and forgetting one account of a linked person. Whatever
the shape of memory, do-not-engage reaches every account of the person, and nothing is sent to
them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tactful.core.memory import identity

from . import recording_adapter as platform
from .sending import flag, hand_edit, refused_before_posting, sent

LINKED_AT = "'2026-11-01T10:00:00-04:00'"


def add_link(path: Path, ref: str) -> None:
    """Link the person file to `ref` by hand, as an editor would."""
    hand_edit(path, path.read_text().replace(
        "aka: []", f"aka:\n- {{ref: '{ref}', reason: by hand, at: {LINKED_AT}}}"))


# ---- stable ids: a renamed account is still the same person ------------------------------------

def test_a_renamed_flagged_account_whose_file_is_misnamed_is_still_refused(
        cli, recorder, keyring_log, home) -> None:
    flag(cli, "mallory", "u-9")
    people = home / "people" / "recorder"
    (people / "mallory.md").rename(people / "Mallory.md")
    platform.add_user("newname", "u-9")
    assert cli("check", "recorder", "mallory").code == 4  # by name it is refused...
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))  # by id too


def test_a_renamed_flagged_account_whose_file_cannot_be_decoded_is_refused(
        cli, recorder, keyring_log, home) -> None:
    flag(cli, "mallory", "u-9")
    path = home / "people" / "recorder" / "mallory.md"
    saved = path.with_name("mallory.md.swp")
    saved.write_bytes(path.read_bytes() + b"\nnote: caf\xe9\n")
    saved.replace(path)
    platform.add_user("newname", "u-9")
    assert cli("check", "recorder", "mallory").code == 4
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))


def test_a_telegram_user_flagged_by_id_is_refused_under_their_username(cli) -> None:
    assert cli("dne", "telegram", "5551234", "on").code == 0  # flagged before any username
    result = cli("check", "telegram", "newuser", "--id", "5551234")
    assert result.code == 3, result.out
    assert cli("check", "telegram", "someone_else", "--id", "777").code == 0


def test_a_flagged_telegram_user_is_refused_when_addressed_by_their_numeric_id(
        cli, telegram_emulator) -> None:
    # On Telegram a numeric id is also a valid handle: the file named by username must still
    # be found through the `id` it carries.
    telegram = telegram_emulator
    uid = telegram.add_user("mallory_tg")
    telegram.add_post("mallory_tg", "hi bot")  # she started the bot: it may write to her
    assert cli("remember", "telegram", "mallory_tg", "--kind", "dm", "--they", "hi",
               "--id", uid).code == 0
    assert cli("dne", "telegram", "mallory_tg", "on").code == 0
    result = cli("--config", str(telegram.config), "send", "telegram", "--to", uid,
                 "--text", "hello")
    assert result.code == 3, (result.code, result.out, result.err)
    assert telegram.sent() == []


# ---- aka links: one person, several accounts ---------------------------------------------------

def test_a_link_recorded_on_one_side_only_carries_do_not_engage(cli, home: Path) -> None:
    flag(cli, "mallory", where="x")
    assert cli("remember", "bluesky", "mallory.example", "--kind", "reply",
               "--they", "hi").code == 0
    # The link is written by hand into the flagged file only.
    path = home / "people" / "x" / "mallory.md"
    text = path.read_text()
    hand_edit(path, text.replace(
        "aka: []", "aka:\n- {ref: bluesky/mallory.example, reason: by hand, "
        "at: '2026-11-01T10:00:00-04:00'}"))
    assert cli("check", "bluesky", "mallory.example").code == 3
    # and from the other side only
    hand_edit(path, text)
    other = home / "people" / "bluesky" / "mallory.example.md"
    hand_edit(other, other.read_text().replace(
        "aka: []", "aka:\n- {ref: x/mallory, reason: by hand, at: '2026-11-01T10:00:00-04:00'}"))
    assert cli("check", "bluesky", "mallory.example").code == 3


@pytest.mark.parametrize("ref", ["recorder:bob", "recorder/@bob", "recorder/Bob",
                                 "Recorder/bob"])
def test_a_one_sided_link_written_in_another_spelling_still_carries_do_not_engage(
        cli, recorder, keyring_log, home, ref) -> None:
    flag(cli, "mallory", where="x")
    add_link(home / "people" / "x" / "mallory.md", ref)
    refused_before_posting(cli("send", "recorder", "--to", "bob", "--text", "hi"))
    assert cli("check", "recorder", "bob").code == 3


def test_a_direct_link_to_a_flagged_account_counts_however_many_links_a_file_has(
        cli, recorder, keyring_log, home) -> None:
    for i in range(70):
        assert cli("remember", "x", f"f{i:02d}", "--kind", "reply", "--they", "hi").code == 0
    flag(cli, "zed", where="x")
    assert cli("remember", "recorder", "bob", "--kind", "reply", "--they", "hi").code == 0
    path = home / "people" / "recorder" / "bob.md"
    links = "".join(f"- {{ref: x/f{i:02d}, reason: r, at: {LINKED_AT}}}\n" for i in range(70))
    links += f"- {{ref: x/zed, reason: r, at: {LINKED_AT}}}\n"
    hand_edit(path, path.read_text().replace("aka: []\n", "aka:\n" + links))
    refused_before_posting(cli("send", "recorder", "--to", "bob", "--text", "hi"))
    assert cli("check", "recorder", "bob").code == 3


def test_a_link_to_a_platform_no_longer_installed_still_carries_do_not_engage(
        cli, recorder, keyring_log, home) -> None:
    flag(cli, "al", where="x")
    (home / "people" / "mastodon").mkdir()
    src = home / "people" / "x" / "al.md"
    (home / "people" / "mastodon" / "al.md").write_text(
        src.read_text().replace("platform: x", "platform: mastodon"))
    src.unlink()
    assert cli("remember", "recorder", "alice", "--kind", "reply", "--they", "hi").code == 0
    add_link(home / "people" / "recorder" / "alice.md", "mastodon/al")
    refused_before_posting(cli("send", "recorder", "--to", "alice", "--text", "hi"))


def test_do_not_engage_carries_along_a_chain_of_aka_links(cli, recorder, keyring_log) -> None:
    # recorder/ada <-> x/ada_x <-> bluesky/ada.bsky.social: flagged on Bluesky, two hops away.
    proof = "https://example.org/ada-is-everywhere"
    for platform_name, handle in (("recorder", "ada"), ("x", "ada_x"),
                                  ("bluesky", "ada.bsky.social")):
        assert cli("remember", platform_name, handle, "--kind", "mention", "--they",
                   "hello").code == 0
    assert cli("link", "recorder:ada", "x:ada_x", "--proof", proof).code == 0
    assert cli("link", "x:ada_x", "bluesky:ada.bsky.social", "--proof", proof).code == 0
    assert cli("dne", "bluesky", "ada.bsky.social", "on").code == 0
    assert cli("check", "x", "ada_x").code == 3  # one hop: caught
    result = cli("send", "recorder", "--to", "ada", "--text", "hi ada")
    assert result.code == 3, (result.code, result.out, result.err)
    assert sent() == []


# ---- hand edits ---------------------------------------------------------------------------------

def test_a_hand_edit_followed_by_any_write_on_that_platform_still_reaches_the_id_map(
        cli, recorder, keyring_log, home, monkeypatch) -> None:
    flag(cli, "mallory")
    path = home / "people" / "recorder" / "mallory.md"
    hand_edit(path, path.read_text().replace("aka: []", "aka: []\nid: u-9"))
    original = identity.touch_stamp

    def slow_stamp(home_, platform_):  # type: ignore[no-untyped-def]
        time.sleep(0.02)
        original(home_, platform_)

    monkeypatch.setattr(identity, "touch_stamp", slow_stamp)
    assert cli("set", "recorder", "alice", "--display-name", "Alice").code == 0
    monkeypatch.setattr(identity, "touch_stamp", original)
    platform.add_user("newname", "u-9")
    refused_before_posting(cli("send", "recorder", "--to", "newname", "--text", "hi"))
    assert cli("check", "recorder", "newname", "--id", "u-9").code == 3


# ---- forgetting one account of a linked person -------------------------------------------------

def test_forgetting_the_alt_account_of_a_flagged_person_keeps_it_flagged(
        cli, recorder, keyring_log) -> None:
    flag(cli, "mallory", where="x")
    assert cli("remember", "recorder", "mal", "--kind", "reply", "--they", "hi").code == 0
    assert cli("link", "x:mallory", "recorder:mal", "--proof",
               "https://example.com/proof").code == 0
    assert cli("check", "recorder", "mal").code == 3
    assert cli("forget", "recorder", "mal").code == 0
    refused_before_posting(cli("send", "recorder", "--to", "mal", "--text", "hi again"))


# ---- the map kept by the writers, never rebuilt after their own writes ---------------------------

WRITES = {
    "remember someone new": ["remember", "x", "newcomer", "--kind", "reply", "--they", "hi"],
    "remember with an id": ["remember", "x", "carol", "--kind", "reply", "--they", "hi",
                            "--id", "77"],
    "a new handle for a known id": ["remember", "x", "carol_new", "--kind", "reply",
                                    "--they", "hi", "--id", "77"],
    "do-not-engage on": ["dne", "x", "carol", "on"],
    "a flag": ["flag", "x", "carol", "spam-signals"],
    "a pin": ["pin", "x", "carol", "likes evals", "--by", "them"],
    "a display name": ["set", "x", "carol", "--display-name", "Carol"],
    "a link": ["link", "x:carol", "bluesky:carol.bsky.social", "--proof",
               "https://example.com/proof"],
}


@pytest.mark.parametrize("write", list(WRITES))
def test_a_write_by_tactful_keeps_the_id_map_fresh_so_no_check_rebuilds_it(
        cli, home: Path, write: str) -> None:  # type: ignore[no-untyped-def]
    for handle, person_id in (("carol", "77"), ("dave", "88")):
        assert cli("remember", "x", handle, "--kind", "reply", "--they", "hi",
                   "--id", person_id).code == 0
    assert cli("remember", "bluesky", "carol.bsky.social", "--kind", "reply",
               "--they", "hi").code == 0
    assert cli("check", "x", "anyone", "--id", "1").code == 0
    # A rebuild starts each platform's map from nothing: these would go.
    sentinels = [home / ".ids" / platform / "not-rebuilt" for platform in ("x", "bluesky")]
    for sentinel in sentinels:
        sentinel.touch()
    assert cli(*WRITES[write]).code == 0
    assert cli("check", "x", "someone_else", "--id", "2").code == 0
    assert cli("check", "bluesky", "someone.bsky.social").code == 0
    assert [s.name for s in sentinels if not s.exists()] == []
    # And what the write said about ids is in the map: a renamed carol is carol.
    if write == "do-not-engage on":
        assert cli("check", "x", "carol_renamed", "--id", "77").code == 3


def test_after_forgetting_someone_the_next_check_finds_the_map_fresh(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    for handle, person_id in (("carol", "77"), ("dave", "88")):
        assert cli("remember", "x", handle, "--kind", "reply", "--they", "hi",
                   "--id", person_id).code == 0
    assert cli("dne", "x", "carol", "on").code == 0
    # Forgetting rebuilds the map itself (no marker of the forgotten may stay); after it, the
    # map is fresh.
    assert cli("forget", "x", "dave").code == 0
    sentinel = home / ".ids" / "x" / "not-rebuilt"
    sentinel.touch()
    assert cli("check", "x", "carol_renamed", "--id", "77").code == 3
    assert cli("check", "x", "dave_renamed", "--id", "88").code == 0
    assert sentinel.exists()


def test_a_hand_made_file_right_after_a_write_is_seen_by_the_next_check(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "someone", "--kind", "reply", "--they", "hi").code == 0
    for n in range(5):
        assert cli("remember", "x", f"writer{n}", "--kind", "reply", "--they", "hi").code == 0
        hand_edit(home / "people" / "x" / f"hand{n}.md",
                  f"---\nplatform: x\nhandle: hand{n}\nid: '9{n}'\ndo_not_engage: true\n---\n")
        assert cli("check", "x", f"renamed{n}", "--id", f"9{n}").code == 3


# ---- the map read while it is rebuilt ------------------------------------------------------------

def test_a_lookup_by_id_while_the_map_is_rebuilt_still_finds_every_handle_of_the_id(
        tmp_path: Path) -> None:
    # A rebuild empties the map's folder before it fills it again (another process that met a
    # hand edit, a reindex). A lookup that found the map fresh just before and lists it
    # meanwhile must not answer "nobody has this id": a flagged person's renamed account.
    import subprocess
    import sys

    from tactful.core.memory.home import Home

    people = tmp_path / "people" / "x"
    people.mkdir(parents=True)
    for number in range(300):
        (people / f"p{number}.md").write_text(
            f"---\nplatform: x\nhandle: p{number}\nid: '{1000 + number}'\n---\n")
    (people / "mallory.md").write_text(
        "---\nplatform: x\nhandle: mallory\nid: '42'\ndo_not_engage: true\n---\n")
    home = Home(tmp_path)
    identity.rebuild(home, "x")
    stop = tmp_path / "stop"
    rebuilder = subprocess.Popen([sys.executable, "-c", (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from tactful.core.memory import identity\n"
        "from tactful.core.memory.home import Home\n"
        "home = Home(Path(sys.argv[1]))\n"
        "rounds = 0\n"
        "while not os.path.exists(sys.argv[2]):\n"
        "    identity.rebuild(home, 'x')\n"
        "    time.sleep(0.01)\n"  # a waiting reader gets its turn, as between real rebuilds
        "    rounds += 1\n"
        "    if rounds == 40:\n"
        "        open(sys.argv[3], 'w').close()\n"), str(tmp_path), str(stop),
        str(tmp_path / "rebuilt forty times")])
    answers = []
    try:
        while not (tmp_path / "rebuilt forty times").exists():
            assert rebuilder.poll() is None, "the rebuilding process stopped"
            answers.append(identity.handles_for(home, "x", "42"))
    finally:
        stop.touch()
        rebuilder.wait(timeout=60)
    missed = sum(answer != ["mallory"] for answer in answers)
    assert missed == 0, f"{missed} of {len(answers)} lookups missed the flagged handle"
