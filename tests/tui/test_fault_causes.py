"""The workbench shows the cause of each in-process fault of the corpus (tests/faults): the
run ends, the faulty task's error is in the trace and the inspector, nothing hangs."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_tui.tui.widgets.inspector import Inspector
from harness_tui.tui.widgets.trace_panel import TracePanel

from .conftest import ROOT, make_app, settle, workbench

CORPUS = ROOT / "tests" / "faults" / "corpus"
SURROGATE = "$output: str is not a JSON value (not valid Unicode text: it holds a lone surrogate)"

CAUSES = {
    "exit_zero": ("failed", "SystemExit: 0"),
    "exit_three": ("failed", "SystemExit: 3"),
    "base_exception": ("failed", "BaseException: bare base exception"),
    "unprintable": ("failed", "_Unprintable: <str() of the exception raised RuntimeError>"),
    "lone_surrogate": ("failed", f"OutputNotJSON: {SURROGATE}"),
    "keyboard_interrupt": (
        "cancelled",
        "KeyboardInterrupt: interrupted (Ctrl+C, or the task raised KeyboardInterrupt)",
    ),
}


@pytest.mark.parametrize("fault", sorted(CAUSES))
async def test_the_workbench_shows_the_cause_of_a_faulty_task(fault: str) -> None:
    status, cause = CAUSES[fault]
    app = make_app(CORPUS / f"{fault}.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("c")
        await settle(pilot)
        screen = workbench(app)
        assert screen.session.run.finished
        trace = app.screen.query_one(TracePanel)
        rows = [
            (trace.cell_text(row, "task"), trace.cell_text(row, "error"))
            for row in range(trace.row_count)
        ]
        assert ("faulty", cause) in rows
        assert rows[-1][0] == "cleanup"  # the cleanup ran: the run went on to its end
        screen._select("faulty")
        await pilot.pause()
        inspector = app.screen.query_one(Inspector)
        assert str(inspector.root.label) == f"faulty · {status}"
        if status == "cancelled":
            return  # a stop, not a failure: the trace says why
        error, _ = inspector.failure()
        assert error is not None
        assert f"{error['type']}: {error['message']}" == cause


def test_the_corpus_is_where_the_cli_tests_find_it() -> None:
    assert {p.stem for p in Path(CORPUS).glob("*.yaml")} >= set(CAUSES)
