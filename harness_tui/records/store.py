"""The run store: every run recorded as it happens, in SQLite (stdlib ``sqlite3``).

WAL mode; one transaction per finished task (its events and its committed output together), so
after a crash the store ends at a task boundary and :func:`resume` can go on from there. With
``synchronous=NORMAL`` a committed task survives the process being killed (only a power cut can
lose the last transactions, never corrupt the file).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.clock import Clock
from ..engine.events import RunStatus, TraceEvent
from ..engine.executors import Executor
from ..engine.orchestrator import Run, TaskOrchestrator
from ..workflow.errors import WorkflowError
from ..workflow.loader import Workflow, parse_workflow
from .errors import RecordError
from .export import RunRecord

__all__ = ["RunStore", "StoredRun", "default_store_path"]

SCHEMA = """
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
"""


def default_store_path() -> Path:
    """``runs.sqlite3`` in the user data folder."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("harness-tui", appauthor=False)) / "runs.sqlite3"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def new_run_id() -> str:
    """A sortable, unique run id like ``20261129-101500-a1b2c3``."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A run as the store holds it."""

    id: str
    workflow: Workflow
    payload_text: str
    events: list[TraceEvent]
    outputs: dict[str, str]
    status: str
    tasks_done: int
    tasks_total: int


class RunStore:
    """A SQLite file of runs. Safe to use from one thread at a time (the TUI's run worker)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise RecordError(f"{self.path}: cannot open the run store: {exc}") from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- recording --------------------------------------------------------------------------

    def record(self, run: Run, workflow: Workflow, run_id: str | None = None) -> str:
        """Register a run and attach a listener that records it as it happens; return its id."""
        run_id = run_id or new_run_id()
        base = str(Path(workflow.path).resolve().parent) if workflow.path != "<string>" else None
        with self._transaction() as db:
            db.execute(
                "INSERT INTO runs (id, workflow_name, workflow_path, workflow_base, "
                "workflow_source, workflow_digest, payload_text, payload_digest, plan_digest, "
                "tasks_total, status, started_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    workflow.name,
                    workflow.path,
                    base,
                    workflow.source,
                    workflow.digest,
                    run.payload_text,
                    run.payload_digest,
                    run.plan.digest,
                    len(run.plan),
                    "running",
                    _now(),
                    _now(),
                ),
            )
        self.attach(run, run_id)
        return run_id

    def attach(self, run: Run, run_id: str) -> None:
        """Record the future events of ``run`` under ``run_id``: one transaction per finished
        task, holding its events and its committed output."""
        pending: list[tuple[str, int, int, str, float | None, float | None, str | None]] = []
        db = self._db

        def on_event(event: TraceEvent) -> None:
            final = run.ends_task(event)
            pending.append(
                (
                    run_id,
                    event.seq,
                    int(final),
                    event.canonical_text(),
                    event.started_at,
                    event.ended_at,
                    event.traceback,
                )
            )
            if not final:
                return
            db.execute("BEGIN")
            try:
                db.executemany(
                    "INSERT INTO events (run_id, seq, final, canonical, started_at, ended_at, "
                    "traceback) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    pending,
                )
                commit = run.state.commits.get(event.task)
                if commit is not None and commit.seq == event.seq:
                    db.execute(
                        "INSERT INTO outputs (run_id, task, text, digest) VALUES (?, ?, ?, ?)",
                        (run_id, event.task, commit.text, commit.digest),
                    )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            pending.clear()

        run.add_listener(on_event)

    def finish(self, run: Run, run_id: str) -> None:
        """Record the final status and digest of a run."""
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET status = ?, run_digest = ?, updated_at = ? WHERE id = ?",
                (run.status.value, run.digest if run.finished else None, _now(), run_id),
            )

    # -- reading ----------------------------------------------------------------------------

    def runs(self) -> list[dict[str, Any]]:
        """Every run, newest first."""
        rows = self._db.execute(
            "SELECT id, workflow_name, workflow_path, payload_digest, status, started_at, "
            "(SELECT COUNT(*) FROM events WHERE run_id = runs.id AND final = 1), tasks_total, "
            "run_digest FROM runs ORDER BY started_at DESC, id DESC"
        ).fetchall()
        keys = (
            "id",
            "workflow",
            "path",
            "payload_digest",
            "status",
            "started_at",
            "tasks_done",
            "tasks_total",
            "run_digest",
        )
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def load(self, run_id: str) -> StoredRun:
        """A stored run with its events and outputs.

        Raises:
            RecordError: no such run, or its workflow no longer parses.
        """
        row = self._db.execute(
            "SELECT workflow_path, workflow_base, workflow_source, payload_text, status, "
            "(SELECT COUNT(*) FROM events WHERE run_id = runs.id AND final = 1), tasks_total "
            "FROM runs WHERE id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            raise RecordError(f"no run {run_id!r} in {self.path}")
        path, base, source, payload_text, status, done, total = row
        try:
            workflow = parse_workflow(source, path, base=Path(base) if base else None)
        except WorkflowError as exc:
            raise RecordError(
                f"run {run_id}: stored workflow is invalid: {exc.problems[0]}"
            ) from None
        events = [
            TraceEvent.from_dicts(
                json.loads(canonical),
                {"started_at": started, "ended_at": ended, "traceback": traceback},
            )
            for canonical, started, ended, traceback in self._db.execute(
                "SELECT canonical, started_at, ended_at, traceback FROM events "
                "WHERE run_id = ? ORDER BY seq",
                (run_id,),
            )
        ]
        outputs = dict(
            self._db.execute(
                "SELECT task, text FROM outputs WHERE run_id = ?", (run_id,)
            ).fetchall()
        )
        return StoredRun(run_id, workflow, payload_text, events, outputs, status, done, total)

    def _restore(
        self, stored: StoredRun, executor: Executor | None = None, clock: Clock | None = None
    ) -> Run:
        """The stored run rebuilt in memory; ``resume()`` restores, it executes nothing."""
        orchestrator = TaskOrchestrator(
            stored.workflow.graph,
            executor=executor,
            clock=clock,
            on_failure=stored.workflow.on_failure,
        )
        return orchestrator.resume(json.loads(stored.payload_text), stored.events, stored.outputs)

    def resume(
        self, run_id: str, *, executor: Executor | None = None, clock: Clock | None = None
    ) -> tuple[Workflow, Run]:
        """Rebuild a stored run, attached to the store, ready to continue."""
        stored = self.load(run_id)
        run = self._restore(stored, executor, clock)
        # Events of a task that never finished were not stored; nothing to delete.
        self.attach(run, run_id)
        return stored.workflow, run

    def export(self, run_id: str, redact: Iterable[str] = ()) -> RunRecord:
        """A stored run as an export (no code runs), with ``redact``'s keys redacted."""
        stored = self.load(run_id)
        run = self._restore(stored)
        if stored.status in ("cancelled", "succeeded", "failed"):
            run.status = RunStatus(stored.status)
        return RunRecord.from_run(run, stored.workflow, run_id=run_id, redact=redact)

    def integrity_check(self) -> str:
        """SQLite's own check: ``ok`` when the file is sound."""
        return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])
