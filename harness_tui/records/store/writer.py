"""Group commit: how a live run is recorded as it retires tasks.

The tasks a run retires are written together, one transaction and one row (:mod:`.rows`) per
batch of whole tasks (their events and committed outputs; their logs and calls go to tables of
their own), when :data:`GROUP_EVENTS` events are pending, :data:`GROUP_SECONDS` have passed or
the run pauses, ends or is left. A flusher thread writes a batch whose time is up while its run
is busy (a long task), under the store's lock.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...engine.events import TraceEvent
from ...engine.orchestrator import RetiredStep
from ..errors import StoreError
from .leases import holder
from .rows import encode_batch, output_line
from .schema import rollback

__all__ = ["GROUP_EVENTS", "GROUP_SECONDS", "INSERT_LOG", "GroupCommit"]

GROUP_EVENTS = 512
"""Group commit: a run's pending events are written once this many are waiting..."""
GROUP_SECONDS = 0.25
"""...or this long after the first of them was queued, whichever comes first. The flusher
thread wakes that often while a run is busy, and each wake costs the run's thread more than
it seems (the thread waits for the interpreter's lock while the run's thread lets it go at
each task's end, and wakes for nothing each time): at 50 ms, a tenth of a 100,000-task run's
time; at 0.25 s, a fiftieth."""

INSERT_BATCH = (
    "INSERT INTO batches (run_id, seq, tasks, events, canonical, times, workers, tracebacks, "
    "outputs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# REPLACE: a resumed run re-runs an unfinished task from attempt 1, over nothing stored; a
# restored log is never written again, but a replace keeps a second write harmless.
INSERT_LOG = (
    "INSERT OR REPLACE INTO logs (run_id, task, attempt, text, truncated) VALUES (?, ?, ?, ?, ?)"
)
INSERT_CALL = (
    "INSERT OR REPLACE INTO calls (run_id, task, attempt, seq, exchange) VALUES (?, ?, ?, ?, ?)"
)


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


class GroupCommit:
    """The batches of the runs a store is recording, and the thread that writes them when due.

    Args:
        path: the store file, for error messages.
        lock: the store's lock: one writer at a time on its connection.
        connection: the store's connection (read at each write: the store may reopen it).
        owner_of: who holds a run's lease now, for the line saying a run was taken over.
    """

    def __init__(
        self,
        path: Path,
        lock: threading.RLock,
        connection: Callable[[], sqlite3.Connection],
        owner_of: Callable[[str], str | None],
    ) -> None:
        self.path = path
        self._lock = lock
        self._connection = connection
        self._owner = owner_of
        self._batches: dict[str, _Batch] = {}
        self._closed = False
        self._wake = threading.Condition(lock)
        self._flusher: threading.Thread | None = None
        self._flusher_due = float("inf")  # when the flusher thread wakes up next

    def start(self, run_id: str, on_error: Callable[[StoreError], None] | None) -> _Batch:
        """Begin batching ``run_id`` (writing what an earlier batching of it left)."""
        with self._lock:
            old = self._batches.get(run_id)
            if old is not None:
                self._flush_batch(old)
            batch = self._batches[run_id] = _Batch(run_id, on_error)
            self._start_flusher()
        return batch

    def close(self) -> None:
        """Write what is pending and stop the flusher (the lock is held)."""
        try:
            self.flush()
        finally:
            self._closed = True
            self._wake.notify_all()

    def add(self, batch: _Batch, retired: RetiredStep) -> None:
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

    def failed(self, batch: _Batch, exc: StoreError) -> None:
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
                self.failed(batch, exc)

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
                    self.failed(batch, exc)

    def flush_if_idle(self) -> None:
        """Write what is pending unless the store is in the middle of a write (a signal
        handler leaving at once: a write it interrupted is lost, as after a kill)."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            if not self._connection().in_transaction:
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
        db = self._connection()
        try:
            db.execute("BEGIN")
            try:
                db.execute(INSERT_BATCH, row)
                if logs:
                    db.executemany(INSERT_LOG, logs)
                if calls:
                    db.executemany(INSERT_CALL, calls)
            except BaseException:
                rollback(db)
                raise
            db.execute("COMMIT")
        except sqlite3.IntegrityError:
            raise StoreError(
                f"run {batch.run_id} is recorded by {holder(self._owner(batch.run_id))} now; "
                "this process stopped recording it"
            ) from None
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot record a task: {exc}") from None

    def end(self, run_id: str) -> None:
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
