"""The run store: every run recorded as it happens, in SQLite (stdlib ``sqlite3``).

WAL mode; group commit: the tasks a run retires are written together, one transaction and one
row (:mod:`.batch_rows`) per batch of whole tasks (their events and committed outputs; their
logs go to a table of their own), when 512 events are pending, 50 ms have passed or the run
pauses, ends or is left (:meth:`RunStore.attach`). After a crash
the store ends at a task boundary and a resume goes on from there, running again the tasks of
the batch that was not written yet: at-least-once for a task's side effects. With
``synchronous=NORMAL`` a committed batch survives the process being killed (only a power cut
can lose the last transactions, never corrupt the file).

The schema is versioned with ``PRAGMA user_version`` and upgraded by the ordered
:data:`MIGRATIONS`; a store newer than this tool is refused with one line. Nothing outside this
module knows SQL (the browser's queries too, :meth:`RunStore.browse`): every
``sqlite3.Error`` becomes a :class:`~.errors.StoreError`.

Run statuses (docs/formats.md, "Run store"): ``running`` while a live process holds the run's lease,
``interrupted`` once that lease is gone (the process died: resumable), ``abandoned`` (left
unfinished in the workbench: resumable), ``succeeded``, ``failed``, ``cancelled``.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..engine.attempt import Executor
from ..engine.capture import UNATTRIBUTED, AttemptLog
from ..engine.clock import Clock
from ..engine.events import RunStatus, Status, TraceEvent
from ..engine.orchestrator import RetiredStep, Run, TaskOrchestrator
from ..engine.recorded_calls import Exchange
from ..engine.resume import ResumeError
from ..workflow.errors import WorkflowError
from ..workflow.loader import Workflow, parse_workflow
from ..workflow.python_source import (
    is_python_ref,
    load_python,
    spec_of_source,
    workflow_from_spec,
)
from .batch_rows import encode_batch, output_line, read_batch
from .errors import RecordError, StoreError
from .export import RunRecord
from .run_query import RunQuery, RunRow, Sort, like_pattern
from .wal import check_wal, keep_copy

__all__ = ["MIGRATIONS", "RunStore", "StoreError", "StoredRun", "default_store_path"]

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
)
"""Schema migrations in order; the store's ``user_version`` counts those applied."""

SCHEMA_VERSION = len(MIGRATIONS)

LEASE_SECONDS = 120.0
"""How long a run's lease lasts without renewal (renewed as tasks retire). On the lease
holder's own host the holder's process is checked directly, so a long task keeps its run."""

_INSERT_BATCH = (
    "INSERT INTO batches (run_id, seq, tasks, events, canonical, times, workers, tracebacks, "
    "outputs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# Stored events and finished tasks of the run ``runs.id``, in both layouts (see MIGRATIONS);
# TOTAL, not SUM: a hand-damaged count never overflows (reading it is refused later).
_EVENTS_STORED = (
    "((SELECT COUNT(*) FROM events WHERE run_id = runs.id) + "
    "(SELECT TOTAL(events) FROM batches WHERE run_id = runs.id))"
)
_TASKS_DONE = (
    "((SELECT COUNT(*) FROM events WHERE run_id = runs.id AND final = 1) + "
    "(SELECT TOTAL(tasks) FROM batches WHERE run_id = runs.id))"
)


_Kinds = tuple[type, ...]
_TEXT: _Kinds = (str,)
_INTEGER: _Kinds = (int,)
_NUMBER: _Kinds = (int, float)
_OPTIONAL_TEXT: _Kinds = (str, type(None))
_OPTIONAL_NUMBER: _Kinds = (int, float, type(None))


def _typed(row: tuple[Any, ...], columns: str, kinds: tuple[_Kinds, ...], run: str) -> None:
    """Refuse a row whose values are not of their columns' kinds (SQLite keeps whatever was
    written: text in an integer column of a damaged or hand-edited store)."""
    for name, value, kind in zip(columns.split(), row, kinds, strict=True):
        if type(value) not in kind:  # bool is no number here, nor a number text
            shown = type(value).__name__
            raise StoreError(f"run {run}: the stored run is damaged: {name} holds a {shown}")


def _done(done: float, total: int) -> int:
    """Tasks done as people should read it: a damaged count is kept within the plan."""
    return int(min(max(done, 0), total))


# REPLACE: a resumed run re-runs an unfinished task from attempt 1, over nothing stored; a
# restored log is never written again, but a replace keeps a second write harmless.
_INSERT_LOG = (
    "INSERT OR REPLACE INTO logs (run_id, task, attempt, text, truncated) VALUES (?, ?, ?, ?, ?)"
)
_INSERT_CALL = (
    "INSERT OR REPLACE INTO calls (run_id, task, attempt, seq, exchange) VALUES (?, ?, ?, ?, ?)"
)

GROUP_EVENTS = 512
"""Group commit: a run's pending events are written once this many are waiting..."""
GROUP_SECONDS = 0.05
"""...or this long after the first of them was queued, whichever comes first."""

RESUMABLE = ("interrupted", "abandoned")
"""Stored statuses beyond the engine's RunStatus: runs left unfinished, which resume takes."""
FINISHED = frozenset(s.value for s in (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED))


def default_store_path() -> Path:
    """``runs.sqlite3`` in the user data folder."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("harness-tui", appauthor=False)) / "runs.sqlite3"


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def new_run_id(epoch: float | None = None) -> str:
    """A sortable, unique run id like ``20261129-101500-a1b2c3`` (UTC)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if epoch is None else epoch))
    return f"{stamp}-{secrets.token_hex(3)}"


def _process_start(pid: int) -> str:
    """When process ``pid`` started, in clock ticks since boot (field 22 of
    ``/proc/<pid>/stat``), or ``""`` where there is no such file to read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return ""
    # Field 2, the command name in parentheses, may hold spaces and ")": count from the last.
    fields = data[data.rfind(b")") + 1 :].split()
    return fields[19].decode("ascii", "replace") if len(fields) > 19 else ""


def lease_owner() -> str:
    """This process, as a lease holder: ``host:pid:start``, with the process start time so
    that another process given the same pid later is not taken for this one."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_process_start(pid)}"


def _owner_parts(owner: str) -> tuple[str, str, str]:
    """``(host, pid, start)`` of a lease owner; owners written before the start time was
    recorded are ``host:pid`` and get an empty start."""
    parts = owner.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and (parts[2].isdigit() or not parts[2]):
        return parts[0], parts[1], parts[2]
    host, _, pid = owner.rpartition(":")
    return host, pid, ""


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


def _lease_live(owner: str | None, until: float | None) -> bool:
    """Whether a lease still holds: on this host, its process exists and (when the start
    time was recorded and can be read) is the same process; elsewhere, until it expires."""
    if not owner:
        return False
    host, pid, start = _owner_parts(owner)
    if host == socket.gethostname() and pid.isdigit():
        if not _process_exists(int(pid)):
            return False
        return not start or _process_start(int(pid)) in (start, "")
    return until is not None and until > time.time()


def _rollback(db: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open: SQLite has already rolled back after a full
    disk or an I/O error, and a second ROLLBACK would hide that cause behind its own error."""
    if db.in_transaction:
        db.execute("ROLLBACK")


def _schema_version(db: sqlite3.Connection, path: Path) -> int:
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


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to :data:`SCHEMA_VERSION` in one transaction under the write lock,
    reading the version again inside it: of processes opening an old store at once, the
    first upgrades it and the others find nothing left to do (a version read before the
    lock may be stale, and running a migration twice fails: a column added twice)."""
    try:
        db.execute("BEGIN EXCLUSIVE")
        version = _schema_version(db, path)
        for number in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[number].split(";"):
                if statement.strip():
                    db.execute(statement)
        if version < SCHEMA_VERSION:
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        _rollback(db)
        raise


def _pause_before_migrating(path: Path, version: int | None) -> None:
    """Called after a store's version is read (``None``: there is no store yet) and before it
    is created or upgraded; tests replace it to hold two processes at that point together."""


# errno values meaning "this file system makes no hard links".
_NO_HARD_LINKS = frozenset(
    getattr(errno, name)
    for name in ("EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "EMLINK")
    if hasattr(errno, name)
)


def _holder(owner: str | None) -> str:
    """A lease owner as people read it: ``process 1234 on host``."""
    if not owner:
        return "another process"
    host, pid, _ = _owner_parts(owner)
    return f"process {pid} on {host}"


@contextmanager
def _damage_is_one_line(run_id: str) -> Iterator[None]:
    """Stored rows that no longer parse (a damaged or hand-edited store) are one line."""
    try:
        yield
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        if isinstance(exc, RecordError | ResumeError):
            raise
        if isinstance(exc, RecursionError):
            exc = ValueError("a value nests too deeply")
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StoreError(f"run {run_id}: the stored run is damaged: {first}") from None


def _writable(path: Path) -> bool:
    """Whether the store file and its folder (where SQLite keeps its -wal and -shm) can be
    written by this process."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _writable_folder(path: Path) -> bool:
    """Whether SQLite can make its -wal and -shm files beside the store."""
    return os.access(path.parent, os.W_OK)


def effective_status(status: str, owner: str | None, until: float | None) -> str:
    """A stored status as people should read it: ``running`` without a live lease is
    ``interrupted``."""
    if status == "running" and not _lease_live(owner, until):
        return "interrupted"
    return status


def _browse_filter(
    query: RunQuery, live: set[str], dead: set[str]
) -> tuple[str, tuple[object, ...]]:
    """The WHERE clause (with its parameters) of :meth:`RunStore.browse`: ``live`` and
    ``dead`` are the ids of the runs stored ``running`` whose lease holds, or is gone."""
    clauses: list[str] = []
    params: list[object] = []
    if query.statuses:
        plain = sorted(query.statuses - {"running"})  # never matches a row stored running
        ids = sorted(
            (live if "running" in query.statuses else set())
            | (dead if "interrupted" in query.statuses else set())
        )
        marks = ", ".join("?" * len(plain))
        # One parameter for any number of ids (a store may hold many dead leases).
        clauses.append(f"(status IN ({marks}) OR id IN (SELECT value FROM json_each(?)))")
        params.extend([*plain, json.dumps(ids)])
    if query.text:
        pattern = like_pattern(query.text)
        columns = ("id", "workflow_name", "workflow_path", "run_digest")
        clauses.append("(" + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in columns) + ")")
        params.extend([pattern] * len(columns))
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


_DURATION = (
    "CASE WHEN status IN ('running', 'interrupted') THEN NULL "
    "ELSE julianday(updated_at) - julianday(started_at) END"
)


def _browse_order(query: RunQuery) -> str:
    """The ORDER BY of :meth:`RunStore.browse`: the sort's column, then newest first."""
    way = "DESC" if query.descending else "ASC"
    first = {
        Sort.STARTED: None,
        Sort.WORKFLOW: f"workflow_name {way}",
        Sort.STATUS: f"status {way}",
        Sort.DURATION: f"{_DURATION} {way} NULLS LAST",
    }[query.sort]
    newest = f"started_at {way}, id {way}" if first is None else "started_at DESC, id DESC"
    return newest if first is None else f"{first}, {newest}"


def _tables_of_runs(db: sqlite3.Connection) -> list[str]:
    """Every table whose rows belong to a run (declared with a foreign key to ``runs``),
    quoted: a migration that adds one is covered by :meth:`RunStore.delete` as it is."""
    names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    quoted_names = ['"' + name.replace('"', '""') + '"' for name in names]
    return [
        quoted
        for quoted in quoted_names
        if any(fk[2] == "runs" for fk in db.execute(f"PRAGMA foreign_key_list({quoted})"))
    ]


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
    logs: dict[tuple[str, int], AttemptLog] = field(default_factory=dict)
    lease_owner: str | None = None
    forked_from: tuple[str, str] | None = None
    recordings: dict[tuple[str, int], list[Exchange]] = field(default_factory=dict)


def _stored_workflow(
    source: str, path: str, base: str | None, events: list[TraceEvent]
) -> Workflow:
    """A stored run's workflow, importing nothing: a workflow file parsed, or a Python-defined
    one rebuilt from its code-free spec (conditions from the stored trace)."""
    spec = spec_of_source(source)
    if spec is not None:
        skipped = {e.task for e in events if e.status is Status.SKIPPED}
        return workflow_from_spec(spec, path, skipped)
    return parse_workflow(source, path, base=Path(base) if base else None)


def _python_for_resume(stored: StoredRun) -> Workflow:
    """The Python-defined workflow of a stored run, imported again to run its tasks; refused
    when its code-free spec (code digest included) no longer matches the stored one."""
    current = load_python(stored.workflow.path)
    if current.digest != stored.workflow.digest:
        raise StoreError(
            f"run {stored.id}: {stored.workflow.path} changed since the run was recorded "
            "(its spec or module differs); re-run it instead of resuming"
        )
    return current


def _fork_of(text: str) -> tuple[str, str] | None:
    """A stored ``forked_from`` (JSON ``[run digest, task]``), or None if it is not one."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return value[0], value[1]
    return None


@dataclass(slots=True)
class _Batch:
    """What a recorded run has retired and the store has not written yet (group commit)."""

    run_id: str
    on_error: Callable[[StoreError], None] | None
    tasks: int = 0
    events: list[TraceEvent] = field(default_factory=list)
    canonical: list[str] = field(default_factory=list)  # the events' canonical texts
    outputs: list[str] = field(default_factory=list)  # batch_rows.output_line each
    logs: list[tuple[Any, ...]] = field(default_factory=list)
    calls: list[tuple[Any, ...]] = field(default_factory=list)
    since: float | None = None  # monotonic time the oldest pending task was queued
    error: StoreError | None = None  # a timed write failed, for the run's thread to raise
    broken: bool = False  # recording stopped: on_error heard of a failure, or the run ended


class RunStore:
    """A SQLite file of runs. Safe to use from one thread at a time (the TUI's run worker); its
    own flusher thread writes a recorded run's due batch, under the same lock.

    Args:
        path: the store file.
        create: make the file (and its folder) when it does not exist; commands that only
            read a store pass False, so a mistyped path is an error, not a new empty store.
        write: open for writing; by default only when ``create``, so a reading command opens
            the store read-only and works on one it may not write. ``resume`` passes both
            ``create=False`` and ``write=True``.

    Raises:
        StoreError: the file is missing (``create=False``), empty or not a store (another
            program's SQLite database included), cannot be opened, has a schema newer than
            this tool, or an older one that cannot be upgraded because it is read-only.
    """

    def __init__(self, path: str | Path, *, create: bool = True, write: bool | None = None) -> None:
        self.path = Path(path)
        # One writer at a time on the connection: the run's thread and a group commit's timer.
        self._lock = threading.RLock()
        self._batches: dict[str, _Batch] = {}
        self._closed = False
        self._wake = threading.Condition(self._lock)
        self._flusher: threading.Thread | None = None
        self._flusher_due = float("inf")  # when the flusher thread wakes up next
        self.damage: str | None = None
        """Damage found before opening (a write-ahead log SQLite would silently cut short),
        with where a copy of it is kept; the store opens with what SQLite can recover."""
        writable = create if write is None else write
        self.refuse_folder(self.path)
        if not self.path.exists():
            if not create:
                raise StoreError(f"{self.path}: no run store there (nothing was recorded)")
            self._create()
        if self.path.is_file() and self.path.stat().st_size == 0:
            raise StoreError(f"{self.path}: an empty file is not a run store")
        self._check_wal()
        with self._guard("cannot open the run store"):
            self._db = self._connect(writable)
            try:
                self._prepare(writable)
            except BaseException:
                self._db.close()
                raise

    @staticmethod
    def refuse_folder(path: Path) -> None:
        """Refuse a folder as the store, for commands that open it later too.

        Raises:
            StoreError: ``path`` is a folder (the store is a file in one).
        """
        if path.is_dir():
            raise StoreError(
                f"{path}: a folder, not a run store (name a file in it, such as "
                f"{path / 'runs.sqlite3'})"
            )

    def _create(self) -> None:
        """Make a new store whole, then put it in place: another process never sees it half
        made (an empty file, or a schema between two versions).

        The store is built under a temporary name in the same folder and linked to its
        name, which fails when another process got there first: then theirs is used.
        """
        folder = self.path.parent
        temp = folder / f".{self.path.name}.{secrets.token_hex(8)}.tmp"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            _pause_before_migrating(self.path, None)
            with self._guard("cannot create the run store"):
                db = sqlite3.connect(temp, isolation_level=None)
                try:
                    db.execute("PRAGMA journal_mode=WAL")
                    _migrate(db, temp)
                finally:
                    db.close()  # a clean close folds the write-ahead log into the file
            try:
                os.link(temp, self.path)
            except FileExistsError:
                pass  # made meanwhile by another process: that one is the store
            except OSError as exc:
                if exc.errno not in _NO_HARD_LINKS:
                    raise
                # A file system without hard links: a rename cannot refuse to replace, so
                # the store is made in place (a process starting at that very instant may
                # see it empty and refuse it once).
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create the run store: {exc}") from None
        finally:
            for leftover in (temp, Path(f"{temp}-wal"), Path(f"{temp}-shm")):
                leftover.unlink(missing_ok=True)

    def _check_wal(self) -> None:
        wal = self.path.with_name(self.path.name + "-wal")
        try:
            problem = check_wal(wal)
            if problem is None:
                return
            copy = keep_copy(wal)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot check its write-ahead log: {exc}") from None
        self.damage = f"{self.path}: {problem}; a copy is kept in {copy.name}"

    def _connect(self, writable: bool) -> sqlite3.Connection:
        if writable:
            return sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        # Reading: a reading command cannot change the store by accident (query_only), and
        # works on one it may not write (a read-only file, folder or mount: mode=ro). Where
        # it may, it opens the file as writers do, so that closing it removes the write-ahead
        # log and its index, as a writer's close does (a read-only one cannot).
        if _writable(self.path):
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA query_only = ON")
            return db
        uri = f"{self.path.absolute().as_uri()}?mode=ro"
        if not _writable_folder(self.path) and not Path(f"{self.path}-wal").exists():
            # Read-only media: SQLite could not make the -shm index a WAL store needs. With
            # no -wal there, the file holds every commit and no writer is at work (one
            # keeps its -wal while open), so it is read as the unchanging file it is.
            uri += "&immutable=1"
        return sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)

    @contextmanager
    def _guard(self, doing: str) -> Iterator[None]:
        with self._lock:
            try:
                yield
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: {doing}: {exc}") from None

    def _prepare(self, writable: bool) -> None:
        """Check the schema, and bring it to :data:`SCHEMA_VERSION` when it is older (a
        read-only opening reopens for writing for that, when the file can be written)."""
        version = _schema_version(self._db, self.path)
        if not writable:
            if version == SCHEMA_VERSION:
                return
            if not _writable(self.path):
                raise StoreError(
                    f"{self.path}: the run store has schema version {version} and must be "
                    f"upgraded to {SCHEMA_VERSION}, but it is read-only; open it once with "
                    "write access"
                )
            self._db.close()
            self._db = self._connect(writable=True)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        if version < SCHEMA_VERSION:
            _pause_before_migrating(self.path, version)
            _migrate(self._db, self.path)

    @property
    def schema_version(self) -> int:
        """The schema version of the file (``PRAGMA user_version``)."""
        with self._guard("cannot read"):
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        """Write what is pending and close the file."""
        with self._lock:
            if self._closed:
                return
            try:
                self.flush()
            finally:
                self._closed = True
                self._wake.notify_all()
                with self._guard("cannot close"):
                    self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._guard("cannot write"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                _rollback(self._db)
                raise
            self._db.execute("COMMIT")

    # -- recording --------------------------------------------------------------------------

    def record(
        self,
        run: Run,
        workflow: Workflow,
        run_id: str | None = None,
        on_error: Callable[[StoreError], None] | None = None,
        forked_from: tuple[str, str] | None = None,
    ) -> str:
        """Register a run, take its lease, and record it as it retires tasks; return its id.
        ``forked_from`` is ``(run digest, task)`` of the run a re-run was forked from."""
        wall = run.clock.wall()
        run_id = run_id or new_run_id()
        base = str(Path(workflow.path).resolve().parent) if workflow.path != "<string>" else None
        with self._transaction() as db:
            db.execute(
                "INSERT INTO runs (id, workflow_name, workflow_path, workflow_base, "
                "workflow_source, workflow_digest, payload_text, payload_digest, plan_digest, "
                "tasks_total, status, started_at, updated_at, lease_owner, lease_until, "
                "forked_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)",
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
                    _iso(wall),
                    _iso(wall),
                    lease_owner(),
                    time.time() + LEASE_SECONDS,
                    None if forked_from is None else json.dumps(list(forked_from)),
                ),
            )
        self.attach(run, run_id, on_error)
        return run_id

    def attach(
        self, run: Run, run_id: str, on_error: Callable[[StoreError], None] | None = None
    ) -> None:
        """Record every step ``run`` retires from now on under ``run_id``, by group commit:
        the retired tasks' events, outputs and logs are written together, in one transaction,
        when :data:`GROUP_EVENTS` events are pending, :data:`GROUP_SECONDS` have passed since
        the first of them, or at :meth:`flush` (a pause), :meth:`finish`, :meth:`abandon` and
        :meth:`close`. A batch holds whole tasks: after a crash the store still ends at a task
        boundary, and up to one batch of finished tasks runs again on resume.

        Args:
            on_error: called once if a write fails, after which recording stops; without it
                the :class:`StoreError` propagates out of the run's step (or the next flush).
        """
        renew_at = time.time() + LEASE_SECONDS / 2
        with self._lock:
            old = self._batches.get(run_id)
            if old is not None:
                self._flush_batch(old)
            batch = self._batches[run_id] = _Batch(run_id, on_error)
            self._start_flusher()

        def on_retire(retired: RetiredStep) -> None:
            nonlocal renew_at
            if batch.broken:
                return
            try:
                with self._lock:
                    self._add(batch, retired)
                now = time.time()
                if now >= renew_at:
                    renew_at = now + LEASE_SECONDS / 2
                    self._renew(run_id, now + LEASE_SECONDS)
            except StoreError as exc:
                self._failed(batch, exc)

        run.on_retire(on_retire)

    def _add(self, batch: _Batch, retired: RetiredStep) -> None:
        """Queue a retired task's rows (the hot path of recording, once per task; the lock is
        held), writing the batch when it is due."""
        if batch.error is not None:
            raise batch.error
        events = retired.events
        batch.tasks += 1
        batch.events.extend(events)
        batch.canonical.extend(retired.canonical)
        task = retired.step.task
        if retired.output is not None:
            batch.outputs.append(output_line(task, retired.output))
        if retired.logs:
            run_id = batch.run_id
            batch.logs.extend((run_id, task, n, log.text, log.truncated) for n, log in retired.logs)
        if retired.calls:
            batch.calls.extend(
                (batch.run_id, task, n, e.seq, json.dumps(e.to_json(), ensure_ascii=False))
                for n, exchanges in retired.calls
                for e in exchanges
            )
        now = time.monotonic()
        if batch.since is None:
            batch.since = now
        if len(batch.events) >= GROUP_EVENTS or now - batch.since >= GROUP_SECONDS:
            self._flush_batch(batch)
        elif self._flusher_due > batch.since + GROUP_SECONDS:
            # The flusher sleeps past this batch's time (or forever): wake it, once.
            self._flusher_due = batch.since + GROUP_SECONDS
            self._wake.notify()

    def _failed(self, batch: _Batch, exc: StoreError) -> None:
        """A write of ``batch`` failed: its ``on_error`` hears it once and recording stops;
        without one the error propagates."""
        if batch.on_error is None:
            raise exc
        if not batch.broken:
            batch.broken = True
            batch.on_error(exc)

    def _start_flusher(self) -> None:
        if self._flusher is None:
            self._flusher = threading.Thread(
                target=self._flush_when_due, name="harness-tui store", daemon=True
            )
            self._flusher.start()

    def _flush_when_due(self) -> None:
        """The flusher thread: writes a batch whose time is up while its run is busy (a long
        task). An error waits for the run's thread unless the run's ``on_error`` hears it."""
        with self._wake:
            while not self._closed:
                pending = [b for b in self._batches.values() if b.since is not None]
                if not pending:
                    self._flusher_due = float("inf")
                    self._wake.wait()
                    continue
                self._flusher_due = min(b.since or 0.0 for b in pending) + GROUP_SECONDS
                delay = self._flusher_due - time.monotonic()
                if delay > 0:
                    self._wake.wait(delay)
                    continue
                for batch in pending:
                    if batch.since is not None and batch.since + GROUP_SECONDS <= time.monotonic():
                        self._flush_due(batch)

    def _flush_due(self, batch: _Batch) -> None:
        if batch.broken or batch.error is not None:
            batch.since = None
            return
        try:
            self._flush_batch(batch)
        except StoreError as exc:
            if batch.on_error is None:
                batch.error = exc
            else:
                self._failed(batch, exc)

    def flush(self, run_id: str | None = None) -> None:
        """Write what is pending for ``run_id`` (every run by default) now: a run paused,
        stopped or about to be read. A failed write goes to the run's ``on_error``."""
        with self._lock:
            batches = [self._batches[run_id]] if run_id in self._batches else []
            for batch in batches if run_id is not None else list(self._batches.values()):
                if batch.broken:
                    continue
                try:
                    if batch.error is not None:
                        raise batch.error
                    self._flush_batch(batch)
                except StoreError as exc:
                    self._failed(batch, exc)

    def flush_if_idle(self) -> None:
        """Write what is pending unless the store is in the middle of a write (a signal
        handler leaving at once: a write it interrupted is lost, as after a kill)."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            if not self._db.in_transaction:
                self.flush()
        except StoreError:
            pass
        finally:
            self._lock.release()

    def _flush_batch(self, batch: _Batch) -> None:
        """Write ``batch`` in one transaction (the lock is held)."""
        batch.since = None
        if not batch.events:
            return
        row = (
            batch.run_id,
            batch.events[0].seq,
            batch.tasks,
            *encode_batch(batch.events, batch.canonical, batch.outputs),
        )
        logs, calls = batch.logs, batch.calls
        batch.events, batch.canonical, batch.outputs, batch.logs = [], [], [], []
        batch.calls = []
        batch.tasks = 0
        db = self._db
        try:
            db.execute("BEGIN")
            try:
                db.execute(_INSERT_BATCH, row)
                if logs:
                    db.executemany(_INSERT_LOG, logs)
                if calls:
                    db.executemany(_INSERT_CALL, calls)
            except BaseException:
                _rollback(db)
                raise
            db.execute("COMMIT")
        except sqlite3.IntegrityError:
            raise StoreError(
                f"run {batch.run_id} is recorded by {_holder(self._owner(batch.run_id))} now; "
                "this process stopped recording it"
            ) from None
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot record a task: {exc}") from None

    def _owner(self, run_id: str) -> str | None:
        try:
            row = self._db.execute("SELECT lease_owner FROM runs WHERE id = ?", (run_id,))
            found = row.fetchone()
        except sqlite3.Error:
            return None
        return str(found[0]) if found and found[0] else None

    def _renew(self, run_id: str, until: float) -> None:
        with self._transaction() as db:
            db.execute("UPDATE runs SET lease_until = ? WHERE id = ?", (until, run_id))

    def _flush_for_end(self, run_id: str) -> None:
        """Write what is pending before a run's end is recorded, and stop batching it; an end
        is never recorded over tasks that could not be written."""
        self.flush(run_id)
        with self._lock:
            batch = self._batches.pop(run_id, None)
        if batch is None:
            return
        failed, batch.broken = batch.broken, True
        # The run holds this batch (through its listener) and the batch the caller (through
        # on_error): dropped here, the run is freed as soon as the caller lets it go, not by
        # a pass of the cyclic collector over everything the run holds.
        batch.on_error = None
        if failed:
            raise StoreError(f"run {run_id}: its last tasks were not recorded; its end is not")

    def finish(self, run: Run, run_id: str) -> None:
        """Record the final status and digest of a run and release its lease. A run whose
        end is already recorded is left as it is (a resumed finished run is not re-dated)."""
        self._flush_for_end(run_id)
        stray = run.unattributed_log()
        with self._transaction() as db:
            if stray.text or stray.truncated:
                db.execute(_INSERT_LOG, (run_id, *UNATTRIBUTED, stray.text, stray.truncated))
            db.execute(
                "UPDATE runs SET status = ?, run_digest = ?, updated_at = ?, lease_owner = NULL, "
                "lease_until = NULL WHERE id = ? AND status NOT IN (?, ?, ?)",
                (
                    run.status.value if run.finished else "abandoned",
                    run.digest if run.finished else None,
                    _iso(run.clock.wall()),
                    run_id,
                    *sorted(FINISHED),
                ),
            )

    def abandon(self, run_id: str) -> None:
        """Mark an unfinished run left behind (resumable) and release its lease."""
        self._flush_for_end(run_id)
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET status = 'abandoned', updated_at = ?, lease_owner = NULL, "
                "lease_until = NULL WHERE id = ? AND status = 'running'",
                (_iso(time.time()), run_id),
            )

    # -- reading ----------------------------------------------------------------------------

    def runs(self) -> list[dict[str, Any]]:
        """Every run, newest first, with its status as people should read it."""
        self.flush()
        with self._guard("cannot read"):
            rows = self._db.execute(
                "SELECT id, workflow_name, workflow_path, payload_digest, status, started_at, "
                f"{_TASKS_DONE}, tasks_total, run_digest, lease_owner, lease_until "
                "FROM runs ORDER BY started_at DESC, id DESC"
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
        listed = []
        for row in rows:
            _typed(
                row,
                "id workflow_name workflow_path payload_digest status started_at tasks_done "
                "tasks_total run_digest lease_owner lease_until",
                (_TEXT, _TEXT, _TEXT, _OPTIONAL_TEXT, _TEXT, _TEXT, _NUMBER, _INTEGER,
                 _OPTIONAL_TEXT, _OPTIONAL_TEXT, _OPTIONAL_NUMBER),
                str(row[0]),
            )  # fmt: skip
            entry = dict(zip(keys, row[:9], strict=True))
            entry["status"] = effective_status(row[4], row[9], row[10])
            entry["tasks_done"] = _done(row[6], row[7])
            listed.append(entry)
        return listed

    def browse(self, query: RunQuery) -> tuple[list[RunRow], int]:
        """One page of the runs ``query`` asks for, and how many runs it matches in all.

        Reads only that page (and counts the rest in SQL): a store of 10,000 runs pages as
        fast as a small one. Runs stored ``running`` are read as ``interrupted`` when their
        lease is gone, in the filter as in the rows.
        """
        self.flush()
        with self._guard("cannot read"):
            db = self._db
            leased = db.execute(
                "SELECT id, lease_owner, lease_until FROM runs WHERE status = 'running'"
            ).fetchall()
            live = {run_id for run_id, owner, until in leased if _lease_live(owner, until)}
            where, params = _browse_filter(query, live, {row[0] for row in leased} - live)
            total = int(db.execute(f"SELECT COUNT(*) FROM runs{where}", params).fetchone()[0])
            rows = db.execute(
                "SELECT id, workflow_name, workflow_path, payload_digest, status, started_at, "
                f"updated_at, {_TASKS_DONE}, tasks_total, run_digest FROM runs{where} "
                f"ORDER BY {_browse_order(query)} LIMIT ? OFFSET ?",
                (*params, max(query.limit, 0), max(query.offset, 0)),
            ).fetchall()
        page = []
        for run_id, name, path, payload, status, started, ended, done, total_tasks, digest in rows:
            if status == "running":
                status = "running" if run_id in live else "interrupted"
            page.append(
                RunRow(
                    str(run_id),
                    str(name),
                    str(path),
                    str(payload),
                    str(status),
                    str(started),
                    str(ended),
                    _done(done, total_tasks),
                    int(total_tasks),
                    None if digest is None else str(digest),
                    run_id in live,
                )
            )
        return page, total

    def delete(self, run_id: str) -> None:
        """Delete a run and everything stored about it, in one transaction.

        Raises:
            StoreError: no such run, a live process holds its lease (it is running), or the
                store cannot be written.
        """
        with self._transaction() as db:
            row = db.execute(
                "SELECT status, lease_owner, lease_until FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            if row is None:
                raise StoreError(f"no run {run_id!r} in {self.path}")
            if effective_status(*row) == "running":
                raise StoreError(
                    f"run {run_id} is running: {_holder(row[1])} holds its lease; it is not deleted"
                )
            for table in _tables_of_runs(db):
                db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            db.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    def load(self, run_id: str) -> StoredRun:
        """A stored run with its events and outputs.

        Raises:
            StoreError: no such run, its workflow no longer parses, or the file is unreadable.
        """
        self.flush(run_id)
        with self._guard(f"cannot read run {run_id}"):
            row = self._db.execute(
                "SELECT workflow_path, workflow_base, workflow_source, payload_text, status, "
                f"{_TASKS_DONE}, tasks_total, lease_owner, lease_until, forked_from "
                "FROM runs WHERE id = ?",
                (run_id,),
            ).fetchone()
            if row is None:
                raise StoreError(f"no run {run_id!r} in {self.path}")
            _typed(
                row,
                "workflow_path workflow_base workflow_source payload_text status tasks_done "
                "tasks_total lease_owner lease_until forked_from",
                (_TEXT, _OPTIONAL_TEXT, _TEXT, _TEXT, _TEXT, _NUMBER, _INTEGER, _OPTIONAL_TEXT,
                 _OPTIONAL_NUMBER, _OPTIONAL_TEXT),
                run_id,
            )  # fmt: skip
            path, base, source, payload_text, status, done, total, owner, until, fork = row
            done = _done(done, total)
            events, outputs = self._events(run_id)
            logs = {}
            for log_row in self._db.execute(
                "SELECT task, attempt, text, truncated FROM logs WHERE run_id = ?", (run_id,)
            ):
                kinds = (_TEXT, _INTEGER, _TEXT, _INTEGER)
                _typed(log_row, "task attempt text truncated", kinds, run_id)
                task, attempt, text, truncated = log_row
                logs[(task, attempt)] = AttemptLog(text, bool(truncated))
            recordings = self._recordings(run_id)
        try:
            workflow = _stored_workflow(source, path, base, events)
        except WorkflowError as exc:
            raise StoreError(
                f"run {run_id}: stored workflow is invalid: {exc.problems[0]}"
            ) from None
        status = effective_status(status, owner, until)
        forked_from = None if fork is None else _fork_of(fork)
        return StoredRun(
            run_id,
            workflow,
            payload_text,
            events,
            outputs,
            status,
            done,
            total,
            logs,
            lease_owner=owner,
            forked_from=forked_from,
            recordings=recordings,
        )

    def _recordings(self, run_id: str) -> dict[tuple[str, int], list[Exchange]]:
        """A run's recorded exchanges by ``(task, attempt)`` (schema 7; none before)."""
        found: dict[tuple[str, int], list[Exchange]] = {}
        with _damage_is_one_line(run_id):
            for task, attempt, seq, text in self._db.execute(
                "SELECT task, attempt, seq, exchange FROM calls WHERE run_id = ? "
                "ORDER BY task, attempt, seq",
                (run_id,),
            ):
                where = f"recorded call {seq} of {task!r} attempt {attempt}"
                found.setdefault((task, attempt), []).append(
                    Exchange.from_json(json.loads(text), where)
                )
        return found

    def _events(self, run_id: str) -> tuple[list[TraceEvent], dict[str, str]]:
        """A run's stored events (with their timings, worker and traceback) and outputs: the
        rows of schema 5 and before, then the batches written since."""
        db = self._db
        with _damage_is_one_line(run_id):
            events = [
                TraceEvent.from_dicts(
                    json.loads(canonical),
                    {"started_at": started, "ended_at": ended, "traceback": tb, "wall": wall,
                     "worker": worker},
                )
                for canonical, started, ended, tb, wall, worker in db.execute(
                    "SELECT canonical, started_at, ended_at, traceback, wall, worker "
                    "FROM events WHERE run_id = ? ORDER BY seq",
                    (run_id,),
                )
            ]  # fmt: skip
            outputs = dict(db.execute("SELECT task, text FROM outputs WHERE run_id = ?", (run_id,)))
            for row in db.execute(
                "SELECT seq, events, canonical, times, workers, tracebacks, outputs FROM batches "
                "WHERE run_id = ? ORDER BY seq",
                (run_id,),
            ):
                read_batch(row, events, outputs)
        return events, outputs

    def _restore(
        self, stored: StoredRun, executor: Executor | None = None, clock: Clock | None = None
    ) -> Run:
        """The stored run rebuilt in memory; nothing executes."""
        orchestrator = TaskOrchestrator(
            stored.workflow.graph,
            executor=executor,
            clock=clock,
            on_failure=stored.workflow.on_failure,
        )
        with _damage_is_one_line(stored.id):
            payload = json.loads(stored.payload_text)
            run = orchestrator.resume(payload, stored.events, stored.outputs)
        run.load_logs(stored.logs)
        run.load_recordings(stored.recordings)
        return run

    def resume(
        self,
        run_id: str,
        *,
        executor: Executor | None = None,
        clock: Clock | None = None,
        attach: bool = True,
        force: bool = False,
    ) -> tuple[Workflow, Run]:
        """Rebuild a stored run, take its lease and (with ``attach``) record it again, ready
        to continue. A finished run comes back as it is.

        Args:
            force: take the run over even when its lease still looks live (its process may
                be gone on another host, or stuck); the caller vouches nothing else runs it.

        Raises:
            StoreError: no such run, it is still running in a live process, or another
                process took it between reading and leasing.
            ResumeError: the stored events do not fit the stored workflow.
        """
        stored = self.load(run_id)
        if is_python_ref(stored.workflow.path):  # resuming runs code: import it again
            stored = replace(stored, workflow=_python_for_resume(stored))
        if stored.status == "running" and not force:
            raise StoreError(
                f"run {run_id} is still running: {_holder(stored.lease_owner)} holds its lease; "
                "--force takes it over"
            )
        run = self._restore(stored, executor, clock)
        if stored.status in RESUMABLE or stored.status == "running":
            self._take_lease(stored, force)
            # Events of a task that never finished were not stored; nothing to delete.
            if attach:
                self.attach(run, run_id)
        return stored.workflow, run

    def _take_lease(self, stored: StoredRun, force: bool) -> None:
        """Take the lease of a run read by :meth:`load`, if nobody changed it since.

        Another process may have loaded the same run at the same time: under the write lock
        the status, the lease and the number of events must still be what was loaded, and
        the conditional UPDATE makes the check and the take one step.
        """
        with self._transaction() as db:
            row = db.execute(
                f"SELECT status, lease_owner, lease_until, {_EVENTS_STORED} FROM runs WHERE id = ?",
                (stored.id,),
            ).fetchone()
            status, owner, until, count = row if row is not None else (None, None, None, -1)
            now = effective_status(status, owner, until) if status is not None else None
            changed = count != len(stored.events) or now in FINISHED or now is None
            if changed or (now != stored.status and not force):
                raise StoreError(f"run {stored.id} was taken by {_holder(owner)} meanwhile")
            taken = db.execute(
                "UPDATE runs SET status = 'running', lease_owner = ?, lease_until = ? "
                "WHERE id = ? AND status = ? AND lease_owner IS ?",
                (lease_owner(), time.time() + LEASE_SECONDS, stored.id, status, owner),
            ).rowcount
            if taken != 1:
                raise StoreError(f"run {stored.id} was taken by {_holder(owner)} meanwhile")

    def export(self, run_id: str, redact: Iterable[str] = ()) -> RunRecord:
        """A stored run as an export (no code runs), with ``redact``'s keys redacted."""
        stored = self.load(run_id)
        run = self._restore(stored)
        return RunRecord.from_run(
            run,
            stored.workflow,
            run_id=run_id,
            redact=redact,
            status=stored.status if stored.status in FINISHED else None,
            forked_from=stored.forked_from,
        )

    def integrity_check(self) -> str:
        """SQLite's own check: ``ok`` when the file is sound."""
        with self._guard("cannot check"):
            return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])
