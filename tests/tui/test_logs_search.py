"""The logs view's search, level filter and copy; a task's INFO record shown by default."""

from __future__ import annotations

from pathlib import Path

from harness_tui.tui.log_lines import LineSearch, keeps, line_level
from harness_tui.tui.modals.logs import LogsModal, LogView

from .conftest import make_app, settle, workbench
from .test_logs_view import PRINTING, SIZE, lines_of

NEWS = """\
import logging


def news(inputs):
    log = logging.getLogger("tasks.browse_news")  # no level of its own: the root's WARNING
    log.debug("a detail")
    log.info("fetched 3 rows")
    print("a printed line")
    log.warning("quota at 80%")
    return 3
"""


async def test_search_level_filter_and_copy(tmp_path: Path) -> None:
    app = make_app(PRINTING)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        workbench(app)._select("chatty")
        await pilot.press("l")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, LogsModal)
        await pilot.press("slash", *"BATCH 2", "enter")
        await pilot.pause()
        assert modal.match == 1 and "3 matches of BATCH 2" not in str(modal.wanted)
        await pilot.press("n")  # one line holds "batch 2": it wraps to itself
        assert modal.match == 1
        modal.wanted = "loading batch"
        await pilot.press("n")
        assert modal.match == 2
        await pilot.press("n")
        assert modal.match == 0  # wrapped around
        await pilot.press("N")
        assert modal.match == 2
        await pilot.press("v", "v")  # DEBUG and up, then INFO and up: records only
        await pilot.pause()
        assert lines_of(app) == [
            "INFO tasks.chatty: an info record",
            "WARNING tasks.chatty: quota at 80%",
        ]
        await pilot.press("v")
        await pilot.pause()
        assert lines_of(app) == ["WARNING tasks.chatty: quota at 80%"]
        await pilot.press("c")
        assert app.clipboard == "WARNING tasks.chatty: quota at 80%\n"
        await pilot.press("v", "v")  # ERROR and up: nothing; then every line again
        await pilot.pause()
        assert len(lines_of(app)) == 8 and modal.query_one(LogView).minimum is None


async def test_a_tasks_info_record_is_in_its_log_by_default(tmp_path: Path) -> None:
    (tmp_path / "browse_news_tasks.py").write_text(NEWS)
    flow = tmp_path / "news.yaml"
    flow.write_text("name: news\ntasks:\n  news: {run: browse_news_tasks:news}\n")
    app = make_app(flow)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        workbench(app)._select("news")
        await pilot.press("l")
        await pilot.pause()
        assert lines_of(app) == [
            "INFO tasks.browse_news: fetched 3 rows",
            "a printed line",
            "WARNING tasks.browse_news: quota at 80%",
        ]


def test_line_levels_and_a_search_over_appended_lines() -> None:
    assert line_level("WARNING x: y") == 2 and line_level("WARNING") is None
    assert line_level("printed") is None
    assert keeps("ERROR a: b", "WARNING") and not keeps("printed", "DEBUG")
    assert keeps("printed", None)
    search = LineSearch()
    lines = ["İstanbul", "a", "x needle", "b"]
    assert search.find(lines, "NEEDLE", -1) == 2
    lines += ["needle again"]
    assert search.find(lines, "needle", 2) == 4
    assert search.find(lines, "needle", 4) == 2  # wraps
    assert search.find(lines, "needle", 2, backwards=True) == 4
    assert search.find(lines, "absent", -1) is None and search.count(lines, "needle") == 2
