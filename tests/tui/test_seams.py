"""Seams a newcomer found in the workbench: quitting during a task, a held run, notifications
over dialogs, cut prompts and columns, numbering, keymap conflicts."""

from __future__ import annotations

from typing import Any

import pytest

from harness_tui.tui.modals.quitting import QuittingModal
from harness_tui.tui.screens import workbench as workbench_module

from .conftest import ROOT, make_app
from .test_running_snapshot import GatedClock, running

LONG = ROOT / "tests/tui/data/one_long_task.yaml"
FLAKY = ROOT / "tests/tui/data/flaky_pipeline.yaml"


async def until(pilot: Any, check: Any, what: str) -> None:
    for _ in range(500):
        if check():
            return
        await pilot.pause(0.01)
    raise AssertionError(f"never: {what}")


async def test_quitting_during_a_task_says_what_it_waits_for_and_then_exits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The screen never goes blank or freezes while quitting waits for a task: a dialog names
    it (and the screen keeps rendering) until the task ends and the app exits."""
    monkeypatch.setattr(workbench_module, "LEAVE_SECONDS", 30.0)  # the task ends first
    clock = GatedClock()
    app = make_app(LONG, clock=clock)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("c")
            await running(pilot, "crunch")
            await pilot.press("ctrl+q")
            await until(pilot, lambda: isinstance(app.screen, QuittingModal), "the dialog")
            text = str(app.screen.query_one("Label").render())
            assert "Quitting: waiting for crunch to finish, at most 30 s" in text
            await pilot.pause(0.05)
            assert app.return_code is None  # still waiting, and still drawing
            await pilot.press("c", "n")  # taken by the dialog: nothing starts meanwhile
            clock.gate.set()
            await until(pilot, lambda: app.return_code == 0, "the exit")
        run = app.workbench.session.run  # type: ignore[union-attr]
        assert [e.task for e in run.events if e.status.value == "succeeded"] == [
            "prepare",
            "crunch",
        ]  # paused after crunch: publish never started
    finally:
        clock.gate.set()


async def test_quitting_with_nothing_running_exits_at_once() -> None:
    app = make_app(LONG)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert app.return_code == 0 and not isinstance(app.screen, QuittingModal)
