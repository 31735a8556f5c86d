"""A run stopped between two tasks replays: the record shows the next task cancelled before it
started, and the replay stops there too instead of running it (and blaming the task)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.replay import replay
from harness_tui.workflow.loader import load_workflow

WORKFLOW = Path(__file__).resolve().parents[2] / "workflows" / "etl_fanout.yaml"


@pytest.mark.parametrize("workers", [1, 4])
def test_a_run_stopped_between_tasks_once_or_twice_replays_identically(workers: int) -> None:
    workflow = load_workflow(WORKFLOW)
    size = len(workflow.graph.nodes)
    for first in range(size):
        for second in (None, first + 1):  # a second stop cancels the cleanups too
            orchestrator = TaskOrchestrator(
                workflow.graph, clock=FakeClock(tick=0.01), on_failure=workflow.on_failure,
                workers=workers,
            )  # fmt: skip
            run = orchestrator.start(workflow.payload)
            steps = 0
            while not run.finished:
                if steps in (first, second):
                    run.cancel()
                run.step()
                steps += 1
            assert run.status == "cancelled"
            record = RunRecord.from_run(run, workflow)
            report = replay(record)
            where = report.diff.first.describe() if report.diff.first else "digests differ"
            assert report.identical, f"stopped before steps {first}, {second}: {where}"
            assert report.run.status == "cancelled"
