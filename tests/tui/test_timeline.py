"""The timeline: every attempt's wall-clock span and worker, from live and recorded runs, in
the workbench (T) and in the Chrome trace (issue 16)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from textual.widgets import Static

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.events import Status
from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.export import RunRecord
from harness_tui.records.export.chrome import chrome_trace
from harness_tui.records.reports.timeline import attempt_spans
from harness_tui.tui.modals.timeline import (
    NAME_WIDTH,
    WORKER_WIDTH,
    TimelineModal,
    timeline_text,
)
from harness_tui.workflow.loader import load_workflow

from .conftest import ROOT, make_app, settle

FLAKY = ROOT / "tests/tui/data/flaky_pipeline.yaml"


def overlapping_run() -> Any:
    meet = threading.Barrier(3, timeout=5)

    def together(inputs: Mapping[str, Any]) -> int:
        meet.wait()  # the three run at the same time, on three workers
        return 1

    graph = TaskGraph.from_nodes([TaskNode(f"t{i}", together) for i in range(3)])
    return TaskOrchestrator(graph, workers=3).start({}).run_to_end()


def test_spans_of_a_parallel_run_overlap_on_distinct_workers() -> None:
    run = overlapping_run()
    spans = attempt_spans(run.events)
    assert len(spans) == 3 and {s.worker for s in spans} == {1, 2, 3}
    latest_start = max(s.start for s in spans)
    assert all(s.end >= latest_start for s in spans)  # they overlap in wall time
    record = RunRecord.from_run(run, _workflow_stub(run))
    assert sorted(a["worker"] for a in record.document["attempts"]) == [1, 2, 3]
    trace = chrome_trace(record)
    names = {
        e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"
    }
    assert names == {1: "worker 1", 2: "worker 2", 3: "worker 3"}
    assert sorted(e["tid"] for e in trace["traceEvents"] if e["ph"] == "X") == [1, 2, 3]


def test_a_column_names_the_worker_of_each_task_when_several_ran() -> None:
    spans = attempt_spans(overlapping_run().events)
    lines = timeline_text(["t0", "t1", "t2"], spans, 40, {}).plain.splitlines()
    assert lines[0].split()[:2] == ["task", "w"]
    assert sorted(line.split()[1] for line in lines[1:]) == ["1", "2", "3"]
    assert min(line.index("█") for line in lines[1:]) == NAME_WIDTH + 1 + WORKER_WIDTH
    serial = TaskOrchestrator(TaskGraph.from_nodes([TaskNode("a", lambda i: 1)])).start({})
    plain = timeline_text(["a"], attempt_spans(serial.run_to_end().events), 40, {}).plain
    assert plain.splitlines()[1].split()[0] == "a" and "█" in plain.splitlines()[1].split()[1]


def _workflow_stub(run: Any) -> Any:
    from harness_tui.workflow.python_source import graph_workflow

    return graph_workflow(run.graph, {}, "overlap")


def test_retries_show_as_separate_bars_coloured_by_status() -> None:
    workflow = load_workflow(FLAKY)
    clock = FakeClock(start=10.0, tick=0.25)
    run = TaskOrchestrator(workflow.graph, clock=clock, on_failure="continue")
    spans = attempt_spans(run.start(workflow.payload).run_to_end().events)
    transform = [s for s in spans if s.task == "transform"]
    assert [s.attempt for s in transform] == [1, 2, 3]
    assert {s.status for s in transform} == {Status.FAILED}
    styles = {Status.FAILED: "red", Status.SUCCEEDED: "green"}
    text = timeline_text(["fetch", "transform"], spans, 40, styles)
    lines = text.plain.splitlines()
    assert lines[2].startswith("transform") and lines[2].count("█") >= 3
    red = [span for span in text.spans if span.style == "red"]
    assert len(red) == 3  # one bar per failed attempt


async def test_t_opens_the_timeline_live_and_from_a_recorded_export(tmp_path: Path) -> None:
    app = make_app(FLAKY)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("T")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, TimelineModal)
        drawn = str(app.screen.query_one("#timeline-bars", Static).render())
        assert "transform" in drawn and "█" in drawn
        record = app.session.export_record()  # type: ignore[union-attr]
    path = record.write(tmp_path / "run.json")
    replay = make_app(path)
    async with replay.run_test(size=(120, 40)) as pilot:
        await pilot.press("T")  # nothing replayed yet: the recorded times are drawn
        await pilot.pause()
        await pilot.pause()
        drawn = str(replay.screen.query_one("#timeline-bars", Static).render())
        assert "transform" in drawn and "█" in drawn


async def test_the_timeline_is_centred_and_its_lines_never_wrap_at_80x24(tmp_path: Path) -> None:
    """More tasks than rows: the scrollbar that appears once they are drawn took the width
    the lines were drawn for, and the axis label's ``s`` wrapped onto a row of its own."""
    tasks = "".join(f"  task{i:02}: {{run: builtin:echo}}\n" for i in range(30))
    workflow = tmp_path / "many.yaml"
    workflow.write_text(f"name: many\ntasks:\n{tasks}")
    app = make_app(workflow)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("T")
        await pilot.pause()
        await pilot.pause()
        bars = app.screen.query_one("#timeline-bars", Static)
        assert bars.render_line(1).text.startswith("task")  # the axis on one line
        assert bars.virtual_size.height == 32  # the axis, a row per task, the last newline
        assert bars.render_line(0).text.rstrip().endswith(" s")
        dialog = app.screen.query_one("#timeline-dialog").region
        assert abs(dialog.x - (80 - dialog.right)) <= 1
