"""Append-only run state and O(1) snapshots (I7).

The state is a log: trace events and committed outputs are only ever appended. The context as
of any trace position is a :class:`Snapshot`, a view over a prefix of that log, so going back in
time costs nothing up front and each lookup is a dictionary access plus a bisect.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, overload

from .canonical import loads, object_text
from .events import Status, TraceEvent

__all__ = ["Commit", "Outcomes", "RunState", "Snapshot", "trace_digest"]


class Commit:
    """A committed task output, kept as canonical JSON text (decoded fresh for each reader)."""

    __slots__ = ("digest", "seq", "task", "text")

    def __init__(self, task: str, seq: int, text: str, digest: str) -> None:
        self.task = task
        self.seq = seq
        self.text = text
        self.digest = digest

    def value(self) -> Any:
        """A fresh copy of the output: a reader may mutate it without affecting anyone."""
        return loads(self.text)


class Outcomes(Protocol):
    """What a task may read of the tasks before it: their final statuses, outputs and input
    digests (the run's :class:`RunState`, or, for a task run ahead of its turn, that state
    with the outcomes of tasks completed but not yet retired; see :mod:`.parallel`)."""

    def status(self, task: str) -> Status | None:
        """The task's latest status, or None if it has none yet."""

    def output(self, task: str) -> Commit | None:
        """The task's committed output, or None."""

    def output_names(self) -> list[str]:
        """The tasks with a committed output, in plan order (a copy)."""

    def input_digest(self, task: str) -> str | None:
        """The input digest of the task's last attempt."""


class RunState:
    """The append-only log of one run: events and committed outputs."""

    __slots__ = (
        "_by_task", "_hashed", "_input_digests", "_latest", "_results_digest", "_trace_hash",
        "commits", "events",
    )  # fmt: skip

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []
        self.commits: dict[str, Commit] = {}
        self._by_task: dict[str, list[int]] = {}
        # Running sha256 over the canonical trace text, so a digest costs only the new events.
        self._trace_hash = hashlib.sha256(b"[")
        self._hashed = 0
        self._input_digests: dict[str, str] = {}
        self._latest: dict[str, Status] = {}
        # The results digest as of a number of commits: outputs are only ever added, so a
        # run's digest asked for again (its end recorded, then exported) is not taken again.
        self._results_digest: tuple[int, str] = (-1, "")

    def append(self, event: TraceEvent) -> None:
        """Append an event; its ``seq`` must be the next position."""
        if event.seq != len(self.events):
            raise ValueError(f"event seq {event.seq} out of order (expected {len(self.events)})")
        self.append_next(event)

    def append_next(self, event: TraceEvent) -> None:
        """:meth:`append` for an event the caller numbered ``len(self)`` itself (hot path)."""
        self.events.append(event)
        task = event.task
        seqs = self._by_task.get(task)
        if seqs is None:
            self._by_task[task] = [event.seq]
        else:
            seqs.append(event.seq)
        self._latest[task] = event.status
        if event.input_digest is not None:
            self._input_digests[task] = event.input_digest

    def commit(self, task: str, seq: int, text: str, digest: str) -> Commit:
        """Record a task's output, committed by the event at ``seq``."""
        if task in self.commits:
            raise ValueError(f"task {task!r} already has a committed output")
        commit = Commit(task, seq, text, digest)
        self.commits[task] = commit
        return commit

    def __len__(self) -> int:
        return len(self.events)

    def task_events(self, task: str) -> list[TraceEvent]:
        """All events of one task, in order."""
        return [self.events[i] for i in self._by_task.get(task, ())]

    def last_event(self, task: str, upto: int | None = None) -> TraceEvent | None:
        """The task's latest event with ``seq <= upto`` (all events when ``upto`` is None)."""
        seqs = self._by_task.get(task)
        if not seqs:
            return None
        if upto is None:
            return self.events[seqs[-1]]
        position = bisect.bisect_right(seqs, upto)
        return self.events[seqs[position - 1]] if position else None

    def status(self, task: str) -> Status | None:
        """The task's latest status, or None if it has no event yet."""
        return self._latest.get(task)

    def input_digest(self, task: str) -> str | None:
        """The input digest recorded on the task's last ``running`` event."""
        return self._input_digests.get(task)

    def output(self, task: str) -> Commit | None:
        """The task's committed output, or None."""
        return self.commits.get(task)

    def output_names(self) -> list[str]:
        """The tasks with a committed output, in commit order, which is plan order (a copy,
        taken at once: in a parallel run tasks retire while others read)."""
        return list(self.commits)

    def snapshot(self, seq: int | None = None) -> Snapshot:
        """A view of the run as of trace position ``seq`` (the latest when None). O(1)."""
        end = len(self.events) if seq is None else seq + 1
        if not 0 <= end <= len(self.events):
            raise IndexError(f"no trace position {seq} (trace has {len(self.events)} events)")
        return Snapshot(self, end)

    def canonical_trace(self) -> list[dict[str, Any]]:
        """Every event's canonical fields, in order."""
        return [event.canonical() for event in self.events]

    def hash_texts(self, first: int, texts: Sequence[str]) -> None:
        """Take the canonical texts of ``events[first:]``, computed by a caller already, into
        the running trace hash when they are the next to hash (otherwise :meth:`trace_digest`
        computes them again when it needs them)."""
        if first != self._hashed or first + len(texts) != len(self.events) or not texts:
            return
        chunk = ",".join(texts)
        self._trace_hash.update(("," + chunk if first else chunk).encode())
        self._hashed = first + len(texts)

    def adopt_trace_hash(self, hasher: Any, count: int) -> None:
        """Take ``hasher`` as the running trace hash: sha256 of ``[`` and the canonical
        texts of the first ``count`` events, comma-separated, as they were recorded (a
        restored run's were read from its store: not encoded again). Only when those are all
        the events so far and none is hashed yet."""
        if count == len(self.events) and self._hashed == 0:
            self._trace_hash = hasher
            self._hashed = count

    def trace_digest(self) -> str:
        """sha256 of the canonical JSON of the trace (the list of canonical events)."""
        _hash_events(self._trace_hash, self.events, self._hashed)
        self._hashed = len(self.events)
        final = self._trace_hash.copy()
        final.update(b"]")
        return final.hexdigest()

    def results_text(self) -> str:
        """Canonical JSON of ``{task: output}`` for every committed task."""
        return object_text({name: commit.text for name, commit in self.commits.items()})

    def results_digest(self) -> str:
        """sha256 of :meth:`results_text`."""
        count, digest = self._results_digest
        if count != len(self.commits):
            digest = hashlib.sha256(self.results_text().encode()).hexdigest()
            self._results_digest = (len(self.commits), digest)
        return digest


class _EventsView(Sequence[TraceEvent]):
    """A read-only prefix of the event log, without copying it."""

    __slots__ = ("_end", "_events")

    def __init__(self, events: list[TraceEvent], end: int) -> None:
        self._events = events
        self._end = end

    def __len__(self) -> int:
        return self._end

    @overload
    def __getitem__(self, index: int) -> TraceEvent: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[TraceEvent]: ...
    def __getitem__(self, index: int | slice) -> TraceEvent | Sequence[TraceEvent]:
        if isinstance(index, slice):
            return self._events[: self._end][index]
        if index < 0:
            index += self._end
        if not 0 <= index < self._end:
            raise IndexError(index)
        return self._events[index]

    def __iter__(self) -> Iterator[TraceEvent]:
        for index in range(self._end):
            yield self._events[index]


def trace_digest(events: Sequence[TraceEvent]) -> str:
    """:meth:`RunState.trace_digest` of ``events`` without a state (a recorded trace)."""
    hasher = hashlib.sha256(b"[")
    _hash_events(hasher, events, 0)
    hasher.update(b"]")
    return hasher.hexdigest()


def _hash_events(hasher: Any, events: Sequence[TraceEvent], first: int) -> None:
    """Take the canonical texts of ``events[first:]`` into ``hasher``, which holds those
    before them: one encode and one update per 4,096 events, not per event."""
    for start in range(first, len(events), 4096):
        chunk = ",".join([event.canonical_text() for event in events[start : start + 4096]])
        hasher.update(("," + chunk if start else chunk).encode())


class Snapshot:
    """The run as of one trace position: statuses, outputs, events. A view, never a copy."""

    __slots__ = ("_end", "_state")

    def __init__(self, state: RunState, end: int) -> None:
        self._state = state
        self._end = end

    @property
    def seq(self) -> int:
        """The last trace position included (-1 before any event)."""
        return self._end - 1

    @property
    def events(self) -> Sequence[TraceEvent]:
        """The events up to and including :attr:`seq`."""
        return _EventsView(self._state.events, self._end)

    def last_event(self, task: str) -> TraceEvent | None:
        """The task's latest event as of this snapshot."""
        return self._state.last_event(task, self._end - 1)

    def task_events(self, task: str) -> list[TraceEvent]:
        """The task's events as of this snapshot, in order."""
        state, end = self._state, self._end
        seqs = state._by_task.get(task, ())
        return [state.events[i] for i in seqs[: bisect.bisect_left(seqs, end)]]

    def status(self, task: str) -> Status | None:
        """The task's status as of this snapshot, or None if it had no event yet."""
        event = self.last_event(task)
        return event.status if event is not None else None

    def has_output(self, task: str) -> bool:
        """Whether the task's output was committed as of this snapshot."""
        commit = self._state.commits.get(task)
        return commit is not None and commit.seq < self._end

    def output(self, task: str) -> Any:
        """A fresh copy of the task's output as of this snapshot.

        Raises:
            KeyError: the task had no committed output yet.
        """
        commit = self._state.commits.get(task)
        if commit is None or commit.seq >= self._end:
            raise KeyError(task)
        return commit.value()

    @property
    def results(self) -> Mapping[str, Any]:
        """Every output committed as of this snapshot, decoded (a fresh dict)."""
        return {
            name: commit.value()
            for name, commit in self._state.commits.items()
            if commit.seq < self._end
        }
