"""Benchmark the companion on many workers (docs/companion.md, "Running on many workers"): a
private PostgreSQL cluster, one `tactful companion poll`, N `tactful companion worker`
processes, the Telegram emulator in this process, and a real command responder that thinks for
a fixed time (a model's latency is what a worker waits on).

Side by side in one run, each on a fresh database: 1 worker (the baseline), 2 and 4 workers,
each with `parallel_turns` 2. Figures: messages per second from the moment the updates are
queued until the last answer is in the emulator (median of the repeats), and the ratio to one
worker. Every answer is checked: once and in order per chat.

Run: .venv/bin/python bench/companion_workers.py [--chats 8] [--messages 4] [--think 0.3]
     [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tactful.adapters.telegram.emulator import TelegramEmulator  # noqa: E402
from tests import recording_keyring  # noqa: E402
from tests.companion import pgcluster  # noqa: E402

RESPONDER = ROOT / "tests" / "companion" / "echo_responder.py"


def _config(emulator: TelegramEmulator, dsn: str, folder: Path, think: float) -> str:
    command = json.dumps([sys.executable, str(RESPONDER), str(folder), str(think)])
    return ("persona:\n  name: galatea\n  timezone: UTC\n"
            "platforms:\n  telegram:\n    account: pal_bot\n    mode: companion\n"
            f"    base_url: {emulator.base_url}\n"
            "responders:\n  echo:\n    kind: command\n"
            f"    command: {command}\n"
            "    timeout: 60\n"
            f"companion:\n  responder: echo\n  database: {json.dumps(dsn)}\n"
            "  join_seconds: 0\n  typing_pace: 0\n  release_tick_seconds: 0.5\n"
            "  release_jitter_min_seconds: 0\n  release_jitter_max_seconds: 0\n"
            "  window_messages: 1000\n  daily_cap: 10000\n  checkins: false\n"
            "  parallel_turns: 2\n")


def one(cluster: pgcluster.Cluster, workers: int, chats: int, messages: int, think: float,
        tmp: Path, run: int) -> float:
    base = tmp / f"w{workers}-{run}"
    (base / "home" / "people").mkdir(parents=True)
    (base / "responder").mkdir()
    dbname = f"bench_{workers}_{run}"
    cluster.psql(f"CREATE DATABASE {dbname}", dbname="postgres")
    env = {**os.environ, "TACTFUL_COMPANION_TEST_TIMERS": "1",
           "TACTFUL_HOME": str(base / "home"), "TACTFUL_TEST_KEYRING": str(tmp / "keyring.json"),
           "PYTHON_KEYRING_BACKEND": "tests.recording_keyring.RecordingKeyring",
           "PYTHONPATH": str(ROOT)}
    os.environ["TACTFUL_TEST_KEYRING"] = str(tmp / "keyring.json")
    with TelegramEmulator() as emulator:
        recording_keyring.store("telegram", "pal_bot", "token", emulator.token)
        config = base / "tactful.yaml"
        config.write_text(_config(emulator, cluster.dsn(dbname), base / "responder", think))
        logs = []
        processes = []
        for role in ["poll"] + ["worker"] * workers:
            log = (base / f"{role}-{len(processes)}.log").open("wb")
            logs.append(log)
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "tactful", "--config", str(config), "companion", role],
                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=base))
        try:
            deadline = time.monotonic() + 240
            while sum(p.read_text().count("_start\"") for p in base.glob("*.log")) < \
                    workers + 1:
                if time.monotonic() > deadline:
                    raise SystemExit("the workers did not start: " + " ".join(
                        p.read_text()[-500:] for p in base.glob("*.log")))
                time.sleep(0.1)
            names = [f"user{c}" for c in range(chats)]
            ids = {n: emulator.add_user(n) for n in names}
            started = time.monotonic()
            for m in range(messages):
                for c, name in enumerate(names):
                    emulator.add_post(name, f"message c{c}-m{m}")
            expected = chats * messages

            def answered() -> int:
                return sum(len(s["text"].split()) - 1 for s in emulator.sent()
                           if s["text"].startswith("got "))

            while answered() < expected:
                if time.monotonic() - started > 600:
                    raise SystemExit("not every message was answered in 10 minutes")
                time.sleep(0.02)
            elapsed = time.monotonic() - started
            for c, name in enumerate(names):
                tokens = [t for s in emulator.sent() if s["chat_id"] == ids[name]
                          and s["text"].startswith("got ") for t in s["text"].split()[1:]]
                assert tokens == [f"c{c}-m{m}" for m in range(messages)], (name, tokens)
        finally:
            for process in processes:
                process.send_signal(signal.SIGTERM)
            for process in processes:
                process.wait(timeout=60)
            for log in logs:
                log.close()
    return expected / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chats", type=int, default=8)
    parser.add_argument("--messages", type=int, default=4)
    parser.add_argument("--think", type=float, default=0.3)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    cluster = pgcluster.start("postgres_unused")
    try:
        with tempfile.TemporaryDirectory() as folder:
            rates: dict[int, list[float]] = {1: [], 2: [], 4: []}
            for run in range(args.repeat):
                for workers in rates:  # interleaved: the machine's load hits all alike
                    rates[workers].append(one(cluster, workers, args.chats, args.messages,
                                              args.think, Path(folder), run))
    finally:
        cluster.stop()
    load = os.getloadavg()[0]
    print(f"{args.chats} chats x {args.messages} messages, responder thinks {args.think}s, "
          f"parallel_turns 2, load {load:.1f} on {os.cpu_count()} cores")
    baseline = statistics.median(rates[1])
    for workers, found in rates.items():
        median = statistics.median(found)
        print(f"  {workers} worker(s): {median:6.2f} messages/s (median of {len(found)}), "
              f"x{median / baseline:.2f} of one worker")


if __name__ == "__main__":
    main()
