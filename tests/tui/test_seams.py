"""Seams a newcomer found in the workbench: quitting during a task, a held run, notifications
over dialogs, cut prompts and columns, numbering, keymap conflicts."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from harness_tui.tui.modals.export import ExportModal
from harness_tui.tui.modals.quitting import QuittingModal
from harness_tui.tui.screens import workbench as workbench_module
from harness_tui.tui.widgets.plan_table import PlanTable

from .conftest import ROOT, make_app, settle, workbench
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


def notes(app: Any) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


async def held(pilot: Any, attempt: int = 1) -> Any:
    controller = workbench(pilot.app).controller
    await until(
        pilot,
        lambda: controller.held is not None and controller.held.attempt == attempt,
        f"held at attempt {attempt}",
    )
    await pilot.pause()
    await pilot.pause()
    return controller


async def test_a_held_run_is_shown_held_and_its_hint_says_what_n_does() -> None:
    app = make_app(FLAKY)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f", "c")
        controller = await held(pilot)
        screen = workbench(app)
        header = screen.header.parts
        assert header is not None and header.status == "held at transform#1"
        # The run goes on with transform's retry, not with the next task of the plan.
        assert screen.panes.next_task() == "transform"
        assert screen.query_one(PlanTable).next_task == "transform"
        (note,) = [n for n in notes(app) if n.startswith("Held")]
        assert "n: attempt 2 of 3 (held again if it fails), then pause" in note
        await pilot.press("s")
        await settle(pilot)
        assert controller.held is None
        assert not [n for n in notes(app) if n.startswith("Held")]  # its state is gone


async def test_export_while_held_acts_at_once_and_notifications_wait_for_dialogs() -> None:
    app = make_app(FLAKY)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f", "c")
        controller = await held(pilot)
        assert any(n.startswith("Held") for n in notes(app))
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportModal)  # at once, not queued behind the hold
        assert controller.pending() == 0
        # No toast over the dialog: none on it, and those of the screen below are hidden.
        assert notes(app) == []
        assert not any(rack.display for s in app.screen_stack for rack in s.query("ToastRack"))
        app.notify("said while the dialog is open")
        await pilot.pause()
        assert notes(app) == []
        await pilot.press("escape")
        await pilot.pause()
        await pilot.pause()
        shown = notes(app)
        assert ": said while the dialog is open" in shown
        assert any(n.startswith("Held") for n in shown)  # still held: its hint is back
        await pilot.press("s")
        await settle(pilot)


async def test_a_key_pressed_twice_during_a_drive_queues_one_dialog() -> None:
    clock = GatedClock()
    app = make_app(LONG, clock=clock)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("c")
            await running(pilot, "crunch")
            controller = workbench(app).controller
            await pilot.press("e", "e", "d", "d")
            await pilot.pause()
            assert (controller.pending("export"), controller.pending("diff")) == (1, 1)
            assert ": export: already queued until the run pauses" in notes(app)
            await pilot.press("p")
            clock.gate.set()
            await until(pilot, lambda: isinstance(app.screen, ExportModal), "the export")
            # It waits no more: its notification is gone with its state.
            assert not any("export: queued" in n for n in notes(app))
            await pilot.press("escape")
            await settle(pilot)
            assert controller.pending() == 0
    finally:
        clock.gate.set()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_footer_keeps_help_and_quit(size: tuple[int, int]) -> None:
    app = make_app(FLAKY)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        footer = app.screen.query_one(Footer)
        keys = {key.description: key.region for key in footer.query(FooterKey)}
        for label in ("Help", "Quit", "Step"):
            assert keys[label].right <= size[0], (label, keys[label])
