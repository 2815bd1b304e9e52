"""What knowing a send's holder costs the ledger (docs/sending.md, "Repair").

Side by side in one run, on a fresh home, every commit durable (synchronous=FULL):
  * a send's ledger work as `tactful send` does it, one ledger per process: open, claim,
    sent, remembered, close — the holder's lock taken at the claim, dropped at the close;
  * the holder alone: its lock file made, locked and renamed into view, then removed;
  * a repair that finds nothing (`unremembered`, the baseline every send and batch pays);
  * a repair's look at a row whose sender is alive (`take` answers None) and at one whose
    sender is gone (`take` holds it; then remembered).

Run: .venv/bin/python bench/ledger_holders.py [--repeat 200] [--dir FOLDER]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from tactful.core.send.ledger import Ledger
from tactful.core.send.owners import Holder

AT = datetime(2026, 12, 1, 12, tzinfo=UTC)


def timed(step: Callable[[int], None], repeat: int) -> float:
    times = []
    for n in range(repeat):
        start = time.perf_counter()
        step(n)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def sent_row(ledger: Ledger, key: str) -> None:
    ledger.claim([key], platform="bench", action="post", reply_to=None, handle=None,
                 thread=None, mentions=[], text="hello", at=AT, again=False)
    ledger.mark_sent([key], post_id=key, url=f"https://bench.example/{key}", at=AT)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--dir", default=None, help="where the home goes (its file system)")
    args = parser.parse_args()
    repeat = args.repeat
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        home = Path(folder)
        Ledger(home).close()

        def one_send(n: int) -> None:
            ledger = Ledger(home)
            sent_row(ledger, f"send-{n}")
            ledger.mark_remembered([f"send-{n}"])
            ledger.close()

        def holder(_: int) -> None:
            Holder(home).close()

        repairer = Ledger(home)
        nothing = timed(lambda _: repairer.unremembered() and None, repeat)
        sender = Ledger(home)
        for n in range(repeat):
            sent_row(sender, f"alive-{n}")
        alive = timed(lambda n: repairer.take(f"alive-{n}") and None, repeat)
        sender.close()  # gone: every row it held may be repaired now

        def take_gone(n: int) -> None:
            assert repairer.take(f"alive-{n}") is not None
            repairer.mark_remembered([f"alive-{n}"])

        gone = timed(take_gone, repeat)
        repairer.close()
        send, lock = timed(one_send, repeat), timed(holder, repeat)
    print(f"median of {repeat}, ms")
    print(f"a send's ledger work (open, claim, sent, remembered, close)  {send:8.2f}")
    print(f"  of which the holder's lock (made, locked, removed)         {lock:8.2f}"
          f"  ({lock / send:.0%})")
    print(f"repair finding nothing (unremembered, the baseline)          {nothing:8.2f}")
    print(f"repair: take of a send whose sender is alive (left alone)    {alive:8.2f}"
          f"  ({alive / nothing:.1f}x the baseline)")
    print(f"repair: take of a send whose sender is gone, then remembered {gone:8.2f}")


if __name__ == "__main__":
    main()
