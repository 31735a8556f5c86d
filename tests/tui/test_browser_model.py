"""The run browser's headless model: pages, filters, marks, open modes and availability."""

from __future__ import annotations

from pathlib import Path

from harness_tui.records.store import RunStore
from harness_tui.records.store.queries import Sort
from harness_tui.tui.actions import BROWSER
from harness_tui.tui.browser import OpenMode, RunBrowser, open_mode

from ..records.mixed_store import mixed_store


def test_pages_filters_marks_and_what_each_action_may_do(tmp_path: Path) -> None:
    ids = mixed_store(tmp_path / "runs.sqlite3")
    with RunStore(tmp_path / "runs.sqlite3", create=False, write=True) as store:
        browser = RunBrowser(store, store.path, page_rows=3)
        browser.reload()
        assert (len(browser.rows), browser.total) == (3, 4)
        assert browser.more() and len(browser.rows) == 4 and not browser.more()
        modes = {row.status: open_mode(row) for row in browser.rows}
        assert modes == {
            "succeeded": OpenMode.REPLAY,
            "failed": OpenMode.REPLAY,
            "interrupted": OpenMode.RESUME,
            "abandoned": OpenMode.RESUME,
        }
        why = {action.id: action.why_not for action in BROWSER}
        assert why["runs-compare"](browser.state(0)) == "mark two runs first (m): 0 marked"
        for index in (0, 1, 2):  # a third mark replaces the oldest
            browser.toggle_mark(browser.rows[index].id)
        assert browser.marks == [browser.rows[1].id, browser.rows[2].id]
        assert why["runs-compare"](browser.state(0)) is None
        assert why["runs-open"](browser.state(None)) == "no run here (f, / or s change the list)"
        assert browser.cycle_status() == "running" and browser.rows == []
        assert browser.cycle_status() == "interrupted"
        assert [row.id for row in browser.rows] == [ids["interrupted"]]
        assert browser.cycle_sort() is Sort.WORKFLOW and not browser.query.descending
        assert browser.describe() == "interrupted · by workflow, A to Z"
        browser.delete(ids["interrupted"])
        assert browser.rows == [] and browser.total == 0


def test_without_a_store_every_run_action_says_there_is_none(tmp_path: Path) -> None:
    browser = RunBrowser(None, tmp_path / "runs.sqlite3")
    browser.reload()
    state = browser.state(0)
    reasons = {action.id: action.why_not(state) for action in BROWSER}
    assert reasons.pop("runs-open-file") is None
    assert set(reasons.values()) == {
        "no run store yet: o opens a workflow, and its runs are recorded"
    }
