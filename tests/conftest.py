"""Shared fixtures: every test gets its own home and config in tmp_path, never the user's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tactful.core import plugins
from tactful.core.cli.main import main


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may read or write the real user's home, config or clock."""
    monkeypatch.setenv("TACTFUL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TACTFUL_CONFIG", raising=False)
    monkeypatch.delenv("TACTFUL_NOW", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def new_york(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config whose persona keeps New York time, written out, for tests whose expected times
    are in ET: they hold whatever the default zone is (docs/scheduling.md)."""
    config = tmp_path / "new-york.yaml"
    config.write_text("persona:\n  timezone: America/New_York\n", encoding="utf-8")
    monkeypatch.setenv("TACTFUL_CONFIG", str(config))
    return config


@pytest.fixture(autouse=True)
def plugin_host() -> Iterator[plugins.Host]:
    """Every test has a plugin host of its own, made through the public `plugins.using`: what
    a test installs (an entry point on sys.path) or registers with `host.manager.register`
    is loaded into that host only, and the host before is put back afterwards."""
    with plugins.using() as host:
        yield host


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run tactful in this process, as the command line would, and capture what it says."""

    def run(*argv: str) -> Result:
        capsys.readouterr()
        code = main(list(argv))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


# A batch-reply routine on the `recorder` plugin platform (tests/recording_adapter.py); format it
# with max_per_run.
BATCH_CONFIG = """\
persona: {{name: galatea, timezone: America/New_York}}
routines:
  reply:
    kind: batch-reply
    platform: recorder
    responder: template
    max_per_run: {max_per_run}
    pause: 0
"""

# An openai responder whose endpoint is down: nothing listens on port 9.
OPENAI_DOWN = "kind: openai\nbase_url: http://127.0.0.1:9/v1\nmodel: local\ntimeout: 5"


def command_responder(script: Path) -> str:
    """A responder that runs `script` with this Python: the prompt on stdin, the draft out."""
    return f"kind: command\ncommand: [{sys.executable}, {script}]\ntimeout: 20"


def batch_drafting_with(responder: str, max_per_run: int = 10) -> str:
    """BATCH_CONFIG whose routine drafts with the responder `drafts`, which `responder` describes
    (its YAML keys, one a line: `command_responder(...)`, `OPENAI_DOWN`)."""
    body = "".join(f"    {line}\n" for line in responder.splitlines())
    return (BATCH_CONFIG.format(max_per_run=max_per_run).replace("responder: template",
                                                                 "responder: drafts")
            + "responders:\n  drafts:\n" + body)


def run_process(*argv: str, env: dict[str, str] | None = None,
                timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the installed `tactful` in a real process."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "tactful.core.cli", *argv], env=full_env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root with its bytes: to prove that nothing was written or changed."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture
def read_only() -> Iterator[object]:
    """Make a folder tree unwritable even for root (chattr +i), and undo it afterwards."""
    frozen: list[Path] = []

    def freeze(root: Path) -> None:
        if os.geteuid() == 0:
            chattr = shutil.which("chattr")
            assert chattr, "chattr is needed to make a folder read-only for root"
            subprocess.run([chattr, "-R", "+i", str(root)], check=True)
        else:
            for path in [root, *root.rglob("*")]:
                path.chmod(path.stat().st_mode & ~0o222)
        frozen.append(root)
        probe = root / "probe"
        with pytest.raises(OSError):
            probe.write_text("x")

    yield freeze
    for root in frozen:
        if os.geteuid() == 0:
            subprocess.run([shutil.which("chattr") or "/usr/bin/chattr", "-R", "-i", str(root)],
                           check=False)
        else:
            for path in [root, *root.rglob("*")]:
                path.chmod(path.stat().st_mode | 0o200)


@pytest.fixture
def keyring_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The recording keyring, in this process and in every `tactful` process a test starts."""
    import keyring

    from .recording_keyring import RecordingKeyring

    store = tmp_path / "keyring.json"
    monkeypatch.setenv("TACTFUL_TEST_KEYRING", str(store))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "tests.recording_keyring.RecordingKeyring")
    root = str(Path(__file__).resolve().parent.parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p))
    previous = keyring.get_keyring()
    keyring.set_keyring(RecordingKeyring())
    yield store
    keyring.set_keyring(previous)


@pytest.fixture
def recorder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyring_log: Path) -> Path:
    """The `recorder` adapter plugin installed as a third-party one, in-process and for child
    processes, its credentials stored, and a memory home that exists. Returns the platform
    file."""
    from . import recording_keyring

    site = tmp_path / "site"
    dist = site / "tactful_recorder-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tactful-recorder\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[tactful]\nrecorder = tests.recording_adapter\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ["PYTHONPATH"]]))
    platform = tmp_path / "platform.json"
    monkeypatch.setenv("TACTFUL_TEST_PLATFORM", str(platform))
    recording_keyring.store("recorder", "default", "read_token", "r-token")
    recording_keyring.store("recorder", "default", "post_token", "p-token")
    (tmp_path / "home" / "people").mkdir(parents=True)
    return platform


@pytest.fixture
def batch_config(tmp_path: Path, recorder: Path) -> Path:
    """A config file with the batch-reply routine `reply` on the recorder platform."""
    path = tmp_path / "tactful.yaml"
    path.write_text(BATCH_CONFIG.format(max_per_run=10))
    return path


def _batch_against(emulator: Any, platform: str, tmp_path: Path) -> Path:
    """A config that points the platform's adapter at the emulator, with the batch-reply routine
    `reply` on that platform; and a memory home that exists."""
    config = tmp_path / "tactful.yaml"
    config.write_text(
        BATCH_CONFIG.format(max_per_run=10).replace("platform: recorder", f"platform: {platform}")
        + f"platforms:\n  {platform}:\n    account: {emulator.persona}\n"
        f"    base_url: {emulator.base_url}\n"
        # Telegram posts here arrive in private chats: allowed for these tests (the default,
        # public interactions only, is tested on its own).
        + ("    allow_private: true\n" if platform == "telegram" else ""))
    (tmp_path / "home" / "people").mkdir(parents=True, exist_ok=True)
    return config


@pytest.fixture
def bluesky_emulator(tmp_path: Path, keyring_log: Path) -> Iterator[Any]:
    """The Bluesky emulator on loopback, its app password in the recording keyring; its
    `config` is a config file that points the bluesky adapter at it (`_batch_against`)."""
    from tactful.adapters.bluesky.emulator import BlueskyEmulator

    from . import recording_keyring

    with BlueskyEmulator() as emulator:
        recording_keyring.store("bluesky", emulator.persona, "app_password", "app-pass")
        emulator.config = _batch_against(emulator, "bluesky", tmp_path)
        yield emulator


@pytest.fixture
def telegram_emulator(tmp_path: Path, keyring_log: Path) -> Iterator[Any]:
    """The Telegram Bot API emulator on loopback, its token in the recording keyring; its
    `config` is a config file that points the telegram adapter at it (`_batch_against`)."""
    from tactful.adapters.telegram.emulator import TelegramEmulator

    from . import recording_keyring

    with TelegramEmulator() as emulator:
        recording_keyring.store("telegram", emulator.persona, "token", emulator.token)
        emulator.config = _batch_against(emulator, "telegram", tmp_path)
        yield emulator
