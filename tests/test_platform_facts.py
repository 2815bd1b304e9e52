"""The table of platform facts (core/memory/platforms.py): the static entry points that `check`
and `card` read without loading a plugin, and what the plugins register when they load.

Each test installs a fake distribution on PYTHONPATH and runs the real command line in a
process of its own: the static table is read once per process, as in real use.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TACTFUL = str(Path(sys.executable).parent / "tactful")


def install(folder: Path, *, table: dict[str, str], plugin: str) -> None:
    """A distribution `fake-facts` with static entries `table` (name -> object reference) and
    one plugin `facts` whose module is `plugin`'s text."""
    dist = folder / "fake_facts-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-facts\nVersion: 0.1\n")
    entries = "".join(f"{name} = {ref}\n" for name, ref in table.items())
    (dist / "entry_points.txt").write_text(
        f"[tactful]\nfacts = facts_plugin\n\n[tactful.platforms]\n{entries}")
    (folder / "facts_plugin.py").write_text(
        "from tactful.core.hookspecs import hookimpl\n"
        "from tactful.core.memory.platforms import Platform\n" + textwrap.dedent(plugin))
    (folder / "facts_platform.py").write_text(
        "from tactful.core.memory.platforms import Platform\n"
        "GOOD = Platform('goodnet', numeric_ids=True)\n")
    (folder / "broken_platform.py").write_text("raise RuntimeError('boom in the table')\n")


def run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (folder / "home" / "people").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TACTFUL_", "PYTHON"))}
    env.update(PYTHONPATH=str(folder), TACTFUL_HOME=str(folder / "home"),
               XDG_CONFIG_HOME=str(folder / "xdg"))
    return subprocess.run([TACTFUL, *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=60, check=False)


ADAPTERS = """
@hookimpl
def register_adapters(register):
    register("goodnet", lambda settings: None)
    register("hooknet", lambda settings: None)
"""


def test_facts_a_plugin_registers_against_the_static_table_are_refused_naming_both(
        tmp_path: Path) -> None:
    install(tmp_path, table={"goodnet": "facts_platform:GOOD"}, plugin=ADAPTERS + """
@hookimpl
def register_platforms(register):
    register("goodnet", Platform("goodnet"))  # numeric_ids left out: not the table's facts
""")
    done = run(tmp_path, "config", "check")
    assert done.returncode == 2, done.stderr
    assert "platform 'goodnet' is declared by distribution fake_facts and, differently, by " \
           "plugin 'facts'" in done.stderr


def test_an_adapter_whose_plugin_declares_no_facts_keeps_the_static_table_s(
        tmp_path: Path) -> None:
    install(tmp_path, table={"goodnet": "facts_platform:GOOD"}, plugin=ADAPTERS)
    assert run(tmp_path, "config", "check").returncode == 0
    # numeric ids from the table, with the plugins loaded (config check) or not (check)
    assert run(tmp_path, "check", "goodnet", "0700").stdout.startswith("goodnet/@700:")
    remembered = run(tmp_path, "remember", "goodnet", "0700", "--kind", "follow")
    assert remembered.returncode == 0, remembered.stderr
    assert (tmp_path / "home" / "people" / "goodnet" / "700.md").is_file()


def test_a_platform_known_only_through_the_hook_works_with_a_warning(tmp_path: Path) -> None:
    install(tmp_path, table={}, plugin=ADAPTERS + """
@hookimpl
def register_platforms(register):
    register("hooknet", Platform("hooknet", numeric_ids=True))
""")
    checked = run(tmp_path, "config", "check")
    assert checked.returncode == 0, checked.stderr
    assert "declares the platform 'hooknet' only through register_platforms" in checked.stderr
    assert "tactful.platforms" in checked.stderr  # the fix
    # check finds it through the plugins, but without its facts (documented in docs/hooks.md)
    found = run(tmp_path, "check", "hooknet", "0700")
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith("hooknet/@0700:")


def test_a_broken_static_entry_is_named_and_the_others_still_work(tmp_path: Path) -> None:
    install(tmp_path, table={"brokennet": "broken_platform:PLATFORM",
                             "goodnet": "facts_platform:GOOD"}, plugin=ADAPTERS)
    broken = run(tmp_path, "check", "brokennet", "ada")
    assert broken.returncode == 2
    assert "unknown platform 'brokennet'" in broken.stderr
    assert "entry 'brokennet' (broken_platform:PLATFORM) of fake_facts failed to load: " \
           "RuntimeError: boom in the table" in broken.stderr
    for platform, handle in (("goodnet", "700"), ("x", "ada")):
        fine = run(tmp_path, "check", platform, handle)
        assert fine.returncode == 0, fine.stderr
        assert fine.stdout.startswith(f"{platform}/@{handle}:")


@pytest.mark.parametrize("value", ["'not a platform'", "Platform('othernet')"])
def test_a_static_entry_that_is_not_its_platform_is_named(tmp_path: Path, value: str) -> None:
    install(tmp_path, table={"wrongnet": "wrong_platform:PLATFORM"}, plugin=ADAPTERS)
    (tmp_path / "wrong_platform.py").write_text(
        f"from tactful.core.memory.platforms import Platform\nPLATFORM = {value}\n")
    done = run(tmp_path, "check", "wrongnet", "ada")
    assert done.returncode == 2
    assert "is not the Platform named 'wrongnet'" in done.stderr
