"""The config's memory values kept in the home (core/config/view.py), so `check` reads the config
file without the schema: only a file byte for byte the same as one that loaded is served from
the copy; anything else is read whole, and an error in it is said as always."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import tree

AT = "2026-10-29T09:05:00+00:00"


@pytest.fixture
def person(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("--home", str(home), "remember", "x", "ada", "--kind", "reply", "--they", "hi",
               "--at", AT).code == 0


def last_seen(cli, home: Path, config: Path) -> str:  # type: ignore[no-untyped-def]
    result = cli("--home", str(home), "--config", str(config), "check", "x", "ada", "--json")
    assert result.code == 0, result.err
    return str(json.loads(result.out)["results"][0]["last_seen"])


def copies(home: Path) -> list[Path]:
    """The kept copies of config files (not where the user's own config file goes)."""
    return sorted(p for p in (home / ".cache" / "config").glob("*.json")
                  if p.name != "user-folder.json")


def edit_keeping_size_and_times(path: Path, old: str, new: str) -> None:
    """Change the bytes, not the size nor the times: only the bytes can tell."""
    assert len(old) == len(new)
    before = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size


@pytest.mark.usefixtures("person")
def test_an_edited_config_is_never_served_from_the_kept_copy(cli, home: Path,
                                                             tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: America/New_York\n", encoding="utf-8")
    assert last_seen(cli, home, config) == "2026-10-29T05:05:00-04:00"
    assert len(copies(home)) == 1  # kept, for the next check
    assert last_seen(cli, home, config) == "2026-10-29T05:05:00-04:00"  # from the copy
    edit_keeping_size_and_times(config, "America/New_York", "Europe/Amsterdam")
    assert last_seen(cli, home, config) == "2026-10-29T10:05:00+01:00"
    assert last_seen(cli, home, config) == "2026-10-29T10:05:00+01:00"


@pytest.mark.usefixtures("person")
def test_a_config_that_stops_loading_is_reported_even_after_check_kept_it(
        cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: Europe/Amsterdam\n", encoding="utf-8")
    assert last_seen(cli, home, config) == "2026-10-29T10:05:00+01:00"
    edit_keeping_size_and_times(config, "Europe/Amsterdam", "Europe/Atlantis_")
    result = cli("--home", str(home), "--config", str(config), "check", "x", "ada")
    assert result.code == 2 and "Europe/Atlantis_" in result.err, (result.code, result.err)
    config.unlink()
    result = cli("--home", str(home), "--config", str(config), "check", "x", "ada")
    assert result.code == 2 and "no such config file" in result.err


@pytest.mark.usefixtures("person")
@pytest.mark.parametrize("copy", [b"", b"{not json", b'{"format": 1}', b"[]",
                                  b"\xff\xfe garbage", b"[" * 100_000, b'{"values": 1}'])
def test_a_damaged_copy_is_ignored_and_the_file_read_whole(
        cli, home: Path, tmp_path: Path, copy: bytes) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: Europe/Amsterdam\n", encoding="utf-8")
    assert last_seen(cli, home, config) == "2026-10-29T10:05:00+01:00"
    [kept] = copies(home)
    kept.write_bytes(copy)
    assert last_seen(cli, home, config) == "2026-10-29T10:05:00+01:00"


@pytest.mark.usefixtures("person")
def test_a_pipe_in_place_of_a_copy_never_hangs_check(cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: Europe/Amsterdam\n", encoding="utf-8")
    assert last_seen(cli, home, config) == "2026-10-29T10:05:00+01:00"
    for kept in [*copies(home)]:
        kept.unlink()
        os.mkfifo(kept)
    assert last_seen(cli, home, config) == "2026-10-29T10:05:00+01:00"


@pytest.mark.usefixtures("person")
def test_a_copy_whose_values_were_changed_by_hand_is_not_trusted_with_the_wrong_shape(
        cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: Europe/Amsterdam\n", encoding="utf-8")
    assert last_seen(cli, home, config) == "2026-10-29T10:05:00+01:00"
    [kept] = copies(home)
    copy = json.loads(kept.read_text(encoding="utf-8"))
    copy["values"]["owners"] = "x:ada"  # a string where a list belongs
    kept.write_text(json.dumps(copy), encoding="utf-8")
    assert last_seen(cli, home, config) == "2026-10-29T10:05:00+01:00"


@pytest.mark.usefixtures("person")
def test_each_config_file_is_judged_by_its_own_copy(cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    east, west = tmp_path / "east.yaml", tmp_path / "west.yaml"
    east.write_text("persona:\n  timezone: Asia/Tokyo\n", encoding="utf-8")
    west.write_text("persona:\n  timezone: America/Los_Angeles\n", encoding="utf-8")
    for _ in range(2):
        assert last_seen(cli, home, east) == "2026-10-29T18:05:00+09:00"
        assert last_seen(cli, home, west) == "2026-10-29T02:05:00-07:00"
    # The same bytes at another path are another file (its relative paths mean other places).
    moved = tmp_path / "elsewhere" / "east.yaml"
    moved.parent.mkdir()
    east.replace(moved)
    assert last_seen(cli, home, moved) == "2026-10-29T18:05:00+09:00"
    assert len(copies(home)) == 3


def test_no_copy_is_kept_where_the_home_is_missing_or_not_a_home(
        cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: Asia/Tokyo\n", encoding="utf-8")
    result = cli("--home", str(home), "--config", str(config), "check", "x", "ada")
    assert result.code == 4 and not home.exists()
    other = tmp_path / "not-a-home"
    other.mkdir()
    result = cli("--home", str(other), "--config", str(config), "check", "x", "ada")
    assert result.code == 4 and list(other.iterdir()) == []


def test_a_home_named_only_by_the_config_keeps_no_copy(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TACTFUL_HOME")
    home = tmp_path / "from-config"
    config = tmp_path / "tactful.yaml"
    config.write_text(f"memory:\n  home: {home}\n", encoding="utf-8")
    assert cli("--config", str(config), "remember", "x", "ada", "--kind", "reply",
               "--they", "hi").code == 0
    assert cli("--config", str(config), "check", "x", "ada").code == 0
    assert (home / "people" / "x" / "ada.md").exists()
    assert not (home / ".cache").exists()


@pytest.mark.usefixtures("person")
def test_check_with_an_unchanged_config_reads_the_copy_not_the_schema(
        home: Path, tmp_path: Path) -> None:
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: Asia/Tokyo\n", encoding="utf-8")
    probe = ("import sys; from tactful.core.cli.main import main; "
             f"code = main(['--home', {str(home)!r}, '--config', {str(config)!r}, 'check', "
             "'x', 'ada']); "
             "print(code, 'tactful.core.config.schema' in sys.modules, 'yaml' in sys.modules)")

    def run() -> str:
        return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              check=True).stdout.splitlines()[-1]

    assert run() == "0 True True"  # the first time: the whole file, then kept
    # Then neither the config's schema nor PyYAML: the person file's header, of the shape
    # tactful writes, is read without it.
    assert run() == "0 False False"
    config.write_text("persona:\n  timezone: Asia/Seoul\n", encoding="utf-8")
    assert run() == "0 True True"


# ---- where the user's own config file goes, asked of platformdirs once per circumstance --------

def user_file(folder: Path, zone: str) -> None:
    (folder / "tactful").mkdir(parents=True, exist_ok=True)
    (folder / "tactful" / "tactful.yaml").write_text(f"persona:\n  timezone: {zone}\n",
                                                     encoding="utf-8")


def zone_of_check(cli, home: Path) -> str:  # type: ignore[no-untyped-def]
    result = cli("--home", str(home), "check", "x", "ada", "--json")
    assert result.code == 0, result.err
    return str(json.loads(result.out)["results"][0]["last_seen"])[-6:]


@pytest.mark.usefixtures("person")
def test_a_user_config_file_made_after_the_folder_was_kept_is_read(
        cli, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-a"))
    assert zone_of_check(cli, home) == "-04:00"  # no file: the defaults (New York)
    assert (home / ".cache" / "config" / "user-folder.json").exists()
    user_file(tmp_path / "config-a", "Asia/Tokyo")
    assert zone_of_check(cli, home) == "+09:00"


@pytest.mark.usefixtures("person")
def test_the_user_config_folder_is_asked_again_when_the_environment_changes(
        cli, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    user_file(tmp_path / "config-a", "Asia/Tokyo")
    user_file(tmp_path / "config-b", "Europe/Amsterdam")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-a"))
    assert zone_of_check(cli, home) == "+09:00"
    assert zone_of_check(cli, home) == "+09:00"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-b"))
    assert zone_of_check(cli, home) == "+01:00"
    monkeypatch.setenv("SOME_OTHER_VARIABLE", "1")  # any change at all: asked again
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-a"))
    assert zone_of_check(cli, home) == "+09:00"


@pytest.mark.usefixtures("person")
def test_the_kept_user_folder_holds_no_word_of_the_environment(
        cli, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SOME_API_TOKEN", "sk-not-a-real-token-4242")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-a"))
    assert zone_of_check(cli, home) == "-04:00"
    kept = (home / ".cache" / "config" / "user-folder.json").read_text(encoding="utf-8")
    assert "sk-not-a-real-token-4242" not in kept and "SOME_API_TOKEN" not in kept


@pytest.mark.usefixtures("person")
def test_without_an_absolute_home_directory_the_user_folder_is_not_kept(
        cli, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    # The answer the fixture's `remember` kept, under the absolute $HOME, goes first.
    (home / ".cache" / "config" / "user-folder.json").unlink(missing_ok=True)
    monkeypatch.setenv("HOME", "relative/home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-a"))
    user_file(tmp_path / "config-a", "Asia/Tokyo")
    assert zone_of_check(cli, home) == "+09:00"
    assert not (home / ".cache" / "config" / "user-folder.json").exists()


@pytest.mark.usefixtures("person")
def test_the_kept_copy_holds_no_word_of_the_config_file(cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A comment may hold what must not be copied into the memory home: a password left in an
    # old connection string, someone's handle (which `forget` cannot take from the user's
    # own file, so the next `check` would copy it back).
    config = tmp_path / "tactful.yaml"
    config.write_text("# was: postgresql://tess:hunter2-not-real@db/companion\n"
                      "# never answer @quill_writes\n"
                      "persona:\n  timezone: Europe/Amsterdam\n", encoding="utf-8")
    assert last_seen(cli, home, config) == "2026-10-29T10:05:00+01:00"
    assert last_seen(cli, home, config) == "2026-10-29T10:05:00+01:00"  # from the copy
    [kept] = copies(home)
    data = kept.read_bytes()
    assert b"hunter2" not in data and b"quill_writes" not in data


# ---- search and hot read the kept copy too: they answer, they change nothing of the person ----

def searched_at(cli, home: Path, config: Path) -> str:  # type: ignore[no-untyped-def]
    result = cli("--home", str(home), "--config", str(config), "search", "hi", "--json")
    assert result.code == 0, result.err
    return str(json.loads(result.out)["results"][0]["at"])


@pytest.mark.usefixtures("person")
def test_search_with_an_edited_config_is_never_served_from_the_kept_copy(
        cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: America/New_York\n", encoding="utf-8")
    assert searched_at(cli, home, config) == "2026-10-29T05:05:00-04:00"
    assert len(copies(home)) == 1
    assert searched_at(cli, home, config) == "2026-10-29T05:05:00-04:00"  # from the copy
    edit_keeping_size_and_times(config, "America/New_York", "Europe/Amsterdam")
    assert searched_at(cli, home, config) == "2026-10-29T10:05:00+01:00"
    edit_keeping_size_and_times(config, "Europe/Amsterdam", "Europe/Atlantis_")
    for command in (["search", "hi"], ["hot"]):
        result = cli("--home", str(home), "--config", str(config), *command)
        assert result.code == 2 and "Europe/Atlantis_" in result.err, (result.code, result.err)


@pytest.mark.usefixtures("person")
def test_search_and_hot_with_an_unchanged_config_read_the_copy_not_the_schema(
        home: Path, tmp_path: Path) -> None:
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: Asia/Tokyo\n", encoding="utf-8")
    probe = ("import sys; from tactful.core.cli.main import main; "
             f"code = main(['--home', {str(home)!r}, '--config', {str(config)!r}, "
             f"*sys.argv[1:]]); print(code, 'tactful.core.config.schema' in sys.modules)")

    def run(*argv: str) -> str:
        return subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True,
                              text=True, check=True).stdout.splitlines()[-1]

    assert run("search", "hi") == "0 True"  # the first time: the whole file, then kept
    assert run("search", "hi") == "0 False"
    assert run("hot") == "0 False"
    config.write_text("persona:\n  timezone: Asia/Seoul\n", encoding="utf-8")
    assert run("hot") == "0 True"


def test_a_refused_search_keeps_no_copy(cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("--home", str(home), "remember", "x", "ada", "--kind", "reply",
               "--they", "hi").code == 0
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: Asia/Tokyo\n", encoding="utf-8")
    for bad in (["--limit", "0"], ["--platform", "Not A Platform"]):
        result = cli("--home", str(home), "--config", str(config), "search", "hi", *bad)
        assert result.code == 2, result.err
    assert copies(home) == []


# ---- remember reads the copy too, and keeps one only once it has succeeded -------------------

def remember(cli, home: Path, config: Path | None, *extra: str):  # type: ignore[no-untyped-def]
    named = ["--config", str(config)] if config is not None else []
    return cli("--home", str(home), *named, "remember", "x", "ada", "--kind", "reply",
               "--they", "hi again", *extra)


@pytest.mark.usefixtures("person")
def test_a_refused_remember_keeps_nothing_of_the_config_and_a_done_one_keeps_its_copy(
        cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "elsewhere" / "tactful.yaml"  # not ./tactful.yaml: none is found there
    config.parent.mkdir()
    config.write_text("persona:\n  timezone: Asia/Tokyo\n", encoding="utf-8")
    shutil.rmtree(home / ".cache", ignore_errors=True)  # what the fixture's remember kept
    before = tree(home)
    for bad in (["--at", "2999-01-01T00:00:00+00:00"], ["--link", "javascript:alert(1)"],
                ["--id", "../etc"]):
        assert remember(cli, home, config, *bad).code == 2
        assert remember(cli, home, None, *bad).code == 2  # no file: where the user's goes
    assert tree(home) == before
    assert remember(cli, home, config).code == 0
    assert len(copies(home)) == 1
    assert remember(cli, home, None).code == 0
    assert (home / ".cache" / "config" / "user-folder.json").exists()


@pytest.mark.usefixtures("person")
def test_remember_with_an_unchanged_config_reads_the_copy_not_the_schema(
        home: Path, tmp_path: Path) -> None:
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: Asia/Tokyo\n", encoding="utf-8")
    probe = ("import sys; from tactful.core.cli.main import main; "
             f"code = main(['--home', {str(home)!r}, '--config', {str(config)!r}, 'remember', "
             "'x', 'ada', '--kind', 'reply', '--they', 'hi']); "
             "print(code, 'tactful.core.config.schema' in sys.modules, "
             "'tactful.core.config.yamlpos' in sys.modules)")

    def run() -> str:
        return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              check=True).stdout.splitlines()[-1]

    assert run() == "0 True True"  # the first time: the whole file, then kept
    assert run() == "0 False False"
    config.write_text("persona:\n  timezone: Asia/Seoul\n", encoding="utf-8")
    assert run() == "0 True True"


@pytest.mark.usefixtures("person")
def test_remember_without_a_config_file_asks_platformdirs_only_the_first_time(
        home: Path, tmp_path: Path) -> None:
    shutil.rmtree(home / ".cache", ignore_errors=True)
    probe = ("import sys; from tactful.core.cli.main import main; "
             f"code = main(['--home', {str(home)!r}, 'remember', 'x', 'ada', '--kind', 'reply', "
             "'--they', 'hi']); print(code, 'platformdirs' in sys.modules)")

    def run() -> str:
        return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              check=True, cwd=tmp_path).stdout.splitlines()[-1]

    assert run() == "0 True"  # asked, and the answer kept once the remember was done
    assert run() == "0 False"


@pytest.mark.usefixtures("person")
def test_remember_notices_a_kept_config_that_was_edited_broken_or_removed(
        cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: America/New_York\n", encoding="utf-8")
    for _ in range(2):  # read whole and kept, then from the copy
        assert remember(cli, home, config, "--at", AT).code == 0
        assert last_seen(cli, home, config) == "2026-10-29T05:05:00-04:00"
    edit_keeping_size_and_times(config, "America/New_York", "Europe/Amsterdam")
    assert remember(cli, home, config, "--at", AT).code == 0
    assert "### 2026-10-29T10:05:00+01:00" in (home / "people" / "x" / "ada.md").read_text()
    # A kept copy of the good file changes nothing of what the operator is told of a bad one.
    edit_keeping_size_and_times(config, "Europe/Amsterdam", "Europe/Atlantis_")
    kept = remember(cli, home, config)
    shutil.rmtree(home / ".cache")
    fresh = remember(cli, home, config)
    assert kept.code == fresh.code == 2 and kept.err == fresh.err
    assert "tactful.yaml:2" in kept.err and "Europe/Atlantis_" in kept.err
    config.unlink()
    result = remember(cli, home, config)
    assert result.code == 2 and "no such config file" in result.err


@pytest.mark.usefixtures("person")
def test_a_config_edited_while_remember_ran_is_not_kept_as_the_one_it_loaded(
        home: Path, tmp_path: Path) -> None:
    # `remember` keeps its copy at the end (it may wait seconds for a person's lock): what it
    # keeps is the file as it was read, so the edited file is read whole by the next command.
    from tactful.core.cli.context import Context

    config = tmp_path / "tactful.yaml"
    config.write_text("persona:\n  timezone: Asia/Tokyo\n", encoding="utf-8")
    context = Context(home_arg=str(home), config_arg=str(config), kept_config=True,
                      keep_when_done=True)
    assert str(context.settings.tz) == "Asia/Tokyo"
    config.write_text("persona:\n  timezone: Asia/Seoul\n", encoding="utf-8")
    context.done()
    again = Context(home_arg=str(home), config_arg=str(config), kept_config=True)
    assert str(again.settings.tz) == "Asia/Seoul"
