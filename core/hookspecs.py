"""Every hook a tactful plugin can implement, in one place (SPEC §14).

Plugins are found through the entry-point group `tactful`; the built-in adapters will register
exactly as a third-party plugin does. Each hook hands the plugin a `register` function, so the
host can check what comes in, refuse duplicates and name the plugin at fault. Registering must
stay cheap: it never imports a platform SDK (a factory does that, when it is first used).
docs/hooks.md has a section per hook; a test keeps it complete.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("tactful")
hookimpl = pluggy.HookimplMarker("tactful")

Register = Callable[..., None]


# ---- lifecycle ---------------------------------------------------------------------------

@hookspec
def register_commands(register: Register) -> None:
    """Add commands to the command line.

    :param register: ``register(name, help, configure, run)``: ``configure(parser)`` adds the
        arguments; ``run(context, args) -> int`` does the work and returns the exit code.
    """


@hookspec
def register_services(register: Register) -> None:
    """Add long-running services that ``tactful run`` starts next to the routines.

    :param register: ``register(name, service)``: ``service.wanted(app) -> bool`` says from the
        config whether it runs; ``service.serve(app, log, stop)`` runs it in a thread of its own
        until ``stop`` is set. A service may offer ``chats`` (a companion's chat platform), so
        that ``tactful forget`` reaches its store.
    """


# ---- adapters ----------------------------------------------------------------------------

@hookspec
def register_adapters(register: Register) -> None:
    """Add platform adapters.

    :param register: ``register(platform, factory)``: ``factory(config) -> adapter`` is called
        only when the platform is used, so a plugin that registers one imports no SDK.
    """


@hookspec
def register_platforms(register: Register) -> None:
    """Declare what the core must know of a platform (``tactful.core.memory.platforms``).

    :param register: ``register(name, platform)``: ``platform`` is a ``Platform`` named
        ``name`` (handles of digits are ids, a domain of its own in handles, config modes). The
        same object belongs in the entry-point group ``tactful.platforms``, which ``check`` and
        ``card`` read without loading plugins.
    """


@hookspec
def register_emulators(register: Register) -> None:
    """Add a platform to ``tactful demo``: an emulator of its API on loopback.

    :param register: ``register(platform, factory)``: ``factory()`` starts the emulator and
        returns the demo's view of it (docs/hooks.md#register_emulators).
    """


# ---- send --------------------------------------------------------------------------------

@hookspec
def register_guards(register: Register) -> None:
    """Add guards to the send pipeline, run after the built-in ones and before credentials.

    :param register: ``register(name, guard)``: ``guard(request)`` raises a tactful error to
        refuse (exit 3 for do-not-engage, 5 for any other refusal) and returns None to pass.
    """


# ---- routines ----------------------------------------------------------------------------

@hookspec
def register_responders(register: Register) -> None:
    """Add responders, the model backends that draft text: ``register(name, factory)``."""


@hookspec
def register_routines(register: Register) -> None:
    """Add routines that `tactful run` schedules: ``register(name, routine)``."""


HOOKS: tuple[Callable[..., Any], ...] = (
    register_commands, register_services, register_adapters, register_platforms,
    register_emulators, register_guards, register_responders, register_routines,
)
