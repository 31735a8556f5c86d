"""The full error view: the trace's error column, the traceback modal, and hostile text in both.

A task's error message and traceback come from user code, so a message that tries to clear the
screen, retitle the window or style itself with markup must arrive as visible, inert text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.binding import Binding
from textual.widgets import TextArea
from textual.widgets.text_area import Selection

from harness_tui.tui.app import HarnessApp
from harness_tui.tui.modals.traceback import TracebackModal
from harness_tui.tui.screens.workbench import WorkbenchScreen
from harness_tui.tui.widgets.inspector import Inspector
from harness_tui.tui.widgets.trace_panel import TracePanel

from .conftest import ROOT, make_app, settle, workbench

SIZE = (120, 40)
HOSTILE = "bad row \x1b[2J\x1b]0;title\x07 [red]markup[/]"
SHOWN = "bad row \\x1b[2J\\x1b]0;title\\x07 [red]markup[/]"

TASKS = f"""
HOSTILE = {HOSTILE!r}


def _check(row):
    raise ValueError(HOSTILE)


def parse(inputs):
    return _check(inputs["payload"])
"""

WORKFLOW = """
name: hostile
payload: {row: 1}
tasks:
  load:
    run: builtin:echo
  parse:
    run: errview_hostile_tasks:parse
    depends_on: [load]
"""


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A workflow whose user task raises, two frames deep, a message full of escapes."""
    (tmp_path / "errview_hostile_tasks.py").write_text(TASKS, encoding="utf-8")
    path = tmp_path / "hostile.yaml"
    path.write_text(WORKFLOW, encoding="utf-8")
    return path


async def _run_and_inspect(app: HarnessApp, pilot: Any, task: str) -> Inspector:
    await pilot.press("c")
    await settle(pilot)
    workbench(app)._select(task)
    inspector = app.screen.query_one(Inspector)
    inspector.focus()
    await pilot.pause()
    return inspector


async def test_the_modal_shows_the_whole_traceback_and_hostile_text_inert(hostile: Path) -> None:
    app = make_app(hostile)
    async with app.run_test(size=SIZE) as pilot:
        await _run_and_inspect(app, pilot, "parse")
        await pilot.press("t")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, TracebackModal)
        text = modal.query_one(TextArea).text
        lines = text.splitlines()
        assert lines[0] == f"ValueError: {SHOWN}"
        assert "Traceback (most recent call last):" in lines
        # Every frame down to the user's raise, not just the first line.
        assert any(line.strip() == "raise ValueError(HOSTILE)" for line in lines)
        assert any(line.endswith("in parse") for line in lines)
        assert any(line.endswith("in _check") for line in lines)
        assert lines[-1] == f"ValueError: {SHOWN}"
        assert "\x1b" not in text and "\x07" not in text
        screen = app.export_screenshot()
        assert SHOWN.replace(" ", "&#160;") in screen  # drawn as written, markup and all
        assert "\x1b" not in screen


async def test_the_trace_shows_each_failure_on_one_inert_line(hostile: Path) -> None:
    app = make_app(hostile)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        trace = app.screen.query_one(TracePanel)
        errors = [trace.cell_text(row, "error") for row in range(trace.row_count)]
        assert errors == ["", "", "", f"ValueError: {SHOWN}"]


async def test_enter_on_the_error_opens_the_view_and_y_and_escape_copy_and_close(
    hostile: Path,
) -> None:
    app = make_app(hostile)
    async with app.run_test(size=SIZE) as pilot:
        inspector = await _run_and_inspect(app, pilot, "parse")
        error_section = next(n for n in inspector.root.children if n.data == inspector.failure()[0])
        inspector.move_cursor(error_section)
        await pilot.press("enter")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, TracebackModal)
        area = modal.query_one(TextArea)
        await pilot.press("y")
        assert app.clipboard == area.text
        area.selection = Selection((0, 0), (0, len("ValueError")))
        await pilot.press("y")
        assert app.clipboard == "ValueError"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, WorkbenchScreen)


async def test_show_traceback_on_a_task_that_did_not_fail_says_why() -> None:
    app = make_app(ROOT / "tests/tui/data/flaky_pipeline.yaml")
    async with app.run_test(size=SIZE) as pilot:
        await _run_and_inspect(app, pilot, "audit")
        await pilot.press("t")
        await pilot.pause()
        assert isinstance(app.screen, WorkbenchScreen)
        assert any("nothing failed here" in n.message for n in app._notifications)


async def test_t_opens_the_full_error_from_any_pane(hostile: Path) -> None:
    screen_ids = {b.id for b in WorkbenchScreen.BINDINGS if isinstance(b, Binding)}
    assert "show-traceback" in screen_ids  # the screen's, so it works whichever pane has focus
    app = make_app(hostile)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        trace = app.screen.query_one(TracePanel)
        trace.focus()
        await pilot.press("up")  # the user walks to the failed event in the trace
        await pilot.press("down")
        await pilot.press("t")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, TracebackModal)
        assert modal.failure_title == "event 3 · parse · failed"
        assert "raise ValueError(HOSTILE)" in modal.query_one(TextArea).text
