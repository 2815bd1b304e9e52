"""The command line's parser: every built-in command described with argparse (docs/cli.md).

Only the command asked for is described (`build_parser(only)`): argparse builds every
sub-parser it is given, with a gettext look-up per string, and describing all of them cost
`tactful check` more than its own work. `main` reads a plain `check` or `card` command line
without this module at all.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from tactful.core.cli.main import Done
from tactful.core.errors import BadInput


class Parser(argparse.ArgumentParser):
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
        raise Done


def _globals() -> Parser:
    # Accepted before or after the command; SUPPRESS keeps a later default from erasing an
    # earlier value.
    common = Parser(add_help=False)
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


class _Builder:
    """What each command's description adds itself to: the `COMMAND` group of the top parser,
    and the options every command takes."""

    def __init__(self, commands: Any, common: Parser) -> None:
        self.commands, self.common = commands, common

    def command(self, name: str, target: str, help_text: str) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = self.commands.add_parser(
            name, parents=[self.common], help=help_text, description=help_text)
        sub.set_defaults(target=target)
        return sub

    def actions_of(self, sub: argparse.ArgumentParser) -> Any:
        actions = sub.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser,
                                     help="what to do")
        actions.required = True
        return actions

    def action(self, actions: Any, name: str, target: str,
               help_text: str) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = actions.add_parser(
            name, parents=[self.common], help=help_text, description=help_text)
        sub.set_defaults(target=target)
        return sub


def build_parser(only: str | None = None) -> Parser:
    """The command line's parser. With `only`, a built-in command's name, that command alone
    is described: argparse builds every sub-parser it is given (with a gettext look-up per
    string), and describing all of them cost `tactful check` more than its own work."""
    common = _globals()
    parser = Parser(prog="tactful", parents=[common],
                     description="Memory and manners for a persona on social platforms.",
                     epilog="`tactful COMMAND --help` shows a command's options; docs/cli.md "
                     "the conventions (exit codes, --json).")
    parser.add_argument("--version", action=_Version, help="print tactful's version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND",
                                     parser_class=Parser, help="what to do")
    commands.required = True
    parser.set_defaults(plugin_run=None, parser=parser)
    parser.commands, parser.common = commands, common
    builder = _Builder(commands, common)
    for name, describe in COMMANDS.items():
        if only is None or only == name:
            describe(builder)
    _own_parser(parser)
    return parser


_READING, _WRITING = "tactful.core.cli.reading", "tactful.core.cli.writing"
_LOGS, _SEARCH = "tactful.core.cli.log_commands", "tactful.core.cli.search_commands"
_CREDENTIALS, _ROUTINES = "tactful.core.cli.credentials", "tactful.core.cli.routines"


def _check(b: _Builder) -> None:
    sub = b.command("check", f"{_READING}:check",
                    "may these accounts be touched? exit 3 do-not-engage, 4 memory unavailable")
    _platform(sub)
    sub.add_argument("handles", nargs="+", metavar="HANDLE", help="one or more handles")
    sub.add_argument("--id", help="the account's stable platform id (one handle only)")
    _json(sub)


def _card(b: _Builder) -> None:
    sub = b.command("card", f"{_READING}:card", "the card to read before replying to someone")
    _person(sub)
    sub.add_argument("--id", help="the account's stable platform id, if known")
    _json(sub)


def _remember(b: _Builder) -> None:
    sub = b.command("remember", f"{_WRITING}:remember", "record one interaction")
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


def _pin(b: _Builder) -> None:
    sub = b.command("pin", f"{_WRITING}:pin", "pin something they or I said")
    _person(sub)
    sub.add_argument("text", help="what to pin")
    sub.add_argument("--by", required=True, choices=("them", "me"), help="who said it")


def _unpin(b: _Builder) -> None:
    sub = b.command("unpin", f"{_WRITING}:unpin", "remove pin N")
    _person(sub)
    sub.add_argument("number", type=int, metavar="N", help="the pin's number on the card")


def _resolve(b: _Builder) -> None:
    sub = b.command("resolve", f"{_WRITING}:resolve", "mark open thread N resolved (never erased)")
    _person(sub)
    sub.add_argument("number", type=int, metavar="N", help="the open thread's number on the card")


def _flag(b: _Builder) -> None:
    sub = b.command("flag", f"{_WRITING}:flag", "add a flag to a person")
    _person(sub)
    sub.add_argument("name", help="the flag, a lower-case word such as spam-signals")
    sub.add_argument("--reason", metavar="T", help="why, for the card")


def _unflag(b: _Builder) -> None:
    sub = b.command("unflag", f"{_WRITING}:unflag", "remove a flag")
    _person(sub)
    sub.add_argument("name", help="the flag to remove")


def _dne(b: _Builder) -> None:
    sub = b.command("dne", f"{_WRITING}:dne", "turn do-not-engage on or off")
    _person(sub)
    sub.add_argument("state", choices=("on", "off"), help="on or off")
    sub.add_argument("--reason", metavar="T", help="why, for the card")


def _set(b: _Builder) -> None:
    sub = b.command("set", f"{_WRITING}:set_", "set fixed facts: kind, collaborator, name, id")
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


def _link(b: _Builder) -> None:
    sub = b.command("link", f"{_WRITING}:link",
                    "link two accounts as one person, with public proof")
    sub.add_argument("first", metavar="PLATFORM:HANDLE", help=f"one account ({_PLATFORMS})")
    sub.add_argument("second", metavar="PLATFORM:HANDLE", help="the other account")
    sub.add_argument("--proof", required=True, metavar="URL",
                     help="a public page that shows both accounts are one person")


def _export(b: _Builder) -> None:
    sub = b.command("export", f"{_READING}:export", "print everything held about one person")
    _person(sub)


def _journal(b: _Builder) -> None:
    sub = b.command("journal", f"{_LOGS}:journal",
                    "add a dated note or post of mine to the journal")
    sub.add_argument("text", help="the note, or what I posted")
    sub.add_argument("--link", metavar="URL", help="the post's public address")
    sub.add_argument("--at", metavar="ISO", help="when (default: now)")


def _sync_log(b: _Builder) -> None:
    sub = b.command("sync-log", f"{_LOGS}:sync_log",
                    "carry every engagement-log event into person files and the journal")
    sub.add_argument("--log", metavar="FILE", help="the log to read (default: the home's)")


def _search(b: _Builder) -> None:
    sub = b.command("search", f"{_SEARCH}:search", "full-text search over memory")
    sub.add_argument("query", help="words to find (all of them first, then any)")
    sub.add_argument("--platform", help=f"only this platform: {_PLATFORMS}")
    sub.add_argument("--limit", type=int, default=10, help="at most this many results (1-1000)")
    _json(sub)


def _reindex(b: _Builder) -> None:
    b.command("reindex", f"{_SEARCH}:reindex", "rebuild the search index from the files")


def _hot(b: _Builder) -> None:
    _json(b.command("hot", f"{_SEARCH}:hot", "regenerate the desk (hot.md) and print it"))


def _forget(b: _Builder) -> None:
    sub = b.command("forget", "tactful.core.cli.forget:forget",
                    "erase everything held about a person, and keep them forgotten")
    _person(sub)
    sub.add_argument("--keep-dne", action="store_true",
                     help="keep a minimal file that says do_not_engage and nothing else")


def _send(b: _Builder) -> None:
    sub = b.command("send", "tactful.core.cli.sending:send",
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


def _credentials(b: _Builder) -> None:
    actions = b.actions_of(b.command("credentials", "", "store, check, list or delete credentials "
                                     "in the keyring (never their values on screen)"))
    for name, function, help_text in (
            ("set", "set_", "store one field, read from a prompt or stdin"),
            ("check", "check", "say which fields are stored, never their values; with no "
             "platform, every configured platform and responder"),
            ("list", "list_", "the fields stored per platform and responder, never values"),
            ("delete", "delete", "remove one stored field")):
        creds = b.action(actions, name, f"{_CREDENTIALS}:{function}", help_text)
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


def _routine(b: _Builder) -> None:
    actions = b.actions_of(b.command("routine", "", "list the routines, or run one now"))
    _json(b.action(actions, "list", f"{_ROUTINES}:list_", "every routine and its schedule"))
    once = b.action(actions, "run", f"{_ROUTINES}:run_now", "run one routine now")
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


def _run(b: _Builder) -> None:
    b.command("run", "tactful.core.cli.run:run",
              "run every routine on its schedule, and what plugins add to the run (a "
              "platform's companion, in companion mode), until SIGTERM or Ctrl-C")


def _companion(b: _Builder) -> None:
    sub = b.command("companion", "", "the companion on a chat platform, for its operator")
    actions = sub.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    actions.required = True
    stats = actions.add_parser("stats", parents=[b.common],
                               help="counts, health and neutral summaries; never chat text")
    stats.set_defaults(target="tactful.core.cli.companion:stats")
    stats.add_argument("--summaries", type=int, default=10, metavar="N",
                       help="how many of the latest neutral summaries to show")
    now = actions.add_parser("pass", parents=[b.common],
                             help="run the memory pass now: rewrite the notes of quiet chats")
    now.set_defaults(target="tactful.core.cli.companion:memory_pass")
    now.add_argument("--bot", metavar="NAME", help="only this bot (default: every bot)")
    actions.add_parser("poll", parents=[b.common],
                       help="many workers: take the platform's updates into the shared "
                       "PostgreSQL queue (run one), until SIGTERM").set_defaults(
        target="tactful.core.cli.companion:poll")
    actions.add_parser("worker", parents=[b.common],
                       help="many workers: answer from the shared PostgreSQL queue (run "
                       "several), until SIGTERM").set_defaults(
        target="tactful.core.cli.companion:worker")


def _config(b: _Builder) -> None:
    actions = b.actions_of(b.command("config", "", "check the configuration file"))
    _json(b.action(actions, "check", "tactful.core.cli.config_commands:check",
                   "load the config and report errors with file and line"))


def _doctor(b: _Builder) -> None:
    sub = b.command("doctor", "tactful.core.cli.doctor:doctor",
                    "check the config, the plugins, the memory home and the credentials; "
                    "with --reach, that each configured base_url answers")
    sub.add_argument("--reach", action="store_true",
                     help="also make one request to each configured base_url")
    _json(sub)


def _init(b: _Builder) -> None:
    sub = b.command("init", "tactful.core.cli.init_command:init",
                    "write a commented starter config (never over an existing file)")
    sub.add_argument("path", nargs="?", default="tactful.yaml", metavar="FILE",
                     help="where to write it (default: ./tactful.yaml)")


def _plugins(b: _Builder) -> None:
    sub = b.command("plugins", "tactful.core.cli.plugins_command:plugins",
                    "the plugins tactful found: where each comes from, whether it loaded, and "
                    "what it registers (exit 4 when one failed to load)")
    _json(sub)


def _demo(b: _Builder) -> None:
    sub = b.command("demo", "tactful.core.cli.demo:run",
                    "the whole loop on every platform's local emulator, in a throwaway home: no "
                    "credentials, nothing leaves 127.0.0.1")
    sub.add_argument("--keep", action="store_true", help="keep the throwaway home and say where")

# Every built-in command, in the order `tactful --help` lists them.
COMMANDS: dict[str, Callable[[_Builder], None]] = {
    "check": _check,
    "card": _card,
    "remember": _remember,
    "pin": _pin,
    "unpin": _unpin,
    "resolve": _resolve,
    "flag": _flag,
    "unflag": _unflag,
    "dne": _dne,
    "set": _set,
    "link": _link,
    "export": _export,
    "journal": _journal,
    "sync-log": _sync_log,
    "search": _search,
    "reindex": _reindex,
    "hot": _hot,
    "forget": _forget,
    "send": _send,
    "credentials": _credentials,
    "routine": _routine,
    "run": _run,
    "companion": _companion,
    "config": _config,
    "doctor": _doctor,
    "init": _init,
    "plugins": _plugins,
    "demo": _demo,
}



def _own_parser(parser: argparse.ArgumentParser) -> None:
    """Every command's parser knows itself (`args.parser`), so words it does not take are
    named against its own options and its own --help."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                sub.set_defaults(parser=sub)
                _own_parser(sub)


def add_plugin_commands(parser: Parser, args: Sequence[str]) -> None:
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


