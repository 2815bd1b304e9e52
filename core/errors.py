"""The one exception tree of tactful.

Every message says what happened, where, and how to fix it, on one line. Only the command line
turns these into exit codes (the README's exit codes); library code raises, never exits.
"""

from __future__ import annotations


class TactfulError(Exception):
    """Base of every error tactful raises on purpose."""

    exit_code = 1


class BadInput(TactfulError):
    """Bad input from the user: a handle, an argument, a file they wrote. Exit 2."""

    exit_code = 2


class ConfigError(BadInput):
    """The configuration file is wrong: names file, line, key, expected and found."""


class MissingCredential(BadInput):
    """A credential is absent from the keyring; the message carries the command that stores it."""


class DoNotEngage(TactfulError):
    """A do-not-engage person was about to be touched. The hard stop: exit 3."""

    exit_code = 3


class MemoryUnavailable(TactfulError):
    """Memory cannot be read or written, so every guarded action refuses (fail closed). Exit 4."""

    exit_code = 4


class PersonFileCorrupt(MemoryUnavailable):
    """A person file does not parse. It is never overwritten; the message names file and line."""

    def __init__(self, path: object, line: int, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        super().__init__(
            f"{path}:{line}: {problem}; fix the file by hand (it was not changed) and retry"
        )


class Refused(TactfulError):
    """Refused by another guard: already replied, bot thread limit, quota. Exit 5."""

    exit_code = 5
