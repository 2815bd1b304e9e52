"""`tactful credentials set|check|list|delete`: secrets into the keyring, never argv.

`set` reads the value from a hidden prompt on a terminal, else from standard input (one line,
the trailing newline dropped), so it never shows up in a process list or a shell history.
`check` says which fields are stored, never their values; exit 2 when any needed one is missing.
With no platform it checks every configured platform and every responder that takes a key.
`list` names the fields stored; `delete` removes one (docs/credentials.md).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from tactful.core.cli.context import Context
from tactful.core.cli.output import emit, plural
from tactful.core.cli.sending import warn_plugins
from tactful.core.errors import BadInput
from tactful.core.memory.handles import normalize_platform
from tactful.core.send import credentials
from tactful.core.send.adapters import adapter_for, settings_for

RESPONDER = "responder"
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class _Target:
    platform: str
    account: str
    read_fields: tuple[str, ...]
    post_fields: tuple[str, ...] = ()
    optional: bool = False  # a missing field is not a problem (a local model server's key)

    @property
    def fields(self) -> tuple[str, ...]:
        return (*self.read_fields, *self.post_fields)

    def role(self, field: str) -> str:
        if self.platform == RESPONDER:
            return "optional for a local server" if self.optional else "drafting"
        return "reading" if field in self.read_fields else "posting"


def _responder(context: Context, name: str | None) -> _Target:
    """Not a platform: the API key of an openai responder, `responder/<name>/api_key`."""
    if not name or name not in context.config.responders:
        names = ", ".join(sorted(context.config.responders)) or "none configured"
        raise BadInput("name the responder with --account NAME (responders in the config: "
                       f"{names})")
    settings = context.config.responders[name]
    host = urlsplit(settings.base_url or "").hostname or ""
    return _Target(RESPONDER, name, ("api_key",), optional=host in _LOOPBACK)


def _platform(context: Context, raw: str, account_arg: str | None) -> _Target:
    platform = normalize_platform(raw)
    account = account_arg or settings_for(platform, context.config).account
    if "/" in account or not account.strip() or any(c.isspace() for c in account):
        raise BadInput(f"--account {account[:40]!r} must be a name without spaces or slashes")
    adapter = adapter_for(platform, context.config, context.plugins)
    return _Target(platform, account, adapter.read_fields, adapter.post_fields)


def _target(context: Context, args: argparse.Namespace) -> _Target:
    if args.platform.strip().lower() == RESPONDER:
        return _responder(context, args.account)
    warn_plugins(context.plugins)
    return _platform(context, args.platform, args.account)


def everything(context: Context) -> list[_Target]:
    """Every configured platform, and every responder that takes a key (an openai one: the
    template and command responders read none, so none is ever reported missing)."""
    warn_plugins(context.plugins)
    found = [_platform(context, name, None) for name in sorted(context.config.platforms)]
    found += [_responder(context, name) for name, settings
              in sorted(context.config.responders.items()) if settings.kind == "openai"]
    return found


def _one_field(target: _Target, field: str) -> tuple[str, ...]:
    if field not in target.fields:
        raise BadInput(f"{target.platform} has no credential field {field[:40]!r}; "
                       f"use one of: {', '.join(target.fields)}")
    return (field,)


def set_(context: Context, args: argparse.Namespace) -> int:
    target = _target(context, args)
    fields, platform, account = target.fields, target.platform, target.account
    if args.field is None:
        raise BadInput(f"name the field to store: one of {', '.join(fields)} "
                       f"(e.g. tactful credentials set {platform} {fields[0]})")
    _one_field(target, args.field)
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


def rows(targets: list[_Target], field: str | None) -> list[dict[str, Any]]:
    """One row per field of each target: stored or not, and whether it is needed."""
    found = []
    for target in targets:
        fields = _one_field(target, field) if field is not None else target.fields
        for name in fields:
            stored = credentials.get(target.platform, target.account, name) is not None
            found.append({"platform": target.platform, "account": target.account,
                          "field": name, "role": target.role(name), "stored": stored,
                          "needed": not target.optional})
    return found


def _targets(context: Context, args: argparse.Namespace) -> list[_Target]:
    if args.platform is None:
        if args.field is not None or args.account is not None:
            raise BadInput("name the platform before a field or --account "
                           "(e.g. tactful credentials check x bearer_token)")
        return everything(context)
    return [_target(context, args)]


def check(context: Context, args: argparse.Namespace) -> int:
    targets = _targets(context, args)
    found = rows(targets, args.field)
    missing = [r for r in found if r["needed"] and not r["stored"]]
    fix = None
    if missing:
        first = missing[0]
        fix = credentials.set_command(first["platform"], first["field"], first["account"],
                                      always_account=first["platform"] == RESPONDER)
    if args.json:
        emit({"credentials": found, "missing": len(missing), "fix": fix})
    else:
        if not found:
            print("no platform and no responder that takes a key is configured: nothing to "
                  "check")
        for row in found:
            state = "stored" if row["stored"] else "MISSING" if row["needed"] else "not stored"
            print(f"{row['platform']}/{row['account']}/{row['field']}: {state} ({row['role']})")
        if fix:
            print(f"tactful: {plural(len(missing), 'credential')} missing; store the first "
                  f"with: {fix}", file=sys.stderr)
    return 2 if missing else 0


def list_(context: Context, args: argparse.Namespace) -> int:
    args.field = None
    targets = _targets(context, args)
    if args.platform is None:
        # Also the installed platforms the config does not name yet (at their default
        # account): keys stored before the config was written show up too.
        installed = set(context.plugins.collect("register_adapters"))
        targets += [_platform(context, name, None)
                    for name in sorted(installed - set(context.config.platforms))]
    stored = [r for r in rows(targets, None) if r["stored"]]
    if args.json:
        emit({"stored": [{k: r[k] for k in ("platform", "account", "field")} for r in stored]})
        return 0
    if not stored:
        print("no credential of a configured platform or responder is stored")
    by_owner: dict[str, list[str]] = {}
    for row in stored:
        by_owner.setdefault(f"{row['platform']}/{row['account']}", []).append(row["field"])
    for owner, fields in by_owner.items():
        print(f"{owner}: {', '.join(fields)}")
    return 0


def delete(context: Context, args: argparse.Namespace) -> int:
    target = _target(context, args)
    _one_field(target, args.field)
    if not credentials.delete(target.platform, target.account, args.field):
        raise BadInput(f"nothing is stored for {target.platform}/{target.account}/{args.field}; "
                       "`tactful credentials list` shows what is")
    print(f"deleted {target.platform}/{target.account}/{args.field} from the keyring")
    return 0
