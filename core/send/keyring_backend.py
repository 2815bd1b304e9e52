"""A keyring backend for machines with no desktop keyring: one encrypted file, its key outside it.

`tactful run` under systemd or cron has no one to type a password, and the released
`keyrings.cryptfile` asks for one on the terminal even when an environment variable is set.
This backend reads its key without asking, from the first of:

1. `$CREDENTIALS_DIRECTORY/tactful-keyring-key` — systemd's `LoadCredential=` or
   `LoadCredentialEncrypted=` (the key then lives encrypted by systemd-creds, readable only by
   the service, never in its environment);
2. the file named by `$TACTFUL_KEYRING_KEY_FILE` (for cron: a file only the user can read);
3. `$TACTFUL_KEYRING_KEY` (for CI; an environment is visible to the user's other processes).

The key is a passphrase; scrypt with a per-file salt turns it into a Fernet key (AES-128-CBC
with HMAC-SHA256, from the `cryptography` package). The file (`$TACTFUL_KEYRING_FILE`, else
`keyring.enc` in the user data folder) holds the salt and one token: the whole store is
re-encrypted and replaced atomically on every change, with mode 0600. Without a key this
backend is not viable, so keyring never picks it by accident; with one it is chosen ahead of
the "fail" backend on a headless machine, or explicitly with
`PYTHON_KEYRING_BACKEND=tactful.core.send.keyring_backend.EncryptedFile` (docs/credentials.md).
"""

from __future__ import annotations

import base64
import functools
import json
import os
from pathlib import Path
from typing import Any

from keyring.backend import KeyringBackend
from keyring.compat import properties
from keyring.errors import InitError, KeyringLocked, PasswordDeleteError

from tactful.core.memory.atomic import write_atomic

KEY_NAME = "tactful-keyring-key"
_SCRYPT = {"n": 2**15, "r": 8, "p": 1}


def key_source() -> tuple[str, str] | None:
    """(where, passphrase) from the first configured source, or None."""
    directory = os.environ.get("CREDENTIALS_DIRECTORY")
    if directory and (Path(directory) / KEY_NAME).is_file():
        path = Path(directory) / KEY_NAME
        return f"systemd credential {path}", path.read_text(encoding="utf-8").strip()
    named = os.environ.get("TACTFUL_KEYRING_KEY_FILE")
    if named:
        try:
            return f"key file {named}", Path(named).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise InitError(f"TACTFUL_KEYRING_KEY_FILE={named} cannot be read "
                            f"({exc.strerror}); point it at the key file") from None
    value = os.environ.get("TACTFUL_KEYRING_KEY")
    if value:
        return "$TACTFUL_KEYRING_KEY", value.strip()
    return None


def store_path() -> Path:
    named = os.environ.get("TACTFUL_KEYRING_FILE")
    if named:
        return Path(named)
    from platformdirs import user_data_dir

    return Path(user_data_dir("tactful", appauthor=False)) / "keyring.enc"


class EncryptedFile(KeyringBackend):
    """Every secret in one encrypted file, unlocked by a key that is never typed."""

    @properties.classproperty
    def priority(cls) -> float:
        if key_source() is None:
            raise RuntimeError("no key configured (CREDENTIALS_DIRECTORY, "
                               "TACTFUL_KEYRING_KEY_FILE or TACTFUL_KEYRING_KEY)")
        return 0.5  # above "fail", below a desktop keyring

    # ---- the keyring API -----------------------------------------------------------------

    def get_password(self, service: str, username: str) -> str | None:
        value = self._load().get(_entry(service, username))
        return value if isinstance(value, str) else None

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = self._load()
        entries[_entry(service, username)] = password
        self._save(entries)

    def delete_password(self, service: str, username: str) -> None:
        entries = self._load()
        if entries.pop(_entry(service, username), None) is None:
            raise PasswordDeleteError(f"no stored credential {username!r}")
        self._save(entries)

    # ---- the file ------------------------------------------------------------------------

    def _fernet(self, salt: bytes) -> Any:
        from cryptography.fernet import Fernet

        source = key_source()
        if source is None or not source[1]:
            raise KeyringLocked("no key for tactful's encrypted keyring file: set "
                                "TACTFUL_KEYRING_KEY_FILE (or a systemd credential "
                                f"{KEY_NAME}); see docs/credentials.md")
        return Fernet(_derive(source[1], salt))

    def _load(self) -> dict[str, str]:
        from cryptography.fernet import InvalidToken

        path = store_path()
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            salt = base64.b64decode(stored["salt"])
            token = stored["data"].encode("ascii")
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InitError(f"{path} is not a tactful keyring file ({type(exc).__name__}); "
                            "move it away to start a new one") from None
        try:
            entries = json.loads(self._fernet(salt).decrypt(token))
        except InvalidToken:
            where = key_source()
            raise KeyringLocked(f"the key from {where[0] if where else 'nowhere'} does not "
                                f"open {path}: it was written with another key") from None
        return {str(k): str(v) for k, v in entries.items()}

    def _save(self, entries: dict[str, str]) -> None:
        path = store_path()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        salt = os.urandom(16)
        token = self._fernet(salt).encrypt(json.dumps(entries).encode("utf-8"))
        body = json.dumps({"version": 1, "salt": base64.b64encode(salt).decode("ascii"),
                           "data": token.decode("ascii")})
        write_atomic(path, body)  # a temp file of mode 0600 (mkstemp), fsynced, replaced


@functools.lru_cache(maxsize=4)
def _derive(passphrase: str, salt: bytes) -> bytes:
    # scrypt is slow on purpose; a send reads several fields from the same file.
    from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

    key = Scrypt(salt=salt, length=32, **_SCRYPT).derive(passphrase.encode("utf-8"))
    return base64.urlsafe_b64encode(key)


def _entry(service: str, username: str) -> str:
    return f"{service}\x1f{username}"
