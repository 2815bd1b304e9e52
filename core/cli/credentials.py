"""`tactful credentials set|check PLATFORM [FIELD]`: secrets into the keyring, never argv.

`set` reads the value from a hidden prompt on a terminal, else from standard input (one line,
the trailing newline dropped), so it never shows up in a process list or a shell history.
`check` says which fields are stored, never their values; exit 2 when any is missing.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from tactful.core.cli.context import Context
from tactful.core.cli.sending import warn_plugins
from tactful.core.errors import BadInput
from tactful.core.memory.handles import normalize_platform
from tactful.core.send import credentials
from tactful.core.send.adapters import adapter_for, settings_for

RESPONDER = "responder"


@dataclass(frozen=True)
class _Target:
    platform: str
    account: str
    read_fields: tuple[str, ...]
    post_fields: tuple[str, ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:
        return (*self.read_fields, *self.post_fields)


def _target(context: Context, args: argparse.Namespace) -> _Target:
    if args.platform.strip().lower() == RESPONDER:
        # Not a platform: the API key of an openai responder, `responder/<name>/api_key`.
        if not args.account or args.account not in context.config.responders:
            names = ", ".join(sorted(context.config.responders)) or "none configured"
            raise BadInput("name the responder with --account NAME (responders in the config: "
                           f"{names})")
        return _Target(RESPONDER, args.account, ("api_key",))
    plugins = context.plugins
    warn_plugins(plugins)
    platform = normalize_platform(args.platform)
    account = args.account or settings_for(platform, context.config).account
    if "/" in account or not account.strip() or any(c.isspace() for c in account):
        raise BadInput(f"--account {account[:40]!r} must be a name without spaces or slashes")
    adapter = adapter_for(platform, context.config, plugins)
    return _Target(platform, account, adapter.read_fields, adapter.post_fields)


def set_(context: Context, args: argparse.Namespace) -> int:
    target = _target(context, args)
    fields, platform, account = target.fields, target.platform, target.account
    if args.field is None:
        raise BadInput(f"name the field to store: one of {', '.join(fields)} "
                       f"(e.g. tactful credentials set {platform} {fields[0]})")
    if args.field not in fields:
        raise BadInput(f"{platform} has no credential field {args.field[:40]!r}; "
                       f"use one of: {', '.join(fields)}")
    if sys.stdin.isatty():
        import getpass

        value = getpass.getpass(f"{platform}/{account}/{args.field}: ")
    else:
        value = sys.stdin.readline().removesuffix("\n").removesuffix("\r")
    if not value.strip():
        raise BadInput(f"no value given for {args.field}; type it at the prompt or pipe it in "
                       f"(e.g. from a password manager) — it is never taken from the command line")
    credentials.store(platform, account, args.field, value)
    print(f"stored {platform}/{account}/{args.field} in the keyring (service "
          f"{credentials.SERVICE})")
    return 0


def check(context: Context, args: argparse.Namespace) -> int:
    target = _target(context, args)
    fields, platform, account = target.fields, target.platform, target.account
    if args.field is not None:
        if args.field not in fields:
            raise BadInput(f"{platform} has no credential field {args.field[:40]!r}; "
                           f"use one of: {', '.join(fields)}")
        fields = (args.field,)
    missing = []
    for field in fields:
        present = credentials.get(platform, account, field) is not None
        role = "reading" if field in target.read_fields else "posting"
        print(f"{platform}/{account}/{field}: {'stored' if present else 'MISSING'} ({role})")
        if not present:
            missing.append(field)
    if missing:
        command = credentials.set_command(platform, missing[0], account,
                                          always_account=platform == RESPONDER)
        print(f"tactful: store the missing ones with: {command}", file=sys.stderr)
        return 2
    return 0
