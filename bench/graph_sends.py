"""What a reply costs on each Graph platform, side by side: Threads (the baseline), Instagram and
Facebook, each session against its emulator on 127.0.0.1 over httpx.

For every platform: N replies, each the author read the gate makes and the send, timed per
reply (the fastest and the median), and the requests each needed. The loopback emulators
answer in well under a millisecond, so the fastest reply is the client's own cost (httpx, the
Graph base, the mapping), and the round trips are what a real network multiplies.

Run: .venv/bin/python bench/graph_sends.py [N]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from tactful.adapters.meta.facebook.adapter import FacebookAdapter
from tactful.adapters.meta.facebook.emulator import FacebookEmulator
from tactful.adapters.meta.instagram.adapter import InstagramAdapter
from tactful.adapters.meta.instagram.emulator import InstagramEmulator
from tactful.adapters.meta.threads.adapter import ThreadsAdapter
from tactful.adapters.meta.threads.emulator import ThreadsEmulator
from tactful.core.send.adapter import AdapterSettings


def _threads() -> tuple[Any, Any, Callable[[int], str]]:
    emu = ThreadsEmulator("galatea").start()
    adapter = ThreadsAdapter(AdapterSettings("threads", "galatea", base_url=emu.base_url),
                             container_interval=0.0)
    return emu, adapter, lambda i: emu.media_id(emu.add_post(f"user{i}", "@galatea hi"))


def _instagram() -> tuple[Any, Any, Callable[[int], str]]:
    emu = InstagramEmulator("galatea").start()
    adapter = InstagramAdapter(AdapterSettings("instagram", "galatea", base_url=emu.base_url))
    return emu, adapter, lambda i: emu.add_comment(f"user{i}", "nice")


def _facebook() -> tuple[Any, Any, Callable[[int], str]]:
    emu = FacebookEmulator().start()
    adapter = FacebookAdapter(AdapterSettings("facebook", emu.page_id, base_url=emu.base_url))
    return emu, adapter, lambda i: emu.add_comment(str(100_000_000_000_000 + i), "hi")


def measure(make: Callable[[], tuple[Any, Any, Callable[[int], str]]],
            n: int) -> tuple[float, float, float]:
    emu, adapter, seed = make()
    targets = [seed(i) for i in range(n)]
    session = adapter.open({"access_token": emu.token})
    times: list[float] = []
    before = len(emu.requests)
    try:
        session.author(adapter.parse_post(targets[0]))  # warm: the client's connection, /me
        before = len(emu.requests)
        for target in targets:
            ref = adapter.parse_post(target)
            start = time.perf_counter()
            session.author(ref)
            session.send("thanks for writing", reply_to=ref, to=None, mentions={})
            times.append(time.perf_counter() - start)
    finally:
        session.close()
        emu.stop()
    return (min(times) * 1000, statistics.median(times) * 1000,
            (len(emu.requests) - before) / n)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    rows = [("threads", _threads), ("instagram", _instagram), ("facebook", _facebook)]
    results = {name: measure(make, n) for name, make in rows}
    base = results["threads"][0]
    print(f"{n} replies each (author read + send) against loopback emulators; the fastest reply "
          "is the client's own cost, the median adds the machine's load")
    print(f"{'platform':<10} {'fastest ms':>10} {'× threads':>10} {'median ms':>10} "
          f"{'requests/reply':>15}")
    for name, (fastest, median, requests) in results.items():
        print(f"{name:<10} {fastest:>10.2f} {fastest / base:>10.2f} {median:>10.2f} "
              f"{requests:>15.1f}{'  (baseline)' if name == 'threads' else ''}")

if __name__ == "__main__":
    main()
