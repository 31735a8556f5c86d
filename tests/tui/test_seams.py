"""Seams a newcomer found in the workbench: quitting during a task, a held run, notifications
over dialogs, cut prompts and columns, numbering, keymap conflicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Footer, Input
from textual.widgets._footer import FooterKey

from harness_tui.tui.modals.export import ExportModal
from harness_tui.tui.modals.quitting import QuittingModal
from harness_tui.tui.preferences import Preferences
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


async def test_the_plans_index_column_comes_first_and_whole() -> None:
    """In the side-by-side layout the plan pane is narrow: columns at its right scroll out of
    view, so the plan's order (``#``) comes right after the markers, as wide as its numbers."""
    app = make_app(ROOT / "workflows/user_profile.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        plan = app.screen.query_one(PlanTable)
        assert [c.key for c in plan.columns][:3] == ["mark", "#", "task"]
        assert [plan.cell_text(row, "#") for row in range(4)] == ["0", "1", "2", "3"]
        index = next(c for c in plan.columns if c.key == "#")
        assert index.width == 1
        assert plan.scrollable_content_region.width > 2 + 1 + 1 + len("extract_user_info")


def wraps_whole(label: Any) -> bool:
    """The label shows all of its text: as many lines as its text needs at its width."""
    text = label.render()
    lines = text.wrap(label.content_region.width)
    return label.content_region.height >= len(lines) and label.content_region.width > 0


async def test_one_line_prompts_wrap_instead_of_being_cut() -> None:
    app = make_app(ROOT / "workflows/user_profile.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("d")  # the diff prompt
        await pilot.pause()
        await pilot.pause()
        title = app.screen.query_one(".dialog-title")
        assert "for this file in git" in str(title.render())
        assert title.content_region.height >= 3 and wraps_whole(title)
        await pilot.press("escape", "n")
        await settle(pilot)
        await pilot.press("e")  # the export prompt
        await pilot.pause()
        await pilot.pause()
        title = app.screen.query_one(".dialog-title")
        assert "Enter writes, escape cancels" in str(title.render())
        assert title.content_region.height >= 2 and wraps_whole(title)


async def test_the_diff_header_gives_a_long_path_up_for_one_line(tmp_path: Path) -> None:
    deep = tmp_path / ("a-folder-with-a-rather-long-name-" * 2) / "user_profile.yaml"
    deep.parent.mkdir(parents=True)
    text = (ROOT / "workflows/user_profile.yaml").read_text(encoding="utf-8")
    deep.write_text(text.replace("compose_response", "compose_the_response"), encoding="utf-8")
    app = make_app(ROOT / "workflows/user_profile.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("d")
        await pilot.pause()
        app.screen.query_one(Input).value = str(deep)
        await pilot.press("enter")
        await until(pilot, lambda: bool(app.screen.query("#diff-title")), "the diff screen")
        await pilot.pause()
        title = app.screen.query_one("#diff-title")
        # One line, the summary whole: the paths, even their file names, give way to it.
        assert str(title.render()) == " DIFF   1 added, 1 removed, 0 moved, 0 changed"
        assert title.content_region.height == 1


async def test_two_ids_on_one_key_are_one_warning_and_no_key_is_lost(tmp_path: Path) -> None:
    keymap = tmp_path / "keymap.json"
    keymap.write_text(json.dumps({"run-step": "x", "run-continue": "x"}), encoding="utf-8")
    app = make_app(FLAKY, preferences=Preferences(keymap=keymap))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        warnings = [n.message for n in app._notifications if n.severity == "warning"]
        assert warnings == [f"{keymap}: run-continue ignored (x is also run-step's key)"]
        session = workbench(app).session
        assert session is not None
        await pilot.press("x")  # run-step has x
        await settle(pilot)
        assert session.run.cursor == 1
        await pilot.press("c")  # run-continue kept its own key
        await settle(pilot)
        assert session.run.finished


@pytest.mark.parametrize(("workers", "mentioned"), [(1, False), (2, True)])
async def test_the_timeline_key_line_names_the_worker_column_only_with_one(
    workers: int, mentioned: bool
) -> None:
    app = make_app(ROOT / "tests/tui/data/busy_pipeline.yaml", workers=workers, clock=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("T")
        await pilot.pause()
        await pilot.pause()
        bars = str(app.screen.query_one("#timeline-bars").render())
        keys = str(app.screen.query_one("#timeline-keys").render())
        assert bars.splitlines()[0].split()[1:2] == (["w"] if mentioned else ["0"])
        assert ("w: the worker" in keys) is mentioned
