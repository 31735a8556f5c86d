"""The live-run service the CLI and the workbench call: summary, export, wall times."""

from __future__ import annotations

import time
from pathlib import Path

from harness_tui.engine.clock import FakeClock, SystemClock
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.workflow.loader import load_workflow

ROOT = Path(__file__).resolve().parents[2]


def test_summary_of_a_failed_run_names_the_failure_and_the_leaf_outputs() -> None:
    workflow = load_workflow(ROOT / "tests/tui/data/flaky_pipeline.yaml")
    live = LiveRun.start(workflow, workflow.payload, RunSettings(clock=FakeClock()))
    live.drive()
    summary = live.summary()
    assert summary.status == "failed" and not summary.succeeded
    assert summary.counts == {"succeeded": 2, "failed": 1, "upstream_failed": 1}
    assert [task for task, _ in summary.failures] == ["transform"]
    assert summary.failures[0][1]["message"] == "upstream API returned HTTP 503"
    assert summary.outputs == {}  # the only leaf, publish, never ran
    assert summary.digest == live.run.digest


def test_summary_of_a_run_not_started_counts_pending_tasks() -> None:
    workflow = load_workflow(ROOT / "workflows/user_profile.yaml")
    live = LiveRun.start(workflow, workflow.payload, RunSettings(clock=FakeClock()))
    assert live.summary().counts == {"pending": 4}
    live.drive()
    assert live.summary().outputs == {
        "compose_response": {"final": {"level": "gold", "quota": 100, "user_id": "u001"}}
    }


def test_wall_times_are_recorded_beside_the_trace_and_never_digested(tmp_path: Path) -> None:
    workflow = load_workflow(ROOT / "workflows/user_profile.yaml")
    records = []
    for epoch in (0.0, 1_900_000_000.0):
        live = LiveRun.start(
            workflow, workflow.payload, RunSettings(clock=FakeClock(epoch=epoch, tick=0.5))
        )
        live.drive()
        path = tmp_path / f"{epoch}.json"
        live.export().write(path)
        records.append(RunRecord.read(path))
    first, second = records
    assert first.digests == second.digests
    assert first.document["trace"] == second.document["trace"]
    walls = [[t["wall"] for t in r.document["timings"]] for r in records]
    assert walls[0][0] >= 0.0 and walls[1][0] >= 1_900_000_000.0
    assert [event.wall for event in first.events] == walls[0]


def test_fake_clock_wall_is_its_epoch_plus_fake_time_and_does_not_tick() -> None:
    clock = FakeClock(start=5.0, tick=1.0, epoch=100.0)
    assert clock.wall() == clock.wall() == 105.0
    clock.sleep(2.5)
    assert clock.wall() == 107.5
    assert abs(SystemClock().wall() - time.time()) < 5


def test_a_replay_shows_the_recorded_timings(tmp_path: Path) -> None:
    from harness_tui.records.runs.replay import replay

    workflow = load_workflow(ROOT / "tests/tui/data/flaky_pipeline.yaml")
    live = LiveRun.start(
        workflow, workflow.payload, RunSettings(clock=FakeClock(start=5.0, tick=0.75))
    )
    live.drive()
    path = tmp_path / "run.json"
    live.export().write(path)
    record = RunRecord.read(path)
    report = replay(record)
    assert report.identical
    timings = [(e.started_at, e.ended_at, e.wall) for e in report.run.events]
    assert timings == [(e.started_at, e.ended_at, e.wall) for e in record.events]
    assert any(e.duration for e in report.run.events)


def test_traces_of_two_workflow_versions_are_compared_task_by_task() -> None:
    from harness_tui.engine.graph import TaskGraph, TaskNode
    from harness_tui.engine.orchestrator import TaskOrchestrator
    from harness_tui.records.runs.divergence import task_diff

    def const(value: object) -> object:
        return lambda inputs: value

    old = TaskGraph.from_nodes(
        [TaskNode("a", const(1)), TaskNode("b", const(2), depends_on=("a",)),
         TaskNode("c", const(3), depends_on=("b",))]
    )  # fmt: skip
    # A new first task shifts every position; c now gives another output for the same inputs.
    new = TaskGraph.from_nodes(
        [TaskNode("_setup", const(0)), TaskNode("a", const(1)),
         TaskNode("b", const(2), depends_on=("a",)), TaskNode("c", const(4), depends_on=("b",))]
    )  # fmt: skip
    one = TaskOrchestrator(old, clock=FakeClock()).start({}).run_to_end()
    two = TaskOrchestrator(new, clock=FakeClock()).start({}).run_to_end()
    found = task_diff(one.events, two.events, one.output_texts(), two.output_texts())
    assert [(d.task, d.kind) for d in found] == [("c", "output"), ("_setup", "added")]
    assert (found[0].expected_value, found[0].actual_value) == (3, 4)
    assert "non-deterministic" in found[0].describe()
