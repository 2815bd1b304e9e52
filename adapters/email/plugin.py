"""The e-mail plugin: declares the memory-only platform `email`, and nothing else (no adapter,
no emulator: tactful never sends e-mail)."""

from __future__ import annotations

from tactful.core.hookspecs import RegisterPlatforms, hookimpl

from .platform import PLATFORM


@hookimpl
def register_platforms(register: RegisterPlatforms) -> None:
    register(PLATFORM.name, PLATFORM)
