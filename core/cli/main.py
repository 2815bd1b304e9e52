"""`tactful`: parse, call, map errors to exit codes (README: commands, exit codes).

Each command's module is imported only when that command runs, so `check` and `card` load
memory and nothing else: no platform SDK, no plugin, no network library. The parser itself
(`parser.py`, argparse) is built only for the command asked for, and a plain `check`, `card`,
`search` or `hot` command line is read without it (`_quick`): argparse with its gettext,
locale and shutil cost `check` a tenth of its time.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, NoReturn

from tactful.core.errors import TactfulError

if TYPE_CHECKING:
    from tactful.core.cli.parser import Parser

Handler = Callable[..., int]


class Done(Exception):
    """A command-line action that finished the command by itself (`--version`)."""


_VALUED = ("--home", "--config")  # global options that take a value


def _named_command(args: Sequence[str]) -> str | None:
    """The command word of a command line, skipping global options and their values."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in _VALUED:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


# Command lines read without argparse: the command, its handler, the names of the words it
# takes (the last ending in "+": one or more), and its own options. Each option says where it
# goes (its dest), what it holds, and its default when not given: "value" one word, "count" one
# word read as argparse's type=int reads plain digits, "flag" True, "append" one word added to
# a list (default: empty), "const" its constant (default: None; an exclusive choice, two of
# them are argparse's to refuse).
_Option = tuple[str, str, Any]  # (what it holds, dest, default or constant)


def _valued(*names: str) -> dict[str, _Option]:
    return {name: ("value", name[2:].replace("-", "_"), None) for name in names}


_JSON: dict[str, _Option] = {"--json": ("flag", "json", False)}
_QUICK: dict[str, tuple[str, tuple[str, ...], dict[str, _Option]]] = {
    "check": ("tactful.core.cli.reading:check", ("platform", "handles+"),
              {**_valued("--id"), **_JSON}),
    "card": ("tactful.core.cli.reading:card", ("platform", "handle"),
             {**_valued("--id"), **_JSON}),
    "search": ("tactful.core.cli.search_commands:search", ("query",),
               {**_valued("--platform"), "--limit": ("count", "limit", 10), **_JSON}),
    "hot": ("tactful.core.cli.search_commands:hot", (), _JSON),
    # `remember` runs once per interaction, often from a script or an agent.
    "remember": ("tactful.core.cli.writing:remember", ("platform", "handle"), {
        **_valued("--kind", "--they", "--me", "--link", "--thread", "--at", "--display-name",
                  "--id"),
        "--inbound": ("const", "direction", "inbound"),
        "--outbound": ("const", "direction", "outbound"),
        "--topic": ("append", "topic", None), "--open": ("append", "open", None)}),
}
_REQUIRED = {"remember": ("kind",)}  # options argparse refuses the command without
# The options every command takes, before or after it; absent when not given, as argparse
# leaves them (their default is SUPPRESS: parser.py), so no default is ever filled in.
_GLOBAL: dict[str, _Option] = {"--home": ("value", "home", None),
                               "--config": ("value", "config", None),
                               "--debug": ("flag", "debug", None)}


def _quick(args: Sequence[str]) -> SimpleNamespace | None:
    """A command line of a command in `_QUICK` in its plain form, read as argparse reads it, or
    None for anything else (help, `--`, `--opt=value`, an abbreviated or unknown option, a
    value starting with "-", a count that is not plain digits, a required option missing, two
    exclusive options, words split by an option...), which argparse then reads, errors
    included. Before the command only --home, --config and --debug; after it also the
    command's own options; the last of a repeated option wins, as in argparse."""
    found: dict[str, Any] = {"plugin_run": None}
    options = _GLOBAL
    command: str | None = None
    words: list[str] = []
    split = False  # an option came after the first word: more words are argparse's to judge
    chosen: set[str] = set()  # the exclusive options given
    at = 0
    while at < len(args):
        arg = args[at]
        if not arg.startswith("-"):
            if command is None:
                if arg not in _QUICK:
                    return None
                command = arg
                options = {**_GLOBAL, **_QUICK[command][2]}
                for kind, dest, default in _QUICK[command][2].values():
                    found[dest] = [] if kind == "append" else None if kind == "const" \
                        else default
            elif split:
                return None
            else:
                words.append(arg)
            at += 1
            continue
        kind, dest, default = options.get(arg, ("", "", None))
        if kind in ("flag", "const"):
            found[dest] = True if kind == "flag" else default
            if kind == "const":
                chosen.add(arg)
            at += 1
        elif kind in ("value", "count", "append"):
            if at + 1 == len(args) or args[at + 1].startswith("-"):
                return None
            value = args[at + 1]
            if kind == "count" and not (value.isascii() and value.isdigit() and len(value) < 19):
                return None
            if kind == "append":
                found[dest].append(value)
            else:
                found[dest] = int(value) if kind == "count" else value
            at += 2
        else:
            return None
        split = bool(words)
    if command is None or len(chosen) > 1:
        return None
    target, names, _ = _QUICK[command]
    many = bool(names) and names[-1].endswith("+")
    if len(words) < len(names) or (len(words) > len(names) and not many):
        return None
    if any(found[dest] is None for dest in _REQUIRED.get(command, ())):
        return None
    for n, name in enumerate(names):
        found[name.rstrip("+")] = words[n:] if name.endswith("+") else words[n]
    return SimpleNamespace(command=command, target=target, **found)


# Commands that answer from memory, change nothing of it, and run before every reply or to look
# something up: they read the config's memory values from the home's copy (context.py).
_KEPT_CONFIG = frozenset({"check", "card", "search", "hot"})
# `remember` runs after every interaction, often as a process of its own, and needs of the
# config only those values too: it reads the copy as well, and keeps one only once it has
# succeeded.
_KEPT_WHEN_DONE = frozenset({"remember"})


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    try:
        if not args_list:
            build_parser().print_help()  # bare `tactful`: what it can do, as gh and llm show it
            return 0
        args = _quick(args_list) or _parsed(args_list)
        if args.plugin_run is not None:
            handler: Handler = args.plugin_run
        else:
            module_name, _, function = args.target.partition(":")
            handler = getattr(import_module(module_name), function)
        from tactful.core.cli.context import Context

        command = getattr(args, "command", None)
        context = Context(home_arg=getattr(args, "home", None),
                          config_arg=getattr(args, "config", None), debug=debug,
                          kept_config=command in _KEPT_CONFIG or command in _KEPT_WHEN_DONE,
                          keep_when_done=command in _KEPT_WHEN_DONE)
        code = handler(context, args)
        if code == 0:
            context.done()
        return code
    except Done:
        return 0
    except BrokenPipeError:
        # `tactful search … | head`: the reader stopped reading; nothing is wrong. Further
        # output (and the interpreter's final flush) goes nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        # Never for a verdict, though: exit 0 there would read as "may be touched".
        return 1 if _named_command(args_list) in _VERDICTS else 0
    except TactfulError as exc:
        print(f"tactful: {_said(exc)}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:
        if exc.errno not in _CANNOT_WRITE:
            return _internal(exc, debug)
        # A write refused by the system that no layer below turned into a refusal: still a
        # refusal (exit 4, one line), never an "internal error" with a traceback.
        from pathlib import Path

        from tactful.core.memory.home import unwritable

        print(f"tactful: {_said(unwritable(Path(exc.filename or '?'), exc))}", file=sys.stderr)
        return 4
    except KeyboardInterrupt:
        print("tactful: interrupted", file=sys.stderr)
        return 130
    except ImportError as exc:
        if not (exc.name or "").startswith("tactful.core.memory"):
            return _internal(exc, debug)
        # Memory that cannot even be imported refuses like memory that cannot be read.
        print(f"tactful: refused: the memory module cannot be loaded ({exc}); nothing was "
              "done — reinstall tactful", file=sys.stderr)
        return 4
    except Exception as exc:  # noqa: BLE001 — the one place a bug becomes exit 1
        return _internal(exc, debug)


def _parsed(args_list: list[str]) -> Any:
    """The command line as argparse reads it: a built-in command's parser alone; for anything
    else (a plugin's command, a typo, `--version`, top-level help) every command, so help and
    errors list them all."""
    from tactful.core.cli import parser as parsing

    named = _named_command(args_list)
    parser = parsing.build_parser(named if named in parsing.COMMANDS else None)
    if named is not None and named not in parsing.COMMANDS:
        parsing.add_plugin_commands(parser, args_list)
    args, extras = parser.parse_known_args(args_list)
    if extras:
        getattr(args, "parser", parser).unknown(extras)
    return args


def build_parser(only: str | None = None) -> Parser:
    """The command line's parser (`parser.build_parser`), for help and for tests."""
    from tactful.core.cli.parser import build_parser as build

    return build(only)


_CANNOT_WRITE = (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT)


def _said(exc: TactfulError) -> str:
    """The one line for an error: memory refusals (exit 4) say so first, once."""
    message = str(exc)
    if exc.exit_code == 4 and "memory unavailable" not in message.lower():
        return f"memory unavailable: {message}"
    return message


def _internal(exc: Exception, debug: bool) -> int:
    if debug:
        import traceback

        traceback.print_exc()
    print(f"tactful: internal error ({type(exc).__name__}: {exc}); "
          "rerun with --debug for the traceback and report it", file=sys.stderr)
    return 1


# Commands that say a verdict: a reader that stops reading their output must never turn it into
# exit 0, "may be touched" (reading.py says theirs itself).
_VERDICTS = frozenset({"check", "card"})

# Commands that answer from memory and leave no file open: `check` and `card` (a refresh of the
# id map closes every file it writes), `search` and `hot` (the index is closed, the desk
# written whole, before they print). Once they have answered and their output is flushed, all
# the interpreter's shutdown would do is free every module one by one, about a tenth of their
# time: they end at once instead, unless something was left for the shutdown to do (an atexit
# handler or another thread, say from a plugin that loaded for a platform name memory did not
# know): then they end as every other command does.
_END_AT_ONCE = frozenset({"check", "card", "search", "hot"})


def _nothing_left_to_shut_down() -> bool:
    import atexit

    threading = sys.modules.get("threading")
    return atexit._ncallbacks() == 0 and (threading is None or threading.active_count() == 1)


def entry() -> NoReturn:
    args = sys.argv[1:]
    code = main(args)
    if _named_command(args) in _END_AT_ONCE and _nothing_left_to_shut_down():
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 — the usual shutdown says it, with its exit status
            sys.exit(code)
        os._exit(code)
    sys.exit(code)
