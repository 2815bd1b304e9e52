"""The search index (docs/search-and-desk.md): ranking, quoting, an index never trusted blindly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

NOW = "2026-11-29T12:00:00-05:00"


@pytest.fixture(autouse=True)
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TACTFUL_NOW", NOW)


def hits(cli, *argv: str) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    result = cli("search", *argv, "--json")
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert document["query"] == argv[0]
    return document["results"]  # type: ignore[no-any-return]


def test_recent_beats_old_at_equal_relevance(cli) -> None:  # type: ignore[no-untyped-def]
    for handle, at in (("alpha", "2026-09-01T10:00:00-04:00"),
                       ("bravo", "2026-11-28T10:00:00-05:00")):
        assert cli("remember", "x", handle, "--kind", "reply", "--they", "loves the eval harness",
                   "--at", at).code == 0
    found = [h for h in hits(cli, "eval harness") if h["kind"] == "entry"]
    assert [h["handle"] for h in found] == ["bravo", "alpha"]
    assert found[0]["relevance"] == found[1]["relevance"] == 1.0
    assert found[0]["recency"] > found[1]["recency"]


def test_open_item_beats_equal_entry_without(cli) -> None:  # type: ignore[no-untyped-def]
    at = "2026-11-20T10:00:00-05:00"
    # The same words in both entries (an open item is searchable text too), so only the open
    # item itself tells them apart.
    assert cli("remember", "x", "alpha", "--kind", "reply",
               "--they", "benchmark numbers soon waiting", "--at", at).code == 0
    assert cli("remember", "x", "bravo", "--kind", "reply", "--they", "benchmark numbers soon",
               "--at", at, "--open", "waiting").code == 0
    found = hits(cli, "benchmark numbers")
    assert found[0]["handle"] == "bravo" and found[0]["importance"] == 1.0
    assert found[1]["handle"] == "alpha" and found[1]["importance"] == 0.0
    assert found[0]["score"] == pytest.approx(found[1]["score"] + 0.5, abs=0.01)


def test_half_life_is_fourteen_days(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "quantization",
               "--at", "2026-11-15T12:00:00-05:00").code == 0
    entry = next(h for h in hits(cli, "quantization") if h["kind"] == "entry")
    assert entry["recency"] == pytest.approx(0.5, abs=0.01)


def test_all_words_then_any_word(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "tokenizer bug").code == 0
    assert hits(cli, "tokenizer zebra")[0]["handle"] == "alpha"
    assert hits(cli, "zebra giraffe") == []


def _bakers(cli) -> None:  # type: ignore[no-untyped-def]
    # "bread" in three entries, "rye" in one of them and in one more.
    for handle, they, day in (("alpha", "bread and rye", "2026-11-01"),
                              ("bravo", "bread only", "2026-11-20"),
                              ("carol", "bread again", "2026-11-10"),
                              ("delta", "rye flour", "2026-10-01")):
        assert cli("remember", "x", handle, "--kind", "reply", "--they", they,
                   "--at", f"{day}T10:00:00-05:00").code == 0


def test_a_query_of_common_words_only_ranks_its_matches_by_recency(  # type: ignore[no-untyped-def]
        cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from tactful.core.memory import search

    monkeypatch.setattr(search, "RARE", 2)  # "bread" is in 3 documents: common
    _bakers(cli)
    found = [h for h in hits(cli, "bread") if h["kind"] == "entry"]
    assert [h["handle"] for h in found] == ["bravo", "carol", "alpha"]
    assert {h["relevance"] for h in found} == {1.0}


def test_beside_a_rare_word_a_common_word_still_narrows_the_matches(  # type: ignore[no-untyped-def]
        cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from tactful.core.memory import search

    monkeypatch.setattr(search, "RARE", 2)
    _bakers(cli)
    found = hits(cli, "bread rye")
    assert [h["handle"] for h in found] == ["alpha"] and found[0]["relevance"] == 1.0
    assert "[bread]" in found[0]["snippet"] and "[rye]" in found[0]["snippet"]


def test_with_every_word_a_match_of_common_words_only_weighs_nothing(  # type: ignore[no-untyped-def]
        cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from tactful.core.memory import search

    monkeypatch.setattr(search, "RARE", 2)
    _bakers(cli)
    # No entry says both: the any-word pass. "rye" alone finds fewer than --limit, so
    # "bread" takes part, its matches with relevance 0.
    found = {h["handle"]: h["relevance"] for h in hits(cli, "bread pumpernickel rye")
             if h["kind"] == "entry"}
    assert found["alpha"] > 0 and found["delta"] > 0
    assert found["bravo"] == found["carol"] == 0.0


@pytest.mark.parametrize("query", [
    '"', "'", "-", "--", "@", "@@", "***", "()", "a AND", "NEAR(", "x:y", "🙂", "🙂 🙃",
    "don't", "o'reilly-approved", "eval-harness", "a/b/c", '"unbalanced', "NOT", "*", "^",
    "\u200f", "שלום", "col:value", "{}", "a\\b",
])
def test_odd_queries_never_crash(cli, query: str) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "alpha", "--kind", "reply",
               "--they", "don't o'reilly-approved eval-harness @ada שלום").code == 0
    # "--" ends the options, as for any command, so a query may start with "-"
    result = cli("search", "--", query)
    assert result.code == 0, result.err
    assert cli("search", "--json", "--", query).code == 0


def test_handles_names_pins_and_platform_filter(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "ada_builds", "--kind", "reply", "--they", "hi",
               "--display-name", "Ada Lovelace").code == 0
    assert cli("pin", "x", "ada_builds", "prefers decaf", "--by", "them").code == 0
    assert cli("remember", "bluesky", "lovelace.dev", "--kind", "reply",
               "--they", "hello").code == 0
    assert {h["handle"] for h in hits(cli, "@ada_builds")} == {"ada_builds"}
    assert any(h["kind"] == "pin" for h in hits(cli, "decaf"))
    assert {h["platform"] for h in hits(cli, "lovelace", "--platform", "bluesky")} == {"bluesky"}
    text = cli("search", "decaf").out
    assert "x/@ada_builds" in text and "relevance" in text and "recency" in text


def test_deleted_or_corrupt_index_is_rebuilt(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    assert hits(cli, "sourdough")
    (home / "index.sqlite").unlink()
    assert hits(cli, "sourdough")
    (home / "index.sqlite").write_bytes(b"this is not a database" * 100)
    assert hits(cli, "sourdough")
    assert cli("reindex").code == 0
    assert hits(cli, "sourdough")


def test_a_file_saved_over_by_hand_is_found_by_the_next_search(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    # An editor that saves by writing a new file and renaming it over the old one (most do):
    # the folder's mtime moves and the file has a new inode, so no sweep is needed.
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    assert hits(cli, "sourdough")
    path = home / "people" / "x" / "alpha.md"
    saved = path.with_name("alpha.md.swp-new")
    saved.write_text(path.read_text().replace("sourdough", "ciabatta!"))
    os.replace(saved, path)
    assert hits(cli, "sourdough") == [] and hits(cli, "ciabatta")


def test_a_file_deleted_by_hand_leaves_the_results(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    assert hits(cli, "sourdough")
    (home / "people" / "x" / "alpha.md").unlink()
    assert hits(cli, "sourdough") == []


def test_a_file_edited_in_place_by_hand_is_found_once_the_sweep_is_due(  # type: ignore[no-untyped-def]
        cli, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Written in place, the folder does not change: only a sweep (every SWEEP_EVERY seconds,
    # docs/search-and-desk.md) stats the file. Here every search is due one.
    from tactful.core.memory import index

    monkeypatch.setattr(index, "SWEEP_EVERY", 0.0)
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    assert hits(cli, "sourdough")
    path = home / "people" / "x" / "alpha.md"
    path.write_text(path.read_text().replace("sourdough", "ciabatta!"))
    assert hits(cli, "sourdough") == [] and hits(cli, "ciabatta")


def test_unchanged_stat_means_the_file_is_not_reread(  # type: ignore[no-untyped-def]
        cli, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Same size, same mtime, same inode: the index trusts what it has and reads no file, even
    # when it stats every one.
    from tactful.core.memory import index

    monkeypatch.setattr(index, "SWEEP_EVERY", 0.0)
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    assert hits(cli, "sourdough")
    path = home / "people" / "x" / "alpha.md"
    before = path.stat()
    with open(path, "r+b") as f:
        data = f.read().replace(b"sourdough", b"focaccia!")
        f.seek(0)
        f.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert hits(cli, "sourdough") and hits(cli, "focaccia") == []
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert hits(cli, "focaccia") and hits(cli, "sourdough") == []


def test_corrupt_person_file_is_skipped_with_a_warning(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "sourdough").code == 0
    (home / "people" / "x" / "broken.md").write_text("nonsense\n")
    result = cli("reindex")
    assert result.code == 0 and "broken.md:1" in result.err
    assert (home / "people" / "x" / "broken.md").read_text() == "nonsense\n"
    assert hits(cli, "sourdough")


# ---- search and hot end as soon as they have answered (core/cli/main.py: entry) ----------------

def _python(*argv: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], text=True, timeout=60, check=False,
                          **kwargs)  # type: ignore[call-overload]


def _process(*argv: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return _python("-m", "tactful.core.cli", *argv, **kwargs)


@pytest.fixture
def remembered(cli) -> None:  # type: ignore[no-untyped-def]
    for handle, words in (("alpha", "sourdough starter"), ("bravo", "sourdough oven")):
        assert cli("remember", "x", handle, "--kind", "reply", "--they", words,
                   "--open", "send the recipe", "--at", "2026-11-28T10:00:00-05:00").code == 0


@pytest.mark.usefixtures("remembered")
@pytest.mark.parametrize("argv", [["search", "sourdough"], ["search", "sourdough", "--json"],
                                  ["hot"], ["hot", "--json"], ["search", "x", "--limit", "0"]])
def test_search_and_hot_as_processes_say_everything_with_their_exit_code(  # type: ignore[no-untyped-def]
        cli, argv: list[str]) -> None:
    said = cli(*argv)
    done = _process(*argv, capture_output=True)
    assert (done.returncode, done.stdout, done.stderr) == (said.code, said.out, said.err)
    assert done.stdout or done.stderr


@pytest.mark.usefixtures("remembered")
def test_nothing_on_the_way_of_search_and_hot_leaves_work_for_the_interpreter_exit(
        home: Path, tmp_path: Path) -> None:
    # Ending at once skips atexit handlers and other threads: none may be there on this path,
    # whether the config is read whole or from the home's copy, the index caught up or rebuilt.
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: Europe/Amsterdam\n", encoding="utf-8")
    (home / "index.sqlite").write_bytes(b"not an index")
    runs = "".join(f"main(['--config', {str(config)!r}, *{argv!r}]); " for argv in (
        ["search", "sourdough"], ["hot"], ["search", "oven", "--json"], ["hot", "--json"]))
    probe = ("import atexit, threading; from tactful.core.cli.main import main; "
             f"{runs}print(atexit._ncallbacks(), threading.active_count())")
    done = _python("-c", probe, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "0 1"


@pytest.mark.usefixtures("remembered")
def test_search_leaves_the_usual_shutdown_to_what_registered_for_it() -> None:
    # A handler registered on the way (say by a plugin) still runs: then there is no ending at
    # once.
    probe = ("import atexit, sys; atexit.register(print, 'handler ran'); "
             "from tactful.core.cli.main import entry; "
             "sys.argv = ['tactful', 'search', 'sourdough']; entry()")
    done = _python("-c", probe, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert "sourdough" in done.stdout and done.stdout.rstrip().endswith("handler ran")


@pytest.mark.usefixtures("remembered")
@pytest.mark.parametrize("argv", [["search", "sourdough"], ["hot"]])
def test_search_and_hot_whose_reader_has_gone_end_quietly_with_exit_0(argv: list[str]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = _process(*argv, stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
