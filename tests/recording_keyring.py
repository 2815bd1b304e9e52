"""A real keyring backend for tests: a JSON store in a file, and a log of every access.

Selected like any backend, by `PYTHON_KEYRING_BACKEND=tests.recording_keyring.RecordingKeyring`
(child processes too, with the project root on PYTHONPATH) or `keyring.set_keyring(...)`.
The store and the log live at `$TACTFUL_TEST_KEYRING` (the log beside it, `.log`), so a test
can assert from outside a `tactful` process that nothing was read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


def _paths() -> tuple[Path, Path]:
    store = Path(os.environ["TACTFUL_TEST_KEYRING"])
    return store, store.with_suffix(".log")


class RecordingKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def _load(self) -> dict[str, str]:
        store, _ = _paths()
        return json.loads(store.read_text()) if store.exists() else {}

    def _record(self, op: str, service: str, username: str) -> None:
        _, log = _paths()
        with open(log, "a", encoding="utf-8") as out:
            out.write(json.dumps([op, service, username]) + "\n")

    def get_password(self, service: str, username: str) -> str | None:
        self._record("get", service, username)
        return self._load().get(f"{service}\x00{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        self._record("set", service, username)
        data = self._load()
        data[f"{service}\x00{username}"] = password
        _paths()[0].write_text(json.dumps(data))

    def delete_password(self, service: str, username: str) -> None:
        self._record("delete", service, username)
        data = self._load()
        if data.pop(f"{service}\x00{username}", None) is None:
            raise PasswordDeleteError(username)
        _paths()[0].write_text(json.dumps(data))


class BrokenKeyring(KeyringBackend):
    """A backend whose every call raises, as a locked or broken Secret Service does."""

    priority = 1  # type: ignore[assignment]

    def get_password(self, service: str, username: str) -> str | None:
        raise RuntimeError("the keyring daemon is not answering")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise RuntimeError("the keyring daemon is not answering")

    def delete_password(self, service: str, username: str) -> None:
        raise RuntimeError("the keyring daemon is not answering")


def accesses() -> list[tuple[str, str, str]]:
    """Every access so far: (op, service, username)."""
    _, log = _paths()
    if not log.exists():
        return []
    return [tuple(json.loads(line)) for line in log.read_text().splitlines()]  # type: ignore[misc]


def reads() -> list[str]:
    return [user for op, _, user in accesses() if op == "get"]


def store(platform: str, account: str, field: str, value: str) -> None:
    """Put a credential in without recording it as an access of the code under test."""
    path, _ = _paths()
    data = json.loads(path.read_text()) if path.exists() else {}
    data[f"tactful\x00{platform}/{account}/{field}"] = value
    path.write_text(json.dumps(data))
