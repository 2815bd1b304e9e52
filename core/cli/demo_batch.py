"""One platform's batch for `tactful demo`, in a process of its own: warmed up first, run on
the word "go".

Warming up opens a session with the platform's adapter and closes it, which imports the
platform's library (aiogram takes seconds) while the demo is still writing memory; nothing is
read or sent. Then, when the demo writes a line to standard input (memory is ready: the
do-not-engage accounts are marked), it runs `tactful routine run reply-PLATFORM --json` in this
same process. Only the demo starts it: `python -m tactful.core.cli.demo_batch HOME CONFIG P`.
"""

from __future__ import annotations

import sys

from tactful.core.cli.main import main


def warm_up(home: str, config: str, platform: str) -> None:
    from tactful.core.cli.context import Context
    from tactful.core.send import credentials
    from tactful.core.send.adapters import adapter_for, settings_for

    context = Context(home_arg=home, config_arg=config)
    adapter = adapter_for(platform, context.config, context.plugins)
    account = settings_for(platform, context.config).account
    adapter.open(credentials.read(platform, account, adapter.read_fields)).close()


def run(argv: list[str]) -> int:
    home, config, platform = argv
    try:
        warm_up(home, config, platform)
    except Exception as exc:  # noqa: BLE001 — the real run below says what is wrong, properly
        print(f"warm-up: {type(exc).__name__}", file=sys.stderr)
    print("ready", flush=True)
    sys.stdin.readline()  # "go": memory is ready
    return main(["--home", home, "--config", config, "routine", "run", f"reply-{platform}",
                 "--json"])


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
