"""Cautious `aka` links between accounts of one person (docs/memory.md).

Automatic only when display name and handle both match; by hand only with a public http(s) URL
as proof. Every link records why it was made, on both files.
"""

from __future__ import annotations

import ipaddress
import socket
from datetime import datetime
from urllib.parse import urlsplit

from tactful.core.errors import BadInput
from tactful.core.memory import platforms
from tactful.core.memory.person import Aka, Person

_PRIVATE_SUFFIXES = (".local", ".localhost", ".internal", ".lan", ".home", ".corp", ".test",
                     ".invalid", ".example")


def public_url(raw: str) -> str:
    value = raw.strip()
    try:
        parts = urlsplit(value)
        host = (parts.hostname or "").lower().rstrip(".")  # "localhost." is localhost
    except ValueError:
        raise BadInput("--proof is not a URL; give the public page") from None
    if parts.scheme not in ("http", "https") or not host or any(c.isspace() for c in value):
        raise BadInput(f"--proof {raw[:80]!r} is not an http(s) URL; give the public page that "
                       "shows the two accounts belong together")
    if parts.username or parts.password:
        raise BadInput("--proof must not carry a user name or password; give the public page")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    # Addresses in the odd spellings resolvers accept (127.1, 0177.0.0.1, 0x7f.1) are
    # addresses too: a public page has a name, so any of them is refused outright.
    try:
        socket.inet_aton(host)
        numeric = True
    except OSError:
        numeric = False
    if (address is not None and not address.is_global) or host == "localhost" or numeric \
            or "." not in host or host.endswith(_PRIVATE_SUFFIXES):
        raise BadInput(f"--proof host {host!r} is not public; a link needs a page anyone can see")
    return value


def comparable_handle(platform: str, handle: str) -> str:
    """The handle as it compares across platforms: without the platform's own domain, where
    its plugin declares one (`Platform.short_handle_suffix`, e.g. a Bluesky handle's)."""
    suffix = platforms.facts(platform).short_handle_suffix
    if suffix and handle.endswith(suffix) and len(handle) > len(suffix):
        return handle[: -len(suffix)]
    return handle


def same_name(a: Person, b: Person) -> bool:
    if not a.display_name or not b.display_name:
        return False
    def name(person: Person) -> str:
        return " ".join((person.display_name or "").casefold().split())

    def handle(person: Person) -> str:
        return comparable_handle(person.platform, person.handle)

    return name(a) == name(b) and handle(a) == handle(b)


def add_link(person: Person, ref: str, reason: str, at: datetime, proof: str | None) -> bool:
    if ref == person.ref or any(a.ref == ref for a in person.aka):
        return False
    person.aka.append(Aka(ref=ref, reason=reason, at=at, proof=proof))
    return True


def candidates(platform: str, handle: str, others: tuple[str, ...]) -> list[tuple[str, str]]:
    """Where the same person may have a file: the same handle, and on a platform with a domain
    of its own, the handle under it too (`ada` is also `ada.bsky.social` on Bluesky)."""
    base = comparable_handle(platform, handle)
    found = []
    for other in others:
        if other == platform:
            continue
        found.append((other, base))
        suffix = platforms.facts(other).short_handle_suffix
        if suffix:
            found.append((other, f"{base}{suffix}"))
    return found
