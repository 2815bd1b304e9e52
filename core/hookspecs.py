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


# ---- adapters ----------------------------------------------------------------------------

@hookspec
def register_adapters(register: Register) -> None:
    """Add platform adapters.

    :param register: ``register(platform, factory)``: ``factory(config) -> adapter`` is called
        only when the platform is used, so a plugin that registers one imports no SDK.
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
    register_commands, register_adapters, register_guards, register_responders,
    register_routines,
)
