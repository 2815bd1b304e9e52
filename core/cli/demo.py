"""`tactful demo`: the whole loop on every platform, in a throwaway home, in under a minute.

An emulator starts on loopback for every platform whose plugin offers one (the four built-in
ones: `register_emulators`), and a morning of mentions arrives on each: a regular, a
stranger, a do-not-engage account, a bot in a thread, an injection attempt, a spammer and
someone asking to be left alone. The batch repliers run with the offline template responder
through the real libraries (tweepy, atproto, httpx, aiogram) and the guarded pipeline, then the
demo shows what was sent, what was skipped and why, a hard stop, the cards and the desk. No
real credential (a throwaway keyring holds dummies), no network beyond 127.0.0.1.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import tempfile
from pathlib import Path

from tactful.core.cli.context import Context
from tactful.core.cli.demo_world import Emulated, ThrowawayKeyring, emulators, morning
from tactful.core.cli.output import bold


def _step(title: str) -> None:
    print("\n" + bold(f"## {title}"))


def _config(home: Path, started: dict[str, Emulated]) -> Path:
    lines = ["persona:", "  name: galatea", "platforms:"]
    for name, world in started.items():
        # Quoted: an account may be all digits (a Facebook Page id), and YAML would read a number.
        lines += [f"  {name}:", f"    account: {json.dumps(world.emulator.persona)}",
                  f"    base_url: {world.emulator.base_url}"]
    lines.append("routines:")
    for name in started:
        lines += [f"  reply-{name}:", "    kind: batch-reply", f"    platform: {name}",
                  "    responder: template", "    max_per_run: 10", "    pause: 0"]
    path = home / "tactful.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(context: Context, args: argparse.Namespace) -> int:
    import keyring

    from tactful.core import plugins
    from tactful.core.cli.main import main

    home = Path(tempfile.mkdtemp(prefix="tactful-demo-"))
    previous = keyring.get_keyring()
    vault = ThrowawayKeyring()
    keyring.set_keyring(vault)
    # A host of its own for the demo's length: its config names the platforms anew.
    fresh_host = contextlib.ExitStack()
    fresh_host.enter_context(plugins.using())

    def tactful(*argv: str, show: bool = True) -> int:
        if show:
            print("$ tactful " + " ".join(a if a.replace("_", "").replace("-", "").replace(
                ".", "").isalnum() else repr(a) for a in argv))
        code = main(["--home", str(home / "memory"), "--config", str(config), *argv])
        if show:
            print(f"(exit {code})")
        return code

    try:
        with emulators(plugins.host()) as started:
            if not started:
                print("no installed plugin offers an emulator: nothing to show")
                return 1
            config = _config(home, started)
            first, *others = started  # the one every step is shown on; the rest alike
            print(f"A throwaway home: {home}")
            print(f"{len(started)} platform emulators on 127.0.0.1: " + ", ".join(
                f"{n} {w.emulator.base_url}" for n, w in started.items()))
            for name, world in started.items():
                for field, value in world.credentials().items():
                    keyring.set_password("tactful", f"{name}/{world.emulator.persona}/{field}",
                                         value)

            _step("What memory already holds")
            casts = {name: morning(world) for name, world in started.items()}
            for name, who in casts.items():
                tactful("remember", name, who.regular, "--kind", "reply", "--inbound",
                        "--display-name", "Ada Builds", "--they",
                        "asked whether my eval harness handles multi-turn chats",
                        "--topic", "evals", "--open", "promised to report back on the harness",
                        show=name == first)
                tactful("dne", name, who.flagged, "on", "--reason", "asked me to stop in 2025",
                        show=name == first)
                if who.bot is not None:
                    tactful("set", name, who.bot, "--kind", "bot", show=name == first)
            if others:
                print(f"(the same for {', '.join(others)})")

            _step("A morning of mentions, answered by the batch repliers")
            log = io.StringIO()
            codes = []
            for name, world in started.items():
                print(f"\n{name}:")
                codes.append(_batch(name, home, config, log))
                for answered, text in world.sent():
                    print(f"  sent → {answered}: {text!r}")
                for event in _events(log, name):
                    print(f"  skipped @{event['handle']}: {event['reason']}")

            _step("The hard stop: a post to a do-not-engage account, by hand")
            keyring_reads = len(vault.reads)
            flagged = casts[first].flagged
            stop = tactful("send", first, "--to", flagged, "--text",
                           f"@{flagged} about yesterday…")
            print(f"keyring reads during that refusal: {len(vault.reads) - keyring_reads}")

            _step("Cards to read before the next reply")
            tactful("card", first, casts[first].regular)
            tactful("card", first, casts[first].stranger)
            tactful("card", first, casts[first].quiet)
            _step("The desk")
            tactful("hot")
        ok = stop == 3 and all(code == 0 for code in codes)
        return 0 if ok else 1
    finally:
        keyring.set_keyring(previous)
        fresh_host.close()
        if args.keep:
            print(f"\nThe demo home is kept at {home}")
        else:
            shutil.rmtree(home, ignore_errors=True)


def _batch(platform: str, home: Path, config: Path, log: io.StringIO) -> int:
    from tactful.core.schedule import routine
    from tactful.core.schedule.events import EventLog

    context = Context(home_arg=str(home / "memory"), config_arg=str(config))
    result = routine.run_one(f"reply-{platform}", context, context.plugins, dry_run=False,
                             log=EventLog(stream=log, clock=context.now))
    print(f"  {result.summary}")
    return result.exit_code


def _events(log: io.StringIO, platform: str) -> list[dict[str, str]]:
    found = [json.loads(line) for line in log.getvalue().splitlines() if line.strip()]
    return [e for e in found if e.get("event") == "batch.skipped" and e.get("platform") == platform]
