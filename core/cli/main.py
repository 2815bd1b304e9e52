"""`tactful`: parse, call, map errors to exit codes (README: commands, exit codes).

Each command's module is imported only when that command runs, so `check` and `card` load
memory and nothing else: no platform SDK, no plugin, no network library.
"""

from __future__ import annotations

import argparse
import errno
import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Any, NoReturn

from tactful.core.errors import BadInput, TactfulError

Handler = Callable[..., int]


class _Parser(argparse.ArgumentParser):
    # On the top parser: its commands, and the options every command takes (plugins add
    # commands to these).
    commands: Any = None
    common: argparse.ArgumentParser | None = None

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments"):
            # Never echo them: an unquoted --they leaves someone's words here.
            message = "unexpected extra arguments (put text with spaces in quotes)"
        where = self.prog.removeprefix("tactful").strip()
        prefix = f"{where}: " if where else ""
        raise BadInput(f"{prefix}{message} (see `{self.prog} --help`)")

    def unknown(self, extras: Sequence[str]) -> NoReturn:
        """Words this command does not take: an option is named, with the closest one it has;
        anything else is never echoed (an unquoted --they leaves someone's words here)."""
        import difflib
        import re

        shaped = re.compile(r"--[A-Za-z][\w-]{0,40}(=.*)?|-[A-Za-z]")
        option = next((a for a in extras if shaped.fullmatch(a)), None)
        if option is None:
            self.error("unrecognized arguments")
        name = option.split("=", 1)[0]
        known = [o for o in self._option_string_actions if o.startswith("--")]
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        guess = f" (did you mean {close[0]}?)" if close else ""
        self.error(f"unknown option {name}{guess}")

    def format_help(self) -> str:
        text = super().format_help()
        if _PLATFORMS in text:
            from tactful.core.memory import platforms

            text = text.replace(_PLATFORMS, ", ".join(platforms.names()) or "none installed")
        return text


class _Version(argparse.Action):
    """`tactful --version`: the installed distribution's version, looked up only when asked
    (importlib.metadata costs about an interpreter start)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help=str(kwargs.get("help", "")))

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> NoReturn:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("tactful")
        except PackageNotFoundError:
            found = "unknown (not installed as a distribution)"
        print(f"tactful {found}")
        raise _Done


class _Done(Exception):
    """A command-line action that finished the command by itself (`--version`)."""


def _globals() -> _Parser:
    # Accepted before or after the command; SUPPRESS keeps a later default from erasing an
    # earlier value.
    common = _Parser(add_help=False)
    common.add_argument("--home", metavar="DIR", default=argparse.SUPPRESS,
                        help="the memory home (else $TACTFUL_HOME, memory.home, user data dir)")
    common.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS,
                        help="the YAML config (else $TACTFUL_CONFIG, ./tactful.yaml)")
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an internal error")
    return common


_PLATFORMS = "\x00platforms\x00"  # replaced by the installed platforms when help is shown


def _platform(sub: argparse.ArgumentParser, *, memory: bool = True) -> None:
    also = " (or a memory-only name such as email)" if memory else ""
    sub.add_argument("platform", metavar="PLATFORM", help=f"one of: {_PLATFORMS}{also}")


def _person(sub: argparse.ArgumentParser) -> None:
    _platform(sub)
    sub.add_argument("handle", metavar="HANDLE", help="their handle, with or without the @")


def _json(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--json", action="store_true",
                     help="print one JSON object instead (times in ISO 8601; docs/cli.md)")


def build_parser() -> _Parser:
    common = _globals()
    parser = _Parser(prog="tactful", parents=[common],
                     description="Memory and manners for a persona on social platforms.",
                     epilog="`tactful COMMAND --help` shows a command's options; docs/cli.md "
                     "the conventions (exit codes, --json).")
    parser.add_argument("--version", action=_Version, help="print tactful's version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND",
                                     parser_class=_Parser, help="what to do")
    commands.required = True
    parser.set_defaults(plugin_run=None, parser=parser)
    parser.commands, parser.common = commands, common

    def command(name: str, target: str, help_text: str) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = commands.add_parser(
            name, parents=[common], help=help_text, description=help_text)
        sub.set_defaults(target=target)
        return sub

    def actions_of(sub: argparse.ArgumentParser) -> Any:
        actions = sub.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser,
                                     help="what to do")
        actions.required = True
        return actions

    def action(actions: Any, name: str, target: str, help_text: str) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = actions.add_parser(
            name, parents=[common], help=help_text, description=help_text)
        sub.set_defaults(target=target)
        return sub

    reading, writing = "tactful.core.cli.reading", "tactful.core.cli.writing"
    sub = command("check", f"{reading}:check",
                  "may these accounts be touched? exit 3 do-not-engage, 4 memory unavailable")
    _platform(sub)
    sub.add_argument("handles", nargs="+", metavar="HANDLE", help="one or more handles")
    sub.add_argument("--id", help="the account's stable platform id (one handle only)")
    _json(sub)

    sub = command("card", f"{reading}:card", "the card to read before replying to someone")
    _person(sub)
    sub.add_argument("--id", help="the account's stable platform id, if known")
    _json(sub)

    sub = command("remember", f"{writing}:remember", "record one interaction")
    _person(sub)
    sub.add_argument("--kind", required=True, metavar="K",
                     help="reply, mention, quote, question, follow, like, dm, post or collab")
    direction = sub.add_mutually_exclusive_group()
    direction.add_argument("--inbound", dest="direction", action="store_const", const="inbound",
                           help="they wrote to me (the default for most kinds)")
    direction.add_argument("--outbound", dest="direction", action="store_const",
                           const="outbound", help="I wrote to them")
    sub.add_argument("--they", metavar="T", help="a paraphrase of their side (≤ 300 characters)")
    sub.add_argument("--me", metavar="T", help="what I said")
    sub.add_argument("--link", metavar="URL", help="the post's public address")
    sub.add_argument("--topic", metavar="T", action="append", default=[],
                     help="a topic of the exchange (repeatable)")
    sub.add_argument("--open", metavar="T", action="append", default=[],
                     help="something left open (repeatable)")
    sub.add_argument("--thread", metavar="ID", help="the thread it belongs to")
    sub.add_argument("--at", metavar="ISO", help="when (default: now)")
    sub.add_argument("--display-name", metavar="N", help="the name they show")
    sub.add_argument("--id", metavar="ID", help="their stable platform id")

    sub = command("pin", f"{writing}:pin", "pin something they or I said")
    _person(sub)
    sub.add_argument("text", help="what to pin")
    sub.add_argument("--by", required=True, choices=("them", "me"), help="who said it")

    sub = command("unpin", f"{writing}:unpin", "remove pin N")
    _person(sub)
    sub.add_argument("number", type=int, metavar="N", help="the pin's number on the card")

    sub = command("resolve", f"{writing}:resolve", "mark open thread N resolved (never erased)")
    _person(sub)
    sub.add_argument("number", type=int, metavar="N", help="the open thread's number on the card")

    sub = command("flag", f"{writing}:flag", "add a flag to a person")
    _person(sub)
    sub.add_argument("name", help="the flag, a lower-case word such as spam-signals")
    sub.add_argument("--reason", metavar="T", help="why, for the card")

    sub = command("unflag", f"{writing}:unflag", "remove a flag")
    _person(sub)
    sub.add_argument("name", help="the flag to remove")

    sub = command("dne", f"{writing}:dne", "turn do-not-engage on or off")
    _person(sub)
    sub.add_argument("state", choices=("on", "off"), help="on or off")
    sub.add_argument("--reason", metavar="T", help="why, for the card")

    sub = command("set", f"{writing}:set_", "set fixed facts: kind, collaborator, name, id")
    _person(sub)
    sub.add_argument("--kind", choices=("person", "owner", "bot", "brand"),
                     help="what the account is")
    collab = sub.add_mutually_exclusive_group()
    collab.add_argument("--collaborator", dest="collaborator", action="store_const", const=True,
                        help="mark them a collaborator")
    collab.add_argument("--no-collaborator", dest="collaborator", action="store_const",
                        const=False, help="no longer a collaborator")
    sub.add_argument("--display-name", metavar="N", help="the name they show")
    sub.add_argument("--id", metavar="ID", help="their stable platform id")

    sub = command("link", f"{writing}:link", "link two accounts as one person, with public proof")
    sub.add_argument("first", metavar="PLATFORM:HANDLE", help=f"one account ({_PLATFORMS})")
    sub.add_argument("second", metavar="PLATFORM:HANDLE", help="the other account")
    sub.add_argument("--proof", required=True, metavar="URL",
                     help="a public page that shows both accounts are one person")

    sub = command("export", f"{reading}:export", "print everything held about one person")
    _person(sub)

    logs = "tactful.core.cli.log_commands"
    sub = command("journal", f"{logs}:journal", "add a dated note or post of mine to the journal")
    sub.add_argument("text", help="the note, or what I posted")
    sub.add_argument("--link", metavar="URL", help="the post's public address")
    sub.add_argument("--at", metavar="ISO", help="when (default: now)")

    sub = command("sync-log", f"{logs}:sync_log",
                  "carry every engagement-log event into person files and the journal")
    sub.add_argument("--log", metavar="FILE", help="the log to read (default: the home's)")

    search = "tactful.core.cli.search_commands"
    sub = command("search", f"{search}:search", "full-text search over memory")
    sub.add_argument("query", help="words to find (all of them first, then any)")
    sub.add_argument("--platform", help=f"only this platform: {_PLATFORMS}")
    sub.add_argument("--limit", type=int, default=10, help="at most this many results (1-1000)")
    _json(sub)
    command("reindex", f"{search}:reindex", "rebuild the search index from the files")
    _json(command("hot", f"{search}:hot", "regenerate the desk (hot.md) and print it"))

    sub = command("forget", "tactful.core.cli.forget:forget",
                  "erase everything held about a person, and keep them forgotten")
    _person(sub)
    sub.add_argument("--keep-dne", action="store_true",
                     help="keep a minimal file that says do_not_engage and nothing else")

    sub = command("send", "tactful.core.cli.sending:send",
                  "post through the guarded pipeline: exit 3 do-not-engage, 4 memory "
                  "unavailable, 5 refused (already replied, bot thread, quota)")
    _platform(sub, memory=False)
    sub.add_argument("--text", required=True,
                     help="the exact text to post; - reads it from standard input")
    sub.add_argument("--to", metavar="HANDLE",
                     help="the account addressed (a chat, on a chat platform)")
    sub.add_argument("--reply-to", metavar="POST", help="the post replied to: its URL or id")
    sub.add_argument("--image", metavar="URL",
                     help="a public image URL to post with the text (Instagram needs one)")
    looks = sub.add_mutually_exclusive_group()
    looks.add_argument("--dry-run", action="store_true",
                       help="offline: write to outbox/dry-run.jsonl instead; reads no "
                       "credential, and says what it could not check")
    looks.add_argument("--preview", action="store_true",
                       help="read with the read credentials, resolve every party, run every "
                       "guard and write the outbox; never reads a posting key, never posts")
    sub.add_argument("--again", action="store_true",
                     help="send even though the ledger has this send pending or sent")
    _json(sub)

    creds_module = "tactful.core.cli.credentials"
    actions = actions_of(command("credentials", "", "store, check, list or delete credentials "
                                 "in the keyring (never their values on screen)"))
    for name, function, help_text in (
            ("set", "set_", "store one field, read from a prompt or stdin"),
            ("check", "check", "say which fields are stored, never their values; with no "
             "platform, every configured platform and responder"),
            ("list", "list_", "the fields stored per platform and responder, never values"),
            ("delete", "delete", "remove one stored field")):
        creds = action(actions, name, f"{creds_module}:{function}", help_text)
        optional = name in ("check", "list")
        creds.add_argument("platform", metavar="PLATFORM", nargs="?" if optional else None,
                           help=f"one of: {_PLATFORMS}, or responder (an openai responder's key)"
                           + ("; none: every configured one" if optional else ""))
        if name != "list":
            creds.add_argument("field", metavar="FIELD", nargs="?" if name != "delete" else None,
                               help="the credential field (the adapter's docs name them)")
        creds.add_argument("--account", help="the account name (default: platforms.P.account; "
                           "for a responder, its name)")
        if optional:
            _json(creds)

    routines = "tactful.core.cli.routines"
    actions = actions_of(command("routine", "", "list the routines, or run one now"))
    _json(action(actions, "list", f"{routines}:list_", "every routine and its schedule"))
    once = action(actions, "run", f"{routines}:run_now", "run one routine now")
    once.add_argument("name", help="the routine's name under routines in the config")
    looks = once.add_mutually_exclusive_group()
    looks.add_argument("--dry-run", action="store_true",
                       help="send nothing: replies go to the outbox; no credential is read")
    looks.add_argument("--preview", action="store_true",
                       help="fetch and resolve with read credentials, run every guard, draft, "
                       "write the outbox; never reads a posting key, never posts")
    once.add_argument("--only", action="append", metavar="HANDLE",
                      help="answer only this account (repeat for more): a batch named by hand, "
                      "so a do-not-engage account here stops it with exit 3 before any key")
    _json(once)
    command("run", "tactful.core.cli.run:run",
            "run every routine on its schedule, and what plugins add to the run (a "
            "platform's companion, in companion mode), until SIGTERM or Ctrl-C")

    sub = command("companion", "", "the companion on a chat platform, for its operator")
    actions = sub.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    actions.required = True
    stats = actions.add_parser("stats", parents=[common],
                               help="counts, health and neutral summaries; never chat text")
    stats.set_defaults(target="tactful.core.cli.companion:stats")
    stats.add_argument("--summaries", type=int, default=10, metavar="N",
                       help="how many of the latest neutral summaries to show")
    now = actions.add_parser("pass", parents=[common],
                             help="run the memory pass now: rewrite the notes of quiet chats")
    now.set_defaults(target="tactful.core.cli.companion:memory_pass")
    now.add_argument("--bot", metavar="NAME", help="only this bot (default: every bot)")
    actions.add_parser("poll", parents=[common],
                       help="many workers: take the platform's updates into the shared "
                       "PostgreSQL queue (run one), until SIGTERM").set_defaults(
        target="tactful.core.cli.companion:poll")
    actions.add_parser("worker", parents=[common],
                       help="many workers: answer from the shared PostgreSQL queue (run "
                       "several), until SIGTERM").set_defaults(
        target="tactful.core.cli.companion:worker")

    actions = actions_of(command("config", "", "check the configuration file"))
    _json(action(actions, "check", "tactful.core.cli.config_commands:check",
                 "load the config and report errors with file and line"))

    sub = command("doctor", "tactful.core.cli.doctor:doctor",
                  "check the config, the plugins, the memory home and the credentials; "
                  "with --reach, that each configured base_url answers")
    sub.add_argument("--reach", action="store_true",
                     help="also make one request to each configured base_url")
    _json(sub)

    sub = command("init", "tactful.core.cli.init_command:init",
                  "write a commented starter config (never over an existing file)")
    sub.add_argument("path", nargs="?", default="tactful.yaml", metavar="FILE",
                     help="where to write it (default: ./tactful.yaml)")

    sub = command("plugins", "tactful.core.cli.plugins_command:plugins",
                  "the plugins tactful found: where each comes from, whether it loaded, and "
                  "what it registers (exit 4 when one failed to load)")
    _json(sub)

    sub = command("demo", "tactful.core.cli.demo:run",
                  "the whole loop on every platform's local emulator, in a throwaway home: no "
                  "credentials, nothing leaves 127.0.0.1")
    sub.add_argument("--keep", action="store_true", help="keep the throwaway home and say where")
    _own_parser(parser)
    return parser


def _own_parser(parser: argparse.ArgumentParser) -> None:
    """Every command's parser knows itself (`args.parser`), so words it does not take are
    named against its own options and its own --help."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                sub.set_defaults(parser=sub)
                _own_parser(sub)


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


def _add_plugin_commands(parser: _Parser, args: Sequence[str]) -> None:
    """Commands plugins add (`register_commands`): looked for only when the command line names
    one that is not built in, so `check` and `card` never load the plugin host."""
    from tactful.core.cli.context import Context

    commands, common = parser.commands, parser.common
    home = args[args.index("--home") + 1] if "--home" in args[:-1] else None
    config = args[args.index("--config") + 1] if "--config" in args[:-1] else None
    host = Context(home_arg=home, config_arg=config).plugins
    for name, (plugin, value) in sorted(host.collect("register_commands").items()):
        if name in commands.choices:
            raise BadInput(f"plugin {plugin!r} registers the command {name!r}, which tactful "
                           "already has; uninstall or disable the plugin")
        help_text, configure, run = value
        sub = commands.add_parser(name, parents=[common], help=help_text,
                                  description=help_text)
        configure(sub)
        sub.set_defaults(target=None, plugin_run=run)
        _own_parser(sub)
        sub.set_defaults(parser=sub)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    try:
        parser = build_parser()
        if not args_list:
            parser.print_help()  # bare `tactful`: what it can do, as gh and llm show it
            return 0
        named = _named_command(args_list)
        if named is not None and named not in parser.commands.choices:
            _add_plugin_commands(parser, args_list)
        args, extras = parser.parse_known_args(args_list)
        if extras:
            getattr(args, "parser", parser).unknown(extras)
        if args.plugin_run is not None:
            handler: Handler = args.plugin_run
        else:
            module_name, _, function = args.target.partition(":")
            handler = getattr(import_module(module_name), function)
        from tactful.core.cli.context import Context

        context = Context(home_arg=getattr(args, "home", None),
                          config_arg=getattr(args, "config", None), debug=debug)
        return handler(context, args)
    except _Done:
        return 0
    except BrokenPipeError:
        # `tactful search … | head`: the reader stopped reading; nothing is wrong. Further
        # output (and the interpreter's final flush) goes nowhere.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
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


def entry() -> NoReturn:
    sys.exit(main())
