"""The run browser: a store's runs listed, filtered, opened in the right mode, compared,
exported and deleted, driven through the keys (Pilot). Opening, exporting and deleting are
in the slow tier; which mode each run opens in is pinned in the fast tier by
``test_browser_model.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_tui.records.export import RunRecord
from harness_tui.records.store import RunStore
from harness_tui.records.store.queries import RunQuery
from harness_tui.tui.app import HarnessApp
from harness_tui.tui.modals.confirm import ConfirmModal
from harness_tui.tui.modals.export import ExportModal
from harness_tui.tui.screens.diff import DiffScreen
from harness_tui.tui.screens.run_browser import RunBrowserScreen
from harness_tui.tui.screens.workbench import WorkbenchScreen

from ..records.mixed_store import NEWEST_FIRST
from .conftest import ROOT, make_app, settle


def browser(app: HarnessApp) -> RunBrowserScreen:
    screen = app.screen
    assert isinstance(screen, RunBrowserScreen), type(screen)
    return screen


def listed(app: HarnessApp) -> list[str]:
    return [row.status for row in browser(app).browser.rows]


def cell(app: HarnessApp, row: int, column: int) -> str:
    return str(browser(app).table.get_row_at(row)[column])


async def test_every_run_is_listed_and_filtered_by_status_and_text(
    store: tuple[Path, dict[str, str]],
) -> None:
    path, ids = store
    app = make_app(None, store_path=str(path), browse=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert listed(app) == NEWEST_FIRST
        assert [cell(app, i, 7) for i in range(4)] == [ids[s] for s in NEWEST_FIRST]
        assert cell(app, 3, 5) == "3/3" and cell(app, 3, 4) == "1 min 30 s"
        await pilot.press("f")  # running: none
        assert listed(app) == [] and browser(app).query_one("#browser-empty").display
        await pilot.press("f")
        assert listed(app) == ["interrupted"]
        for _ in range(5):  # abandoned, succeeded, failed, cancelled, then all again
            await pilot.press("f")
        assert listed(app) == NEWEST_FIRST
        await pilot.press("slash", *"flaky")
        await pilot.pause()
        assert listed(app) == ["failed"]
        await pilot.press("enter")
        assert browser(app).table.has_focus and listed(app) == ["failed"]
        await pilot.press("slash", *["backspace"] * 5, "enter")
        await pilot.press("S")  # oldest first
        assert listed(app) == NEWEST_FIRST[::-1]


@pytest.mark.slow
async def test_enter_replays_a_finished_run_and_g_comes_back(
    store: tuple[Path, dict[str, str]],
) -> None:
    path, ids = store
    app = make_app(None, store_path=str(path), browse=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for status in ("succeeded", "failed"):
            browser(app).table.move_cursor(row=NEWEST_FIRST.index(status))
            await pilot.press("enter")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, WorkbenchScreen) and screen.session is not None
            assert screen.session.replay and screen.session.record is not None
            assert screen.session.record.run_id == ids[status]
            await pilot.press("g")
            await pilot.pause()
            assert listed(app) == NEWEST_FIRST


@pytest.mark.slow
@pytest.mark.parametrize("status", ["interrupted", "abandoned"])
async def test_enter_asks_then_resumes_an_unfinished_run_to_its_end(
    store: tuple[Path, dict[str, str]], status: str
) -> None:
    path, ids = store
    app = make_app(None, store_path=str(path), browse=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        browser(app).table.move_cursor(row=NEWEST_FIRST.index(status))
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("y")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, WorkbenchScreen) and screen.session is not None
        assert not screen.session.replay and screen.session.run_id == ids[status]
        done_before = screen.session.run.cursor
        assert done_before in (1, 2) and screen.session.delivered > 0  # its past is shown
        await pilot.press("c")
        await settle(pilot)
        assert screen.session.run.status.value == "succeeded"
        await pilot.press("g")
        await pilot.pause()
        row = next(r for r in browser(app).browser.rows if r.id == ids[status])
        assert row.status == "succeeded" and row.tasks_done == 3


async def test_two_marked_runs_are_compared(store: tuple[Path, dict[str, str]]) -> None:
    path, _ = store
    app = make_app(None, store_path=str(path), browse=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("c")  # nothing marked: says why
        assert not isinstance(app.screen, DiffScreen)
        browser(app).table.move_cursor(row=NEWEST_FIRST.index("failed"))
        await pilot.press("m", "m")  # the failed run, then the succeeded one below it
        assert cell(app, 2, 0) == cell(app, 3, 0) == "●"
        await pilot.press("c")
        await pilot.pause()
        diff = app.screen
        assert isinstance(diff, DiffScreen) and diff.runs is not None
        assert diff.old.name == "flaky" and diff.new.name == "greet"
        await pilot.press("escape")
        await pilot.pause()
        assert listed(app) == NEWEST_FIRST


@pytest.mark.slow
async def test_export_and_delete_with_confirmation(
    store: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    path, ids = store
    app = make_app(None, store_path=str(path), browse=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        browser(app).table.move_cursor(row=NEWEST_FIRST.index("succeeded"))
        await pilot.press("e")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, ExportModal)
        target = tmp_path / "out.json"
        modal.dismiss(target)
        await pilot.pause()
        assert RunRecord.read(target).run_id == ids["succeeded"]
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")  # no: kept
        assert len(listed(app)) == 4
        await pilot.press("x", "y")
        await pilot.pause()
        assert listed(app) == NEWEST_FIRST[:3]
    with RunStore(path, create=False) as again:
        assert ids["succeeded"] not in {row.id for row in again.browse(RunQuery())[0]}


async def test_without_a_store_the_browser_says_so_and_creates_none(tmp_path: Path) -> None:
    path = tmp_path / "none" / "runs.sqlite3"
    app = make_app(None, store_path=str(path), browse=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        empty = browser(app).query_one("#browser-empty")
        assert empty.display and "No runs recorded yet" in str(empty.render())
        await pilot.press("enter", "x", "f")  # nothing to act on: each says why, nothing breaks
        await pilot.pause()
    assert not path.exists() and not path.parent.exists()


async def test_g_from_a_workbench_on_a_file_lists_its_run_left_behind(
    store: tuple[Path, dict[str, str]],
) -> None:
    path, _ = store
    app = make_app(ROOT / "workflows/user_profile.yaml", store_path=str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("g")
        await pilot.pause()
        rows = browser(app).browser.rows
        assert len(rows) == 5 and len(app.screen_stack) == 2  # in place of the workbench
        assert ("user_profile", "abandoned", 1) in {
            (r.workflow, r.status, r.tasks_done) for r in rows
        }


async def test_a_read_only_browser_replays_but_never_resumes(
    store: tuple[Path, dict[str, str]],
) -> None:
    path, _ = store
    app = make_app(None, store_path=str(path), browse=True, read_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        browser(app).table.move_cursor(row=NEWEST_FIRST.index("interrupted"))
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RunBrowserScreen)  # not asked: refused
        assert any("read-only" in n.message for n in app._notifications)
        browser(app).table.move_cursor(row=NEWEST_FIRST.index("failed"))
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, WorkbenchScreen) and app.screen.read_only


@pytest.mark.slow
async def test_F_picks_a_task_and_asks_before_re_running_it(
    store: tuple[Path, dict[str, str]],
) -> None:
    path, _ = store
    app = make_app(None, store_path=str(path), browse=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        browser(app).table.move_cursor(row=NEWEST_FIRST.index("failed"))
        await pilot.press("F")
        await pilot.pause()
        await pilot.press(*"score", "enter")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal) and "runs task code" in app.screen.question
        workbench_screen = app.screen_stack[-2]
        assert isinstance(workbench_screen, WorkbenchScreen)
        assert workbench_screen.selected == "score"
        await pilot.press("n")  # not now: the replay stays
        await pilot.pause()
        assert app.screen is workbench_screen and workbench_screen.session is not None
        assert workbench_screen.session.replay


def test_took_is_in_whole_seconds_as_the_store_keeps_them() -> None:
    from harness_tui.tui.screens.run_browser import duration_text

    assert [duration_text(s) for s in (0.0, 0.65, 1.0, 12.0, 90.0)] == [
        "< 1 s", "< 1 s", "1 s", "12 s", "1 min 30 s"
    ]  # fmt: skip


async def test_at_80x24_every_id_is_whole_even_beside_a_long_workflow_name(
    store: tuple[Path, dict[str, str]],
) -> None:
    from harness_tui.engine.clock import FakeClock
    from harness_tui.records.runs.live import LiveRun
    from harness_tui.records.runs.settings import RunSettings
    from harness_tui.workflow.loader import parse_workflow

    from ..records.mixed_store import GREET

    path, ids = store
    long_name = "nightly_customer_ticket_triage_with_a_very_long_descriptive_name"
    workflow = parse_workflow(GREET.replace("name: greet", f"name: {long_name}"))
    with RunStore(path) as opened:
        live = LiveRun.start(
            workflow, workflow.payload, RunSettings(store=opened, clock=FakeClock())
        )
        live.drive()
    app = make_app(None, store_path=str(path), browse=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = browser(app).table
        lines = [table.render_line(y).text for y in range(6)]
        assert "digest" in lines[0] and lines[0].rstrip().endswith("id")
        shown = [row.id for row in browser(app).browser.rows]
        assert set(ids.values()) < set(shown) and len(shown) == 5
        for run_id, line in zip(shown, lines[1:], strict=True):
            assert run_id in line  # whole: resume and rerun need it
        assert any(long_name[:6] in line and "…" in line for line in lines[1:])
        title = str(browser(app).query_one("#browser-title").render())
        assert title.rstrip().endswith("enter opens a run")  # no dangling ·
