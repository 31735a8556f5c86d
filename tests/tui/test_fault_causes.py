"""The workbench shows the cause of each in-process fault of the corpus (tests/faults): the
run ends, the faulty task's error is in the trace and the inspector, nothing hangs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


async def _run_to_the_end(app: Any, pilot: Any) -> TracePanel:
    """Continue the run to its end; the trace panel showing it."""
    await pilot.press("c")
    await settle(pilot)
    assert workbench(app).session.run.finished
    return app.screen.query_one(TracePanel)


@pytest.mark.parametrize("fault", sorted(CAUSES))
async def test_the_workbench_shows_the_cause_of_a_faulty_task(fault: str) -> None:
    status, cause = CAUSES[fault]
    app = make_app(CORPUS / f"{fault}.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        trace = await _run_to_the_end(app, pilot)
        screen = workbench(app)
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


async def test_an_isolated_task_that_ends_its_process_leaves_the_workbench_standing(
    tmp_path: Path,
) -> None:
    """``os._exit`` in-process would end the app (and leave the terminal in its alternate
    screen); with ``isolation: process`` it ends only the task's child."""
    text = (CORPUS / "hard_exit.yaml").read_text("utf-8")
    workflow = tmp_path / "hard_exit.yaml"
    workflow.write_text(
        text.replace("on_failure: stop\n", "on_failure: stop\ndefaults: {isolation: process}\n"),
        "utf-8",
    )
    (tmp_path / "faulty.py").write_text((CORPUS / "faulty.py").read_text("utf-8"), "utf-8")
    app = make_app(workflow)
    async with app.run_test(size=(120, 40)) as pilot:
        trace = await _run_to_the_end(app, pilot)
        errors = [trace.cell_text(row, "error") for row in range(trace.row_count)]
        assert "ProcessExited: the task's process exited with code 7 without a result" in errors
        workbench(app)._select("faulty")
        await pilot.pause()
        spec = dict(app.screen.query_one(Inspector)._shown[1])["spec"]  # type: ignore[index]
        assert spec["isolation"] == "process"  # shown because it is not the default
