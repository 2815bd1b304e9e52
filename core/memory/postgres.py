"""What the PostgreSQL-backed stores share (the companion's store, the send ledger, the queue of
Telegram updates), when the companion runs on many workers (docs/companion.md, "Running on many
workers"). The embedded default is SQLite (core/memory/sqlite.py); this is its counterpart.

Choices made here:
- One `Connection` speaks the SQL of the SQLite modules (`?` placeholders, `INSERT OR IGNORE`,
  `VACUUM`), so the store and the ledger keep one copy of their queries and only their
  connection, transactions and a few dialect bits differ. Each store lives in a schema of its
  own (the companion's per bot, the ledger's per home), named on the connection's search path,
  so the SQLite table names stand as they are.
- Every write transaction first takes a transaction-level advisory lock of its schema: writers
  are serialized as SQLite's `BEGIN IMMEDIATE` serializes them, so a read-then-write (the
  ledger's claim and its quota count) cannot race another worker.
- `VACUUM` means "leave no byte of deleted rows": `VACUUM (FULL)` of every table of the schema
  (new files, the old ones truncated), then a WAL switch and a checkpoint, so the WAL segments
  that held the rows and the full-page images of their pages are removed. With
  `wal_recycle=off` they are unlinked, never renamed for reuse. `check_erasable` refuses a
  cluster where that cannot hold (archiving, replication slots, kept WAL, missing privileges).
- psycopg is imported here only: `check` and `card` never reach this module.
- Errors never quote a statement's parameters (they may hold a message); a DSN is shown without
  its password.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from tactful.core.errors import BadInput, TactfulError

if TYPE_CHECKING:
    import psycopg

Failed = Callable[[Exception], TactfulError]


def lock_key(*parts: object) -> int:
    """A signed 64-bit advisory lock key for these parts (a hash: collisions only serialize)."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def shown(dsn: str) -> str:
    """The DSN as it may be printed: no password."""
    try:
        from psycopg.conninfo import conninfo_to_dict
        parts = conninfo_to_dict(dsn)
    except Exception:  # noqa: BLE001 — a DSN that does not parse is shown by its kind only
        return "(a connection string that does not parse)"
    parts.pop("password", None)
    return " ".join(f"{k}={v}" for k, v in sorted(parts.items())) or "(libpq defaults)"


def check_dsn(dsn: str, where: str = "companion.database") -> str:
    """A DSN that parses and names no password (secrets never live in the YAML)."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(dsn)
    except Exception:  # noqa: BLE001 — psycopg's message may quote the password
        raise BadInput(f"{where}: not a PostgreSQL connection string; write it as "
                       "postgresql://USER@HOST:PORT/DB or 'host=… dbname=…'") from None
    if "password" in parts:
        raise BadInput(f"{where} holds a password; remove it and put it in ~/.pgpass (or a "
                       "libpq service file, PGSERVICEFILE), never in the config")
    return dsn


def _translate(sql: str) -> str:
    """SQLite's spelling of the shared queries, in PostgreSQL's."""
    # A parameter only tested for NULL has no type PostgreSQL can infer: it is text.
    sql = re.sub(r"\?(\s+IS\s+NULL)", r"?::text\1", sql.replace("%", "%%"))
    sql = sql.replace("?", "%s")
    if sql.lstrip().upper().startswith("INSERT OR IGNORE INTO"):
        sql = sql.replace("INSERT OR IGNORE INTO", "INSERT INTO", 1) + " ON CONFLICT DO NOTHING"
    # SQLite's two-argument max() is PostgreSQL's greatest().
    return sql.replace("max(coalesce(", "greatest(coalesce(")


class Connection:
    """One psycopg connection (autocommit; transactions are explicit) in one schema."""

    def __init__(self, dsn: str, schema: str, failed: Failed, *, name: str) -> None:
        import psycopg
        from psycopg import sql

        self.schema, self.failed = schema, failed
        self._lock = threading.RLock()
        self._depth = 0
        self._writer = lock_key("tactful-schema-writer", schema)
        try:
            self.raw: psycopg.Connection[Any] = psycopg.connect(
                dsn, autocommit=True, application_name=name, connect_timeout=10)
        except psycopg.Error as exc:
            raise failed(exc) from None
        try:
            self.raw.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                sql.Identifier(schema)))
        except psycopg.errors.UniqueViolation:
            pass  # another worker made it at the same moment
        except psycopg.Error as exc:
            self.raw.close()
            raise failed(exc) from None
        self.raw.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))

    def close(self) -> None:
        with self._lock:
            self.raw.close()

    def execute(self, statement: str, args: Sequence[object] = ()) -> psycopg.Cursor[Any]:
        import psycopg

        with self._lock:
            if statement.strip().upper() == "VACUUM":
                self.scrub()
                return self.raw.cursor()
            try:
                return self.raw.execute(_translate(statement), tuple(args))
            except psycopg.Error as exc:
                raise self.failed(exc) from None

    def executemany(self, statement: str, rows: Sequence[Sequence[object]]) -> psycopg.Cursor[Any]:
        import psycopg

        with self._lock:
            cursor = self.raw.cursor()
            try:
                cursor.executemany(_translate(statement), [tuple(r) for r in rows])
            except psycopg.Error as exc:
                raise self.failed(exc) from None
            return cursor

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One write transaction, serialized with every other writer of this schema; nested
        calls join the outer one."""
        import psycopg

        with self._lock:
            if self._depth:
                yield self
                return
            try:
                with self.raw.transaction():
                    self.raw.execute("SELECT pg_advisory_xact_lock(%s)", (self._writer,))
                    self._depth += 1
                    try:
                        yield self
                    finally:
                        self._depth -= 1
            except psycopg.Error as exc:
                raise self.failed(exc) from None

    def tables(self) -> list[str]:
        rows = self.raw.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s "
                                "ORDER BY tablename", (self.schema,)).fetchall()
        return [str(name) for (name,) in rows]

    def scrub(self) -> None:
        """No byte of deleted rows left in the cluster's files: every table of the schema
        rewritten, then the WAL that held them removed (see the module's docstring)."""
        import psycopg
        from psycopg import sql

        with self._lock:
            try:
                for table in self.tables():
                    self.raw.execute(sql.SQL("VACUUM (FULL) {}.{}").format(
                        sql.Identifier(self.schema), sql.Identifier(table)))
                self.raw.execute("CHECKPOINT")
                self.raw.execute("SELECT pg_switch_wal()")
                self.raw.execute("CHECKPOINT")
            except psycopg.Error as exc:
                raise self.failed(exc) from None


def check_erasable(db: Connection, where: str) -> None:
    """Refuse a cluster on which `scrub` cannot keep its promise, naming the setting to fix
    (docs/companion.md, "Running on many workers")."""
    settings = dict(db.raw.execute(
        "SELECT name, setting FROM pg_settings WHERE name IN "
        "('wal_recycle', 'archive_mode', 'wal_keep_size')").fetchall())
    problems = []
    if settings.get("wal_recycle") != "off":
        problems.append("wal_recycle must be off (old WAL is renamed for reuse, not removed)")
    if settings.get("archive_mode", "off") != "off":
        problems.append("archive_mode must be off (archived WAL keeps deleted messages)")
    if settings.get("wal_keep_size", "0") != "0":
        problems.append("wal_keep_size must be 0 (kept WAL keeps deleted messages)")
    (slots,) = db.raw.execute("SELECT count(*) FROM pg_replication_slots").fetchone() or (0,)
    if slots:
        problems.append("no replication slot may exist (a slot keeps old WAL)")
    (may,) = db.raw.execute(
        "SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) OR "
        "(pg_has_role('pg_checkpoint', 'MEMBER') AND "
        "has_function_privilege('pg_switch_wal()', 'EXECUTE'))").fetchone() or (False,)
    if not may:
        problems.append("the role needs CHECKPOINT and pg_switch_wal(): GRANT pg_checkpoint TO "
                        "<role>; GRANT EXECUTE ON FUNCTION pg_switch_wal() TO <role>")
    (foreign,) = db.raw.execute("SELECT count(*) FROM pg_tables WHERE schemaname = %s AND "
                                "tableowner <> current_user", (db.schema,)).fetchone() or (0,)
    if foreign:
        # VACUUM (FULL) of a table the role does not own only warns, and scrubs nothing.
        problems.append(f"the role must own every table of the schema {db.schema} (ALTER "
                        "TABLE … OWNER TO it)")
    if problems:
        raise BadInput(f"{where}: this PostgreSQL cluster cannot erase a user without a trace: "
                       + "; ".join(problems))
