"""Offline replay: drive the orchestrator with recorded outcomes, run no user code."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.clock import FakeClock
from ..engine.driver import Driver
from ..engine.executors import RecordedExecutor
from ..engine.orchestrator import Run, TaskOrchestrator
from .divergence import TraceDiff, trace_diff
from .errors import RecordError
from .export import RunRecord

__all__ = ["ReplayReport", "replay", "replay_run"]


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """What a replay found.

    Attributes:
        run: the replayed run.
        diff: the trace comparison with the record.
        digests_match: the replayed digests equal the recorded ones.
    """

    run: Run
    diff: TraceDiff
    digests_match: bool

    @property
    def identical(self) -> bool:
        return self.diff.identical and self.digests_match


def replay_run(record: RunRecord) -> Run:
    """A run over the record's embedded workflow whose attempts return the recorded outcomes.

    Nothing is imported or executed; step it like a live run.

    Raises:
        RecordError: the export is redacted (its outputs are not the real ones).
    """
    if record.redacted:
        raise RecordError(
            f"{record.source_name}: redacted exports cannot be replayed (outputs were replaced); "
            "use 'harness-tui verify --against' or 'harness-tui diff' instead"
        )
    workflow = record.workflow
    orchestrator = TaskOrchestrator(
        workflow.graph,
        executor=RecordedExecutor(record.events, record.outputs),
        clock=FakeClock(),
        on_failure=workflow.on_failure,
    )
    return orchestrator.start(record.payload)


def replay(record: RunRecord) -> ReplayReport:
    """Replay the whole recorded trace and compare plan, trace and digests."""
    run = replay_run(record)
    recorded = len(record.events)
    if recorded:
        # A record of an unfinished run replays up to where it stopped, not beyond.
        Driver(run, after_step=lambda _events: len(run.events) >= recorded).continue_()
    diff = trace_diff(record.events, run.events, record.outputs, run.output_texts())
    return ReplayReport(run, diff, run.digests() == record.digests)
