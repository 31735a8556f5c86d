"""The run store's tables, and the migrations that bring any older store to them.

The schema is versioned with ``PRAGMA user_version`` and upgraded by the ordered
:data:`MIGRATIONS`; a store newer than this tool is refused with one line.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..errors import StoreError

__all__ = [
    "EVENTS_STORED",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "TASKS_DONE",
    "migrate",
    "pause_before_migrating",
    "rollback",
    "schema_version",
    "tables_of_runs",
]

MIGRATIONS: tuple[str, ...] = (
    # 1: the first schema (stores written before versioning have these tables at version 0).
    """
    CREATE TABLE IF NOT EXISTS runs (
        id TEXT PRIMARY KEY,
        workflow_name TEXT NOT NULL,
        workflow_path TEXT NOT NULL,
        workflow_base TEXT,
        workflow_source TEXT NOT NULL,
        workflow_digest TEXT NOT NULL,
        payload_text TEXT NOT NULL,
        payload_digest TEXT NOT NULL,
        plan_digest TEXT NOT NULL,
        tasks_total INTEGER NOT NULL,
        status TEXT NOT NULL,
        run_digest TEXT,
        started_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS events (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        final INTEGER NOT NULL,
        canonical TEXT NOT NULL,
        started_at REAL,
        ended_at REAL,
        traceback TEXT,
        PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS outputs (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        task TEXT NOT NULL,
        text TEXT NOT NULL,
        digest TEXT NOT NULL,
        PRIMARY KEY (run_id, task)
    ) WITHOUT ROWID;
    """,
    # 2: leases (who is running a run, until when), wall-clock times beside the trace.
    """
    ALTER TABLE runs ADD COLUMN lease_owner TEXT;
    ALTER TABLE runs ADD COLUMN lease_until REAL;
    ALTER TABLE events ADD COLUMN wall REAL;
    """,
    # 3: what each attempt printed or logged, beside the trace (never in a digest).
    """
    CREATE TABLE IF NOT EXISTS logs (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        task TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        text TEXT NOT NULL,
        truncated INTEGER NOT NULL,
        PRIMARY KEY (run_id, task, attempt)
    ) WITHOUT ROWID;
    """,
    # 4: what a re-run was forked from, {"run_digest", "task"} as JSON (never in a digest).
    """
    ALTER TABLE runs ADD COLUMN forked_from TEXT;
    """,
    # 5: which worker ran each attempt (0: the run's own thread), for the timeline.
    """
    ALTER TABLE events ADD COLUMN worker INTEGER NOT NULL DEFAULT 0;
    """,
    # 6: a group commit's batch of whole tasks is one row (see .batch_rows); runs recorded
    # before keep their rows in events and outputs.
    """
    CREATE TABLE IF NOT EXISTS batches (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        events INTEGER NOT NULL,
        tasks INTEGER NOT NULL,
        canonical TEXT NOT NULL,
        times BLOB NOT NULL,
        workers TEXT,
        tracebacks TEXT,
        outputs TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    """,
    # 7: what the outside world answered each attempt (docs/recording.md): one exchange per
    # row, as export 1.2 writes it in attempts[].io; beside the trace, never in a digest.
    """
    CREATE TABLE IF NOT EXISTS calls (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        task TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        exchange TEXT NOT NULL,
        PRIMARY KEY (run_id, task, attempt, seq)
    ) WITHOUT ROWID;
    """,
    # 8: the run browser reads a page of runs in their default order (newest first) and
    # filters by status, without reading every row (see .run_query).
    """
    CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started_at DESC, id DESC);
    CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status);
    """,
    # 9: a what-if re-run's overrides (export 1.3's forked_from.overrides) as a JSON list;
    # beside the trace, never in a digest.
    """
    ALTER TABLE runs ADD COLUMN overrides TEXT;
    """,
    # 10: how a run that records its calls records them, {"volatile", "secret_headers"} as
    # JSON (the headers beside those always left out), so that resuming it records its
    # further attempts alike: a header the user kept out stays out. NULL: it records nothing.
    """
    ALTER TABLE runs ADD COLUMN recording TEXT;
    """,
)
"""Schema migrations in order; the store's ``user_version`` counts those applied."""

SCHEMA_VERSION = len(MIGRATIONS)

SCHEMA_VERSION = len(MIGRATIONS)

# Stored events and finished tasks of the run ``runs.id``, in both layouts (see MIGRATIONS);
# TOTAL, not SUM: a hand-damaged count never overflows (reading it is refused later).
EVENTS_STORED = (
    "((SELECT COUNT(*) FROM events WHERE run_id = runs.id) + "
    "(SELECT TOTAL(events) FROM batches WHERE run_id = runs.id))"
)
TASKS_DONE = (
    "((SELECT COUNT(*) FROM events WHERE run_id = runs.id AND final = 1) + "
    "(SELECT TOTAL(tasks) FROM batches WHERE run_id = runs.id))"
)


def rollback(db: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open: SQLite has already rolled back after a full
    disk or an I/O error, and a second ROLLBACK would hide that cause behind its own error."""
    if db.in_transaction:
        db.execute("ROLLBACK")


def schema_version(db: sqlite3.Connection, path: Path) -> int:
    """The store's schema version, checked: a newer store, another program's database or a
    negative version is refused."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: the run store has schema version {version}, newer than this "
            f"harness-tui understands ({SCHEMA_VERSION}); upgrade harness-tui or use "
            "another --store"
        )
    if version == 0:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        if tables and "runs" not in tables:  # someone else's database: never adopt it
            raise StoreError(f"{path}: not a harness-tui run store")
    elif version < 0:  # no migration starts below 0 (MIGRATIONS[-1] would run)
        raise StoreError(f"{path}: not a harness-tui run store (schema {version})")
    return version


def migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to :data:`SCHEMA_VERSION` in one transaction under the write lock,
    reading the version again inside it: of processes opening an old store at once, the
    first upgrades it and the others find nothing left to do (a version read before the
    lock may be stale, and running a migration twice fails: a column added twice)."""
    try:
        db.execute("BEGIN EXCLUSIVE")
        version = schema_version(db, path)
        for number in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[number].split(";"):
                if statement.strip():
                    db.execute(statement)
        if version < SCHEMA_VERSION:
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        rollback(db)
        raise


def pause_before_migrating(path: Path, version: int | None) -> None:
    """Called after a store's version is read (``None``: there is no store yet) and before it
    is created or upgraded; tests replace it to hold two processes at that point together."""


def tables_of_runs(db: sqlite3.Connection) -> list[str]:
    """Every table whose rows belong to a run (declared with a foreign key to ``runs``),
    quoted: a migration that adds one is covered by :meth:`RunStore.delete` as it is."""
    names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    quoted_names = ['"' + name.replace('"', '""') + '"' for name in names]
    return [
        quoted
        for quoted in quoted_names
        if any(fk[2] == "runs" for fk in db.execute(f"PRAGMA foreign_key_list({quoted})"))
    ]
