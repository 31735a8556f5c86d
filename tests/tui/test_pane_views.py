"""The plan and trace filtered by status group and by name; a pane maximised at 80x24."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_tui.engine.events import Status
from harness_tui.tui.task_filter import TaskFilter
from harness_tui.tui.widgets.plan_table import PlanTable
from harness_tui.tui.widgets.trace_panel import TracePanel

from .conftest import make_app, settle, workbench

MIXED = """\
name: mixed
payload: {go: false}
on_failure: continue
tasks:
  extract: {run: builtin:echo}
  bad_score: {run: builtin:fail, depends_on: [extract]}
  after_bad: {run: builtin:echo, depends_on: [bad_score]}
  maybe: {run: builtin:echo, when: "payload.go"}
  load_rows: {run: builtin:echo, depends_on: [extract]}
"""


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    path = tmp_path / "mixed.yaml"
    path.write_text(MIXED)
    return path


def plan_rows(table: PlanTable) -> list[str]:
    return [table.cell_text(row, "task") for row in range(table.row_count)]


def trace_rows(trace: TracePanel) -> list[tuple[str, str]]:
    return [(trace.events[trace.seq_of(r)].task, trace.events[trace.seq_of(r)].status.value)
            for r in range(trace.row_count)]  # fmt: skip


async def test_plan_and_trace_filter_by_status_group_and_name(mixed: Path) -> None:
    app = make_app(mixed)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = workbench(app)
        plan, trace = screen.query_one(PlanTable), screen.query_one(TracePanel)
        await pilot.press("n")  # one task done: the others pending
        await settle(pilot)
        await pilot.press("v", "v", "v")  # failed, running, then pending
        assert screen.panes.task_filter.group == "pending"
        assert "extract" not in plan_rows(plan) and len(plan_rows(plan)) == 4
        assert trace_rows(trace) == []  # no event is pending
        await pilot.press("c")
        await settle(pilot)  # as statuses change, tasks leave the pending group
        assert plan_rows(plan) == []
        screen.panes.set_filter(TaskFilter(group="failed"))
        assert sorted(plan_rows(plan)) == ["after_bad", "bad_score"]
        statuses = {status for _, status in trace_rows(trace)}
        assert statuses == {Status.FAILED.value, Status.UPSTREAM_FAILED.value}
        assert screen.query_one("#plan").border_title == "Plan · failed"
        await pilot.press("v")  # running: none now
        await pilot.press("v")  # pending: none
        await pilot.press("v")
        assert screen.panes.task_filter.group == "skipped" and plan_rows(plan) == ["maybe"]
        await pilot.press("v", "v")  # succeeded, then every status again
        assert len(plan_rows(plan)) == 5
        await pilot.press("V", *"LOAD", "enter")
        await pilot.pause()
        assert plan_rows(plan) == ["load_rows"]
        assert {task for task, _ in trace_rows(trace)} == {"load_rows"}
        await pilot.press("V", *["backspace"] * 4, "_", "enter")
        await pilot.pause()
        assert sorted(plan_rows(plan)) == ["after_bad", "bad_score", "load_rows"]
        plan.focus()
        await pilot.press("down")
        # The row under the cursor is the task selected (rows map to their plan steps).
        assert screen.selected == plan_rows(plan)[plan.cursor_row] and plan.cursor_row > 0
        screen.panes.set_filter(TaskFilter())
        assert len(plan_rows(plan)) == 5 and trace.row_count == len(trace.events)


async def test_m_gives_the_focused_pane_the_whole_80x24_screen_and_back(mixed: Path) -> None:
    app = make_app(mixed)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = workbench(app)
        dag = screen.query_one("#dag")
        plan = screen.query_one(PlanTable)
        plan.focus()
        await pilot.pause()
        before = plan.region.height
        await pilot.press("m")
        await pilot.pause()
        assert screen.maximized is plan and plan.region.height >= 20 > before
        assert not dag.region.height  # the others give way
        await pilot.press("m")
        await pilot.pause()
        assert screen.maximized is None and plan.region.height == before
