"""Credentials live in the keyring, never in YAML, argv or logs (docs/credentials.md).

Service `tactful`, user name `<platform>/<account>/<field>`. `keyring` is imported here, on
first use, so that nothing on a refused send (or in `check` and `card`) ever touches it.
Every failure of the keyring becomes a one-line BadInput (exit 2) that says how to fix it;
no message ever carries a secret.
"""

from __future__ import annotations

from collections.abc import Iterable

from tactful.core.errors import BadInput, MissingCredential

SERVICE = "tactful"
DEFAULT_ACCOUNT = "default"

_NO_BACKEND = (
    "no usable keyring backend on this machine ({detail}); configure one: a desktop Secret "
    "Service (GNOME Keyring, KWallet), or on a server tactful's encrypted file: set "
    "TACTFUL_KEYRING_KEY_FILE to a file holding its key (or a systemd credential "
    "tactful-keyring-key) — see docs/credentials.md"
)


def user_name(platform: str, account: str, field: str) -> str:
    return f"{platform}/{account}/{field}"


def set_command(platform: str, field: str, account: str, *, always_account: bool = False) -> str:
    where = "" if account == DEFAULT_ACCOUNT and not always_account else f" --account {account}"
    return f"tactful credentials set {platform} {field}{where}"


def _keyring_failed(exc: Exception) -> BadInput:
    from keyring.errors import NoKeyringError

    detail = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no detail'}"
    if isinstance(exc, NoKeyringError):
        return BadInput(_NO_BACKEND.format(detail=detail))
    return BadInput(f"the keyring failed ({detail}); unlock it or fix its backend, then retry "
                    "(PYTHON_KEYRING_BACKEND chooses one)")


def get(platform: str, account: str, field: str) -> str | None:
    import keyring

    try:
        value = keyring.get_password(SERVICE, user_name(platform, account, field))
    except Exception as exc:  # noqa: BLE001 — any backend failure is the keyring's, told plainly
        raise _keyring_failed(exc) from None
    return value or None


def read(platform: str, account: str, fields: Iterable[str]) -> dict[str, str]:
    """Every field, or MissingCredential naming the first one absent and how to store it."""
    found: dict[str, str] = {}
    for field in fields:
        value = get(platform, account, field)
        if value is None:
            raise MissingCredential(
                f"{platform}: no credential {field!r} for account {account!r} in the keyring; "
                f"store it with: {set_command(platform, field, account)}")
        found[field] = value
    return found


def store(platform: str, account: str, field: str, value: str) -> None:
    import keyring

    try:
        keyring.set_password(SERVICE, user_name(platform, account, field), value)
    except Exception as exc:  # noqa: BLE001
        raise _keyring_failed(exc) from None


def delete(platform: str, account: str, field: str) -> bool:
    """Remove one field; False when nothing was stored under it."""
    import keyring
    from keyring.errors import PasswordDeleteError

    name = user_name(platform, account, field)
    try:
        if keyring.get_password(SERVICE, name) is None:
            return False
        keyring.delete_password(SERVICE, name)
    except PasswordDeleteError:
        return False
    except Exception as exc:  # noqa: BLE001 — any backend failure is the keyring's, told plainly
        raise _keyring_failed(exc) from None
    return True
