"""The workbench driven by random key sequences at random speeds never shows or keeps a wrong run.

After each sequence (step, continue, pause, stop, back, forward, restart, breakpoint, with
random delays, on a workflow with slow, retried and failing tasks; and again with two workers
and break on failure): nothing is left running,
and the run's canonical trace is a prefix of the headless run's, or that prefix followed by
cancellations and the all_done cleanup (the user stopped it).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.screen import ModalScreen

from harness_tui.engine.clock import FakeClock, SystemClock
from harness_tui.engine.events import Status
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.workflow.loader import load_workflow

from .conftest import ROOT, make_app, settle, workbench

BUSY = ROOT / "tests/tui/data/busy_pipeline.yaml"
KEYS = ["n", "c", "p", "s", "left_square_bracket", "right_square_bracket", "r", "b", "y"]
HOLDING_KEYS = [*KEYS, "f"]  # break on failure: holds at failed attempts, released by n or c


def reference_trace() -> list[dict[str, Any]]:
    workflow = load_workflow(BUSY)
    live = LiveRun.start(workflow, workflow.payload, RunSettings(clock=FakeClock()))
    live.drive()
    return live.run.canonical_trace()


REFERENCE = reference_trace()


CLEANUPS = {"cleanup"}  # the workflow's all_done task: it still runs after a stop


def check_trace(trace: list[dict[str, Any]]) -> None:
    cancelled = [i for i, event in enumerate(trace) if event["status"] == Status.CANCELLED]
    cut = cancelled[0] if cancelled else len(trace)
    assert trace[:cut] == REFERENCE[:cut]
    assert all(
        event["status"] == Status.CANCELLED or event["task"] in CLEANUPS for event in trace[cut:]
    )


async def press_and_check(presses: list[tuple[str, float]], workers: int = 1) -> list[str]:
    """Press, then check; the titles of the notifications said."""
    app = make_app(BUSY, clock=SystemClock(), workers=workers)
    titles: list[str] = []
    notice = app.notice

    def said(key: str | None, message: str, **kwargs: Any) -> None:
        titles.append(kwargs.get("title", ""))
        notice(key, message, **kwargs)

    app.notice = said  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        for key, delay in presses:
            await pilot.press(key)
            await pilot.pause(delay)
        for _ in range(3):  # "r" during a run asks first: a person answers or dismisses
            if not isinstance(app.screen, ModalScreen):
                break
            await pilot.press("escape")
            await pilot.pause()
        screen = workbench(app)
        for _ in range(200):  # a continue may still be on its way to the end
            if not screen.controller.driving:
                break
            if screen.controller.held is not None:  # break on failure: a person goes on
                await pilot.press("c")
            await pilot.pause(0.02)
        await settle(pilot)
        session = screen.session
        assert session is not None
        assert not screen.controller.driving and not session.live.driver.busy
        events = session.run.events
        assert not events or events[-1].status is not Status.RUNNING
        assert session.delivered == len(events)  # the screen shows every recorded event
        check_trace(session.run.canonical_trace())
        return titles


# The suite runs the same 30 sequences every time (a red CI means a real regression);
# HARNESS_FUZZ=N explores N fresh random sequences instead.
FUZZ = int(os.environ.get("HARNESS_FUZZ", "0"))


@pytest.mark.slow
@settings(
    max_examples=FUZZ or 30,
    deadline=None,
    derandomize=not FUZZ,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.tuples(st.sampled_from(KEYS), st.floats(0, 0.12)), min_size=1, max_size=12))
def test_random_keys_never_corrupt_the_run(presses: list[tuple[str, float]]) -> None:
    asyncio.run(press_and_check(presses))


def test_a_burst_of_steps_equals_the_headless_run() -> None:
    asyncio.run(press_and_check([("n", 0.005)] * 12))


@pytest.mark.slow
@settings(
    max_examples=FUZZ or 20,
    deadline=None,
    derandomize=not FUZZ,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.lists(st.tuples(st.sampled_from(HOLDING_KEYS), st.floats(0, 0.12)), min_size=1, max_size=12)
)
def test_random_keys_with_workers_and_break_on_failure_never_corrupt_the_run(
    presses: list[tuple[str, float]],
) -> None:
    asyncio.run(press_and_check(presses, workers=2))


def test_a_burst_with_workers_held_at_failures_and_paused_equals_the_headless_run() -> None:
    burst = [("f", 0.0), ("c", 0.02), *[("n", 0.005)] * 6, ("p", 0.01), ("c", 0.005)]
    titles = asyncio.run(press_and_check(burst, workers=2))
    assert "Held at a failed attempt" in titles
