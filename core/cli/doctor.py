"""`tactful doctor`: everything a run needs, checked in one go, each problem with its fix.

The config (and what it names: adapters, routine kinds, responders), the plugins, the memory
home, the credentials of every configured platform and key-taking responder, and, with
`--reach`, one request to each configured `base_url`. Exit 0 when all is well; 4 when a plugin
failed to load or the memory home is unusable (sends would refuse); else 2 (docs/cli.md).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from tactful.core.cli.context import Context
from tactful.core.cli.output import emit, plural
from tactful.core.errors import TactfulError

if TYPE_CHECKING:
    from tactful.core.config.values import Config

REACH_TIMEOUT = 5.0  # seconds: a server that takes longer is reported as not answering


@dataclass(frozen=True)
class Finding:
    check: str  # config, plugins, memory, credentials, reach
    ok: bool
    detail: str
    fix: str | None = None
    exit_code: int = 0  # what this problem would make a command exit with


def doctor(context: Context, args: argparse.Namespace) -> int:
    found = _findings(context, args.reach)
    code = max((f.exit_code for f in found if not f.ok), default=0)
    problems = [f for f in found if not f.ok]
    if args.json:
        emit({"ok": not problems, "problems": len(problems),
              "checks": [asdict(f) for f in found]})
        return code
    for finding in found:
        mark = "ok  " if finding.ok else "FAIL"
        fix = f" — fix: {finding.fix}" if finding.fix else ""
        print(f"{mark} {finding.check}: {finding.detail}{fix}")
    print(f"{plural(len(problems), 'problem')} found" if problems else "all good")
    return code


def _findings(context: Context, reach: bool) -> list[Finding]:
    try:
        config = context.config
    except TactfulError as exc:
        # Nothing else can be checked without the config.
        return [Finding("config", False, str(exc), "edit the file it names; `tactful init` "
                        "writes a starter one", exc.exit_code)]
    found = [*_config(context, config), *_plugins(context), _memory(context)]
    found += _credentials(context)
    if reach:
        found += _reach(config)
    return found


def _config(context: Context, config: Config) -> list[Finding]:
    from tactful.core.cli.config_commands import references

    source = config.source or "built-in defaults (no config file found)"
    try:
        references(config, context.plugins, warn=False)
    except TactfulError as exc:
        return [Finding("config", False, str(exc), None, exc.exit_code)]
    return [Finding("config", True, f"{source} — persona {config.persona.name!r}, time zone "
                    f"{config.persona.timezone}")]


def _plugins(context: Context) -> list[Finding]:
    host = context.plugins
    found = [Finding("plugins", False, problem, "reinstall the plugin, or disable it under "
                     "plugins.disabled in the config", 4) for problem in host.load_errors]
    found += [Finding("plugins", True, f"warning: {w}") for w in host.load_warnings]
    if not host.load_errors:
        names = sorted(name for name, _ in host.manager.list_name_plugin())
        found.append(Finding("plugins", True, f"{plural(len(names), 'plugin')} loaded"))
    return found


def _memory(context: Context) -> Finding:
    root = context.home.root
    if not root.exists():
        return Finding("memory", True, f"{root} does not exist yet; the first `tactful "
                       "remember` creates it")
    try:
        context.home.require_readable()
    except TactfulError as exc:
        return Finding("memory", False, str(exc), None, exc.exit_code)
    if not os.access(root, os.W_OK):
        return Finding("memory", False, f"{root} is read-only: reads work, every write and "
                       "send refuses", f"fix the permissions of {root}", 4)
    return Finding("memory", True, f"{root} is readable and writable")


def _credentials(context: Context) -> list[Finding]:
    from tactful.core.cli.credentials import everything, rows
    from tactful.core.send import credentials

    try:
        found = rows(everything(context), None)
    except TactfulError as exc:
        return [Finding("credentials", False, str(exc), None, exc.exit_code)]
    if not found:
        return [Finding("credentials", True, "no platform and no responder that takes a key is "
                        "configured")]
    results = []
    for row in found:
        where = f"{row['platform']}/{row['account']}/{row['field']} ({row['role']})"
        if row["stored"]:
            results.append(Finding("credentials", True, f"{where} stored"))
        elif not row["needed"]:
            results.append(Finding("credentials", True, f"{where} not stored"))
        else:
            fix = credentials.set_command(row["platform"], row["field"], row["account"],
                                          always_account=row["platform"] == "responder")
            results.append(Finding("credentials", False, f"{where} missing", fix, 2))
    return results


def _reach(config: Config) -> list[Finding]:
    """One GET to each configured base_url: any HTTP answer counts (a 404 at the root is still a
    server); only no answer at all is a problem. Platforms on their public API are not probed."""
    import httpx

    targets = [(f"platforms.{name}.base_url", section.base_url)
               for name, section in sorted(config.platforms.items()) if section.base_url]
    targets += [(f"responders.{name}.base_url", responder.base_url)
                for name, responder in sorted(config.responders.items()) if responder.base_url]
    if not targets:
        return [Finding("reach", True, "no base_url is configured (the public APIs are not "
                        "probed)")]
    found = []
    for key, url in targets:
        try:
            answer = httpx.get(url, timeout=REACH_TIMEOUT, follow_redirects=False)
        except httpx.HTTPError as exc:
            found.append(Finding("reach", False, f"{key} {url} does not answer "
                                 f"({type(exc).__name__})", f"start the server or fix {key}", 2))
        else:
            found.append(Finding("reach", True, f"{key} {url} answers (HTTP "
                                 f"{answer.status_code})"))
    return found
