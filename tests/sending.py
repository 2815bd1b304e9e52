"""What the tests of the send gate share: what the recording platform was sent, which keys were
read, a refusal before any posting key, flagging someone, saving a person file as an editor
does, and a guard plugin registered with the host for the length of one block."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tactful.core.hookspecs import hookimpl

from . import recording_adapter as platform
from . import recording_keyring


def sent() -> list[dict[str, object]]:
    return platform.load_state()["sent"]  # type: ignore[no-any-return]


def posting_key_read() -> bool:
    return any(r.endswith("post_token") for r in recording_keyring.reads())


def flag(cli: Any, handle: str, person_id: str | None = None, where: str = "recorder") -> None:
    """Remember someone (with their stable id, when given) and flag them do-not-engage."""
    extra = ["--id", person_id] if person_id else []
    assert cli("remember", where, handle, "--kind", "reply", "--they", "hello",
               *extra).code == 0
    assert cli("dne", where, handle, "on", "--reason", "asked").code == 0


def hand_edit(path: Path, text: str) -> None:
    """Save as editors do: a new file put in place of the old one."""
    saved = path.with_name(path.name + ".swp")
    saved.write_text(text)
    saved.replace(path)


class _Guards:
    def __init__(self, guard: Any) -> None:
        self.guard = guard

    @hookimpl
    def register_guards(self, register: Any) -> None:
        register("test-guard", self.guard)


@contextmanager
def guard_plugin(guard: Any) -> Iterator[None]:
    """`guard` registered as a plugin's guard through the host, and removed after."""
    from tactful.core import plugins

    host = plugins.host()
    host.load()
    host.manager.register(_Guards(guard), name="guards-plugin")
    try:
        yield
    finally:
        host.manager.unregister(name="guards-plugin")


def refused_before_posting(result: Any) -> None:
    """Refused (do-not-engage, or memory that cannot be read), with nothing sent on the
    recording platform and no posting key read."""
    assert result.code in (3, 4), (result.code, result.out, result.err)
    assert sent() == [] and not posting_key_read()
