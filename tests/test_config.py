"""The configuration loader: file choice, defaults, and one-line errors with file, line and key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tactful.core.config import schema
from tactful.core.config.loader import defaults_notice, load_config, user_config_file
from tactful.core.config.reading import MAX_BYTES, is_secret_key
from tactful.core.config.schema import CONFIG_SCHEMA, MapOf, Section
from tactful.core.config.values import (
    Config,
    MemoryConfig,
    PersonaConfig,
    PlatformConfig,
    PluginsConfig,
)
from tactful.core.config.yamlpos import MapAt, parse
from tactful.core.errors import BadInput, ConfigError
from tactful.core.hookspecs import hookimpl

EXAMPLE = Path(__file__).resolve().parents[1] / "config" / "tactful.example.yaml"


def write(folder: Path, text: str, name: str = "tactful.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    message = str(info.value)
    assert len(message.splitlines()) == 1, message
    return message


@pytest.fixture(autouse=True)
def user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user config folder, as platformdirs finds it through $XDG_CONFIG_HOME, in tmp_path
    (never the real user's), not created: a test that wants a file there writes it."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    return tmp_path / "xdg-config" / "tactful"


@pytest.fixture(params=["libyaml", "pure-python"])
def either_parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with libyaml (what users get when it is installed) and without it.

    PyYAML's wheels carry libyaml; were it missing, both runs would use the pure-Python parser
    and still test something real, so nothing is skipped."""
    if request.param == "pure-python":
        monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    return str(request.param)


# ---- choosing the file ---------------------------------------------------------------------


def test_no_file_anywhere_gives_the_built_in_defaults(tmp_path: Path) -> None:
    config = load_config(environ={}, cwd=tmp_path)
    assert config == Config()
    assert config.source is None
    # an unset zone is the documented default, which config check names (docs/scheduling.md)
    assert config.persona == PersonaConfig("persona", "America/New_York", ())
    assert config.memory == MemoryConfig(None, 50, 20)
    assert config.platforms == {}
    assert config.platform("telegram") == PlatformConfig(None, False, None, None)


def test_explicit_path_beats_env_beats_working_directory(tmp_path: Path) -> None:
    write(tmp_path, "persona: {name: from-cwd}\n")
    env_file = write(tmp_path, "persona: {name: from-env}\n", "env.yaml")
    explicit = write(tmp_path, "persona: {name: explicit}\n", "explicit.yaml")
    environ = {"TACTFUL_CONFIG": str(env_file)}

    assert load_config(explicit, environ=environ, cwd=tmp_path).persona.name == "explicit"
    assert load_config(environ=environ, cwd=tmp_path).persona.name == "from-env"
    from_cwd = load_config(environ={}, cwd=tmp_path)
    assert from_cwd.persona.name == "from-cwd"
    assert from_cwd.source == tmp_path / "tactful.yaml"


def test_the_user_config_folder_comes_fourth(tmp_path: Path, user_folder: Path) -> None:
    user_folder.mkdir(parents=True)
    in_user_folder = write(user_folder, "persona: {name: from-user-folder}\n")
    assert user_config_file() == in_user_folder
    cwd = tmp_path / "work"
    cwd.mkdir()

    config = load_config(environ={}, cwd=cwd)
    assert config.persona.name == "from-user-folder"
    assert config.source == in_user_folder
    assert not config.defaults_only

    # each of the first three places wins over it
    write(cwd, "persona: {name: from-cwd}\n")
    assert load_config(environ={}, cwd=cwd).persona.name == "from-cwd"
    env_file = write(tmp_path, "persona: {name: from-env}\n", "env.yaml")
    environ = {"TACTFUL_CONFIG": str(env_file)}
    assert load_config(environ=environ, cwd=cwd).persona.name == "from-env"
    explicit = write(tmp_path, "persona: {name: explicit}\n", "explicit.yaml")
    assert load_config(explicit, environ=environ, cwd=cwd).persona.name == "explicit"


def test_the_user_config_folder_follows_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "tactful").mkdir(parents=True)
    write(elsewhere / "tactful", "persona: {name: elsewhere}\n")
    assert load_config(environ={}, cwd=tmp_path).defaults_only
    monkeypatch.setenv("XDG_CONFIG_HOME", str(elsewhere))
    assert load_config(environ={}, cwd=tmp_path).persona.name == "elsewhere"


def test_an_error_in_the_user_folder_file_names_its_full_path(
    tmp_path: Path, user_folder: Path
) -> None:
    user_folder.mkdir(parents=True)
    path = write(user_folder, "persona:\n  nam: galatea\n")
    with pytest.raises(ConfigError) as info:
        load_config(environ={}, cwd=tmp_path)
    assert str(info.value).startswith(f"{path}:2: persona.nam: unknown key")


def test_a_dangling_symlink_in_the_user_folder_is_an_error(
    tmp_path: Path, user_folder: Path
) -> None:
    user_folder.mkdir(parents=True)
    (user_folder / "tactful.yaml").symlink_to(tmp_path / "gone.yaml")
    with pytest.raises(ConfigError, match=r"tactful\.yaml: no such config file; fix or remove"):
        load_config(environ={}, cwd=tmp_path)


def test_the_defaults_say_so_and_the_notice_names_every_place(
    tmp_path: Path, user_folder: Path
) -> None:
    config = load_config(environ={}, cwd=tmp_path)
    assert config.defaults_only and config.source is None
    notice = defaults_notice()
    assert len(notice.splitlines()) == 1
    assert notice.startswith("tactful: note: no config file found")
    for place in ("$TACTFUL_CONFIG", "./tactful.yaml", str(user_folder / "tactful.yaml")):
        assert place in notice
    assert "built-in defaults" in notice
    # a file that is there but empty is a file, not the defaults
    assert not load_config(write(tmp_path, ""), environ={}).defaults_only


def test_a_missing_explicit_path_is_an_error_not_the_defaults(tmp_path: Path) -> None:
    write(tmp_path, "persona: {name: from-cwd}\n")
    with pytest.raises(ConfigError, match=r"nope\.yaml: no such config file"):
        load_config(tmp_path / "nope.yaml", environ={}, cwd=tmp_path)


def test_a_missing_env_file_is_an_error_that_names_the_variable(tmp_path: Path) -> None:
    write(tmp_path, "persona: {name: from-cwd}\n")
    environ = {"TACTFUL_CONFIG": str(tmp_path / "gone.yaml")}
    with pytest.raises(ConfigError, match=r"gone\.yaml: no such config file; fix \$TACTFUL_CONFIG"):
        load_config(environ=environ, cwd=tmp_path)


def test_an_empty_env_variable_counts_as_unset(tmp_path: Path) -> None:
    write(tmp_path, "persona: {name: from-cwd}\n")
    assert load_config(environ={"TACTFUL_CONFIG": ""}, cwd=tmp_path).persona.name == "from-cwd"


def test_relative_paths_start_from_the_given_working_directory(tmp_path: Path) -> None:
    write(tmp_path, "persona: {name: relative}\n", "mine.yaml")
    config = load_config(Path("mine.yaml"), environ={}, cwd=tmp_path)
    assert config.persona.name == "relative"
    assert config.source == tmp_path / "mine.yaml"
    assert load_config(environ={"TACTFUL_CONFIG": "mine.yaml"}, cwd=tmp_path).source == (
        tmp_path / "mine.yaml"
    )


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "~\n", "---\n"])
def test_an_empty_file_means_defaults(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    config = load_config(path, environ={})
    assert config == Config(source=path)


def test_importing_the_loader_does_not_import_yaml() -> None:
    code = "import tactful.core.config.loader, sys; print('yaml' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_the_defaults_path_does_not_import_yaml(tmp_path: Path) -> None:
    code = (
        "import sys, pathlib; from tactful.core.config.loader import load_config; "
        f"c = load_config(environ={{}}, cwd=pathlib.Path({str(tmp_path)!r})); "
        "print(c.source, 'yaml' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["None", "False"]


def test_finding_a_file_before_the_user_folder_does_not_import_platformdirs(
    tmp_path: Path,
) -> None:
    write(tmp_path, "persona: {name: near}\n")
    code = (
        "import sys, pathlib; from tactful.core.config.loader import load_config; "
        f"c = load_config(environ={{}}, cwd=pathlib.Path({str(tmp_path)!r})); "
        "print(c.persona.name, 'platformdirs' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["near", "False"]


# ---- the file itself ---------------------------------------------------------------------------


def test_the_example_file_loads_and_sets_every_key() -> None:
    config = load_config(EXAMPLE, environ={})
    assert config.source == EXAMPLE
    assert set(config.platforms) == set(schema.PLATFORMS) - set(schema._MEMORY_ONLY)
    assert config.platform("telegram").mode == "persona"

    tree = parse(EXAMPLE.read_text(encoding="utf-8"))
    written: set[str] = set()

    def collect(node: object, prefix: str) -> None:
        if isinstance(node, MapAt):
            for entry in node.entries:
                key = f"{prefix}.{entry.key}" if prefix else entry.key
                written.add(key)
                collect(entry.value, key)

    collect(tree, "")
    for section_path, section in _all_sections():
        for field in section.fields:
            assert f"{section_path}.{field.name}".lstrip(".") in written
    # Sections under names the operator chooses (responders, routines): every key of them is
    # shown under at least one name.
    for field in CONFIG_SCHEMA.fields:
        if isinstance(field.kind, MapOf) and field.kind.other is not None:
            for key in field.kind.other.fields:
                assert any(w.startswith(f"{field.name}.") and w.endswith(f".{key.name}")
                           for w in written), f"{field.name}.*.{key.name}"


def _all_sections() -> list[tuple[str, Section[Any]]]:
    found: list[tuple[str, Section[Any]]] = [("", CONFIG_SCHEMA)]
    for field in CONFIG_SCHEMA.fields:
        if isinstance(field.kind, Section):
            found.append((field.name, field.kind))
        if isinstance(field.kind, MapOf):
            found.extend((f"{field.name}.{name}", item) for name, item in field.kind.items.items())
    return found


def test_every_schema_field_is_a_dataclass_field_and_optional_means_none() -> None:
    import dataclasses

    for _, section in _all_sections():
        built = section.build()
        defaults = {f.name: f.default for f in dataclasses.fields(built)}
        for field in section.fields:
            if isinstance(built, PlatformConfig) and field.name not in defaults:
                # an option the platform declares: read into `options`
                assert section.build(**{field.name: 1}).options == {field.name: 1}
                continue
            assert field.name in defaults
            assert (defaults[field.name] is None) == field.optional, field.name


def test_a_full_file_is_read_into_typed_values(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "persona:\n"
        "  name: galatea\n"
        "  timezone: Europe/Amsterdam\n"
        "  owners: ['X:@Galatea_Owner', 'bluesky:owner.bsky.social', 'telegram:12345']\n"
        "memory: {compact_after: 30, keep_full: 5}\n"
        "platforms:\n"
        "  telegram: {account: bot, dry_run: yes, mode: companion, base_url: 'http://127.0.0.1:8081'}\n"
        "  threads:\n",
    )
    config = load_config(path, environ={})
    assert config.persona == PersonaConfig(
        "galatea",
        "Europe/Amsterdam",
        ("x:galatea_owner", "bluesky:owner.bsky.social", "telegram:12345"),
    )
    assert config.memory == MemoryConfig(None, 30, 5)
    assert config.platforms == {
        "telegram": PlatformConfig("bot", True, "http://127.0.0.1:8081", "companion"),
        "threads": PlatformConfig(),
    }


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "tactful.yaml"
    path.write_bytes(b"\xef\xbb\xbfpersona: {name: bom}\n")
    assert load_config(path, environ={}).persona.name == "bom"


def test_anchors_and_merge_keys_work_and_written_keys_win(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "platforms:\n"
        "  x: &shared {account: galatea, dry_run: true}\n"
        "  threads:\n"
        "    <<: *shared\n"
        "    account: other\n",
    )
    platforms = load_config(path, environ={}).platforms
    assert platforms["x"] == PlatformConfig("galatea", True)
    assert platforms["threads"] == PlatformConfig("other", True)


# ---- memory.home -------------------------------------------------------------------------------


def test_a_relative_home_starts_from_the_config_folder_not_the_cwd(tmp_path: Path) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = write(folder, "memory:\n  home: ../memory/galatea\n")
    config = load_config(path, environ={}, cwd=elsewhere)
    assert config.memory.home == (tmp_path / "memory" / "galatea").resolve()


def test_home_expands_the_tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    path = write(tmp_path, "memory: {home: ~/tactful}\n")
    assert load_config(path, environ={}).memory.home == (tmp_path / "user" / "tactful").resolve()


# ---- plugins ---------------------------------------------------------------------------------


def test_plugins_disabled_is_read_as_written(tmp_path: Path) -> None:
    path = write(tmp_path, "plugins:\n  disabled: [threads, tactful_mastodon, my.plugin]\n")
    assert load_config(path, environ={}).plugins == PluginsConfig(
        ("threads", "tactful_mastodon", "my.plugin"))
    assert load_config(write(tmp_path, "plugins:\n"), environ={}).plugins == PluginsConfig(())
    assert Config().plugins.disabled == ()


@pytest.mark.parametrize(("text", "line", "key", "fragments"), [
    pytest.param("persona: {name: a}\nplugins:\n  disable: [x]\n", 3, "plugins.disable",
                 ["unknown key (expected one of: disabled)", "did you mean 'disabled'?"],
                 id="typo"),
    pytest.param("plugins:\n\n  disabled: x\n", 3, "plugins.disabled",
                 ["expected a list of plugin name", "found", "write a list, e.g. [x]"],
                 id="not-a-list"),
    pytest.param("plugins:\n  disabled:\n    - x\n    - 42\n", 4, "plugins.disabled[1]",
                 ["expected a plugin name", 'quote it if it is meant as text: "42"'],
                 id="number"),
    pytest.param("plugins:\n  disabled: ['a = b']\n", 2, "plugins.disabled[0]",
                 ["expected a plugin name", "left of ="], id="not-an-entry-point-name"),
    pytest.param("plugins: [x]\n", 1, "plugins", ["expected a mapping with keys disabled"],
                 id="a-list-for-the-section"),
    pytest.param("memory: {}\ndisabled: [x]\n", 2, "disabled",
                 ["unknown key", "did you mean 'plugins.disabled'?"], id="misplaced"),
])
def test_a_bad_plugins_section_names_file_line_and_key(
    tmp_path: Path, text: str, line: int, key: str, fragments: list[str]
) -> None:
    path = write(tmp_path, text)
    message = error_of(path)
    assert message.startswith(f"{path}:{line}: {key}: "), message
    for fragment in fragments:
        assert fragment in message, message


# ---- one line per error: file, line, key, expected, found ------------------------------------

# text, line, key path, then fragments that must all be in the message (expected, found, hint)
ERRORS = [
    pytest.param(
        "persona:\n  name: galatea\n\n  timzone: UTC\n",
        4,
        "persona.timzone",
        ["unknown key (expected one of: name, timezone, owners)", "did you mean 'timezone'?"],
        id="typo",
    ),
    pytest.param(
        "memory:\n  home: null\n\n\n\n\n  compact_after: fifty\n",
        7,
        "memory.compact_after",
        ['expected an integer, found string "fifty"'],
        id="word-for-integer",
    ),
    pytest.param(
        "memory:\n  keep_full: true\n",
        2,
        "memory.keep_full",
        ["expected an integer, found boolean true"],
        id="boolean-is-not-integer",
    ),
    pytest.param(
        "memory:\n  keep_full: 2.0\n",
        2,
        "memory.keep_full",
        ["expected an integer, found number 2.0"],
        id="float-is-not-integer",
    ),
    pytest.param(
        "memory:\n  keep_full: '20'\n",
        2,
        "memory.keep_full",
        ['expected an integer, found string "20"', "remove the quotes"],
        id="quoted-integer",
    ),
    pytest.param(
        "memory:\n  keep_full: 0\n",
        2,
        "memory.keep_full",
        ["expected an integer of at least 1, found integer 0"],
        id="below-minimum",
    ),
    pytest.param(
        "persona:\n  name: 42\n",
        2,
        "persona.name",
        ["expected a non-empty string, found integer 42", 'quote it if it is meant as text: "42"'],
        id="integer-is-not-text",
    ),
    pytest.param(
        "persona:\n  timezone: UTC\n  name:\n",
        3,
        "persona.name",
        ["expected a non-empty string, found nothing (null)", "delete the line"],
        id="empty-value",
    ),
    pytest.param(
        "platforms:\n  x:\n    dry_run: 'true'\n",
        3,
        "platforms.x.dry_run",
        ['expected true or false, found string "true"', "remove the quotes"],
        id="quoted-boolean",
    ),
    pytest.param(
        "- persona\n- memory\n",
        1,
        "top level",
        ["expected a mapping with keys persona, memory, platforms, responders, routines, "
         "engagement, companion, plugins, found a list"],
        id="top-level-list",
    ),
    pytest.param(
        "\npersona: galatea\n",
        2,
        "persona",
        ['expected a mapping with keys name, timezone, owners, found string "galatea"'],
        id="section-not-mapping",
    ),
    pytest.param(
        "timezone: UTC\n",
        1,
        "timezone",
        ["unknown key (expected one of: persona, memory, platforms, responders, routines, "
         "engagement, companion, plugins)", "'persona.timezone'"],
        id="key-in-wrong-section",
    ),
    pytest.param(
        "routines:\n  Reply X:\n    kind: batch-reply\n",
        2,
        "routines.Reply X",
        ["expected a name of lower-case letters, digits, - and _"],
        id="routine-name",
    ),
    pytest.param(
        "routines:\n  reply-x:\n    kind: batch-reply\n",
        3,
        "routines.reply-x.platform",
        ["a batch-reply routine needs a platform"],
        id="batch-without-platform",
    ),
    pytest.param(
        "routines:\n  nightly:\n    kind: sync-log\n    schedule: '30 25 * * *'\n",
        4,
        "routines.nightly.schedule",
        ["expected a valid cron schedule", "the hour field '25': 25 is outside 0-23"],
        id="bad-cron",
    ),
    pytest.param(
        "responders:\n  drafts:\n    kind: command\n",
        3,
        "responders.drafts.command",
        ["a command responder needs a command"],
        id="command-without-command",
    ),
    pytest.param(
        "platforms:\n  blusky: {}\n",
        2,
        "platforms.blusky",
        ["unknown key (expected one of: bluesky, facebook, instagram, telegram, threads, x)",
         "'bluesky'"],
        id="unknown-platform",
    ),
    pytest.param(
        "platforms:\n  x:\n    mode: companion\n",
        3,
        "platforms.x.mode",
        ["unknown key (expected one of: account, dry_run, base_url, limits, allow_private, "
         "timeout)",
         "only telegram has a mode"],
        id="mode-outside-telegram",
    ),
    pytest.param(
        "platforms:\n  telegram:\n    mode: compnion\n",
        3,
        "platforms.telegram.mode",
        ['expected one of: persona, companion, found string "compnion"', "'companion'"],
        id="bad-mode",
    ),
    pytest.param(
        "platforms:\n  bluesky:\n    base_url: ftp://pds.example.org\n",
        3,
        "platforms.bluesky.base_url",
        ["expected an http(s) URL", 'found string "ftp://pds.example.org"'],
        id="base-url-scheme",
    ),
    pytest.param(
        "platforms:\n  x:\n    account: galatea/main\n",
        3,
        "platforms.x.account",
        ['expected an account name without spaces or slashes, found string "galatea/main"'],
        id="account-with-slash",
    ),
    pytest.param(
        "persona:\n  owners:\n    - x:fine\n    - myspace:galatea\n",
        4,
        "persona.owners[1]",
        ['expected "platform:handle"', 'found string "myspace:galatea"'],
        id="owner-platform",
    ),
    pytest.param(
        "persona:\n  owners: [galatea_owner]\n",
        2,
        "persona.owners[0]",
        ['found string "galatea_owner"', 'e.g. "x:galatea_owner"'],
        id="owner-without-platform",
    ),
    pytest.param(
        "persona:\n  owners: ['x:']\n",
        2,
        "persona.owners[0]",
        ['expected "platform:handle"', 'found string "x:"'],
        id="owner-empty-handle",
    ),
    pytest.param(
        "persona:\n  owners: ['x:me@example.com', 'x:a..b']\n",
        2,
        "persona.owners[0]",
        ['expected "platform:handle"', 'found string "x:me@example.com"', "e-mail address"],
        id="owner-email-is-no-handle",
    ),
    pytest.param(
        "persona:\n  owners: x:galatea_owner\n",
        2,
        "persona.owners",
        ['expected a list of "platform:handle"', "write a list"],
        id="owners-not-a-list",
    ),
    pytest.param(
        "persona:\n  on: true\n",
        2,
        "persona",
        ["expected a key name (text), found boolean true", '"on":'],
        id="key-that-yaml-reads-as-boolean",
    ),
    pytest.param(
        "persona:\n  name: !!binary aGVsbG8=\n",
        2,
        "persona.name",
        ["YAML tags are not supported here, found !!binary"],
        id="explicit-tag",
    ),
    pytest.param(
        "persona:\n  name: 2024-02-30\n",
        2,
        "persona.name",
        ['cannot read "2024-02-30"', "quote it"],
        id="impossible-date",
    ),
]


@pytest.mark.parametrize(("text", "line", "key", "fragments"), ERRORS)
def test_errors_name_file_line_key_expected_and_found(
    tmp_path: Path, text: str, line: int, key: str, fragments: list[str]
) -> None:
    path = write(tmp_path, text)
    message = error_of(path)
    assert message.startswith(f"{path}:{line}: {key}: "), message
    for fragment in fragments:
        assert fragment in message


def test_the_message_names_the_file_as_found_in_the_working_directory(tmp_path: Path) -> None:
    write(tmp_path, "persona:\n  name: galatea\n\n  timzone: UTC\n")
    with pytest.raises(ConfigError) as info:
        load_config(environ={}, cwd=tmp_path)
    assert str(info.value) == (
        "tactful.yaml:4: persona.timzone: unknown key (expected one of: name, timezone, owners); "
        "did you mean 'timezone'?"
    )


def test_config_errors_are_bad_input_with_exit_code_2(tmp_path: Path) -> None:
    with pytest.raises(BadInput) as info:
        load_config(write(tmp_path, "nope: 1\n"), environ={})
    assert info.value.exit_code == 2


def test_a_duplicate_key_is_an_error_at_its_second_line(tmp_path: Path) -> None:
    path = write(tmp_path, "persona:\n  name: a\n  timezone: UTC\n  name: b\n")
    message = error_of(path)
    assert message.startswith(f"{path}:4: persona.name: duplicate key (first at line 2)")


def test_a_duplicate_section_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "memory: {}\npersona: {}\nmemory: {keep_full: 3}\n")
    assert error_of(path).startswith(f"{path}:3: memory: duplicate key (first at line 1)")


def test_tab_indentation_is_reported_with_its_line(tmp_path: Path, either_parser: str) -> None:
    path = write(tmp_path, "persona:\n  name: a\n\ttimezone: UTC\n")
    message = error_of(path)
    assert message.startswith(f"{path}:3: invalid YAML: ")
    assert "not tabs" in message


def test_an_unclosed_quote_is_reported(tmp_path: Path, either_parser: str) -> None:
    path = write(tmp_path, "persona:\n  name: 'galatea\n  timezone: UTC\n")
    message = error_of(path)
    assert message.startswith(f"{path}:4: invalid YAML: ")
    assert "(line 2)" in message  # where the quote opened
    assert "closing quote" in message


def test_bad_indentation_is_reported(tmp_path: Path, either_parser: str) -> None:
    path = write(tmp_path, "persona:\n  name: a\n   timezone: UTC\n")
    assert error_of(path).startswith(f"{path}:3: invalid YAML: ")


def test_two_documents_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "persona: {}\n---\nmemory: {}\n")
    message = error_of(path)
    assert message.startswith(f"{path}:2: invalid YAML: ")
    assert "'---'" in message


def test_a_control_character_is_reported_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "persona:\n  name: é\n  timezone: U\x07TC\n")
    message = error_of(path)
    assert message.startswith(f"{path}:3: invalid YAML: control character U+0007")


# ---- values with rules -------------------------------------------------------------------------


def test_a_bad_time_zone_names_the_key_and_suggests(tmp_path: Path) -> None:
    path = write(tmp_path, "persona:\n  timezone: America/New_Yrok\n")
    message = error_of(path)
    assert message.startswith(f"{path}:2: persona.timezone: expected an IANA time zone")
    assert 'found string "America/New_Yrok"' in message
    assert "did you mean 'America/New_York'?" in message


@pytest.mark.parametrize("zone", ["Mars/Olympus", "../../etc/passwd", "/etc/localtime", "EST 5"])
def test_time_zones_that_are_not_iana_names_are_refused(tmp_path: Path, zone: str) -> None:
    path = write(tmp_path, f"persona:\n  timezone: '{zone}'\n")
    assert error_of(path).startswith(f"{path}:2: persona.timezone: expected an IANA time zone")


@pytest.mark.parametrize(
    ("memory", "line", "key", "expected"),
    [
        ("compact_after: 20\n  keep_full: 20", 2, "compact_after", "greater than keep_full (20)"),
        ("keep_full: 5\n  compact_after: 4", 3, "compact_after", "greater than keep_full (5)"),
        ("keep_full: 50", 2, "keep_full", "less than compact_after (50)"),
    ],
)
def test_compact_after_must_exceed_keep_full(
    tmp_path: Path, memory: str, line: int, key: str, expected: str
) -> None:
    path = write(tmp_path, f"memory:\n  {memory}\n")
    message = error_of(path)
    assert message.startswith(f"{path}:{line}: memory.{key}: expected an integer {expected}")


def test_compact_after_just_above_keep_full_is_fine(tmp_path: Path) -> None:
    path = write(tmp_path, "memory: {compact_after: 21, keep_full: 20}\n")
    assert load_config(path, environ={}).memory == MemoryConfig(None, 21, 20)


# ---- secrets -----------------------------------------------------------------------------------

SECRET = "hunter2-do-not-print-me"


@pytest.mark.parametrize(
    ("text", "line", "key", "command"),
    [
        ("platforms:\n  x:\n    api_key: V", 3, "platforms.x.api_key", "set x api_key"),
        ("platforms:\n  x:\n    consumer_secret: V", 3, "platforms.x.consumer_secret", "set x "),
        ("platforms:\n  telegram:\n    token: V", 3, "platforms.telegram.token", "telegram token"),
        ("platforms:\n  bluesky: {password: V}", 2, "platforms.bluesky.password", "set bluesky "),
        ("platforms:\n  x: {accessToken: V}", 2, "platforms.x.accessToken", "set x access_token"),
        ("bearer: V", 1, "bearer", "set PLATFORM bearer"),
        ("persona:\n  owners:\n    - {client-secret: V}", 3, "persona.owners[0].client-secret", ""),
        ("anything:\n  deep:\n    apikey: V", 3, "anything.deep.apikey", "set PLATFORM apikey"),
    ],
)
def test_secrets_are_refused_anywhere_without_echoing_them(
    tmp_path: Path, text: str, line: int, key: str, command: str
) -> None:
    path = write(tmp_path, text.replace("V", SECRET) + "\n")
    message = error_of(path)
    assert message.startswith(f"{path}:{line}: {key}: ")
    assert "tactful credentials set " in message
    assert command in message
    assert SECRET not in message


def test_a_secret_is_reported_even_after_another_mistake(tmp_path: Path) -> None:
    path = write(tmp_path, "persona: {nmae: a}\nplatforms:\n  x: {access_token: " + SECRET + "}\n")
    message = error_of(path)
    assert message.startswith(f"{path}:3: platforms.x.access_token: ")
    assert SECRET not in message


def test_a_password_inside_base_url_is_refused_and_not_echoed(tmp_path: Path) -> None:
    path = write(tmp_path, f"platforms:\n  x:\n    base_url: https://me:{SECRET}@api.example.org\n")
    message = error_of(path)
    assert message.startswith(f"{path}:3: platforms.x.base_url: expected a URL without")
    assert SECRET not in message


@pytest.mark.parametrize("tail", [f"/v1?api_key={SECRET}", f"/v1#{SECRET}"])
def test_a_key_in_the_query_of_base_url_is_refused_and_not_echoed(tmp_path: Path,
                                                                  tail: str) -> None:
    path = write(tmp_path, f"responders:\n  llm:\n    kind: openai\n    model: m\n"
                           f"    base_url: http://127.0.0.1:9{tail}\n")
    message = error_of(path)
    assert message.startswith(f"{path}:5: responders.llm.base_url: expected a URL without a "
                              "query"), message
    assert SECRET not in message


@pytest.mark.parametrize(
    "key", ["max_tokens", "token_count", "token_url", "secretary", "keyboard", "passenger", ""]
)
def test_words_that_merely_contain_a_secret_word_are_not_secrets(key: str) -> None:
    assert not is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "token",
        "bot_token",
        "API_KEY",
        "apiKey",
        "x-api-key",
        "Password",
        "privateKey",
        "secret_key",
        "client_secrets",
        "accesstoken",
        "credentials",
    ],
)
def test_secret_key_spellings(key: str) -> None:
    assert is_secret_key(key)


# ---- files that are not config files -----------------------------------------------------------


def test_a_file_that_is_not_utf8_is_reported_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "tactful.yaml"
    path.write_bytes(b"persona:\n  name: caf\xe9\n")
    message = error_of(path)
    assert message == f"{path}:2: expected UTF-8 text, found byte 0xe9; save the file as UTF-8"


def test_a_utf16_file_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "tactful.yaml"
    path.write_bytes("persona: {}\n".encode("utf-16"))
    assert "found UTF-16; save the file as UTF-8" in error_of(path)


def test_a_folder_is_not_a_config_file(tmp_path: Path) -> None:
    (tmp_path / "tactful.yaml").mkdir()
    with pytest.raises(ConfigError, match=r"^tactful\.yaml: is a folder, not a file; point"):
        load_config(environ={}, cwd=tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "tactful.yaml")
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config(environ={}, cwd=tmp_path)


def test_a_huge_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "# padding\n" * (MAX_BYTES // 10 + 1))
    assert "too large for a config file" in error_of(path)


def test_alias_expansion_is_capped(tmp_path: Path) -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for this, previous in zip("bcdefghi", "abcdefgh", strict=True):
        lines.append(f"{this}: &{this} [{', '.join([f'*{previous}'] * 10)}]")
    path = write(tmp_path, "\n".join(lines) + "\n")  # a billion values once expanded
    # In a child process with a time and memory limit, so that without the cap this test fails
    # instead of taking the machine down with it.
    code = (
        "import resource, sys; from pathlib import Path\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from tactful.core.config.loader import load_config\n"
        "from tactful.core.errors import ConfigError\n"
        "try:\n"
        f"    load_config(Path({str(path)!r}), environ={{}})\n"
        "except ConfigError as exc:\n"
        "    print(exc)\n"
    )
    command = [sys.executable, "-c", code]
    result = subprocess.run(command, capture_output=True, text=True, timeout=20)
    assert result.returncode == 0, result.stderr[-500:]
    assert "the document expands to more than 10000 values" in result.stdout


def test_an_alias_loop_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "persona: &p\n  owners: [*p]\n")
    assert "an alias refers to the value that contains it" in error_of(path)


def test_deep_nesting_is_refused(tmp_path: Path, either_parser: str) -> None:
    path = write(tmp_path, "persona: " + "[" * 5000 + "]" * 5000 + "\n")
    assert "invalid YAML" in error_of(path) or "nested too deeply" in error_of(path)


# ---- anything at all ---------------------------------------------------------------------------

# Pieces of YAML and of tactful's own keys, so that random files reach the schema, not only the
# parser.
FRAGMENTS = st.sampled_from(
    [
        "\n", "  ", "    ", "\t", "- ", ": ", ":", "#", "'", '"', "[", "]", "{", "}", ",", "&a ",
        "*a", "<<: ", "!!int ", "!x ", "? ", "|", ">", "---", "...", "~", "null", "yes", "on",
        "0b_", "2024-02-30", "1e3", "-1", "50", "persona", "memory", "platforms", "name",
        "timezone", "owners", "home", "compact_after", "keep_full", "x", "telegram", "mode",
        "companion", "base_url", "http://h", "account", "dry_run", "token", "x:a", "UTC", "é",
        "\u2028", "\x85", "\ufeff", "\x00", "\\n",
    ]
)  # fmt: skip
CONFIG_TEXT = st.one_of(st.text(), st.lists(FRAGMENTS, max_size=40).map("".join))


def _loads_or_config_error(path: Path) -> None:
    try:
        config = load_config(path, environ={})
    except ConfigError as exc:
        message = str(exc)
        assert len(message.splitlines()) == 1, message
        assert message.startswith(str(path))
    else:
        assert isinstance(config, Config)


FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@settings(FUZZ, max_examples=300)
@given(text=CONFIG_TEXT)
def test_any_text_loads_or_raises_config_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_text(text, encoding="utf-8", newline="")
    _loads_or_config_error(path)


@settings(FUZZ, max_examples=100)
@given(data=st.binary())
def test_any_bytes_load_or_raise_config_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_bytes(data)
    _loads_or_config_error(path)


def test_reading_schedules_does_not_import_the_scheduler(tmp_path: Path) -> None:
    # `tactful check` reads the config too: APScheduler (a fifth of a second) stays out.
    code = ("import sys, pathlib; from tactful.core.config.loader import load_config; "
            f"load_config(pathlib.Path({str(EXAMPLE)!r}), environ={{}}); "
            "print('apscheduler' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False"]


@pytest.mark.parametrize("schedule", [
    "30 22 * * *", "*/15 9-17 * * 1-5", "0 0 1 jan *", "0 12 * * sun", "5,10 0-3/2 * * 7",
    "61 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 8", "* * * * */0",
    "5-1 * * * *", "* * * foo *", "a b c d e", "* * * *",
])
def test_the_config_check_agrees_with_the_scheduler(schedule: str) -> None:
    from tactful.core.schedule.cron import Cron, validate

    def accepted(check: object) -> bool:
        try:
            check(schedule)  # type: ignore[operator]
        except ValueError:
            return False
        return True

    assert accepted(validate) == accepted(lambda s: Cron(s, "UTC"))


def test_config_check_finds_what_a_file_names_but_nothing_provides(cli, tmp_path: Path) -> None:
    cases = {
        "routines:\n  r:\n    kind: teleport\n": "routines.r.kind: no routine kind 'teleport'",
        "routines:\n  r:\n    kind: batch-reply\n    platform: x\n    responder: ghost\n":
            "routines.r.responder: no responder 'ghost'",
        "companion:\n  responder: ghost\n": "companion.responder: no responder 'ghost'",
        "platforms:\n  telegram:\n    mode: companion\ncompanion:\n  prompt: missing.md\n":
            "companion.prompt: cannot read",
    }
    for text, message in cases.items():
        config = tmp_path / "tactful.yaml"
        config.write_text(text)
        result = cli("--config", str(config), "config", "check")
        assert result.code == 2, (text, result.out)
        assert message in result.err, (text, result.err)
        key = message.split(":")[0]
        line = _line_of(text, key)
        assert f"{config}:{line}: {key}:" in result.err, (text, result.err)
    config.write_text("routines:\n  r:\n    kind: batch-reply\n    platform: x\n"
                      "    responder: template\n")
    assert cli("--config", str(config), "config", "check").code == 0


def test_config_check_accepts_a_routine_platform_the_run_accepts(cli, tmp_path: Path,
                                                                 home: Path) -> None:
    # The run reads `platform: X` as x; the check must agree with it.
    config = tmp_path / "tactful.yaml"
    config.write_text("routines:\n  r:\n    kind: batch-reply\n    platform: X\n"
                      "    responder: template\n")
    (home / "people").mkdir(parents=True)
    run = cli("--config", str(config), "routine", "run", "r", "--dry-run")
    assert run.code == 0, run.err  # the routine itself is fine with it
    check = cli("--config", str(config), "config", "check")
    assert check.code == 0, check.err


def _line_of(text: str, key: str) -> int:
    """The line (from 1) a dotted key is written on, found by its last part's indentation."""
    parts = key.split(".")
    depth, number = 0, 0
    for number, raw in enumerate(text.splitlines(), 1):
        if raw.strip().startswith(f"{parts[depth]}:") and \
                len(raw) - len(raw.lstrip()) == 2 * depth:
            if depth == len(parts) - 1:
                return number
            depth += 1
    raise AssertionError(f"{key} not in {text!r}")


def test_config_check_names_the_line_of_a_routine_platform_without_adapter(
        cli, tmp_path: Path) -> None:
    config = write(tmp_path, "persona:\n  name: p\nroutines:\n  r:\n    kind: batch-reply\n"
                             "    responder: template\n    platform: nowhere\n")
    result = cli("--config", str(config), "config", "check")
    assert result.code == 2
    assert f"{config}:7: routines.r.platform: no adapter is installed for 'nowhere'" \
        in result.err


class _Echo:
    """A plugin that registers a responder kind of its own."""

    @hookimpl
    def register_responders(self, register: Any) -> None:
        register("echo", lambda settings: None)


def test_a_responder_kind_a_plugin_registers_is_accepted_by_the_loader(
        tmp_path: Path, plugin_host: Any) -> None:
    plugin_host.manager.register(_Echo(), name="echo-plugin")
    path = write(tmp_path, "responders:\n  mine:\n    kind: echo\n")
    assert load_config(path, environ={}).responders["mine"].kind == "echo"


def test_an_unknown_responder_kind_is_a_config_error_naming_the_line_and_the_known_kinds(
        tmp_path: Path, plugin_host: Any) -> None:
    plugin_host.manager.register(_Echo(), name="echo-plugin")
    path = write(tmp_path, "persona:\n  name: p\nresponders:\n  mine:\n    kind: ecko\n")
    message = error_of(path)
    assert message.startswith(f"{path}:5: responders.mine.kind: ")
    assert "command, echo, openai, template" in message
    assert "did you mean 'echo'?" in message


def test_a_config_of_built_in_responder_kinds_is_read_without_loading_plugins(
        tmp_path: Path, plugin_host: Any) -> None:
    path = write(tmp_path, "responders:\n  a:\n    kind: command\n    command: [cat]\n")
    load_config(path, environ={})
    assert not plugin_host.loaded


def test_a_responder_kind_of_a_disabled_plugin_is_refused(tmp_path: Path,
                                                          plugin_host: Any) -> None:
    plugin_host.manager.register(_Echo(), name="echo-plugin")
    path = write(tmp_path, "plugins:\n  disabled: [echo-plugin]\n"
                           "responders:\n  mine:\n    kind: echo\n")
    assert "responders.mine.kind" in error_of(path)


# ---- options and account rules the platforms declare ----------------------------------------

@pytest.mark.parametrize(("value", "hint"), [
    ("0", None), ("121", None), ('"5"', "remove the quotes"), ("true", "not numbers"),
])
def test_a_declared_platform_option_is_checked_with_file_and_line(
        tmp_path: Path, value: str, hint: str | None) -> None:
    path = write(tmp_path, f"persona:\n  name: p\nplatforms:\n  x:\n    timeout: {value}\n")
    message = error_of(path)
    assert message.startswith(f"{path}:5: platforms.x.timeout: expected a number "
                              "(seconds per request) more than 0 and at most 120"), message
    if hint:
        assert hint in message


def test_a_platform_option_reaches_the_adapter_with_the_declared_default_for_the_rest(
        tmp_path: Path) -> None:
    from tactful.core.plugins import host
    from tactful.core.send.adapters import adapter_for, settings_for

    path = write(tmp_path, "platforms:\n  telegram:\n    timeout: 2.5\n  x:\n    dry_run: true\n")
    config = load_config(path, environ={})
    assert config.platform("telegram").options == {"timeout": 2.5}
    assert settings_for("telegram", config).options == {"timeout": 2.5}
    assert settings_for("x", config).options == {"timeout": 10.0}  # declared default
    telegram = adapter_for("telegram", config, host())
    assert telegram.timeout == 2.5  # type: ignore[attr-defined]
    threads = adapter_for("threads", config, host())
    assert threads.timeout == 10.0  # type: ignore[attr-defined]


def test_a_platform_that_declares_no_options_has_none_and_refuses_an_option_key(
        tmp_path: Path) -> None:
    from tactful.core.memory.platforms import Platform
    from tactful.core.send.adapter import AdapterSettings

    assert Platform("plainplatform").options == ()
    settings = AdapterSettings(platform="plainplatform", account="a")
    with pytest.raises(Exception, match="does not declare"):
        settings.number("timeout")
    path = write(tmp_path, "platforms:\n  plainplatform:\n    timeout: 5\n")
    assert "platforms.plainplatform.timeout: unknown key" in error_of(path)


def test_an_option_may_not_take_the_name_of_a_common_key() -> None:
    from tactful.core.memory.platforms import Option

    with pytest.raises(ConfigError, match="other than"):
        Option("account", "x")


@pytest.mark.parametrize(("platform", "account", "fix"), [
    ("bluesky", "galatea", "full handle with its domain, e.g. galatea.bsky.social"),
    ("telegram", "'@galatea_bot'", "bot's username without the @, e.g. galatea_bot"),
])
def test_an_account_the_platform_cannot_use_is_refused_with_the_fix(
        tmp_path: Path, platform: str, account: str, fix: str) -> None:
    path = write(tmp_path,
                 f"platforms:\n  {platform}:\n    dry_run: true\n    account: {account}\n")
    message = error_of(path)
    assert message.startswith(f"{path}:4: platforms.{platform}.account: expected an account as "
                              f"{platform} needs it"), message
    assert fix in message


@pytest.mark.parametrize(("platform", "account"), [
    ("bluesky", "galatea.bsky.social"), ("bluesky", "did:plc:abc123"),
    ("bluesky", "ops@example.org"), ("telegram", "galatea_bot"), ("x", "@galatea"),
])
def test_an_account_in_the_platform_s_shape_is_accepted(
        tmp_path: Path, platform: str, account: str) -> None:
    path = write(tmp_path, f"platforms:\n  {platform}:\n    account: '{account}'\n")
    assert load_config(path, environ={}).platform(platform).account == account


# ---- time zones and cron lines ----------------------------------------------------------------

@pytest.mark.parametrize(("zone", "place"), [
    ("EST", "America/New_York"), ("MST", "America/Denver"), ("HST", "Pacific/Honolulu"),
    ("PST", "America/Los_Angeles"), ("CET", "Europe/Paris"), ("est", "America/New_York"),
])
def test_a_zone_abbreviation_is_refused_naming_the_zone_of_a_place(
        tmp_path: Path, zone: str, place: str) -> None:
    path = write(tmp_path, f"persona:\n  name: p\n  timezone: {zone}\n")
    message = error_of(path)
    assert message.startswith(f"{path}:3: persona.timezone: "), message
    assert "daylight saving" in message and f"e.g. {place}" in message


def test_an_omitted_zone_is_the_documented_default_and_config_check_says_so(
        cli, tmp_path: Path) -> None:
    path = write(tmp_path, "persona:\n  name: p\n")
    assert load_config(path, environ={}).persona.timezone == "America/New_York"
    result = cli("--config", str(path), "config", "check")
    assert result.code == 0, result.err
    assert ("time zone America/New_York (persona.timezone not set: the default "
            "America/New_York;") in result.out
    path.write_text("persona:\n  name: p\n  timezone: Europe/Amsterdam\n")
    assert "not set" not in cli("--config", str(path), "config", "check").out


@pytest.mark.parametrize("schedule", ["*/30 * * * *", "* * * * *", "*ab"])
def test_an_unquoted_cron_line_read_as_an_alias_says_to_quote_it(
        tmp_path: Path, schedule: str) -> None:
    path = write(tmp_path, f"routines:\n  r:\n    kind: sync-log\n    schedule: {schedule}\n")
    message = error_of(path)
    assert message.startswith(f"{path}:4: ")
    assert f'quote it, e.g. schedule: "{schedule}"' in message
