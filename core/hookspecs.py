"""Every hook a tactful plugin can implement, in one place (docs/hooks.md).

Plugins are found through the entry-point group `tactful`; the built-in adapters register
exactly as a third-party plugin does. Each hook hands the plugin a `register` function, so the
host can check what comes in, refuse duplicates and name the plugin at fault. Registering must
stay cheap: it never imports a platform SDK (a factory does that, when it is first used).

Each hook's `register` has a type of its own (`RegisterAdapters`, ...), as llm and datasette
type theirs: a plugin that annotates its parameter with it gets what it registers checked by
mypy. docs/hooks.md has a section per hook naming the type; a test keeps it complete.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

if TYPE_CHECKING:
    import argparse
    import threading

    from tactful.core.app import App
    from tactful.core.memory.platforms import Platform
    from tactful.core.responders.base import Responder, ResponderSettings
    from tactful.core.schedule.events import EventLog
    from tactful.core.schedule.routine import Result, Run
    from tactful.core.send.adapter import Adapter, AdapterSettings

hookspec = pluggy.HookspecMarker("tactful")
hookimpl = pluggy.HookimplMarker("tactful")

# Untyped, for plugins written before the typed ones; each hook's own type below says more.
Register = Callable[..., None]


# ---- what plugins register ---------------------------------------------------------------

class Service(Protocol):
    """A long-running part of `tactful run` (`register_services`). Optional: `chats`, the
    companion's chat platform (`ChatPlatform`, core/companion/gateway.py), so that
    `tactful forget` reaches its store."""

    def wanted(self, app: App) -> bool: ...

    def serve(self, app: App, log: EventLog, stop: threading.Event) -> None: ...


CommandRun = Callable[["App", "argparse.Namespace"], int]
CommandConfigure = Callable[["argparse.ArgumentParser"], None]
AdapterFactory = Callable[["AdapterSettings"], "Adapter"]
ResponderFactory = Callable[["ResponderSettings"], "Responder"]
Routine = Callable[["Run"], "Result"]
# `factory()` starts an emulator and returns the demo's view of it (`Emulated` in the demo,
# docs/hooks.md#register_emulators): the core's own type lives with the command line.
EmulatorFactory = Callable[[], object]
# A guard is a callable `guard(attempt)`, or an object with any of `offline(attempt)`,
# `online(attempt)`, `in_claim(attempt, db)`: no single type says "any of", so it is `object`,
# checked by the gate (a guard of neither shape refuses every send, naming itself).
Guard = object


# ---- one `register` per hook -------------------------------------------------------------

class RegisterCommands(Protocol):
    def __call__(self, name: str, help: str, configure: CommandConfigure,
                 run: CommandRun, /) -> None: ...


class RegisterServices(Protocol):
    def __call__(self, name: str, service: Service, /) -> None: ...


class RegisterAdapters(Protocol):
    def __call__(self, platform: str, factory: AdapterFactory, /) -> None: ...


class RegisterPlatforms(Protocol):
    def __call__(self, name: str, platform: Platform, /) -> None: ...


class RegisterEmulators(Protocol):
    def __call__(self, platform: str, factory: EmulatorFactory, /) -> None: ...


class RegisterGuards(Protocol):
    def __call__(self, name: str, guard: Guard, /) -> None: ...


class RegisterResponders(Protocol):
    def __call__(self, kind: str, factory: ResponderFactory, /) -> None: ...


class RegisterRoutines(Protocol):
    def __call__(self, kind: str, routine: Routine, /) -> None: ...


# ---- lifecycle ---------------------------------------------------------------------------

@hookspec
def register_commands(register: RegisterCommands) -> None:
    """Add commands to the command line.

    :param register: ``register(name, help, configure, run)``: ``configure(parser)`` adds the
        arguments; ``run(context, args) -> int`` does the work and returns the exit code.
    """


@hookspec
def register_services(register: RegisterServices) -> None:
    """Add long-running services that ``tactful run`` starts next to the routines.

    :param register: ``register(name, service)``: ``service.wanted(app) -> bool`` says from the
        config whether it runs; ``service.serve(app, log, stop)`` runs it in a thread of its own
        until ``stop`` is set. A service may offer ``chats`` (a companion's chat platform), so
        that ``tactful forget`` reaches its store.
    """


# ---- adapters ----------------------------------------------------------------------------

@hookspec
def register_adapters(register: RegisterAdapters) -> None:
    """Add platform adapters.

    :param register: ``register(platform, factory)``: ``factory(settings) -> adapter`` is
        called only when the platform is used, so a plugin that registers one imports no SDK.
    """


@hookspec
def register_platforms(register: RegisterPlatforms) -> None:
    """Declare what the core must know of a platform (``tactful.core.memory.platforms``).

    :param register: ``register(name, platform)``: ``platform`` is a ``Platform`` named
        ``name`` (handles of digits are ids, a domain of its own in handles, config modes and
        options, memory only). The same object belongs in the entry-point group
        ``tactful.platforms``, which ``check`` and ``card`` read without loading plugins.
    """


@hookspec
def register_emulators(register: RegisterEmulators) -> None:
    """Add a platform to ``tactful demo``: an emulator of its API on loopback.

    :param register: ``register(platform, factory)``: ``factory()`` starts the emulator and
        returns the demo's view of it (docs/hooks.md#register_emulators).
    """


# ---- send --------------------------------------------------------------------------------

@hookspec
def register_guards(register: RegisterGuards) -> None:
    """Add guards to the send pipeline, run after the built-in ones and before credentials.

    :param register: ``register(name, guard)``: ``guard(request)`` raises a tactful error to
        refuse (exit 3 for do-not-engage, 5 for any other refusal) and returns None to pass.
    """


# ---- routines ----------------------------------------------------------------------------

@hookspec
def register_responders(register: RegisterResponders) -> None:
    """Add responder kinds, the model backends that draft text: ``register(kind, factory)``.
    A kind registered here may be named by ``responders.<name>.kind`` in the config."""


@hookspec
def register_routines(register: RegisterRoutines) -> None:
    """Add routines that `tactful run` schedules: ``register(kind, routine)``."""


HOOKS: tuple[Callable[..., Any], ...] = (
    register_commands, register_services, register_adapters, register_platforms,
    register_emulators, register_guards, register_responders, register_routines,
)

REGISTER_TYPES: dict[str, type] = {
    "register_commands": RegisterCommands, "register_services": RegisterServices,
    "register_adapters": RegisterAdapters, "register_platforms": RegisterPlatforms,
    "register_emulators": RegisterEmulators, "register_guards": RegisterGuards,
    "register_responders": RegisterResponders, "register_routines": RegisterRoutines,
}
"""The type of each hook's `register`, by hook name."""
