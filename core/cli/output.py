"""How commands speak: `--json` documents, times, plural forms and colour (docs/cli.md).

Every `--json` prints exactly one JSON object on stdout (never a bare list: a collection sits
under a plural key, so a field can be added later without breaking a reader). Keys are
snake_case; a time is ISO 8601 with its offset, in the persona's zone; an unknown value is null.
Errors never print JSON: the one-line message goes to stderr and the exit code says what
happened (docs/cli.md), so a script checks the code first.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, tzinfo
from typing import Any


def emit(document: dict[str, Any]) -> None:
    """Print one `--json` document."""
    print(json.dumps(document, ensure_ascii=False, indent=2))


def iso(at: datetime | int | float | None, tz: tzinfo) -> str | None:
    """A time as `--json` gives it: ISO 8601 with offset, in the persona's zone."""
    if at is None:
        return None
    if isinstance(at, int | float):
        at = datetime.fromtimestamp(at, tz)
    return at.astimezone(tz).isoformat()


def plural(count: int, one: str, many: str | None = None) -> str:
    """`1 entry`, `2 entries`, `0 entries`."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def coloured() -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def bold(text: str) -> str:
    return f"\033[1m{text}\033[0m" if coloured() else text
