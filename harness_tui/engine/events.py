"""Statuses and trace events.

A :class:`TraceEvent` holds the canonical part of an event (what goes into digests and
exports) and, beside it, timings and the traceback, which are kept out of every digest so two
runs of the same work compare equal whatever the wall clock said.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from itertools import repeat
from sys import intern
from typing import Any, NamedTuple

from .canonical import event_text
from .graph import TaskGraph

__all__ = [
    "FAILURE_STATUSES",
    "FINAL_STATUSES",
    "OUTPUT_STATUSES",
    "RUN_FAILING_STATUSES",
    "RunStatus",
    "Status",
    "TraceEvent",
    "ends_task",
]


class Status(StrEnum):
    """Status of a task in the trace. A task's last event carries its final status."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    FALLBACK = "fallback"
    SKIPPED = "skipped"
    UPSTREAM_FAILED = "upstream_failed"
    CANCELLED = "cancelled"


OUTPUT_STATUSES = frozenset({Status.SUCCEEDED, Status.FALLBACK})
"""Final statuses that commit an output."""

FINAL_STATUSES = frozenset(Status) - {Status.RUNNING}
"""Statuses that can end a task (``running`` never does)."""

FAILURE_STATUSES = frozenset({Status.FAILED, Status.TIMED_OUT})
"""Statuses of an attempt that failed (a retry or the fallback may still follow)."""

RUN_FAILING_STATUSES = frozenset(
    {Status.FAILED, Status.TIMED_OUT, Status.UPSTREAM_FAILED, Status.CANCELLED}
)
"""Final task statuses that make the whole run fail."""


PENDING = "pending"
"""What a task with no event yet is called (in summaries, filters and reports), and a run
that has not started (:attr:`RunStatus.PENDING`)."""


class RunStatus(StrEnum):
    """Status of a whole run."""

    PENDING = PENDING
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class TraceEvent(NamedTuple):
    """One event of a run's trace.

    Attributes:
        seq: 0-based position in the trace, contiguous.
        task: the task name.
        task_id: the task's stable id (I1).
        status: what happened.
        attempt: the attempt number (1-based; 0 when no attempt ran, e.g. skipped).
        error: ``{"type", "message"}`` for failures, else None.
        input_digest: the Merkle digest of what the task saw, on ``running`` events.
        output_digest: sha256 of the output's canonical JSON, on ``succeeded``/``fallback``.
        started_at: clock time the event began (not canonical).
        ended_at: clock time the event ended (not canonical).
        traceback: the formatted traceback of a failure (not canonical).
        wall: epoch seconds when the event was recorded, from the clock's ``wall()`` (not
            canonical: for people reading a timeline).
        worker: which worker ran the attempt (0: the run's own thread; 1..N: the threads of
            a parallel run); not canonical.

    A named tuple rather than a dataclass: a run of 100k tasks creates 200k of them, and tuple
    creation is several times cheaper.
    """

    seq: int
    task: str
    task_id: str
    status: Status
    attempt: int
    error: dict[str, str] | None = None
    input_digest: str | None = None
    output_digest: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    traceback: str | None = None
    wall: float | None = None
    worker: int = 0

    @property
    def duration(self) -> float | None:
        """Seconds between start and end, when both are known."""
        if self.started_at is None or self.ended_at is None:
            return None
        return self.ended_at - self.started_at

    def canonical(self) -> dict[str, Any]:
        """The canonical fields as a JSON object (what digests and exports hold)."""
        data: dict[str, Any] = {
            "seq": self.seq,
            "task": self.task,
            "task_id": self.task_id,
            "status": str(self.status),
            "attempt": self.attempt,
        }
        if self.error is not None:
            data["error"] = self.error
        if self.input_digest is not None:
            data["input_digest"] = self.input_digest
        if self.output_digest is not None:
            data["output_digest"] = self.output_digest
        return data

    def canonical_text(self) -> str:
        """Canonical JSON of :meth:`canonical` (see :func:`~.canonical.event_text`)."""
        return event_text(
            self.seq,
            self.task,
            self.task_id,
            str.__str__(self.status),
            self.attempt,
            self.error,
            self.input_digest,
            self.output_digest,
        )

    def timing(self) -> dict[str, Any]:
        """The non-canonical fields (timings and traceback) as a JSON object."""
        data: dict[str, Any] = {"seq": self.seq}
        if self.started_at is not None:
            data["started_at"] = self.started_at
        if self.ended_at is not None:
            data["ended_at"] = self.ended_at
        if self.traceback is not None:
            data["traceback"] = self.traceback
        if self.wall is not None:
            data["wall"] = self.wall
        if self.worker:
            data["worker"] = self.worker
        return data

    @classmethod
    def from_dicts(
        cls, canonical: dict[str, Any], timing: dict[str, Any] | None = None
    ) -> TraceEvent:
        """Rebuild an event from :meth:`canonical` and :meth:`timing` output."""
        timing = timing or {}
        get, when = canonical.get, timing.get
        # Positional, in field order (a missing field is named in that order): a reader
        # rebuilds 200,000 of these for a 100,000-task run, and keywords cost a third of it.
        return tuple.__new__(
            cls,
            (
                canonical["seq"],
                canonical["task"],
                canonical["task_id"],
                _status(canonical["status"]),
                canonical["attempt"],
                get("error"),
                get("input_digest"),
                get("output_digest"),
                when("started_at"),
                when("ended_at"),
                when("traceback"),
                when("wall"),
                when("worker") or 0,
            ),
        )


def events_from_records(
    canonicals: Sequence[dict[str, Any]], timings: Sequence[dict[str, Any] | None]
) -> list[TraceEvent]:
    """:meth:`TraceEvent.from_dicts` of each canonical record and its timing, a field at a
    time for all of them (a reader rebuilds 200,000 events of a 100,000-task run: a third
    quicker than one call an event), each task and task id interned (:func:`sys.intern`: a
    string read is a new string each time, and a run names each task twice, as its plan does
    once more)."""
    count = len(canonicals)
    times = [timing or _NO_TIMING for timing in timings]
    fields = (
        [c["seq"] for c in canonicals],
        [intern(c["task"]) for c in canonicals],
        [intern(c["task_id"]) for c in canonicals],
        [_status(c["status"]) for c in canonicals],
        [c["attempt"] for c in canonicals],
        [c.get("error") for c in canonicals],
        [c.get("input_digest") for c in canonicals],
        [c.get("output_digest") for c in canonicals],
        [t.get("started_at") for t in times],
        [t.get("ended_at") for t in times],
        [t.get("traceback") for t in times],
        [t.get("wall") for t in times],
        [t.get("worker") or 0 for t in times],
    )  # in field order, as from_dicts
    return list(map(tuple.__new__, repeat(TraceEvent, count), zip(*fields, strict=True)))


_NO_TIMING: dict[str, Any] = {}

_STATUSES: dict[str, Status] = {status.value: status for status in Status}
"""Each status by its text: a dictionary lookup, where ``Status(text)`` costs some 2 µs
(a 100,000-task export has 200,000 events to rebuild)."""


def _status(text: Any) -> Status:
    """The status named ``text``; anything else refused as ``Status(text)`` refuses it."""
    try:
        return _STATUSES[text]
    except (KeyError, TypeError):  # TypeError: a list or an object, which no key is
        return Status(text)


def ends_task(graph: TaskGraph, event: TraceEvent) -> bool:
    """Whether ``event`` is its task's final event: no retry or fallback follows it.

    A pure function of the task's retry and fallback settings, so a store or a reader can tell
    task boundaries in a recorded trace without a run.
    """
    status = event.status
    if status is Status.RUNNING:
        return False
    if status not in FAILURE_STATUSES:
        return True
    node = graph[event.task]
    attempts = node.max_retries + 1
    if event.attempt == 0 or event.attempt > attempts:
        return True  # a condition error, or the fallback itself failed
    return event.attempt == attempts and node.fallback is None
