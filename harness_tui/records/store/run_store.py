"""The run store: every run recorded as it happens, in SQLite (stdlib ``sqlite3``).

WAL mode; group commit: the tasks a run retires are written together, one transaction and one
row (:mod:`.batch_rows`) per batch of whole tasks (their events and committed outputs; their
logs go to a table of their own), when 512 events are pending, 0.25 s have passed or the run
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
import hashlib
import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...engine.attempt import Executor
from ...engine.capture import UNATTRIBUTED, AttemptLog
from ...engine.clock import Clock
from ...engine.events import Status, TraceEvent
from ...engine.orchestrator import RetiredStep, Run, TaskOrchestrator
from ...engine.recorded_calls import SECRET_HEADERS, CallMode, CallSession, Exchange
from ...engine.resume import ResumeError
from ...workflow.errors import WorkflowError
from ...workflow.loader import Workflow, parse_shared
from ...workflow.python_source import (
    is_python_ref,
    load_python,
    spec_of_source,
    workflow_from_spec,
)
from ..errors import RecordError, StoreError
from ..export import RunRecord
from ..export.overrides import Override, stored_overrides
from . import schema
from .leases import LEASE_SECONDS, effective_status, holder, lease_live, lease_owner
from .queries import RunQuery, RunRow, browse_filter, browse_order
from .rows import read_batch, stored_event
from .schema import (
    EVENTS_STORED,
    SCHEMA_VERSION,
    TASKS_DONE,
    migrate,
    rollback,
    schema_version,
    tables_of_runs,
)
from .statuses import FINISHED, RESUMABLE, StoredStatus
from .wal import check_wal, keep_copy
from .writer import INSERT_LOG, GroupCommit

__all__ = ["RunStore", "StoredRun", "default_store_path", "new_run_id"]

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


# errno values meaning "this file system makes no hard links".
_NO_HARD_LINKS = frozenset(
    getattr(errno, name)
    for name in ("EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "EMLINK")
    if hasattr(errno, name)
)


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
    overrides: tuple[Override, ...] = ()
    recording: Recorded | None = None
    trace_hash: Any = None
    """sha256 of ``[`` and its events' canonical texts as stored, comma-separated."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """How a stored run records its calls (``runs.recording``, schema 10)."""

    volatile: tuple[str, ...] = ()
    secret_headers: tuple[str, ...] = ()

    @classmethod
    def of(cls, run: Run) -> Recorded | None:
        """How ``run`` records its calls; None when it records nothing."""
        calls = run.context.calls
        if calls is None or not calls.record:
            return None
        return cls(calls.volatile_paths, tuple(sorted(calls.secret_headers - SECRET_HEADERS)))

    def to_text(self) -> str:
        return json.dumps({"volatile": list(self.volatile),
                           "secret_headers": list(self.secret_headers)})  # fmt: skip

    @classmethod
    def from_text(cls, text: str | None, run_id: str) -> Recorded | None:
        """The stored column read back.

        Raises:
            StoreError: it is not what :meth:`to_text` writes (one line).
        """
        if text is None:
            return None
        try:
            data = json.loads(text)
            volatile, secret = data["volatile"], data["secret_headers"]
            if not isinstance(volatile, list) or not isinstance(secret, list):
                raise ValueError("not lists")
            found = cls(tuple(volatile), tuple(secret))
            if not all(isinstance(v, str) for v in (*found.volatile, *found.secret_headers)):
                raise ValueError("not text")
            found.session()  # its volatile paths are read
        except (ValueError, TypeError, KeyError, RecursionError):
            raise StoreError(f"run {run_id}: how it records its calls is damaged") from None
        return found

    def session(self) -> CallSession:
        """A session recording further attempts as the run recorded the first ones.

        Raises:
            ValueError: a volatile path cannot be read.
        """
        return CallSession(
            CallMode.LIVE, volatile=self.volatile, secret_headers=self.secret_headers
        )


def _stored_workflow(
    source: str, path: str, base: str | None, events: list[TraceEvent]
) -> Workflow:
    """A stored run's workflow, importing nothing: a workflow file parsed, or a Python-defined
    one rebuilt from its code-free spec (conditions from the stored trace)."""
    spec = spec_of_source(source)
    if spec is not None:
        skipped = {e.task for e in events if e.status is Status.SKIPPED}
        return workflow_from_spec(spec, path, skipped)
    return parse_shared(source, path, Path(base) if base else None)


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
        self._closed = False
        self._writer = GroupCommit(self.path, self._lock, lambda: self._db, self._owner)
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
            schema.pause_before_migrating(self.path, None)
            with self._guard("cannot create the run store"):
                db = sqlite3.connect(temp, isolation_level=None)
                try:
                    db.execute("PRAGMA journal_mode=WAL")
                    migrate(db, temp)
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
        version = schema_version(self._db, self.path)
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
            schema.pause_before_migrating(self.path, version)
            migrate(self._db, self.path)

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
                self._writer.close()
            finally:
                self._closed = True
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
                rollback(self._db)
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
        overrides: Sequence[Mapping[str, Any]] = (),
    ) -> str:
        """Register a run, take its lease, and record it as it retires tasks; return its id.
        ``forked_from`` is ``(run digest, task)`` of the run a re-run was forked from, and
        ``overrides`` its what-if changes (:meth:`..export.overrides.Override.to_json`)."""
        wall = run.clock.wall()
        run_id = run_id or new_run_id()
        base = str(Path(workflow.path).resolve().parent) if workflow.path != "<string>" else None
        recorded = Recorded.of(run)
        with self._transaction() as db:
            db.execute(
                "INSERT INTO runs (id, workflow_name, workflow_path, workflow_base, "
                "workflow_source, workflow_digest, payload_text, payload_digest, plan_digest, "
                "tasks_total, status, started_at, updated_at, lease_owner, lease_until, "
                "forked_from, overrides, recording) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    StoredStatus.RUNNING,
                    _iso(wall),
                    _iso(wall),
                    lease_owner(),
                    time.time() + LEASE_SECONDS,
                    None if forked_from is None else json.dumps(list(forked_from)),
                    json.dumps(list(overrides)) if overrides else None,
                    None if recorded is None else recorded.to_text(),
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
        batch = self._writer.start(run_id, on_error)

        def on_retire(retired: RetiredStep) -> None:
            nonlocal renew_at
            if batch.broken:
                return
            try:
                with self._lock:
                    self._writer.add(batch, retired)
                now = time.time()
                if now >= renew_at:
                    renew_at = now + LEASE_SECONDS / 2
                    self._renew(run_id, now + LEASE_SECONDS)
            except StoreError as exc:
                self._writer.failed(batch, exc)

        run.on_retire(on_retire)

    def flush(self, run_id: str | None = None) -> None:
        """Write what is pending for ``run_id`` (every run by default) now: a run paused,
        stopped or about to be read. A failed write goes to the run's ``on_error``."""
        self._writer.flush(run_id)

    def flush_if_idle(self) -> None:
        """Write what is pending unless the store is in the middle of a write (a signal
        handler leaving at once: a write it interrupted is lost, as after a kill)."""
        self._writer.flush_if_idle()

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

    def finish(self, run: Run, run_id: str) -> None:
        """Record the final status and digest of a run and release its lease. A run whose
        end is already recorded is left as it is (a resumed finished run is not re-dated)."""
        self._writer.end(run_id)
        stray = run.unattributed_log()
        with self._transaction() as db:
            if stray.text or stray.truncated:
                db.execute(INSERT_LOG, (run_id, *UNATTRIBUTED, stray.text, stray.truncated))
            db.execute(
                "UPDATE runs SET status = ?, run_digest = ?, updated_at = ?, lease_owner = NULL, "
                "lease_until = NULL WHERE id = ? AND status NOT IN (?, ?, ?)",
                (
                    run.status.value if run.finished else StoredStatus.ABANDONED,
                    run.digest if run.finished else None,
                    _iso(run.clock.wall()),
                    run_id,
                    *sorted(FINISHED),
                ),
            )

    def abandon(self, run_id: str) -> None:
        """Mark an unfinished run left behind (resumable) and release its lease."""
        self._writer.end(run_id)
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET status = ?, updated_at = ?, lease_owner = NULL, "
                "lease_until = NULL WHERE id = ? AND status = ?",
                (StoredStatus.ABANDONED, _iso(time.time()), run_id, StoredStatus.RUNNING),
            )

    # -- reading ----------------------------------------------------------------------------

    def runs(self) -> list[dict[str, Any]]:
        """Every run, newest first, with its status as people should read it."""
        self.flush()
        with self._guard("cannot read"):
            rows = self._db.execute(
                "SELECT id, workflow_name, workflow_path, payload_digest, status, started_at, "
                f"{TASKS_DONE}, tasks_total, run_digest, lease_owner, lease_until "
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
                "SELECT id, lease_owner, lease_until FROM runs WHERE status = ?",
                (StoredStatus.RUNNING,),
            ).fetchall()
            live = {run_id for run_id, owner, until in leased if lease_live(owner, until)}
            where, params = browse_filter(query, live, {row[0] for row in leased} - live)
            total = int(db.execute(f"SELECT COUNT(*) FROM runs{where}", params).fetchone()[0])
            rows = db.execute(
                "SELECT id, workflow_name, workflow_path, payload_digest, status, started_at, "
                f"updated_at, {TASKS_DONE}, tasks_total, run_digest FROM runs{where} "
                f"ORDER BY {browse_order(query)} LIMIT ? OFFSET ?",
                (*params, max(query.limit, 0), max(query.offset, 0)),
            ).fetchall()
        page = []
        for run_id, name, path, payload, status, started, ended, done, total_tasks, digest in rows:
            if status == StoredStatus.RUNNING and run_id not in live:
                status = StoredStatus.INTERRUPTED
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
            if effective_status(*row) == StoredStatus.RUNNING:
                raise StoreError(
                    f"run {run_id} is running: {holder(row[1])} holds its lease; it is not deleted"
                )
            for table in tables_of_runs(db):
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
                f"{TASKS_DONE}, tasks_total, lease_owner, lease_until, forked_from, overrides, "
                "recording FROM runs WHERE id = ?",
                (run_id,),
            ).fetchone()
            if row is None:
                raise StoreError(f"no run {run_id!r} in {self.path}")
            _typed(
                row,
                "workflow_path workflow_base workflow_source payload_text status tasks_done "
                "tasks_total lease_owner lease_until forked_from overrides recording",
                (_TEXT, _OPTIONAL_TEXT, _TEXT, _TEXT, _TEXT, _NUMBER, _INTEGER, _OPTIONAL_TEXT,
                 _OPTIONAL_NUMBER, _OPTIONAL_TEXT, _OPTIONAL_TEXT, _OPTIONAL_TEXT),
                run_id,
            )  # fmt: skip
            (path, base, source, payload_text, status, done, total, owner, until, fork, changes,
             recording) = row  # fmt: skip
            done = _done(done, total)
            events, outputs, trace_hash = self._events(run_id)
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
        return StoredRun(
            run_id, workflow, payload_text, events, outputs, status, done, total, logs,
            lease_owner=owner,
            forked_from=None if fork is None else _fork_of(fork),
            recordings=recordings,
            overrides=stored_overrides(changes, run_id),
            recording=Recorded.from_text(recording, run_id),
            trace_hash=trace_hash,
        )  # fmt: skip

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

    def _events(self, run_id: str) -> tuple[list[TraceEvent], dict[str, str], Any]:
        """A run's stored events (with their timings, worker and traceback) and outputs: the
        rows of schema 5 and before, then the batches written since; and the running trace
        hash of their canonical texts as stored, which its run's digest was taken over (see
        :meth:`~harness_tui.engine.state.RunState.adopt_trace_hash`)."""
        db = self._db
        hasher = hashlib.sha256(b"[")
        with _damage_is_one_line(run_id):
            events: list[TraceEvent] = []
            for canonical, started, ended, tb, wall, worker in db.execute(
                "SELECT canonical, started_at, ended_at, traceback, wall, worker "
                "FROM events WHERE run_id = ? ORDER BY seq",
                (run_id,),
            ):
                hasher.update(("," + canonical if events else canonical).encode())
                events.append(stored_event(
                    json.loads(canonical),
                    {"started_at": started, "ended_at": ended, "traceback": tb, "wall": wall,
                     "worker": worker},
                ))  # fmt: skip
            outputs = dict(db.execute("SELECT task, text FROM outputs WHERE run_id = ?", (run_id,)))
            for row in db.execute(
                "SELECT seq, events, canonical, times, workers, tracebacks, outputs FROM batches "
                "WHERE run_id = ? ORDER BY seq",
                (run_id,),
            ):
                read_batch(row, events, outputs, hasher)
        return events, outputs, hasher

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
            # A copy: the run's own hash goes on from it as the run goes on.
            trace_hash = None if stored.trace_hash is None else stored.trace_hash.copy()
            run = orchestrator.resume(payload, stored.events, stored.outputs, trace_hash)
        run.load_logs(stored.logs)
        run.load_recordings(stored.recordings)
        if stored.recording is not None:  # it goes on recording as it did (secret headers)
            run.record_calls(stored.recording.session())
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
        if stored.status == StoredStatus.RUNNING and not force:
            raise StoreError(
                f"run {run_id} is still running: {holder(stored.lease_owner)} holds its lease; "
                "--force takes it over"
            )
        run = self._restore(stored, executor, clock)
        if stored.status in RESUMABLE or stored.status == StoredStatus.RUNNING:
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
                f"SELECT status, lease_owner, lease_until, {EVENTS_STORED} FROM runs WHERE id = ?",
                (stored.id,),
            ).fetchone()
            status, owner, until, count = row if row is not None else (None, None, None, -1)
            now = effective_status(status, owner, until) if status is not None else None
            changed = count != len(stored.events) or now in FINISHED or now is None
            if changed or (now != stored.status and not force):
                raise StoreError(f"run {stored.id} was taken by {holder(owner)} meanwhile")
            taken = db.execute(
                "UPDATE runs SET status = ?, lease_owner = ?, lease_until = ? "
                "WHERE id = ? AND status = ? AND lease_owner IS ?",
                (
                    StoredStatus.RUNNING,
                    lease_owner(),
                    time.time() + LEASE_SECONDS,
                    stored.id,
                    status,
                    owner,
                ),
            ).rowcount
            if taken != 1:
                raise StoreError(f"run {stored.id} was taken by {holder(owner)} meanwhile")

    def recorded_with(self, run_id: str) -> Recorded | None:
        """How a stored run records its calls (None: it records nothing, or no such run).

        Raises:
            StoreError: the stored value is damaged, or the store cannot be read.
        """
        with self._guard(f"cannot read run {run_id}"):
            row = self._db.execute("SELECT recording FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        _typed(row, "recording", (_OPTIONAL_TEXT,), run_id)
        return Recorded.from_text(row[0], run_id)

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
            overrides=stored.overrides,
        )

    def integrity_check(self) -> str:
        """SQLite's own check: ``ok`` when the file is sound."""
        with self._guard("cannot check"):
            return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])
