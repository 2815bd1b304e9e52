"""Group commit for one SQLite connection whose writers are tasks of one asyncio loop
(docs/companion.md, "Throughput"): the companion's store and its send ledger use it.

A durable commit costs a few fsyncs whatever it holds, so the writes of every turn in flight go
into one open transaction, and one commit (run in a thread of its own) makes all of them durable
at once. A writer that depends on its writes being on disk awaits `durable()`: it returns once a
commit holding everything written before the call is done, and raises when the commit that held
this task's own writes failed (they are gone: fail closed).

Choices made here:
- Each write block is a SAVEPOINT inside the open transaction: a block that raises undoes only
  itself, never another turn's writes.
- A write schedules a commit on the loop (`call_soon`, then one more loop turn), so the turns
  that are ready add their writes first; the transaction never stays open longer than one
  commit round, and another process waiting for the file's write lock gets it between rounds.
- The commit runs in one thread of its own while the loop goes on; the connection's lock is held
  meanwhile, so a task that touches the database waits for the commit to finish (a write made
  after it began goes into the next transaction).
- Without a running loop (a synchronous caller, a test), a write commits at once.
- `flush()` commits now, on the caller's thread: erasure commits the group before its own
  transaction and VACUUM, which cannot run inside one.
- Which of the task's writes are not yet confirmed durable is kept in a `ContextVar`, so it
  follows the task (and the tasks it starts), never another one.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar

from tactful.core.errors import TactfulError


class GroupCommit:
    def __init__(self, db: sqlite3.Connection, lock: threading.RLock,
                 failed: Callable[[sqlite3.Error], TactfulError], name: str) -> None:
        self.db, self.lock, self.failed = db, lock, failed
        self.generation = 0  # the open transaction's number (or the last one's, when none is)
        self.open = False
        self.committed = 0  # every generation up to this one is done (committed or failed)
        self.commits = 0  # durable commits made: what the bench and the tests count
        self._failures: dict[int, sqlite3.Error] = {}
        self._since: ContextVar[int] = ContextVar(f"unconfirmed-{name}", default=0)
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._task: asyncio.Task[None] | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"commit-{name}")

    # ---- writing (the caller holds `lock`) --------------------------------------------------

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write block inside the group's open transaction (begun here when none is)."""
        db = self.db
        try:
            if not self.open:
                db.execute("BEGIN IMMEDIATE")
                self.open = True
                self.generation += 1
            db.execute("SAVEPOINT grouped")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK TO grouped")
                db.execute("RELEASE grouped")
                raise
            db.execute("RELEASE grouped")
            if not self._since.get():
                self._since.set(self.generation)
        except sqlite3.Error as exc:
            raise self.failed(exc) from exc
        finally:
            if self.open:
                # Also after a block that failed: the transaction it opened must not keep the
                # file's write lock beyond this round.
                self._schedule()

    def _schedule(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()  # nobody to wait for: commit now
            return
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._task = loop.create_task(self._committer())

    async def _committer(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(0)  # one more loop turn: the ready turns add their writes
            if not self.open:
                self._wake()  # a flush may have committed meanwhile
                break
            await loop.run_in_executor(self._thread, self._commit)
            self._wake()

    def _commit(self) -> None:
        with self.lock:
            if not self.open:
                return
            generation = self.generation
            try:
                self.db.execute("COMMIT")
                self.commits += 1
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
                self._failures[generation] = exc
            self.open = False
            self.committed = generation

    def _wake(self) -> None:
        still = []
        for target, future in self._waiters:
            if target <= self.committed:
                if not future.done():
                    future.set_result(None)
            else:
                still.append((target, future))
        self._waiters = still

    def flush(self) -> None:
        """Commit the open transaction now, on this thread (a no-op when none is open); raises
        when that commit fails."""
        with self.lock:
            generation = self.generation
            self._commit()
            failure = self._failures.get(generation)
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop()
            self._wake()
        if failure is not None:
            raise self.failed(failure) from failure

    # ---- waiting ----------------------------------------------------------------------------

    async def durable(self) -> None:
        """Return once everything written before this call is committed; raise (the tactful
        error for this database) when a commit holding this task's writes failed."""
        first = self._since.get()
        target = self.generation
        if self.committed < target:
            future = asyncio.get_running_loop().create_future()
            self._waiters.append((target, future))
            if self._task is None or self._task.done():
                self._schedule()
            await future
        self._since.set(0)
        failure = next((exc for generation, exc in self._failures.items()
                        if first and first <= generation <= target), None)
        if failure is not None:
            raise self.failed(failure) from failure

    def close(self) -> None:
        """Commit what is open, and stop the commit thread."""
        try:
            self.flush()
        finally:
            self._thread.shutdown(wait=True)
