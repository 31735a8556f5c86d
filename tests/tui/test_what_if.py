"""``E`` in the workbench: another output for the selected task, the plan of what re-runs shown
first, then the diff screen on the two runs; on a failed task, mark it done and continue
(issue 35)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Label, TextArea

from harness_tui.engine.recorded_calls import CallMode
from harness_tui.tui.modals.output import OutputModal
from harness_tui.tui.screens.diff import DiffScreen

from .conftest import make_app, settle, workbench
from .test_seams import until

SIZE = (120, 40)
TASKS = """\
import os
CALLS = []
def fetch(inputs):
    CALLS.append("fetch"); return 1
def summarize(inputs):
    CALLS.append("summarize")
    if os.environ.get("WI_TUI_FAIL"):
        raise ValueError("model down")
    return {"summary": "one row", "style": inputs["params"]["style"]}
def report(inputs):
    CALLS.append("report"); return "REPORT " + inputs["context"]["results"]["summarize"]["summary"]
def side(inputs):
    CALLS.append("side"); return "side"
"""
WORKFLOW = """\
name: what_if
on_failure: continue
tasks:
  fetch: {run: 'wi_tui_tasks:fetch'}
  side: {run: 'wi_tui_tasks:side', depends_on: [fetch]}
  summarize: {run: 'wi_tui_tasks:summarize', depends_on: [fetch], with: {style: long}}
  report: {run: 'wi_tui_tasks:report', depends_on: [summarize]}
"""


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "wi_tui_tasks.py").write_text(TASKS)
    workflow = tmp_path / "what_if.yaml"
    workflow.write_text(WORKFLOW)
    sys.modules.pop("wi_tui_tasks", None)
    yield workflow
    sys.modules.pop("wi_tui_tasks", None)


def called() -> list[str]:
    module = sys.modules["wi_tui_tasks"]
    seen = sorted(module.CALLS)
    module.CALLS.clear()
    return seen


async def test_e_shows_the_plan_checks_the_json_then_compares_the_two_runs(agent: Path) -> None:
    app = make_app(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        screen = workbench(app)
        assert screen.session is not None and screen.session.run.status.value == "succeeded"
        assert called() == ["fetch", "report", "side", "summarize"]
        screen._select("summarize")
        await pilot.press("E")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, OutputModal)
        plan = str(modal.query_one("#output-plan", Label).render())
        assert "Re-runs: report. Keep what they did: fetch, side." in plan
        assert '"summary": "one row"' in modal.query_one(TextArea).text
        modal.query_one(TextArea).text = '{"summary": '
        await pilot.press("ctrl+s")
        await pilot.pause()
        error = str(modal.query_one("#output-error", Label).render())
        assert error.startswith("output: not JSON") and "\n" not in error
        assert app.screen is modal  # still editing
        modal.query_one(TextArea).text = '{"summary": "by hand"}'
        await pilot.press("ctrl+s")
        await settle(pilot)
        await settle(pilot)
        assert called() == ["report"]  # summarize not called; fetch and side kept
        diff = app.screen
        assert isinstance(diff, DiffScreen) and diff.runs is not None
        assert {task: d.cause for task, d in diff.runs.items()} == {
            "summarize": "output overridden by the user",
            "report": "upstream summarize differs",
        }
        assert screen.session.run.results["report"] == "REPORT by hand"
        (override,) = screen.session.export_record().document["forked_from"]["overrides"]
        assert override == {"task": "summarize", "kind": "output", "value": {"summary": "by hand"}}


async def test_mark_a_failed_task_done_and_continue(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WI_TUI_FAIL", "1")
    app = make_app(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        screen = workbench(app)
        assert screen.session is not None and screen.session.run.status.value == "failed"
        called()
        screen._select("summarize")
        await pilot.press("E")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, OutputModal)
        assert "Mark summarize done with this output and continue" in str(
            modal.query_one(".dialog-title", Label).render()
        )
        modal.query_one(TextArea).text = '{"summary": "done by hand"}'
        await pilot.press("ctrl+s")
        await settle(pilot)
        await settle(pilot)
        assert called() == ["report"]
        assert screen.session.run.status.value == "succeeded"
        assert isinstance(app.screen, DiffScreen)


async def test_mark_done_while_held_at_the_failure_stops_the_run_and_continues_the_fork(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A held run executes nothing: no question; it is stopped as ``s`` stops it (its
    ``all_done`` cleanup runs, docs/workflows.md) before the fork continues."""
    monkeypatch.setenv("WI_TUI_FAIL", "1")
    agent.write_text(
        WORKFLOW.replace("on_failure: continue", "on_failure: stop")
        + "  tidy: {run: 'builtin:echo', depends_on: [summarize], trigger: all_done}\n"
    )
    app = make_app(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f", "c")  # break on failure: held at summarize's failed attempt
        await pilot.pause()
        screen = workbench(app)
        await until(pilot, lambda: screen.controller.held is not None, "held at the failure")
        assert screen.controller.held is not None and screen.controller.held.task == "summarize"
        failed_run = screen.session.run  # type: ignore[union-attr]
        screen._select("summarize")
        await pilot.press("E")
        await pilot.pause()
        app.screen.query_one(TextArea).text = '{"summary": "done by hand"}'
        await pilot.press("ctrl+s")
        await settle(pilot)
        await settle(pilot)
        assert failed_run.finished and failed_run.status.value == "failed"
        titles = [n.title for n in app._notifications]
        assert "Held at a failed attempt" not in titles, titles  # the hold has ended
        assert failed_run.task_status("tidy").value == "succeeded"
        assert failed_run.task_status("report").value == "cancelled"
        assert screen.session is not None and screen.session.run is not failed_run
        assert screen.session.run.status.value == "succeeded"
        assert screen.session.run.results["report"] == "REPORT done by hand"
        diff = app.screen
        assert isinstance(diff, DiffScreen) and diff.runs is not None
        # The fork compared with the stopped run once it ended, not as it began: fetch is the
        # same in both, and no task is "only in the first run".
        kinds = {task: d.kind for task, d in diff.runs.items()}
        assert "fetch" not in kinds and "removed" not in kinds.values(), kinds
        assert (kinds["summarize"], kinds["report"]) == ("status", "inputs")
        assert diff.runs["summarize"].cause == "output overridden by the user"


async def test_e_on_an_export_asks_before_running_its_code(agent: Path, tmp_path: Path) -> None:
    from harness_tui.tui.modals.confirm import ConfirmModal

    app = make_app(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        export = workbench(app).session.export_record().write(tmp_path / "run.json")  # type: ignore[union-attr]
    called()
    replay = make_app(export)
    async with replay.run_test(size=SIZE) as pilot:
        screen = workbench(replay)
        await pilot.press("left_square_bracket")  # back in time: E still forks the whole record
        screen._select("summarize")
        await pilot.press("E")
        await pilot.pause()
        replay.screen.query_one(TextArea).text = '{"summary": "from the export"}'
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(replay.screen, ConfirmModal) and "runs task code" in (
            replay.screen.question
        )
        await pilot.press("y")
        await settle(pilot)
        await settle(pilot)
        assert called() == ["report"]
        assert isinstance(replay.screen, DiffScreen) and replay.screen.runs is not None
        assert replay.screen.runs["summarize"].cause == "output overridden by the user"


@pytest.mark.slow  # E on an export covers the same fork in the fast tier (about 2 s)
async def test_f_on_an_export_keeps_every_task_the_record_has(agent: Path, tmp_path: Path) -> None:
    app = make_app(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        export = workbench(app).session.export_record().write(tmp_path / "run.json")  # type: ignore[union-attr]
    called()
    replay = make_app(export)
    async with replay.run_test(size=SIZE) as pilot:
        screen = workbench(replay)
        screen._select("summarize")
        await pilot.press("F")
        await pilot.pause()
        await pilot.press("y")  # it runs the export's code: asked first
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert screen.session is not None and screen.session.run.status.value == "succeeded"
        assert called() == ["report", "summarize"]  # fetch and side kept, though not replayed


async def test_e_in_the_calls_view_edits_a_recorded_answer_and_reruns_offline(
    tmp_path: Path,
) -> None:
    from harness_tui.tui.modals.rerun import RerunModal
    from harness_tui.tui.screens.calls import CallsModal

    from .agent_run import LABEL, recorded_agent_run

    agent = recorded_agent_run(tmp_path)  # its model server is stopped: offline or nothing
    edited = 'data: {"choices": [{"delta": {"content": "An edited reply."}}]}\n\ndata: [DONE]\n\n'
    app = make_app(agent.export, replay=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = workbench(app)
        await pilot.press("c")
        await settle(pilot)
        screen.panes.select("reply")
        await pilot.pause()
        await pilot.press("C")
        await pilot.pause()
        assert isinstance(app.screen, CallsModal)
        await pilot.press("E")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, OutputModal)
        plan = str(modal.query_one("#output-plan", Label).render())
        assert "Call #1 of reply's attempt 1 answers with what you write" in plan
        assert "Re-runs: reply. Keep what they did: classify." in plan
        assert "data: " in modal.query_one(TextArea).text  # the streamed answer, as text
        modal.query_one(TextArea).text = json.dumps(edited)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, RerunModal) and app.screen.mode is CallMode.OFFLINE
        await pilot.press("y")
        await settle(pilot)
        await settle(pilot)
        session = screen.session
        assert session is not None and session.run.results == {
            "classify": LABEL,
            "reply": "An edited reply.",
        }
        diff = app.screen
        assert isinstance(diff, DiffScreen) and diff.runs is not None
        assert {task: d.cause for task, d in diff.runs.items()} == {
            "reply": "recorded answer 1 of attempt 1 edited by the user"
        }
        # The replay's end, said before the dialogs, was of a run replaced since: one said.
        said = [n.title for n in app._notifications]
        assert said.count("Run finished") == 1, said


async def test_w_gives_a_task_other_parameters_and_reruns_it_and_what_follows(
    agent: Path,
) -> None:
    app = make_app(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        screen = workbench(app)
        called()
        screen._select("summarize")
        await pilot.press("W")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, OutputModal)
        plan = str(modal.query_one("#output-plan", Label).render())
        assert "Re-runs: summarize, report. Keep what they did: fetch, side." in plan
        assert json.loads(modal.query_one(TextArea).text) == {"style": "long"}
        modal.query_one(TextArea).text = '{"tone": "short"}'
        await pilot.press("ctrl+s")
        await pilot.pause()
        error = str(modal.query_one("#output-error", Label).render())
        assert error == "parameters: keep the keys style, change values"
        modal.query_one(TextArea).text = '{"style": "short"}'
        await pilot.press("ctrl+s")
        await settle(pilot)
        await settle(pilot)
        assert called() == ["report", "summarize"]
        assert screen.session is not None
        assert screen.session.run.results["summarize"]["style"] == "short"
        diff = app.screen
        assert isinstance(diff, DiffScreen) and diff.runs is not None
        assert {task: d.cause for task, d in diff.runs.items()} == {
            "summarize": 'set by the user: with.style: "long" -> "short"',
            "report": "upstream summarize differs",  # other inputs, the same output
        }


async def test_a_fork_passes_breakpoints_on_the_tasks_it_keeps(agent: Path) -> None:
    """Kept tasks are replayed, not run: a breakpoint on one does not stop the fork (side is
    kept and planned after report, the task re-run)."""
    app = make_app(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        screen = workbench(app)
        screen._select("side")
        await pilot.press("b")
        screen._select("summarize")
        await pilot.press("E")
        await pilot.pause()
        app.screen.query_one(TextArea).text = '{"summary": "by hand"}'
        await pilot.press("ctrl+s")
        await settle(pilot)
        await settle(pilot)
        session = screen.session
        assert session is not None and session.breakpoints == {"side"}
        assert session.run.status.value == "succeeded"
        assert isinstance(app.screen, DiffScreen)


async def test_an_output_past_the_edit_limit_opens_an_empty_editor_saying_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Before: the editor was filled with it whatever its size (a 20 MB answer took 38 s to
    # open, and no edit of it could apply: an edited value holds payload_bytes at most).
    from harness_tui.workflow import limits

    monkeypatch.setenv(limits.ENV_VAR, "payload_bytes=1000")
    app = make_app(None)
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(OutputModal("t", "p", {"text": "x" * 5000}, what="answer"))
        await pilot.pause()
        assert app.screen.query_one(TextArea).text == "null"
        note = str(app.screen.query_one("#output-error", Label).render())
        assert "The answer now is 5,011 bytes of JSON, past the 1,000 an edited answer" in note
        await app.push_screen(OutputModal("t", "p", {"text": "x" * 900}, what="answer"))
        await pilot.pause()
        assert "x" * 900 in app.screen.query_one(TextArea).text  # within it: as it is
