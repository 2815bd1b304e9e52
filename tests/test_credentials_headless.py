"""Credentials on a machine without a desktop keyring (docs/credentials.md): the encrypted file
backend, its key read without a prompt, under a real non-interactive process as cron or systemd
runs it (no terminal, standard input closed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from . import recording_adapter as platform

BACKEND = "tactful.core.send.keyring_backend.EncryptedFile"


def headless(*argv: str, env: dict[str, str], stdin: str | None = None,
             ) -> subprocess.CompletedProcess[str]:
    """`tactful ARGV` with no terminal: stdin a pipe (or closed), no TTY, a bare environment."""
    return subprocess.run([sys.executable, "-m", "tactful.core.cli", *argv], env=env,
                          input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60, check=False,
                          start_new_session=True)  # no controlling terminal to ask on


@pytest.fixture
def machine(tmp_path: Path, recorder: Path) -> dict[str, str]:
    """The environment of a service: the encrypted keyring and its key file, nothing else."""
    key = tmp_path / "keyring.key"
    key.write_text("correct horse battery staple\n")
    key.chmod(0o600)
    keep = ("PATH", "PYTHONPATH", "TACTFUL_HOME", "TACTFUL_TEST_PLATFORM", "XDG_DATA_HOME",
            "XDG_CONFIG_HOME", "HOME")
    env = {name: os.environ[name] for name in keep if name in os.environ}
    env.update(PYTHON_KEYRING_BACKEND=BACKEND, TACTFUL_KEYRING_KEY_FILE=str(key),
               TACTFUL_KEYRING_FILE=str(tmp_path / "secrets" / "keyring.enc"))
    return env


def test_a_send_under_cron_reads_its_credentials_from_the_encrypted_file(
        machine: dict[str, str], tmp_path: Path) -> None:
    for field, value in (("read_token", "r-secret-123"), ("post_token", "p-secret-456")):
        stored = headless("credentials", "set", "recorder", field, env=machine, stdin=value)
        assert stored.returncode == 0, stored.stderr
    sealed = (tmp_path / "secrets" / "keyring.enc").read_bytes()
    assert b"secret-123" not in sealed and b"secret-456" not in sealed
    assert oct((tmp_path / "secrets" / "keyring.enc").stat().st_mode & 0o777) == "0o600"
    platform.add_post("10", "alice", user_id="u-1")
    sent = headless("send", "recorder", "--reply-to", "10", "--text", "thanks!", env=machine)
    assert sent.returncode == 0, sent.stderr
    assert [s["text"] for s in platform.load_state()["sent"]] == ["thanks!"]
    assert "secret" not in sent.stdout + sent.stderr


def test_a_key_from_a_systemd_credential_opens_the_same_file(
        machine: dict[str, str], tmp_path: Path) -> None:
    assert headless("credentials", "set", "recorder", "read_token", env=machine,
                    stdin="r-token").returncode == 0
    assert headless("credentials", "set", "recorder", "post_token", env=machine,
                    stdin="p-token").returncode == 0
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "tactful-keyring-key").write_text("correct horse battery staple")
    service = {k: v for k, v in machine.items() if k != "TACTFUL_KEYRING_KEY_FILE"}
    service["CREDENTIALS_DIRECTORY"] = str(credentials)
    checked = headless("credentials", "check", "recorder", env=service)
    assert checked.returncode == 0, checked.stderr + checked.stdout


def test_a_wrong_key_is_a_clear_exit_2_and_nothing_is_sent(
        machine: dict[str, str], tmp_path: Path) -> None:
    assert headless("credentials", "set", "recorder", "read_token", env=machine,
                    stdin="r-token").returncode == 0
    (tmp_path / "keyring.key").write_text("another key entirely")
    platform.add_post("10", "alice")
    result = headless("send", "recorder", "--reply-to", "10", "--text", "hi", env=machine)
    assert result.returncode == 2, result.stderr
    assert "does not open" in result.stderr and "Traceback" not in result.stderr
    assert platform.load_state()["sent"] == []


def test_without_a_key_the_backend_is_never_chosen_by_itself(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tactful.core.send.keyring_backend import EncryptedFile

    for name in ("TACTFUL_KEYRING_KEY_FILE", "TACTFUL_KEYRING_KEY", "CREDENTIALS_DIRECTORY"):
        monkeypatch.delenv(name, raising=False)
    assert not EncryptedFile.viable
    monkeypatch.setenv("TACTFUL_KEYRING_KEY", "a key for CI")
    assert EncryptedFile.viable
