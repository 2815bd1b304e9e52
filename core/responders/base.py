"""What a responder is: one draft per call, from a prompt, with no tools and a time limit.

Responders are registered by plugins (`register_responders`: `register(kind, factory)`), chosen
by `responders.<name>.kind` in the config. A draft that fails, times out or comes back empty
raises `DraftFailed`, and the caller sends nothing. No message of a responder ever carries the
prompt or the draft: they hold people's words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from tactful.core.config.values import ResponderConfig
from tactful.core.errors import Refused


@dataclass(frozen=True)
class Prompt:
    """`system`: who the persona is and the hard rules. `user`: the task, with memory and the
    other person's words fenced off as data (see `prompt.compose`)."""

    system: str
    user: str


@dataclass(frozen=True)
class ResponderSettings:
    name: str  # the name in the config (`responders.<name>`)
    config: ResponderConfig
    # Reads the API key from the keyring (`responder/<name>/api_key`) when called; None when
    # none is stored. Called only by a responder that needs one, at its first draft.
    api_key: Callable[[], str | None]


class DraftFailed(Refused):
    """No usable draft: an error, a timeout, an empty answer. Exit 5; nothing is sent."""

    def __init__(self, responder: str, why: str) -> None:
        self.responder = responder
        super().__init__(f"responder {responder!r} gave no draft: {why}; nothing was sent")


@runtime_checkable
class Responder(Protocol):
    def draft(self, prompt: Prompt) -> str:
        """The reply text, stripped and non-empty, or DraftFailed."""
        ...


ResponderFactory = Callable[[ResponderSettings], Responder]
