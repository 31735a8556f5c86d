"""A short plan pane follows the run: the next task (▶) stays in view as the run steps."""

from __future__ import annotations

from harness_tui.tui.widgets.plan_table import PlanTable
from tests.tui.conftest import ROOT, make_app, settle, workbench

RELEASE = ROOT / "workflows" / "release_v1.yaml"


async def test_the_next_task_stays_in_view_in_a_short_plan_pane() -> None:
    app = make_app(RELEASE)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = workbench(app)
        plan = screen.query_one(PlanTable)
        rows = plan.scrollable_content_region.height - 1  # the header takes a line
        assert rows < 6  # the pane is shorter than the steps taken below
        for _ in range(6):
            await pilot.press("n")
            await settle(pilot)
        session = screen.session
        assert session is not None
        next_task = plan.next_task
        assert next_task is not None
        row = plan.row_of(next_task)
        assert row is not None and row >= 6
        first = int(plan.scroll_offset.y)
        assert first <= row < first + rows, (first, row, rows)
