"""The running state as a person sees it: the attempt in progress is marked at once."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.events import AppFocus
from textual.pilot import Pilot
from textual.widgets._footer import FooterKey

from harness_tui.engine.clock import FakeClock

from .conftest import ROOT, make_app, workbench


class GatedClock(FakeClock):
    """A fake clock whose sleeps wait for a gate: a task is caught mid-attempt, with fixed
    times on screen."""

    def __init__(self) -> None:
        super().__init__(start=100.0)
        self.gate = threading.Event()

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> None:
        # Only the test opens the gate (every test does, in a finally). A real-time limit
        # here let the task end on its own when a busy machine made the test slower than
        # the limit, and the run the test was about was then over (60 s: a safety net only).
        self.gate.wait(60)
        super().sleep(seconds, cancel)


@pytest.fixture(autouse=True)
def _repo_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


async def running(pilot: Pilot[Any], task: str) -> None:
    session = workbench(pilot.app).session  # type: ignore[arg-type]
    assert session is not None
    for _ in range(300):
        attempt = session.running_attempt()
        if attempt is not None and attempt.task == task:
            await pilot.pause()
            return
        await pilot.pause(0.01)
    raise AssertionError(f"{task} was never shown running")


async def footer_settled(pilot: Pilot[Any]) -> None:
    """Wait until the footer greys out exactly what the screen says is impossible now (it
    catches up on its own schedule: a snapshot taken before that depends on load)."""
    screen = workbench(pilot.app)  # type: ignore[arg-type]
    for _ in range(300):
        keys = list(screen.query(FooterKey))
        enabled = {binding.key: on for _, binding, on, _ in screen.active_bindings.values()}
        if keys and all(key.has_class("-disabled") != enabled[key.key] for key in keys):
            return
        screen.refresh_bindings()  # a change it was told of while unfocused is not redrawn
        await pilot.pause(0.01)
    raise AssertionError("the footer never caught up with the screen")


def test_the_running_attempt_is_shown_while_it_runs(snap_compare: Any) -> None:
    clock = GatedClock()

    async def run_before(pilot: Pilot[Any]) -> None:
        # The footer follows the bindings only once the app has focus (as in a terminal);
        # headless, focus came at a moment that depended on load, and so did the footer.
        pilot.app.post_message(AppFocus())
        await pilot.pause()
        await pilot.press("c")
        await running(pilot, "crunch")
        await footer_settled(pilot)

    app = make_app(Path("tests/tui/data/one_long_task.yaml"), clock=clock)
    try:
        assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
    finally:
        clock.gate.set()


async def test_pause_answers_at_once_while_a_task_runs() -> None:
    clock = GatedClock()
    app = make_app(Path("tests/tui/data/one_long_task.yaml"), clock=clock)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("c")
            await running(pilot, "crunch")
            await pilot.press("p")
            await pilot.pause()
            messages = [n.message for n in app._notifications]
            assert "pausing after crunch" in messages
            clock.gate.set()
            screen = workbench(app)
            for _ in range(300):
                if not screen.controller.driving:
                    break
                await pilot.pause(0.01)
            session = screen.session
            assert session is not None and session.run.cursor == 2  # paused after crunch
    finally:
        clock.gate.set()
