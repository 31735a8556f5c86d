"""The workbench driven through Pilot on shipped workflows, as a person would use it."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.widgets import Input

from harness_tui.engine.events import Status
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.export import RunRecord
from harness_tui.tui.controller import DriveStarted, RunController, Ticked
from harness_tui.tui.messages import RunUpdated
from harness_tui.tui.screens import workbench as workbench_module
from harness_tui.tui.screens.diff import DiffScreen
from harness_tui.tui.widgets.dag_view import DagView
from harness_tui.tui.widgets.inspector import Inspector
from harness_tui.tui.widgets.plan_table import PlanTable
from harness_tui.tui.widgets.trace_panel import TracePanel
from harness_tui.workflow.loader import load_workflow

from .conftest import ROOT, make_app, settle, workbench

USER_PROFILE = ROOT / "workflows/user_profile.yaml"
SIZE = (120, 40)


def cell(table: PlanTable, task: str, column: str) -> str:
    return table.cell_text(table.row_of(task), column).strip()


def inspector_sections(inspector: Inspector) -> dict[str, Any]:
    return {str(node.label): node.data for node in inspector.root.children}


@pytest.fixture
def posted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the updates the run controller posts to the screen, in order (but the start
    of a drive and the pulse's ticks, which come as time passes)."""
    names: list[str] = []
    screen_class = workbench_module.WorkbenchScreen
    real = screen_class.post_message

    def spy(self: Any, message: Message) -> bool:
        if isinstance(message, RunUpdated) and not isinstance(
            message.update, DriveStarted | Ticked
        ):
            names.append(type(message.update).__name__)
        return real(self, message)

    monkeypatch.setattr(screen_class, "post_message", spy)
    return names


async def test_step_through_user_profile(posted: list[str]) -> None:
    app = make_app(USER_PROFILE)
    async with app.run_test(size=SIZE) as pilot:
        screen = workbench(app)
        plan = app.screen.query_one(PlanTable)
        order = [step.task for step in screen.session.run.plan]  # type: ignore[union-attr]
        assert cell(plan, order[0], "mark") == "▶"
        for expected_done in range(1, 5):
            await pilot.press("n")
            await settle(pilot)
            assert screen.session.run.cursor == expected_done  # type: ignore[union-attr]
            assert cell(plan, order[expected_done - 1], "status") == "✔ succeeded"
        assert posted == ["EventsRecorded", "Paused"] * 3 + ["EventsRecorded", "Finished"]
        trace = app.screen.query_one(TracePanel)
        assert trace.row_count == 8
        statuses = [trace.cell_text(i, "status") for i in range(8)]
        assert statuses == ["◐ running", "✔ succeeded"] * 4
        plan.focus()
        await pilot.press("end")  # the user moves to the last row: compose_response
        await pilot.pause()
        assert screen.selected == "compose_response"
        sections = inspector_sections(app.screen.query_one(Inspector))
        assert sections["output"] == {"final": {"level": "gold", "quota": 100, "user_id": "u001"}}
        assert "check_quota" in sections["inputs"]["results"]


async def test_breakpoint_pauses_before_the_task(posted: list[str]) -> None:
    app = make_app(USER_PROFILE)
    async with app.run_test(size=SIZE) as pilot:
        screen = workbench(app)
        screen._select("compose_response")
        await pilot.press("b")
        await pilot.press("c")
        await settle(pilot)
        run = screen.session.run  # type: ignore[union-attr]
        assert run.next_step is not None and run.next_step.task == "compose_response"
        assert posted[-1] == "Paused"
        assert "●" in cell(app.screen.query_one(PlanTable), "compose_response", "mark")
        assert app.screen.query_one(DagView).breakpoints == {"compose_response"}
        await pilot.press("c")
        await settle(pilot)
        assert run.finished and posted[-1] == "Finished"


async def test_going_back_in_time_shows_the_earlier_state() -> None:
    app = make_app(USER_PROFILE)
    async with app.run_test(size=SIZE) as pilot:
        screen = workbench(app)
        await pilot.press("c")
        await settle(pilot)
        session = screen.session
        assert session is not None and session.position == 7
        for _ in range(3):
            await pilot.press("left_square_bracket")
        await pilot.pause()
        assert session.position == 4
        event = session.run.events[4]  # enrich_user_data (or check_quota) running
        assert screen.selected == event.task
        sections = inspector_sections(app.screen.query_one(Inspector))
        assert sections["task"]["status"] == "running"
        # Numbered as the trace's seq column and the header number it.
        assert sections["task"]["shown"] == "as of seq 4"
        assert "⏪ seq 4 of 0–7" in screen.header.render().plain
        assert "output" not in sections
        assert cell(app.screen.query_one(PlanTable), "compose_response", "status") == "· pending"
        assert app.screen.query_one(TracePanel).cursor_row == 4
        for _ in range(3):
            await pilot.press("right_square_bracket")
        await pilot.pause()
        assert session.view_seq is None
        assert cell(app.screen.query_one(PlanTable), "compose_response", "status") == "✔ succeeded"


async def test_export_then_replay_the_export_to_the_same_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(ROOT / "workflows/agent_triage.yaml")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        live = workbench(app).session
        assert live is not None
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        exported = tmp_path / live.default_export_name()
        assert exported.is_file()
        assert any("exported" in n.message for n in app._notifications)
    record = RunRecord.read(exported)
    replay_app = make_app(exported, replay=True)
    async with replay_app.run_test(size=SIZE) as pilot:
        screen = workbench(replay_app)
        assert screen.session is not None and screen.session.replay
        assert "REPLAY" in str(replay_app.screen.query_one("#run-header").render())
        await pilot.press("n")
        await settle(pilot)
        assert len(screen.session.run.events) == 2
        await pilot.press("c")
        await settle(pilot)
        replayed = screen.session.run
        assert replayed.canonical_trace() == [e.canonical() for e in record.events]
        assert replayed.digests() == record.digests


async def test_export_to_an_html_name_writes_a_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(USER_PROFILE)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        field = app.screen.query_one("#export-path", Input)
        field.value = str(tmp_path / "report.html")
        await pilot.press("enter")
        await pilot.pause()
        assert any("wrote the html report" in n.message for n in app._notifications)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html
    assert html.count('class="task status-succeeded"') == 4


async def test_a_redacted_export_opens_in_replay_and_steps_through_its_trace(
    tmp_path: Path,
) -> None:
    from harness_tui.records.runs.live import LiveRun
    from harness_tui.workflow.loader import load_workflow

    workflow = load_workflow(ROOT / "workflows/agent_triage.yaml")
    live = LiveRun.start(workflow, workflow.payload)
    live.drive()
    exported = live.export(redact=["customer", "ticket"]).write(tmp_path / "red.json")
    record = RunRecord.read(exported)
    app = make_app(exported, replay=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = workbench(app)
        assert screen.session is not None and screen.session.replay
        assert screen.session.payload["customer"] == "<redacted>"
        await pilot.press("c")
        await settle(pilot)
        replayed = screen.session.run.events
        assert [(e.task, e.status, e.attempt) for e in replayed] == [
            (e.task, e.status, e.attempt) for e in record.events
        ]


async def test_invalid_file_shows_its_errors_and_the_app_keeps_running(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "name: broken\ntasks:\n  a:\n    run: builtin:echo\n    depends_on: [ghost]\n"
    )
    app = make_app(broken)
    async with app.run_test(size=SIZE) as pilot:
        errors = app.screen.query_one("#errors")
        assert errors.display
        text = str(errors.render())
        assert f"{broken}:5:18: task 'a' depends on unknown task 'ghost'" in text
        broken.write_text("name: fixed\ntasks:\n  a:\n    run: builtin:echo\n")
        await pilot.press("R")
        await pilot.pause()
        assert workbench(app).session is not None
        assert not app.screen.query_one("#errors").display


async def test_payload_editor_validates_then_replans() -> None:
    app = make_app(USER_PROFILE)
    async with app.run_test(size=SIZE) as pilot:
        screen = workbench(app)
        before = screen.session.run.plan.digest  # type: ignore[union-attr]
        await pilot.press("y")
        await pilot.pause()
        editor = app.screen.query_one("#payload-editor")
        editor.text = "{not json"  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "not JSON" in str(app.screen.query_one("#payload-error").render())
        editor.text = json.dumps({"user_id": "u777"})  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert workbench(app).session.payload == {"user_id": "u777"}  # type: ignore[union-attr]
        assert workbench(app).session.run.plan.digest != before  # type: ignore[union-attr]


async def test_a_hanging_task_can_be_stopped(tmp_path: Path) -> None:
    wf = tmp_path / "hang.yaml"
    wf.write_text(
        "name: hang\ntasks:\n  slow: {run: builtin:sleep, with: {seconds: 30}}\n"
        "  after: {run: builtin:echo, depends_on: [slow]}\n"
    )
    app = make_app(wf, clock=None)  # the real clock: the sleep really hangs
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause(0.3)
        await pilot.press("s")
        await settle(pilot)
        run = workbench(app).session.run  # type: ignore[union-attr]
        assert [(e.task, e.status.value) for e in run.events] == [
            ("slow", "running"),
            ("slow", "cancelled"),
            ("after", "cancelled"),
        ]
        assert run.status.value == "cancelled"


async def test_diff_from_the_workbench(in_repo: Path) -> None:
    app = make_app("workflows/release_v2.yaml")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("d")
        await pilot.pause()
        target = app.screen.query_one("#diff-target")
        target.value = "workflows/release_v1.yaml"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        assert screen.diff.counts == {
            "renamed": 0,
            "added": 2,
            "removed": 2,
            "moved": 1,
            "changed": 4,
            "unchanged": 3,
        }
        await pilot.press("n")
        await pilot.pause()
        sections = inspector_sections(screen.query_one(Inspector))
        assert sections["task"]["kind"] != "unchanged"
        first = sections["task"]["task"]
        # The palette offers the diff screen's actions too, calling the same methods.
        command = next(c for c in app.get_system_commands(screen) if c.title == "diff: Next change")
        command.callback()
        await pilot.pause()
        sections = inspector_sections(screen.query_one(Inspector))
        assert sections["task"]["kind"] != "unchanged" and sections["task"]["task"] != first
        await pilot.press("escape")
        await pilot.pause()
        assert workbench(app).session is not None


async def test_reload_notifies_the_plan_changes(tmp_path: Path) -> None:
    wf = tmp_path / "wf.yaml"
    wf.write_text(
        "name: wf\ntasks:\n  a: {run: builtin:echo}\n  b: {run: builtin:echo, depends_on: [a]}\n"
    )
    app = make_app(wf)
    async with app.run_test(size=SIZE) as pilot:
        wf.write_text(
            "name: wf\ntasks:\n  a: {run: builtin:echo}\n"
            "  b: {run: builtin:echo, depends_on: [a], max_retries: 2}\n"
            "  c: {run: builtin:echo}\n"
        )
        await pilot.press("R")
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("1 added, 0 removed, 0 moved, 1 changed" in m for m in messages), messages
        assert len(workbench(app).session.run.plan) == 3  # type: ignore[union-attr]


async def test_palette_commands_call_the_same_actions() -> None:
    app = make_app(USER_PROFILE)
    async with app.run_test(size=SIZE) as pilot:
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert {
            "run: Step",
            "run: Continue",
            "breakpoint: Toggle",
            "file: Export run or report",
        } <= set(titles)
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "run: Step")
        command.callback()
        await settle(pilot)
        assert workbench(app).session.run.cursor == 1  # type: ignore[union-attr]


async def test_live_runs_are_recorded_and_can_be_resumed_from_the_store(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from harness_tui.cli import cli
    from harness_tui.records.store import RunStore

    db = tmp_path / "runs.db"
    app = make_app(USER_PROFILE, store_path=str(db))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await settle(pilot)
        run_id = workbench(app).session.run_id  # type: ignore[union-attr]
        assert run_id is not None
    # The app was closed mid-run: the run is abandoned, and the CLI finishes it from the store.
    (row,) = RunStore(db).runs()
    assert row["id"] == run_id and row["tasks_done"] == 1 and row["status"] == "abandoned"
    result = CliRunner().invoke(cli, ["resume", run_id, "--store", str(db)])
    assert result.exit_code == 0, result.output
    (row,) = RunStore(db).runs()
    assert row["status"] == "succeeded" and row["tasks_done"] == 4


_GATE = """\
import threading

ARRIVED = threading.Event()
GO = threading.Event()


def step(inputs):
    if inputs["params"].get("gate"):  # held until the quit has asked the run to pause
        ARRIVED.set()
        GO.wait(30)
    return inputs["task"]["name"]
"""


@pytest.mark.parametrize("workers", [1, 3])
async def test_quitting_while_a_run_goes_on_leaves_it_abandoned_and_resumable(
    tmp_path: Path, workers: int
) -> None:
    """Quit (the app exits) while continuing: the run pauses after its task and is left
    abandoned, with the tasks it retired stored; resume ends in the uninterrupted digest.

    Ordered by events, not time: t10 holds until quitting has asked the run to pause, so the
    run cannot reach its end first however slow the machine (forty 50 ms sleeps could)."""
    import importlib.util

    from click.testing import CliRunner

    from harness_tui.cli import cli
    from harness_tui.records.store import RunStore

    name = f"gate_{tmp_path.name}"
    (tmp_path / f"{name}.py").write_text(_GATE)
    spec = importlib.util.spec_from_file_location(name, tmp_path / f"{name}.py")
    assert spec is not None and spec.loader is not None
    gate = sys.modules[name] = importlib.util.module_from_spec(spec)  # the tasks' module too
    spec.loader.exec_module(gate)
    wf = tmp_path / "steady.yaml"
    wf.write_text(
        f"name: steady\ntasks:\n  t0: {{run: '{name}:step'}}\n"
        + "".join(
            f"  t{i}: {{run: '{name}:step', depends_on: [t{i - 1}]"
            + (", with: {gate: true}" if i == 10 else "")
            + "}\n"
            for i in range(1, 40)
        )
    )
    db = tmp_path / "runs.db"
    app = make_app(wf, store_path=str(db), workers=workers, clock=None)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("c")
            await _until(pilot, gate.ARRIVED.is_set)
            assert gate.ARRIVED.is_set() and not gate.GO.is_set()
            session = app.session
            assert session is not None
            driver = session.live.driver
            pause = driver.pause

            def pause_then_release() -> None:
                pause()
                gate.GO.set()

            driver.pause = pause_then_release  # type: ignore[method-assign]
        assert gate.GO.is_set()  # released by the quit's pause, not before
        with RunStore(db, create=False) as store:
            (row,) = store.runs()
            assert (row["status"], row["tasks_done"]) == ("abandoned", 11)
            exported = store.export(row["id"])
        RunRecord.read(exported.write(tmp_path / "left.json"))  # its status fits its trace
        result = CliRunner().invoke(cli, ["resume", row["id"], "--store", str(db)])
        assert result.exit_code == 0, result.output
        expected = TaskOrchestrator(load_workflow(wf).graph).start({}).run_to_end().digest
        with RunStore(db, create=False) as store:
            (row,) = store.runs()
        assert (row["status"], row["tasks_done"], row["run_digest"]) == ("succeeded", 40, expected)
    finally:
        gate.GO.set()
        sys.modules.pop(name, None)


async def test_error_text_with_brackets_is_shown_verbatim(tmp_path: Path) -> None:
    wf = tmp_path / "dates.yaml"
    # YAML 1.2 reads 2026-01-01 as a string: a NaN is the non-JSON value here.
    wf.write_text("name: dates\npayload: {x: [1, .nan]}\ntasks:\n  a: {run: builtin:echo}\n")
    app = make_app(wf)
    async with app.run_test(size=SIZE):
        text = str(app.screen.query_one("#errors").render())
        assert "payload.x[1]: float is not a JSON value (nan has no JSON form)" in text


async def held_at(pilot: Any, controller: RunController, attempt: int) -> Any:
    """Wait until the run is held at ``attempt`` (the worker stays busy while it is held)."""
    for _ in range(400):
        held = controller.held
        if held is not None and held.attempt == attempt:
            await pilot.pause()
            return held
        await pilot.pause(0.01)
    raise AssertionError(f"never held at attempt {attempt}")


async def test_quitting_during_a_long_task_stops_it_instead_of_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from harness_tui.records.store import RunStore

    monkeypatch.setattr(workbench_module, "LEAVE_SECONDS", 0.3)
    wf = tmp_path / "long.yaml"
    wf.write_text(
        "name: long\ntasks:\n  a: {run: builtin:sleep, with: {seconds: 30}}\n"
        "  b: {run: builtin:echo, depends_on: [a]}\n"
    )
    db = tmp_path / "runs.db"
    app = make_app(wf, store_path=str(db), clock=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await _until(pilot, lambda: bool(app.session.run.events))  # type: ignore[union-attr]
        quit_at = time.monotonic()
    assert time.monotonic() - quit_at < 10  # not the task's 30 s
    with RunStore(db, create=False) as store:
        (row,) = store.runs()
    assert (row["status"], row["tasks_done"]) == ("cancelled", 2)


async def test_quitting_while_held_at_a_failed_attempt_finishes_that_task_and_leaves(
    tmp_path: Path,
) -> None:
    from harness_tui.records.store import RunStore

    db = tmp_path / "runs.db"
    app = make_app(ROOT / "tests/tui/data/flaky_pipeline.yaml", store_path=str(db))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f", "c")
        await held_at(pilot, workbench(app).controller, 1)
    # Quitting did not wait on the hold forever: the held task ran to its end, then the run
    # was left behind.
    with RunStore(db, create=False) as store:
        (row,) = store.runs()
        assert row["status"] == "abandoned"
        done = {e.task for e in store.load(row["id"]).events if e.status.value != "running"}
    assert "transform" in done


async def test_break_on_failure_holds_at_each_failed_attempt(posted: list[str]) -> None:
    app = make_app(ROOT / "tests/tui/data/flaky_pipeline.yaml")
    async with app.run_test(size=SIZE) as pilot:
        screen = workbench(app)
        session = screen.session
        await pilot.press("f", "c")
        held = await held_at(pilot, workbench(app).controller, 1)
        # Held before the retry: the failed attempt is on screen, the next has not started.
        assert (held.task, held.status.value) == ("transform", "failed")
        assert screen.selected == "transform" and "Held" in posted
        assert session.run.events[-1] == held  # type: ignore[union-attr]
        plan = app.screen.query_one(PlanTable)
        assert cell(plan, "transform", "status") == "✘ retry 2/3"  # held before the retry
        await pilot.press("c")
        await held_at(pilot, workbench(app).controller, 2)
        await pilot.press("c")
        await held_at(pilot, workbench(app).controller, 3)
        await pilot.press("f", "c")  # break on failure off: the run goes to its end
        await settle(pilot)
        run = session.run  # type: ignore[union-attr]
        assert run.finished and run.status.value == "failed"
        assert posted[-1] == "Finished"


async def test_open_dialog_opens_the_chosen_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "workflows").mkdir()
    (tmp_path / "workflows" / "one.yaml").write_text(
        "name: one\ntasks:\n  a: {run: builtin:echo}\n"
    )
    (tmp_path / "notes.json").write_text('{"not": "an export"}')
    monkeypatch.chdir(tmp_path)
    app = make_app(None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        options = app.screen.query_one("#open-list")
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]  # type: ignore[attr-defined]
        assert labels == ["◆ workflow  workflows/one.yaml"]  # notes.json is not an export
        await pilot.press("enter")
        await pilot.pause()
        session = workbench(app).session
        assert session is not None and session.workflow.name == "one"


async def test_open_dialog_takes_a_typed_python_factory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "flow_factory.py").write_text(
        "from harness_tui import Harness\n\n"
        "def build():\n"
        "    harness = Harness()\n"
        "    harness.register('a', lambda inputs: 1)\n"
        "    return harness\n"
    )
    monkeypatch.chdir(tmp_path)
    app = make_app(None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press(*"flow_factory.py:build")
        options = app.screen.query_one("#open-list")
        first = str(options.get_option_at_index(0).prompt)  # type: ignore[attr-defined]
        assert first == "◆ python    flow_factory.py:build  (enter imports it)"
        await pilot.press("enter")
        await pilot.pause()
        session = workbench(app).session
        assert session is not None and session.run.plan.names == ("a",)


async def test_a_problem_opening_a_file_is_one_line_in_the_notification(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_factory.py").write_text(
        "def build():\n    raise ValueError('first line\\nsecond line')\n"
    )
    monkeypatch.chdir(tmp_path)
    app = make_app(USER_PROFILE)
    async with app.run_test(size=SIZE) as pilot:
        workbench(app).files.open_path("broken_factory.py:build")
        await pilot.pause()
        (note,) = [n for n in app._notifications if n.severity == "error"]
        assert "first line\\nsecond line" in note.message
        assert len(note.message.splitlines()) == 1


async def test_stepping_task_by_task_ends_in_the_headless_digest() -> None:
    """n, n, n... through the whole plan of a shipped workflow with a failure and retries:
    the same trace and digests as a headless run to the end."""
    path = ROOT / "tests/tui/data/flaky_pipeline.yaml"
    workflow = load_workflow(path)
    headless = TaskOrchestrator(workflow.graph, on_failure=workflow.on_failure)
    expected = headless.start(workflow.payload).run_to_end()
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        session = workbench(app).session
        assert session is not None
        for _ in range(len(session.run.plan)):
            await pilot.press("n")
            await settle(pilot)
        assert session.run.finished
        assert session.run.canonical_trace() == expected.canonical_trace()
        assert session.run.digests() == expected.digests()


def _holding_workflow(tmp_path: Path, module: str, count: int) -> tuple[Path, Any]:
    """``count`` tasks ``t0``.. that each wait for their own event (``GO[i]``, in the module
    the test imports too) on ``workers=2``: the app and the events."""
    (tmp_path / f"{module}.py").write_text(
        f"import threading\n\nGO = [threading.Event() for _ in range({count})]\n\n"
        "def hold(inputs):\n    GO[inputs['params']['n']].wait(10)\n    return 1\n"
    )
    wf = tmp_path / f"{module}.yaml"
    wf.write_text(
        f"name: {module}\ntasks:\n"
        + "".join(f"  t{i}: {{run: {module}:hold, with: {{n: {i}}}}}\n" for i in range(count))
    )
    return wf, lambda: sys.modules[module].GO


async def _until(pilot: Any, check: Any) -> None:
    for _ in range(100):
        await asyncio.sleep(0.05)
        await pilot.pause()
        if check():
            return


def _status_label(app: Any, task: str) -> str:
    table = app.screen.query_one(PlanTable)
    return table.cell_text(table.row_of(task), "status")


async def test_tasks_running_ahead_on_workers_show_as_running_before_they_retire(
    tmp_path: Path,
) -> None:
    """With workers, a task's events enter the trace when it retires (in plan order); the
    plan shows the ones in flight as running meanwhile, and nothing once the run ends."""
    wf, go = _holding_workflow(tmp_path, "flight_tasks", 3)
    app = make_app(wf, workers=2, clock=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        session = workbench(app).session
        assert session is not None
        await _until(pilot, lambda: len(session.in_flight) == 2)
        flying = sorted(session.in_flight)
        assert len(flying) == 2 and not session.run.events  # nothing retired yet
        shown = [_status_label(app, task) for task in flying]
        assert all("running" in label for label in shown), shown
        for event in go():
            event.set()
        await settle(pilot)
        assert session.run.finished and not session.in_flight
        assert {session.status(f"t{i}") for i in range(3)} == {Status.SUCCEEDED}


async def test_a_task_still_running_ahead_after_a_pause_clears_when_it_ends(
    tmp_path: Path,
) -> None:
    wf, go = _holding_workflow(tmp_path, "ahead_tasks", 2)
    app = make_app(wf, workers=2, clock=None)
    async with app.run_test(size=SIZE) as pilot:
        session = workbench(app).session
        assert session is not None
        await pilot.press("c")
        await _until(pilot, lambda: len(session.in_flight) == 2)
        await pilot.press("p")
        first, second = session.run.plan.names
        go()[int(first[1:])].set()  # the first retires and the run pauses; the second runs on
        await _until(
            pilot, lambda: session.run.cursor == 1 and not workbench(app).controller.driving
        )
        assert "running" in _status_label(app, second)
        assert session.status(first) is Status.SUCCEEDED
        go()[int(second[1:])].set()
        await _until(pilot, lambda: not session.in_flight)
        assert "running" not in _status_label(app, second)


async def test_pause_stops_a_continuing_run_after_the_current_task(
    tmp_path: Path, posted: list[str]
) -> None:
    wf = tmp_path / "slow.yaml"
    lines = ["  s0: {run: builtin:sleep, with: {seconds: 0.1}}"]
    lines += [
        f"  s{i}: {{run: builtin:sleep, with: {{seconds: 0.1}}, depends_on: [s{i - 1}]}}"
        for i in range(1, 20)
    ]
    tasks = "\n".join(lines) + "\n"
    wf.write_text("name: slow\ntasks:\n" + tasks)
    app = make_app(wf, clock=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause(0.35)
        await pilot.press("p")
        await settle(pilot)
        run = workbench(app).session.run  # type: ignore[union-attr]
        assert posted[-1] == "Paused"
        assert 0 < run.cursor < 20 and not run.finished
        assert any("paused" in n.message for n in app._notifications)


async def test_find_a_task_by_name() -> None:
    app = make_app(ROOT / "workflows/etl_fanout.yaml")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash")
        await pilot.pause()
        await pilot.press(*"p07")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert workbench(app).selected == "transform_p07"
        assert app.screen.query_one(DagView).selected == "transform_p07"


async def test_the_held_run_toast_shows_a_hostile_error_inert(
    tmp_path: Path, posted: list[str]
) -> None:
    workflow = tmp_path / "hostile.yaml"
    workflow.write_text(
        "name: hostile\ntasks:\n  a:\n    run: builtin:fail\n    max_retries: 1\n"
        '    with: {message: "\\e]0;owned\\a\\e[2J [red]x[/]"}\n'
    )
    app = make_app(workflow)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f", "c")
        await held_at(pilot, workbench(app).controller, 1)
        (toast,) = [n.message for n in app._notifications if "attempt 1" in n.message]
        assert "\x1b" not in toast and "\x07" not in toast
        assert "\\x1b]0;owned\\x07\\x1b[2J [red]x[/]" in toast
        await pilot.press("s")
        await settle(pilot)
