"""`tactful send`: one post through the guarded pipeline (SPEC §10, §12).

The pipeline's modules are imported inside the command; if memory cannot even be imported, the
send refuses with exit 4 (fail closed) instead of failing as a bug.
"""

from __future__ import annotations

import argparse
import sys

from tactful.core.cli.context import Context
from tactful.core.errors import MemoryUnavailable


def warn_plugins(host: object) -> None:
    for problem in getattr(host, "load_errors", []):
        print(f"tactful: warning: {problem}", file=sys.stderr)


def send(context: Context, args: argparse.Namespace) -> int:
    try:
        from tactful.core.plugins import host
        from tactful.core.send.pipeline import Pipeline, SendRequest
    except ImportError as exc:
        raise MemoryUnavailable(f"refused: the memory module cannot be loaded ({exc}); "
                                "nothing was sent — reinstall tactful") from exc
    plugins = host()
    plugins.load()
    warn_plugins(plugins)
    pipeline = Pipeline(config=context.config, home=context.home, people=context.people,
                        settings=context.settings, host=plugins)
    request = SendRequest(platform=args.platform, text=args.text, to=args.to,
                          reply_to=args.reply_to, dry_run=args.dry_run, again=args.again)
    outcome = pipeline.send(request)
    print(outcome.summary())
    for warning in outcome.aftermath.warnings:
        print(f"tactful: warning: {warning}", file=sys.stderr)
    return 0
