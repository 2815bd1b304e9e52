"""`tactful demo`: the whole loop on every platform, in a throwaway home, in about ten seconds.

An emulator starts on loopback for every platform whose plugin offers one
(`register_emulators`), and a morning of mentions arrives on each: a regular, a stranger, a
do-not-engage account, a bot in a thread, an injection attempt, a spammer and someone asking to
be left alone. The batch repliers run with the offline template responder through the real
libraries and the guarded pipeline, then the demo shows what was sent, what was skipped and why,
a hard stop, the cards and the desk. No real credential (a throwaway keyring holds dummies), no
network beyond 127.0.0.1.

Where the time goes (docs/cli.md): importing the platform libraries, aiogram above all. So this
process imports none of them: the emulators speak plain HTTP, memory is written in-process, and
each platform's batch runs as `tactful routine run` in a process of its own, all started at
once, so the imports overlap instead of adding up; the batches themselves then run one after
the other (quick, once imported).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tactful.core.cli.context import Context
from tactful.core.cli.demo_world import (
    KEYRING_FILE,
    Emulated,
    ThrowawayKeyring,
    emulators,
    morning,
)
from tactful.core.cli.output import bold


def _step(title: str) -> None:
    print("\n" + bold(f"## {title}"), flush=True)


def _config(home: Path, started: dict[str, Emulated]) -> Path:
    lines = ["persona:", "  name: galatea", "  timezone: America/New_York", "platforms:"]
    for name, world in started.items():
        # Quoted: an account may be all digits (a Facebook Page id), and YAML would read a number.
        lines += [f"  {name}:", f"    account: {json.dumps(world.emulator.persona)}",
                  f"    base_url: {world.emulator.base_url}",
                  # The demo's Telegram mornings arrive in private chats (docs/sending.md).
                  "    allow_private: true"]
    lines.append("routines:")
    for name in started:
        lines += [f"  reply-{name}:", "    kind: batch-reply", f"    platform: {name}",
                  "    responder: template", "    max_per_run: 10", "    pause: 0"]
    path = home / "tactful.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _shown(argv: tuple[str, ...]) -> str:
    return " ".join(a if a.replace("_", "").replace("-", "").replace(".", "").isalnum()
                    else repr(a) for a in argv)


def run(context: Context, args: argparse.Namespace) -> int:
    import keyring

    from tactful.core import plugins
    from tactful.core.cli.main import main

    home = Path(tempfile.mkdtemp(prefix="tactful-demo-"))
    memory = home / "memory"
    vault_path = home / "keyring.json"
    previous = keyring.get_keyring()
    vault = ThrowawayKeyring(vault_path)
    keyring.set_keyring(vault)
    # The batch processes find the same throwaway keyring (and nothing of the user's).
    child_env = {**os.environ, KEYRING_FILE: str(vault_path),
                 "PYTHON_KEYRING_BACKEND": "tactful.core.cli.demo_world.ThrowawayKeyring"}
    # A host of its own for the demo's length: its config names the platforms anew.
    fresh_host = contextlib.ExitStack()
    fresh_host.enter_context(plugins.using())

    def tactful(*argv: str, show: bool = True) -> int:
        if show:
            print(f"$ tactful {_shown(argv)}", flush=True)
        # What the command says on stderr (a refusal) is shown where it happened, in order.
        with contextlib.redirect_stderr(sys.stdout if show else _Discard()):
            code = main(["--home", str(memory), "--config", str(config), *argv])
        if show:
            print(f"(exit {code})", flush=True)
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
                f"{n} {w.emulator.base_url}" for n, w in started.items()), flush=True)
            for name, world in started.items():
                for field, value in world.credentials().items():
                    keyring.set_password("tactful", f"{name}/{world.emulator.persona}/{field}",
                                         value)

            casts = {name: morning(world) for name, world in started.items()}
            # Started now, side by side: each imports its platform's library while memory is
            # written below, and waits for the word to run.
            batches = {name: _start_batch(name, memory, config, child_env) for name in started}

            _step("What memory already holds")
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
            _step("Overnight, someone new wrote in: their card before any reply")
            tactful("card", first, casts[first].stranger)

            _step("A morning of mentions, answered by the batch repliers")
            # One after the other (each warmed up long since, so this is quick): two batches
            # on one home at once would each take the other's fresh send for one a crash
            # left unwritten.
            codes = []
            for name in started:
                _go(batches[name])
                codes.append(_report(name, batches[name], memory))

            _step("The hard stop: a post to a do-not-engage account, typed by hand")
            print("(refused on purpose: exit 3 is the hard stop, before any credential is read)")
            keyring_reads = len(vault.reads)
            flagged = casts[first].flagged
            stop = tactful("send", first, "--to", flagged, "--text",
                           f"@{flagged} about yesterday…")
            print(f"keyring reads during that refusal: {len(vault.reads) - keyring_reads}")

            _step("Cards to read before the next reply")
            print("(the regular, with the open promise; the stranger of this morning, who is "
                  "a follower after one exchange; the one who asked to be left alone)")
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


class _Discard:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def _start_batch(platform: str, memory: Path, config: Path,
                 env: dict[str, str]) -> subprocess.Popen[str]:
    """`tactful routine run reply-PLATFORM --json` in a process of its own, warming up until
    told to go (core/cli/demo_batch.py)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tactful.core.cli.demo_batch", str(memory), str(config),
         platform], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


def _go(batch: subprocess.Popen[str]) -> None:
    assert batch.stdin is not None
    with contextlib.suppress(BrokenPipeError):  # it failed already; its report says why
        batch.stdin.write("go\n")
        batch.stdin.close()
    batch.stdin = None  # said and closed: `communicate` has nothing more to send


def _report(platform: str, batch: subprocess.Popen[str], memory: Path) -> int:
    """What one platform's batch did, in the order it happened: its summary, each reply sent
    (from the engagement log: my post's address, to whom, what it said), each skip and why."""
    out, err = batch.communicate(timeout=300)
    print(f"\n{platform}:")
    try:
        result: dict[str, Any] = json.loads(out.removeprefix("ready\n"))
    except ValueError:
        print(f"  the batch failed (exit {batch.returncode}): "
              + (err.strip().splitlines() or ["no message"])[-1])
        return batch.returncode or 1
    print(f"  {result['summary']}")
    for line in _log(memory):
        if line.get("platform") == platform and not line.get("dry_run"):
            where = line.get("url") or "a private chat: no public address"
            print(f"  replied to @{line.get('handle')}: {line.get('text')!r}\n"
                  f"      {where}")
    events = [json.loads(x) for x in err.splitlines() if x.startswith("{")]
    for event in events:
        if event.get("event") == "batch.skipped":
            print(f"  skipped @{event['handle']}: {event['reason']}")
    return int(result["exit_code"])


def _log(memory: Path) -> list[dict[str, Any]]:
    path = memory / "engagement.jsonl"
    if not path.exists():
        return []
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):
            found.append(json.loads(line))
    return found
