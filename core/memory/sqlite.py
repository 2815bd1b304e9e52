"""What every small SQLite file of the home shares (ledger, inbox, the companion's store)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager

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
