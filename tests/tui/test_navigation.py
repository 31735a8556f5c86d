"""Navigating a run fast (by event, task, failure, home/end, enter on a trace row) and
re-running it from the selected task, in the workbench (issue 13)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_tui.engine.events import FAILURE_STATUSES, ends_task
from harness_tui.tui.widgets.run_header import RunHeader
from harness_tui.tui.widgets.trace_panel import TracePanel

from .conftest import ROOT, make_app, settle, workbench

FLAKY = ROOT / "tests/tui/data/flaky_pipeline.yaml"
SIZE = (120, 40)


async def test_travel_by_event_task_failure_and_to_the_ends() -> None:
    app = make_app(FLAKY)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        session = workbench(app).session
        assert session is not None and session.run.finished
        events = session.run.events
        last = len(events) - 1
        failures = [e.seq for e in events if e.status in FAILURE_STATUSES]
        task_ends = [e.seq for e in events if ends_task(session.workflow.graph, e)]
        assert len(failures) == 3 and session.view_seq is None

        await pilot.press("less_than_sign")  # the latest failure
        assert session.position == failures[-1]
        await pilot.press("less_than_sign", "less_than_sign")
        assert session.position == failures[0]
        await pilot.press("less_than_sign")  # none earlier: stays, and says so
        assert session.position == failures[0]
        assert any("no earlier failure" in n.message for n in app._notifications)
        await pilot.press("greater_than_sign")
        assert session.position == failures[1]

        await pilot.press("left_curly_bracket")  # the end of the task before
        assert session.position == max(s for s in task_ends if s < failures[1])
        await pilot.press("right_curly_bracket")
        assert session.position == min(s for s in task_ends if s > max(
            s for s in task_ends if s < failures[1]))  # fmt: skip
        header = app.screen.query_one(RunHeader)
        # Numbered as the trace numbers its rows: the highlighted row's seq.
        assert f"⏪ seq {session.position} of 0–{last}" in header.render().plain
        trace_panel = app.screen.query_one(TracePanel)
        assert trace_panel.cursor_row == session.position

        trace = app.screen.query_one(TracePanel)
        trace.focus()
        await pilot.press("home")  # in the trace: its first event
        assert session.position == 0
        trace.move_cursor(4)
        await pilot.press("enter")  # travel to the row under the cursor
        await pilot.pause()
        assert session.position == 4
        await pilot.press("end")  # back to now: the view follows the run again
        assert session.view_seq is None and session.position == last


TASKS = """\
FIXED = False
CALLS = []
def fetch(inputs):
    CALLS.append("fetch"); return {"rows": 3}
def transform(inputs):
    CALLS.append("transform")
    if not FIXED:
        raise ValueError("bad row")
    return {"rows": 6}
"""


@pytest.fixture
def fixable(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "nav_tasks.py").write_text(TASKS)
    workflow = tmp_path / "fixable.yaml"
    workflow.write_text(
        "name: fixable\ntasks:\n  fetch: {run: 'nav_tasks:fetch'}\n"
        "  transform: {run: 'nav_tasks:transform', depends_on: [fetch]}\n"
    )
    sys.modules.pop("nav_tasks", None)
    yield workflow
    sys.modules.pop("nav_tasks", None)


async def test_rerun_from_the_selected_task_keeps_the_others(fixable: Path) -> None:
    app = make_app(fixable)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        screen = workbench(app)
        assert screen.session is not None and screen.session.run.status.value == "failed"
        module = sys.modules["nav_tasks"]
        assert module.CALLS == ["fetch", "transform"]
        module.CALLS.clear()
        module.FIXED = True  # the user fixes the code
        screen._select("transform")
        await pilot.press("F")
        await settle(pilot)
        assert any("re-running from transform: 1 task keeps" in n.message
                   for n in app._notifications)  # fmt: skip
        assert screen.session.live.forked_from is not None
        await pilot.press("c")
        await settle(pilot)
        assert screen.session.run.status.value == "succeeded"
        assert module.CALLS == ["transform"]  # fetch kept what it did
        assert screen.session.export_record().document["forked_from"]["task"] == "transform"


async def test_f_in_replay_asks_before_running_the_exports_code(
    fixable: Path, tmp_path: Path
) -> None:
    from harness_tui.tui.modals.confirm import ConfirmModal

    app = make_app(fixable)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        export = workbench(app).session.export_record().write(tmp_path / "run.json")  # type: ignore[union-attr]
    sys.modules["nav_tasks"].CALLS.clear()
    replay = make_app(export)
    async with replay.run_test(size=SIZE) as pilot:
        screen = workbench(replay)
        screen._select("transform")
        await pilot.press("F")
        await pilot.pause()
        assert (
            isinstance(replay.screen, ConfirmModal) and "runs task code" in replay.screen.question
        )
        await pilot.press("n")
        await pilot.pause()
        assert screen.session is not None and screen.session.replay  # still only a replay
        await pilot.press("F")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert not screen.session.replay and screen.session.live.forked_from is not None
    assert sys.modules["nav_tasks"].CALLS == []  # nothing ran before the user stepped
