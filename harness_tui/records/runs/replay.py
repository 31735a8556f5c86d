"""Offline replay: drive the orchestrator with recorded outcomes, run no user code."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...engine.capture import UNATTRIBUTED
from ...engine.driver import Driver
from ...engine.events import RunStatus, Status, TraceEvent
from ...engine.graph import TaskGraph, Trigger
from ...engine.orchestrator import Run, TaskOrchestrator
from ...engine.recorded import RecordedExecutor
from ...engine.scheduler import Plan
from ..export import RunRecord
from .divergence import TraceDiff, trace_diff

__all__ = ["RecordedClock", "ReplayReport", "replay", "replay_run"]


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """What a replay found.

    Attributes:
        run: the replayed run.
        diff: the trace comparison with the record.
        digests_match: the replayed digests equal the recorded ones.
        unchecked: what a redacted export's replay could not compare (its values are gone).
    """

    run: Run
    diff: TraceDiff
    digests_match: bool
    unchecked: tuple[str, ...] = ()

    @property
    def identical(self) -> bool:
        return self.diff.identical and self.digests_match


class RecordedClock:
    """The clock of a replay: it reads the record's timings back, so a replayed run shows
    when each event really happened and how long each attempt took, and waits for nothing.

    The engine reads the clock once per event it records (the event's time), plus once before
    a fallback (its start); ``seq_now`` says which event is being recorded.
    """

    def __init__(self, events: Sequence[TraceEvent], seq_now: Callable[[], int]) -> None:
        self._seq_now = seq_now
        # Each event's first reading, any later one (a fallback's end), and its wall time,
        # read once here rather than worked out at each of the run's 400,000 readings.
        self._first: list[float] = []
        self._later: list[float] = []
        self._walls = [event.wall if event.wall is not None else 0.0 for event in events]
        opened = False  # the event before is a running one
        for event in events:
            started = event.started_at if event.started_at is not None else 0.0
            ended = event.ended_at if event.ended_at is not None else 0.0
            running = event.status is Status.RUNNING
            # An attempt's start, or a fallback's first reading (its start), else its end.
            self._first.append(started if running or not opened else ended)
            self._later.append(started if running else ended)
            opened = running
        self._last = -1  # the event of the last reading

    def now(self) -> float:
        """The recorded time of the event being recorded."""
        seq = self._seq_now()
        if seq >= len(self._first):
            return 0.0
        if seq == self._last:
            return self._later[seq]
        self._last = seq
        return self._first[seq]

    def wall(self) -> float:
        """The recorded wall time of the event being recorded (0 when the record has none)."""
        seq = self._seq_now()
        return self._walls[seq] if seq < len(self._walls) else 0.0

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> None:
        """A replay waits for nothing."""

    def wait(self, done: threading.Event, timeout: float | None) -> bool:
        """Recorded outcomes are ready at once."""
        return True


def replay_run(record: RunRecord) -> Run:
    """A run over the record's embedded workflow whose attempts return the recorded outcomes.

    Nothing is imported or executed; step it like a live run. A redacted export replays its
    recorded plan (its task ids come from the real payload) and outcomes, with ``<redacted>``
    where the values were: its input and output digests are not the recorded ones.
    """
    workflow = record.workflow
    runs: list[Run] = []  # the clock reads how far the replay has come
    clock = RecordedClock(record.events, lambda: len(runs[0].events) if runs else 0)
    orchestrator = TaskOrchestrator(
        workflow.graph,
        executor=RecordedExecutor(record.events, record.outputs, record.logs),
        clock=clock,
        on_failure=workflow.on_failure,
        # Before format 1.1 a stop cancelled the all_done cleanups too (docs/architecture.md,
        # "Stop and cleanup").
        cleanups_on_stop=record.document["format_version"] != "1.0",
    )
    # A custom scheduler's order is the record's; a redacted payload's task ids are too; a
    # plan checked to be the payload's is not planned twice.
    followed = record.redacted or record.scheduler is not None or record.plan_derived
    plan = record.plan if followed else None
    runs.append(orchestrator.start(record.payload, plan=plan))
    # A task cancelled before it started where the replay would start it: the user stopped
    # the run between two tasks (nothing else in the trace says so).
    unstarted = {e.task for e in record.events if e.status is Status.CANCELLED and not e.attempt}
    positions = [i for i, task in enumerate(runs[0].plan.names) if task in unstarted]
    if not positions and record.status == RunStatus.CANCELLED:
        positions = [_stopped_after_the_work(runs[0].plan, workflow.graph)]
    runs[0].stop_before(positions)
    # The run-level log has no place in the trace: it is shown from the start.
    runs[0].load_logs({k: v for k, v in record.logs.items() if k == UNATTRIBUTED})
    return runs[0]


def _stopped_after_the_work(plan: Plan, graph: TaskGraph) -> int:
    """Where a run the user stopped, whose trace cancelled nothing, was stopped: the stop
    came while its last task ran (which finished all the same), so everything after it in
    the plan is an ``all_done`` cleanup, which runs after a stop too. The replay stops before
    the first of those cleanups (or at the end), so that it ends ``cancelled`` as recorded."""
    position = len(plan)
    while position and graph.nodes[plan.names[position - 1]].trigger is Trigger.ALL_DONE:
        position -= 1
    return position


def replay(record: RunRecord) -> ReplayReport:
    """Replay the whole recorded trace and compare plan, trace and digests."""
    run = replay_run(record)
    recorded = len(record.events)
    if recorded:
        # A record of an unfinished run replays up to where it stopped, not beyond.
        Driver(run, after_step=lambda _events: len(run.events) >= recorded).continue_()
    if record.redacted:  # the order, statuses and attempts; not digests of redacted values
        diff = trace_diff(_without_digests(record.events), _without_digests(run.events), {}, {})
        return ReplayReport(run, diff, True, REDACTED_REPLAY_UNCHECKED)
    diff = trace_diff(record.events, run.events, record.outputs, run.output_texts())
    # The same canonical events have the same digest: the record's, where it was checked
    # (200,000 events at 100,000 tasks are not encoded again).
    same = diff.identical and record.trace_digest_checked
    trace = record.digests["trace"] if same else None
    return ReplayReport(run, diff, run.digests(trace) == record.digests)


REDACTED_REPLAY_UNCHECKED = ("input digests", "output digests", "run digest")


def _without_digests(events: Sequence[TraceEvent]) -> list[TraceEvent]:
    return [event._replace(input_digest=None, output_digest=None) for event in events]
