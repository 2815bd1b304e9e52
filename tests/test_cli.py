"""The command line as a whole: exit codes, one-line messages, and nothing half-written."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run_process, tree


def test_remember_then_resolve_unpin_flag(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "bob", "--kind", "question", "--they", "when is the talk?",
               "--open", "I owe them the talk date").code == 0
    assert cli("pin", "x", "bob", "likes dry jokes", "--by", "me").code == 0
    assert cli("resolve", "x", "bob", "2").code == 2
    result = cli("resolve", "x", "bob", "1")
    assert result.code == 0 and "resolved open thread 1" in result.out
    text = (home / "people" / "x" / "bob.md").read_text()
    assert "resolved 20" in text and "I owe them the talk date" in text  # never erased
    assert cli("unpin", "x", "bob", "3").code == 2
    assert cli("unpin", "x", "bob", "1").code == 0
    assert cli("flag", "x", "bob", "Not A Name").code == 2
    assert cli("flag", "x", "bob", "spam-signals", "--reason", "links only").code == 0
    assert cli("unflag", "x", "bob", "spam-signals").code == 0
    assert cli("unflag", "x", "bob", "spam-signals").code == 2
    assert cli("set", "x", "bob", "--kind", "brand").code == 0
    assert "relationship: brand (fixed)" in cli("card", "x", "bob").out


def test_edits_of_unknown_people_create_nothing(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "bob", "--kind", "reply", "--they", "hi").code == 0
    before = tree(home)
    for argv in (["unpin", "x", "ghost", "1"], ["resolve", "x", "ghost", "1"],
                 ["unflag", "x", "ghost", "spam"]):
        assert cli(*argv).code == 2
    assert tree(home) == before


@pytest.mark.parametrize("argv", [
    ["remember", "x", "bob", "--kind", "shout"],
    ["remember", "x", "bob", "--kind", "reply", "--at", "yesterday"],
    ["remember", "x", "bob", "--kind", "reply", "--link", "javascript:alert(1)"],
    ["remember", "x", "bob", "--kind", "reply", "--id", "../etc"],
    ["remember", "myspace", "bob", "--kind", "reply"],
    ["remember", "x", "bob"],
    ["set", "x", "bob"],
    ["pin", "x", "bob", "text", "--by", "someone"],
    ["check", "x", "a", "b", "--id", "1"],
    ["nonsense"],
    ["--debug"],  # options but no command
])
def test_bad_input_exit_2_one_line_nothing_written(argv: list[str], cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    home.mkdir()
    result = cli(*argv)
    assert result.code == 2
    assert result.err.startswith("tactful") and result.err.count("\n") == 1
    assert tree(home) == {}


def test_config_typo_is_exit_2_naming_file_and_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "tactful.yaml").write_text("persona:\n  name: Gal\n  timzone: Europe/Amsterdam\n")
    result = cli("remember", "x", "bob", "--kind", "reply", "--they", "hi")
    assert result.code == 2
    assert "tactful.yaml:3" in result.err and "timzone" in result.err
    assert "timezone" in result.err


def test_persona_timezone_from_config(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "tactful.yaml").write_text("persona:\n  timezone: Europe/Amsterdam\n")
    assert cli("remember", "x", "bob", "--kind", "reply", "--they", "hi",
               "--at", "2026-10-29T12:00:00+00:00").code == 0
    assert "first 2026-10-29 13:00 CET" in cli("card", "x", "bob").out


def test_read_only_home_refuses_writes_keeps_reads(cli, home: Path, read_only) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "bob", "--kind", "reply", "--they", "hi").code == 0
    before = tree(home)
    read_only(home)
    result = cli("remember", "x", "bob", "--kind", "reply", "--they", "again")
    assert result.code == 4 and "read-only" in result.err and result.err.count("\n") == 1
    assert cli("remember", "x", "new_person", "--kind", "reply").code == 4
    assert tree(home) == before
    assert cli("check", "x", "bob").code == 0
    assert cli("card", "x", "bob").code == 0


def test_export_prints_file_and_log_events(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "bob", "--kind", "reply", "--they", "hi there").code == 0
    (home / "engagement.jsonl").write_text(
        '{"platform": "x", "handle": "@Bob", "action": "reply", "text": "hello bob"}\n'
        '{"platform": "x", "handle": "carol", "action": "reply", "text": "hello carol"}\n'
        "half a line from a crash\n")
    result = cli("export", "x", "bob")
    assert result.code == 0
    assert 'they: "hi there"' in result.out and "hello bob" in result.out
    assert "hello carol" not in result.out
    assert cli("export", "x", "nobody").code == 2


def test_global_options_after_the_command(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    other = tmp_path / "elsewhere"
    assert cli("remember", "x", "bob", "--kind", "reply", "--home", str(other)).code == 0
    assert (other / "people" / "x" / "bob.md").exists()
    assert cli("--home", str(other), "check", "x", "bob").code == 0


def test_real_process_exit_codes(home: Path) -> None:
    done = run_process("dne", "x", "troll", "on")
    assert done.returncode == 0, done.stderr
    checked = run_process("check", "x", "troll")
    assert checked.returncode == 3 and "DO_NOT_ENGAGE" in checked.stdout
    bad = run_process("check", "x", "../../etc/passwd")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_config_check(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ok = cli("config", "check")
    assert ok.code == 0 and "built-in defaults" in ok.out
    example = Path(__file__).parent.parent / "config" / "tactful.example.yaml"
    assert cli("config", "check", "--config", str(example)).code == 0
    (tmp_path / "tactful.yaml").write_text("memory:\n  compact_after: fifty\n")
    bad = cli("config", "check")
    assert bad.code == 2
    assert "tactful.yaml:2: memory.compact_after: expected" in bad.err and "fifty" in bad.err


def test_stray_words_are_never_echoed(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    # an unquoted --they leaves someone's words as extra arguments
    result = cli("remember", "x", "bob", "--kind", "reply", "--they", "my", "secret", "hunter2")
    assert result.code == 2
    assert "hunter2" not in result.err and "secret" not in result.err
    assert "quotes" in result.err and "tactful: tactful" not in result.err


def test_at_in_the_far_future_or_out_of_range_is_refused(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    for when in ("2090-01-01T00:00:00+00:00", "9999-12-31T20:00:00", "0001-01-01T00:00:00+14:00",
                 ""):
        result = cli("remember", "x", "bob", "--kind", "reply", "--at", when)
        assert result.code == 2, when
    assert not (home / "people" / "x" / "bob.md").exists()


def test_version_prints_the_installed_version() -> None:
    from importlib.metadata import version

    result = run_process("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"tactful {version('tactful')}"


def test_bare_tactful_prints_the_help() -> None:
    result = run_process()
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: tactful") and "remember" in result.stdout


def test_a_reader_that_closed_the_pipe_is_not_an_internal_error() -> None:
    import subprocess
    import sys

    with subprocess.Popen([sys.executable, "-m", "tactful.core.cli", "--help"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # `| head` that already stopped reading
        err = proc.stderr.read()
        assert proc.wait(timeout=60) == 0, err
    assert "internal error" not in err and "Traceback" not in err
