"""The plugin host: entry points, broken plugins named, duplicates refused, docs complete."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tactful.core import plugins
from tactful.core.errors import ConfigError
from tactful.core.hookspecs import hookimpl

DOCS = Path(__file__).parent.parent / "docs" / "hooks.md"


def test_every_hook_has_a_section_in_the_docs() -> None:
    sections = set(re.findall(r"^## (\w+)$", DOCS.read_text(), re.MULTILINE))
    hooks = set(plugins.hook_names())
    assert hooks, "no hooks found: the test would prove nothing"
    assert hooks <= sections, f"undocumented hooks: {sorted(hooks - sections)}"
    assert sections <= hooks, f"documented hooks that do not exist: {sorted(sections - hooks)}"
    manager_hooks = {name for name in dir(plugins.host().manager.hook) if name.startswith("reg")}
    assert manager_hooks == hooks


def test_every_hook_hands_the_plugin_a_register_of_its_own_type_named_in_the_docs() -> None:
    """One typed `register` per hook: the spec's annotation is the hook's own Protocol, which
    has a call signature, and the hook's section in docs/hooks.md names it."""
    import inspect

    from tactful.core import hookspecs

    docs = DOCS.read_text()
    sections = dict(re.findall(r"^## (\w+)\n(.*?)(?=^## |\Z)", docs, re.MULTILINE | re.DOTALL))
    assert set(hookspecs.REGISTER_TYPES) == set(plugins.hook_names())
    for hook in hookspecs.HOOKS:
        typed = hookspecs.REGISTER_TYPES[hook.__name__]
        assert inspect.signature(hook).parameters["register"].annotation == typed.__name__
        call = inspect.signature(typed.__call__).parameters
        assert len(call) >= 3, f"{typed.__name__} declares no arguments of its own"
        assert f"hookspecs.{typed.__name__}`" in sections[hook.__name__], hook.__name__


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake installed distribution with two plugins, one of which cannot load."""
    dist = tmp_path / "fake_plugins-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugins\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[tactful]\ngood = good_plugin\nbroken = broken_plugin\n")
    (tmp_path / "good_plugin.py").write_text(textwrap.dedent("""
        from tactful.core.hookspecs import hookimpl

        @hookimpl
        def register_adapters(register):
            register("fakenet", lambda config: "an adapter")
    """))
    (tmp_path / "broken_plugin.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_broken_plugin_is_named_and_the_others_load(installed: Path) -> None:
    host = plugins.Host()
    adapters = host.collect("register_adapters")
    assert adapters["fakenet"][0] == "good"
    assert adapters["fakenet"][1](None) == "an adapter"
    assert len(host.load_errors) == 1
    assert "'broken'" in host.load_errors[0] and "boom at import" in host.load_errors[0]
    host.collect("register_adapters")
    assert len(host.load_errors) == 1  # loaded once


def test_a_duplicate_name_is_refused_naming_both_plugins() -> None:
    class First:
        @hookimpl
        def register_routines(self, register):  # type: ignore[no-untyped-def]
            register("nightly-sync", "first")

    class Second:
        @hookimpl
        def register_routines(self, register):  # type: ignore[no-untyped-def]
            register("nightly-sync", "second")

    host = plugins.Host(loaded=True)
    host.manager.register(First(), name="first")
    host.manager.register(Second(), name="second")
    with pytest.raises(ConfigError, match="'nightly-sync' is registered by both plugin"):
        host.collect("register_routines")


def test_check_and_card_never_make_the_host() -> None:
    probe = ("import sys; from tactful.core.cli.main import main; "
             "main(['check', 'x', 'someone']); main(['card', 'x', 'someone']); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "{'pluggy', 'tweepy', 'atproto', 'aiogram', 'httpx', 'keyring'} "
             "or m == 'tactful.core.plugins'))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    assert out == "[]"


# ---- disabling plugins by name -------------------------------------------------------------


@pytest.fixture
def two_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A fake installed distribution with the entry points `kept` and `dropped`, each a module of
    its own that, when imported, writes its name to a marker file and registers an adapter.
    Yields {entry-point name: module name}; the modules are forgotten afterwards."""
    suffix = tmp_path.name.replace("-", "_")[-24:]
    modules = {"kept": f"tactful_test_kept_{suffix}", "dropped": f"tactful_test_dropped_{suffix}"}
    site = tmp_path / "site"
    dist = site / "tactful_test_two-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tactful-test-two\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[tactful]\n" + "".join(f"{name} = {module}\n" for name, module in modules.items()))
    marker = tmp_path / "imported.txt"
    for name, module in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(f"""
            from pathlib import Path
            from tactful.core.hookspecs import hookimpl

            with Path({str(marker)!r}).open("a") as marker:
                marker.write({name!r} + "\\n")

            @hookimpl
            def register_adapters(register):
                register({name + "net"!r}, lambda config: {name!r})
        """))
    monkeypatch.syspath_prepend(str(site))
    yield modules
    for module in modules.values():
        sys.modules.pop(module, None)


def imported(tmp_path: Path) -> list[str]:
    marker = tmp_path / "imported.txt"
    return marker.read_text().split() if marker.exists() else []


@pytest.mark.parametrize("how", ["load(disabled=...)", "disable() then load()",
                                 "disable() then collect()"])
def test_a_disabled_plugin_is_never_imported(
    tmp_path: Path, two_plugins: dict[str, str], how: str
) -> None:
    from tactful.core.config.loader import load_config

    config_file = tmp_path / "tactful.yaml"
    config_file.write_text("plugins:\n  disabled: [dropped]\n")
    disabled = load_config(config_file, environ={}).plugins.disabled
    assert disabled == ("dropped",)

    host = plugins.Host()
    if how == "load(disabled=...)":
        host.load(disabled=disabled)
    elif how == "disable() then load()":
        host.disable(disabled)
        host.load()
    else:
        host.disable(disabled)
    adapters = host.collect("register_adapters")

    assert "droppednet" not in adapters and "keptnet" in adapters
    assert imported(tmp_path) == ["kept"]
    assert two_plugins["dropped"] not in sys.modules
    assert not host.manager.has_plugin("dropped") and host.manager.has_plugin("kept")
    assert host.load_errors == [] and host.load_warnings == []
    assert host.disabled == {"dropped"}

    # the same entry point, not disabled, is found and imported: the check above could fail
    other = plugins.Host()
    assert "droppednet" in other.collect("register_adapters")
    assert imported(tmp_path) == ["kept", "dropped"]


def test_a_disabled_broken_plugin_is_no_load_error(installed: Path) -> None:
    host = plugins.Host()
    host.load(disabled=["broken"])
    assert host.load_errors == []
    assert "fakenet" in host.collect("register_adapters")


def test_a_load_error_ends_with_how_to_fix_or_disable_it(installed: Path) -> None:
    (installed / "broken_plugin.py").write_text("raise RuntimeError('boom\\n  at import')\n")
    host = plugins.Host()
    host.load()
    [error] = host.load_errors
    assert error.startswith("plugin 'broken' (broken_plugin) failed to load: "
                            "RuntimeError: boom at import; ")
    assert error.endswith("fix or uninstall it, or disable it with "
                          "`plugins: {disabled: [broken]}` in the config")


@pytest.mark.parametrize("name", ["x", "tactful_mastodon", "off", "No", "42", "a:b", "-x", "é"])
def test_the_disable_hint_is_yaml_that_reads_back_as_the_name(tmp_path: Path, name: str) -> None:
    from tactful.core.config.loader import load_config

    hint = plugins.disable_hint(name)
    assert hint.startswith("`") and hint.endswith("`")
    config_file = tmp_path / "tactful.yaml"
    config_file.write_text(hint.strip("`") + "\n", encoding="utf-8")
    assert load_config(config_file, environ={}).plugins.disabled == (name,)


def test_a_disabled_name_no_plugin_has_is_a_warning_not_an_error(
    tmp_path: Path, two_plugins: dict[str, str]
) -> None:
    host = plugins.Host()
    host.load(disabled=["kep", "zzz-nothing-like-it"])
    assert host.load_errors == []
    assert len(host.load_warnings) == 2
    kep, nothing = host.load_warnings
    assert kep.startswith("plugins.disabled names 'kep', but no installed plugin has that name")
    assert "did you mean 'kept'?" in kep
    assert "'zzz-nothing-like-it'" in nothing and "did you mean" not in nothing
    assert "installed: " in nothing and "kept" in nothing and "dropped" in nothing
    assert sorted(imported(tmp_path)) == ["dropped", "kept"]  # nothing real was disabled


def test_disabling_a_plugin_already_loaded_unregisters_it_and_says_so(installed: Path) -> None:
    host = plugins.Host()
    host.load()
    errors = host.load_errors  # a gate may hold this very list
    assert [e for e in errors if "'broken'" in e] and host.manager.has_plugin("good")
    host.load(disabled=[])  # nothing new: nothing happens
    assert host.load_warnings == []

    host.disable(["good", "broken", "not-installed"])
    assert host.load_errors is errors and errors == []
    assert not host.manager.has_plugin("good")
    assert "fakenet" not in host.collect("register_adapters")
    assert len(host.load_warnings) == 3
    late, unknown = host.load_warnings[:2], host.load_warnings[2]
    assert all("was loaded before plugins.disabled named it" in w for w in late)
    assert "'not-installed'" in unknown and "no installed plugin has that name" in unknown


def test_a_disabled_name_cannot_be_registered_by_hand() -> None:
    class Impostor:
        @hookimpl
        def register_routines(self, register):  # type: ignore[no-untyped-def]
            register("nightly-sync", "impostor")

    host = plugins.Host(loaded=True)
    host.disable(["impostor"])
    host.manager.register(Impostor(), name="impostor")
    assert host.collect("register_routines") == {}


def test_every_hook_is_called_by_tactful() -> None:
    """A hook declared but never called is a promise to plugin authors that nothing keeps."""
    from tactful.core import hookspecs

    root = Path(__file__).resolve().parent.parent
    sources = "\n".join(p.read_text(encoding="utf-8")
                        for folder in ("core", "routines", "adapters", "testing")
                        for p in (root / folder).rglob("*.py"))
    never = [hook.__name__ for hook in hookspecs.HOOKS
             if f'collect("{hook.__name__}")' not in sources]
    assert never == []


class _Hello:
    @hookimpl
    def register_commands(self, register):  # type: ignore[no-untyped-def]
        def configure(parser) -> None:  # type: ignore[no-untyped-def]
            parser.add_argument("--name", default="world")

        def run(context, args) -> int:  # type: ignore[no-untyped-def]
            print(f"hello {args.name} from {context.home.root.name}")
            return 7

        register("hello", "say hello", configure, run)


def test_a_command_a_plugin_registers_runs_through_the_host(
        cli, plugin_host: plugins.Host, tmp_path: Path) -> None:
    plugin_host.load()
    plugin_host.manager.register(_Hello(), name="hello-plugin")
    result = cli("--home", str(tmp_path / "myhome"), "hello", "--name", "ada")
    assert result.code == 7, result.err
    assert result.out.strip() == "hello ada from myhome"


def test_a_plugin_command_cannot_take_a_built_in_name(cli, plugin_host: plugins.Host) -> None:
    class _Check:
        @hookimpl
        def register_commands(self, register):  # type: ignore[no-untyped-def]
            register("check", "shadow", lambda parser: None, lambda context, args: 0)
            register("shadowing", "a command of its own", lambda parser: None,
                     lambda context, args: 0)

    plugin_host.load()
    plugin_host.manager.register(_Check(), name="check-plugin")
    result = cli("shadowing")
    assert result.code == 2 and "already has" in result.err


def test_plugins_lists_what_loaded_from_where_and_what_failed(cli, installed: Path) -> None:
    import json

    result = cli("plugins", "--json")
    assert result.code == 4  # a plugin that failed to load stops every send: said here too
    listed = {p["name"]: p for p in json.loads(result.out)["plugins"]}
    assert listed["x"]["loaded"] and listed["x"]["registers"]["adapters"] == ["x"]
    assert listed["good"]["from"] == "good_plugin"
    assert listed["good"]["registers"] == {"adapters": ["fakenet"]}
    assert listed["broken"]["loaded"] is False
    assert any("'broken'" in p for p in json.loads(result.out)["problems"])
    text = cli("plugins")
    assert "good (good_plugin) — loaded — adapters: fakenet" in text.out
