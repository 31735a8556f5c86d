"""Retry state where a task shows (plan, inspector), and the inspector's list of attempts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.events import Status, TraceEvent
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.export import RunRecord
from harness_tui.tui.retry_state import RetryWait, attempts_of, retry_wait
from harness_tui.tui.screens.workbench import WorkbenchScreen
from harness_tui.tui.session import Session
from harness_tui.tui.widgets.dag_view import DagView
from harness_tui.tui.widgets.inspector import Inspector
from harness_tui.tui.widgets.plan_table import PlanTable
from harness_tui.tui.widgets.run_header import _parts
from harness_tui.workflow.loader import parse_workflow

from .conftest import make_app, settle, workbench

FLAKY = """\
name: retrying
tasks:
  score:
    run: builtin:fail
    max_retries: 3
    retry_interval: 0.5
    with: {times: 2, message: "quota exceeded\\nsecond line"}
"""


def sections(screen: WorkbenchScreen) -> dict[str, Any]:
    """What the inspector shows now, by section."""
    shown = screen.query_one(Inspector)._shown
    assert shown is not None
    return dict(shown[1])


def test_a_failed_attempt_that_is_not_the_last_waits_to_retry() -> None:
    graph = parse_workflow(FLAKY).graph
    failed = TraceEvent.from_dicts(
        {"seq": 1, "task": "score", "task_id": "x", "status": "failed", "attempt": 1},
        {"started_at": 10.0, "ended_at": 10.2},
    )
    wait = retry_wait(graph, [failed])
    assert wait == RetryWait(2, 4, 0.5)
    assert wait.sentence() == "retrying in 0.5 s (attempt 2 of 4)" and wait.short() == "retry 2/4"
    assert RetryWait(2, 4, 0.0).sentence() == "retrying (attempt 2 of 4)"
    last = TraceEvent.from_dicts({**failed.canonical(), "attempt": 4}, {})
    assert retry_wait(graph, [last]) is None  # no attempt follows the last
    assert attempts_of([failed])[0].outcome == Status.FAILED.value


async def test_held_at_a_failed_attempt_the_plan_and_inspector_say_retrying(
    tmp_path: Path,
) -> None:
    path = tmp_path / "retrying.yaml"
    path.write_text(FLAKY)
    app = make_app(path, clock=FakeClock(start=100.0))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = workbench(app)
        plan = screen.query_one(PlanTable)
        await pilot.press("f", "c")  # break on failure: hold at the first failed attempt
        for _ in range(500):  # the drive holds (its worker does not end): wait for the look
            await pilot.pause(0.01)
            if plan.cell_text(0, "status").strip() == "✘ retry 2/4":
                break
        assert plan.cell_text(0, "status").strip() == "✘ retry 2/4"
        head = sections(screen)["task"]
        dag = screen.query_one(DagView)
        assert any("↻ score" in "".join(s.text for s in dag.render_line(y)) for y in range(6))
        header = screen.header.parts
        assert header is not None and header.status == "held at score#1"  # held wins
        assert head["status"] == "failed, retrying in 0.5 s (attempt 2 of 4)"
        await pilot.press("f", "c")  # break on failure off, and the held drive goes on
        await settle(pilot)
        attempts = sections(screen)["attempts"]
        assert [(a["attempt"], a["outcome"]) for a in attempts] == [
            (1, "failed"), (2, "failed"), (3, "succeeded")
        ]  # fmt: skip
        assert attempts[0]["error"] == "RuntimeError: quota exceeded" and "worker" in attempts[0]
        assert "duration_s" in attempts[0]
        assert plan.cell_text(0, "status").strip().endswith("succeeded")


def test_the_header_names_the_task_between_two_attempts() -> None:
    workflow = parse_workflow(FLAKY)
    run = TaskOrchestrator(workflow.graph, clock=FakeClock()).start({}).run_to_end()
    session = Session(workflow, {}, record=RunRecord.from_run(run, workflow))
    session.run.run_to_end()  # replayed from the record: no code runs
    assert [(e.status.value, e.attempt) for e in session.run.events[:2]] == [
        ("running", 1), ("failed", 1)
    ]  # fmt: skip
    session.deliver(2)  # shown up to the first failed attempt, at the live end
    assert session.waiting_to_retry() == "score"
    assert _parts(session, running=True).status == (
        "running · score retrying in 0.5 s (attempt 2 of 4)"
    )
    session.deliver(3)  # the second attempt runs
    assert session.waiting_to_retry() is None
