"""What every small SQLite file of the home shares (ledger, inbox, the companion's store)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

from tactful.core.errors import TactfulError


@contextmanager
def immediate(db: sqlite3.Connection,
              failed: Callable[[sqlite3.Error], TactfulError]) -> Iterator[sqlite3.Connection]:
    """One write transaction that takes the write lock at once (`BEGIN IMMEDIATE`), so a
    read-then-write inside it cannot race another process; rolled back on any exception, and a
    database error becomes the caller's tactful error."""
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    except sqlite3.Error as exc:
        raise failed(exc) from exc


Step = str | Callable[[sqlite3.Connection], None]


def migrate(db: sqlite3.Connection, steps: Sequence[Step],
            transaction: Callable[[], AbstractContextManager[sqlite3.Connection]]) -> None:
    """Run the numbered migrations `PRAGMA user_version` says have not run, each in its own
    transaction (SQL statements separated by ";", or a function). After migrating an existing
    file, VACUUM: no free page keeps what a migration blanked."""
    (done,) = db.execute("PRAGMA user_version").fetchone()
    if done >= len(steps):
        return
    for number, step in enumerate(steps[done:], start=done + 1):
        with transaction() as tx:
            if isinstance(step, str):
                for statement in filter(str.strip, step.split(";")):
                    tx.execute(statement)
            else:
                step(tx)
            tx.execute(f"PRAGMA user_version = {number}")
    if done:
        db.execute("VACUUM")
