"""Dialogs say their keys, Enter takes the action asked for (a deletion aside: Enter keeps),
they sit in the middle of the screen, and a re-run's question names where its code comes from
(an export only when there is one)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Label

from harness_tui.tui.app import HarnessApp
from harness_tui.tui.modals.confirm import ConfirmModal
from harness_tui.tui.screens.run_browser import RunBrowserScreen
from harness_tui.tui.screens.workbench import WorkbenchScreen

from ..records.mixed_store import NEWEST_FIRST
from .conftest import make_app


def keys(app: HarnessApp) -> str:
    return str(app.screen.query_one(".dialog-keys", Label).render())


def centred(app: HarnessApp, dialog: str) -> None:
    """The dialog is in the middle of the screen (never at its left edge, over the header)."""
    region = app.screen.query_one(dialog).region
    width, height = app.size
    assert abs(region.x - (width - region.right)) <= 1, region
    assert abs(region.y - (height - region.bottom)) <= 1, region


async def test_enter_resumes_an_abandoned_run_and_the_dialog_says_so(
    store: tuple[Path, dict[str, str]],
) -> None:
    path, ids = store
    app = make_app(None, store_path=str(path), browse=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunBrowserScreen)
        screen.table.move_cursor(row=NEWEST_FIRST.index("abandoned"))
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        assert keys(app) == "enter or y: Resume · n or escape: cancel"
        centred(app, "#confirm-dialog")
        await pilot.press("enter")
        await pilot.pause()
        workbench = app.screen
        assert isinstance(workbench, WorkbenchScreen) and workbench.session is not None
        assert workbench.session.run_id == ids["abandoned"] and not workbench.session.replay


async def test_enter_on_delete_keeps_the_run(store: tuple[Path, dict[str, str]]) -> None:
    path, _ = store
    app = make_app(None, store_path=str(path), browse=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        assert keys(app) == "y: Delete · enter, n or escape: cancel"
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunBrowserScreen) and len(screen.browser.rows) == 4


async def test_f_on_a_stored_run_names_no_export_and_enter_runs_it(
    store: tuple[Path, dict[str, str]],
) -> None:
    path, _ = store
    app = make_app(None, store_path=str(path), browse=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        browser = app.screen
        assert isinstance(browser, RunBrowserScreen)
        browser.table.move_cursor(row=NEWEST_FIRST.index("failed"))
        await pilot.press("enter")
        await pilot.pause()
        workbench = app.screen
        assert isinstance(workbench, WorkbenchScreen) and workbench.session is not None
        workbench._select("score")
        await pilot.press("F")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, ConfirmModal)
        assert "this run names" in modal.question and "export" not in modal.question
        assert keys(app) == "enter or y: Run the code · n or escape: cancel"
        centred(app, "#confirm-dialog")
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is workbench and not workbench.session.replay  # re-running
