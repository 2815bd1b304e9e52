"""Handles and platforms: the only names that ever become paths under the home.

A handle is normalized (one leading '@' dropped, lower-cased) and must then consist of
a-z 0-9 . _ - only. Everything else is refused before anything is written, so no handle can
name a path outside `people/<platform>/`, a hidden file, or an e-mail address.
"""

from __future__ import annotations

import re

from tactful.core.errors import BadInput
from tactful.core.memory import platforms
from tactful.core.memory.platforms import PLATFORM_NAME

__all__ = ["MAX_HANDLE_LENGTH", "PLATFORM_NAME", "canonical_ref", "normalize_handle",
           "normalize_id", "normalize_platform", "numeric_ids", "split_ref"]

# Bluesky handles are domain names (at most 253 characters), but `<handle>.md` must fit a file
# name (255 bytes): 252 is the most a handle can be and still have a file.
MAX_HANDLE_LENGTH = 252

_ALLOWED = re.compile(r"[a-z0-9._-]+")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _shown(raw: str) -> str:
    """A handle as it may safely appear in a one-line message: escaped and cut short."""
    text = raw if len(raw) <= 40 else raw[:40] + "…"
    return repr(text)


def normalize_platform(raw: str, known: tuple[str, ...] | None = None) -> str:
    """A platform name an installed adapter plugin declares (memory's registry, `platforms`).

    The plugins themselves are asked only about a name the static table does not declare, so
    `check x ...` never loads them.
    """
    platform = raw.strip().lower()
    if known is None:
        if platforms.get(platform, ask_plugins=True) is not None:
            return platform
        known = platforms.names(ask_plugins=True)
    if platform not in known:
        # a static entry of that name that could not be loaded is the likely cause: say so
        broken = next((p for p in platforms.problems() if f" entry {platform!r} " in p), "")
        raise BadInput(
            f"unknown platform {_shown(raw)}; use one of: {', '.join(known) or 'none installed'}"
            + (f" ({broken})" if broken else "")
        )
    return platform


def numeric_ids(platform: str) -> bool:
    """Is a handle of digits the account's stable id on this platform (its plugin says so)?"""
    return platforms.facts(platform).numeric_ids


def normalize_handle(raw: str, platform: str = "") -> str:
    """Return the normalized handle or raise BadInput naming it."""
    where = f"{platform}/" if platform else ""
    if not raw:
        raise BadInput(f"empty handle {where}''; give the account's handle, e.g. example_dev")
    if len(raw) > MAX_HANDLE_LENGTH + 1:
        raise BadInput(
            f"handle {where}{_shown(raw)} is {len(raw)} characters long; "
            f"a handle has at most {MAX_HANDLE_LENGTH}"
        )
    body = raw[1:] if raw.startswith("@") else raw
    if _EMAIL.match(body) or "@" in body:
        memory_only = bool(platform) and platforms.facts(platform).memory_only
        fix = ("name the person by a slug you choose instead, e.g. ada_lovelace"
               if memory_only else "use the person's platform handle")
        raise BadInput(
            f"handle {where}{_shown(raw)} is an e-mail address, which is never a name; {fix}"
        )
    handle = body.lower()
    if not handle:
        raise BadInput(f"empty handle {where}{_shown(raw)}; give the account's handle")
    if len(handle) > MAX_HANDLE_LENGTH:
        raise BadInput(
            f"handle {where}{_shown(raw)} is {len(handle)} characters long; "
            f"a handle has at most {MAX_HANDLE_LENGTH}"
        )
    if not _ALLOWED.fullmatch(handle):
        bad = next(ch for ch in handle if not _ALLOWED.fullmatch(ch))
        raise BadInput(
            f"handle {where}{_shown(raw)} contains {bad!r}; "
            "a handle may hold only a-z 0-9 . _ - (an account without a username: its numeric "
            "id, where the platform has such accounts)"
        )
    if handle.startswith((".", "-")) or handle.endswith(".") or ".." in handle:
        raise BadInput(
            f"handle {where}{_shown(raw)} starts or ends with '.' or '-', or holds '..'; "
            "no real handle does"
        )
    if handle.isdigit() and platform and numeric_ids(platform):
        handle = str(int(handle))  # 0700 and 700 are one account: the platform reads a number
    elif platform and platforms.facts(platform).handles_are_ids:
        raise BadInput(
            f"handle {where}{_shown(raw)} is not a user id; on {platform} a person is their "
            "numeric user id (names are not unique), e.g. 100000000000011"
        )
    return handle


def split_ref(raw: str) -> tuple[str, str]:
    """'x:example_dev' or 'x/example_dev' -> (platform, handle), both normalized."""
    for sep in (":", "/"):
        if sep in raw:
            platform, _, handle = raw.partition(sep)
            return normalize_platform(platform), normalize_handle(handle, platform)
    raise BadInput(f"{_shown(raw)} names no platform; write PLATFORM:HANDLE, e.g. x:example_dev")


def canonical_ref(raw: str) -> tuple[str, str] | None:
    """An aka ref in any spelling tactful accepts ('x:Bob', 'x/@bob') as (platform, handle),
    normalized, or None when it cannot name a file. Unlike `split_ref` it asks no plugin
    host: a link to a platform whose plugin is gone still names its file."""
    for sep in (":", "/"):
        if sep in raw:
            platform, _, handle = raw.partition(sep)
            platform = platform.strip().lower()
            if not PLATFORM_NAME.fullmatch(platform):
                return None
            try:
                return platform, normalize_handle(handle.strip(), platform)
            except BadInput:
                return None
    return None


_ID = re.compile(r"[A-Za-z0-9:._-]{1,128}")


def normalize_id(raw: str) -> str:
    """A platform's stable id (X user id, Bluesky DID, Threads or Telegram id), path-safe."""
    value = raw.strip()
    if not _ID.fullmatch(value) or value.startswith(".") or ".." in value:
        raise BadInput(
            f"id {_shown(raw)} is not a platform id; ids hold only letters, digits and : . _ - "
            "(e.g. 1234567890 or did:plc:abc123)"
        )
    if value.isdigit():
        value = str(int(value))  # a numeric id has one spelling: no leading zeros
    return value
