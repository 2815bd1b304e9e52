"""`tactful`: parse, call, map errors to exit codes (README: commands, exit codes).

Each command's module is imported only when that command runs, so `check` and `card` load
memory and nothing else: no platform SDK, no plugin, no network library. The parser itself
(`parser.py`, argparse) is built only for the command asked for, and a plain `check` or `card`
command line is read without it (`_quick`): argparse with its gettext, locale and shutil
cost `check` a tenth of its time.
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


# Command lines read without argparse: the command, its handler, and how many words it takes
# after the platform (at least one for `check`, exactly one for `card`).
_QUICK = {"check": ("tactful.core.cli.reading:check", "handles"),
          "card": ("tactful.core.cli.reading:card", "handle")}


def _quick(args: Sequence[str]) -> SimpleNamespace | None:
    """A `check` or `card` command line in its plain form, read as argparse reads it, or None
    for anything else (help, `--`, `--opt=value`, an abbreviated or unknown option, a value
    starting with "-", words split by an option...), which argparse then reads, errors
    included. Options before the command: --home, --config, --debug; after it, also --id and
    --json; the last of a repeated option wins, as in argparse."""
    found: dict[str, Any] = {"plugin_run": None, "id": None, "json": False}
    command: str | None = None
    words: list[str] = []
    split = False  # an option came after the first word: more words are argparse's to judge
    at = 0
    while at < len(args):
        arg = args[at]
        if not arg.startswith("-"):
            if command is None:
                if arg not in _QUICK:
                    return None
                command = arg
            elif split:
                return None
            else:
                words.append(arg)
            at += 1
        elif arg in ("--home", "--config") or (command is not None and arg == "--id"):
            if at + 1 == len(args) or args[at + 1].startswith("-"):
                return None
            found[arg[2:]] = args[at + 1]
            at += 2
            split = bool(words)
        elif arg == "--debug" or (command is not None and arg == "--json"):
            if arg == "--json":
                found["json"] = True
            at += 1
            split = bool(words)
        else:
            return None
    if command is None or not words:
        return None
    target, rest = _QUICK[command]
    if len(words) < 2 or (rest == "handle" and len(words) != 2):
        return None
    found.update(command=command, target=target, platform=words[0],
                 **{rest: words[1:] if rest == "handles" else words[1]})
    return SimpleNamespace(**found)


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

        context = Context(home_arg=getattr(args, "home", None),
                          config_arg=getattr(args, "config", None), debug=debug,
                          kept_config=getattr(args, "command", None) in _QUICK)
        return handler(context, args)
    except Done:
        return 0
    except BrokenPipeError:
        # `tactful search … | head`: the reader stopped reading; nothing is wrong. Further
        # output (and the interpreter's final flush) goes nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        # Never for a verdict, though (they say theirs themselves: reading.py): exit 0 there
        # would read as "may be touched".
        return 1 if _named_command(args_list) in _END_AT_ONCE else 0
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


# Commands that only read memory (a refresh of the id map closes every file it writes) and run
# before every reply. Once they have answered and their output is flushed, all the interpreter's
# shutdown would do is free every module one by one, about a tenth of `check`'s time: they end
# at once instead (no atexit handler is registered on their path; a test guards that).
_END_AT_ONCE = frozenset({"check", "card"})


def entry() -> NoReturn:
    args = sys.argv[1:]
    code = main(args)
    if _named_command(args) in _END_AT_ONCE:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 — the usual shutdown says it, with its exit status
            sys.exit(code)
        os._exit(code)
    sys.exit(code)
