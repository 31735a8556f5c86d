"""The logs view: the selected task's output per attempt, inert, live while it runs."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from textual.app import App
from textual.pilot import Pilot

from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.tui.modals.logs import LogsModal, LogView

from .conftest import ROOT, make_app, settle, workbench

PRINTING = ROOT / "tests" / "tui" / "data" / "printing_pipeline.yaml"
SIZE = (120, 40)


def lines_of(app: Any) -> list[str]:
    screen = app.screen
    assert isinstance(screen, LogsModal), type(screen)
    lines = list(screen.query_one(LogView).lines)
    return lines[:-1] if lines and not lines[-1] else lines  # the line after the last newline


async def test_l_opens_the_selected_tasks_log_and_brackets_pick_the_attempt() -> None:
    app = make_app(PRINTING)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        workbench(app)._select("chatty")
        await pilot.press("l")
        await pilot.pause()
        assert lines_of(app)[:3] == [f"loading batch {n} of 3" for n in (1, 2, 3)]
        # Escape sequences are shown, never obeyed; brackets are not markup.
        assert lines_of(app)[3] == "\\x1b[31mnot red\\x1b[0m [bold]not bold[/bold]"
        assert lines_of(app)[4:] == [
            "a line on stderr",
            "INFO tasks.chatty: an info record",
            "WARNING tasks.chatty: quota at 80%",
            "from chatty's thread",
        ]
        await pilot.press("escape")
        workbench(app)._select("flaky")
        await pilot.press("l")
        await pilot.pause()
        assert lines_of(app) == ["flaky attempt 2"]  # the latest attempt first
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert lines_of(app) == ["flaky attempt 1"]
        await pilot.press("escape")
        assert not isinstance(app.screen, LogsModal)


async def test_without_a_selected_task_l_says_what_to_do() -> None:
    app = make_app(PRINTING)
    async with app.run_test(size=SIZE) as pilot:
        workbench(app).panes.selected = None
        await pilot.press("l")
        await pilot.pause()
        assert not isinstance(app.screen, LogsModal)
        assert any("select a task" in n.message for n in app._notifications)


async def test_the_log_streams_while_the_attempt_runs() -> None:
    release = threading.Event()

    def slow(inputs: Mapping[str, Any]) -> int:
        print("first line", flush=True)
        release.wait(10)
        print("second line")
        return 1

    run = TaskOrchestrator(TaskGraph.from_nodes([TaskNode("slow", slow)])).start({})
    worker = threading.Thread(target=run.run_to_end, daemon=True)

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(LogsModal(run, "slow"))

    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        worker.start()
        await wait_for(pilot, lambda: lines_of(app) == ["first line"])
        release.set()
        worker.join(10)
        await wait_for(pilot, lambda: lines_of(app) == ["first line", "second line"])


async def wait_for(pilot: Pilot[Any], condition: Any, seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    assert condition()


def test_logs_view_snapshot(snap_compare: Any, monkeypatch: Any) -> None:
    monkeypatch.chdir(ROOT)

    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.press("c")
        await settle(pilot)
        workbench(pilot.app)._select("chatty")  # type: ignore[arg-type]
        pilot.app.clear_notifications()  # the "run finished" toast would cover the view
        await pilot.press("l")
        await pilot.pause()

    app = make_app(Path("tests/tui/data/printing_pipeline.yaml"))
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
