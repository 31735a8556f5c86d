"""The workbench's headless session, without Pilot or a terminal: what is open and the view
over it (the run controller's own tests drive it: tests/tui/test_controller.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.driver import Stop, StopReason
from harness_tui.engine.events import Status, TraceEvent
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore
from harness_tui.tui.controller import Finished, Go, Paused
from harness_tui.tui.session import OpenError, Session, open_session

from .test_controller import Owner

ROOT = Path(__file__).resolve().parents[2]
USER_PROFILE = str(ROOT / "workflows/user_profile.yaml")
FLAKY = str(ROOT / "tests/tui/data/flaky_pipeline.yaml")


def session_of(path: str, store: RunStore | None = None) -> Session:
    return open_session(path, settings=RunSettings(clock=FakeClock(tick=0.25), store=store))


def drive(session: Session, single: bool) -> tuple[Stop, list[TraceEvent]]:
    """Step or continue through a run controller, as the screen does; why it stopped and
    the events it showed."""
    owner = Owner(session)
    before = session.delivered
    assert (owner.controller.step() if single else owner.controller.continue_()) is Go.STARTED
    end = owner.until_drive_ends()
    if isinstance(end, Paused):
        stop = Stop(end.reason, end.task)
    else:
        assert isinstance(end, Finished), end
        stop = Stop(StopReason.FINISHED)
    return stop, list(session.run.events[before : session.delivered])


def test_a_step_delivers_its_events_and_moves_the_next_task() -> None:
    session = session_of(USER_PROFILE)
    first = session.run.plan.names[0]
    stop, events = drive(session, single=True)
    assert stop == Stop(StopReason.STEP)
    assert [(e.task, e.status) for e in events] == [
        (first, Status.RUNNING),
        (first, Status.SUCCEEDED),
    ]
    assert session.status(first) is Status.SUCCEEDED
    assert session.progress() == (1, 4)
    assert session.run.next_step is not None
    assert session.run.next_step.task == session.run.plan.names[1]


def test_breakpoints_stop_a_continue_before_the_task() -> None:
    session = session_of(USER_PROFILE)
    target = session.run.plan.names[2]
    assert session.toggle_breakpoint(target) is True
    stop, _ = drive(session, single=False)
    assert stop == Stop(StopReason.BREAKPOINT, target)
    assert session.progress() == (2, 4)
    assert session.toggle_breakpoint(target) is False
    stop, _ = drive(session, single=False)
    assert stop.reason is StopReason.FINISHED and session.run.status.value == "succeeded"


def test_time_travel_shows_the_state_as_of_an_event() -> None:
    session = session_of(USER_PROFILE)
    drive(session, single=False)
    first = session.run.plan.names[0]
    last = session.run.plan.names[-1]
    assert session.status(last) is Status.SUCCEEDED
    while session.go_back():
        pass
    assert session.position == -1 and session.status(first) is None
    assert session.progress() == (0, 4)
    assert session.go_forward() and session.position == 0
    assert session.status(first) is Status.RUNNING
    assert session.attempts(first) == (1, None)
    session.go_forward()
    attempts, duration = session.attempts(first)
    assert attempts == 1 and duration is not None and duration > 0
    session.go_live()
    assert session.position == len(session.run.events) - 1


def test_restart_abandons_the_recorded_run_and_starts_afresh(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    session = session_of(USER_PROFILE, store)
    drive(session, single=True)
    first_id = session.run_id
    assert first_id is not None
    session.restart()
    assert session.run_id is None and session.delivered == 0 and not session.run.events
    (row,) = store.runs()
    assert (row["id"], row["status"]) == (first_id, "abandoned")
    drive(session, single=False)
    statuses = {row["id"]: row["status"] for row in store.runs()}
    assert statuses == {first_id: "abandoned", session.run_id: "succeeded"}


def test_a_new_payload_replans() -> None:
    session = session_of(USER_PROFILE)
    before = session.run.plan.task_ids
    session.set_payload({"user_id": "u002"})
    assert session.payload_digest != "" and session.run.plan.task_ids != before
    with pytest.raises(ValueError):
        session.set_payload({"bad": {1, 2}})


def test_an_export_reopens_as_a_replay_with_the_same_digest(tmp_path: Path) -> None:
    live = session_of(FLAKY)
    drive(live, single=False)
    path = tmp_path / live.default_export_name()
    live.export_record().write(path)
    replay = open_session(str(path))
    assert replay.replay and replay.run_id is None
    stop, _ = drive(replay, single=False)
    assert stop.reason is StopReason.FINISHED
    assert replay.run.digest == live.run.digest == RunRecord.read(path).digests["run"]


def test_opening_a_broken_file_raises_open_error_with_lines(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\ntasks:\n  a: {run: builtin:echo, depends_on: [nope]}\n")
    with pytest.raises(OpenError) as caught:
        open_session(str(broken))
    assert caught.value.lines and "nope" in caught.value.lines[0]


FLOW_YAML = '{name: flow, tasks: {a: {run: "builtin:echo", with: {x: 1}}}}\n'
FLOW_JSON = '{"name": "flow", "tasks": {"a": {"run": "builtin:echo"}}}\n'


@pytest.mark.parametrize(
    ("name", "text"),
    [("flow.yaml", FLOW_YAML), ("flow.yml", FLOW_YAML), ("flow.json", FLOW_JSON)],
)
def test_a_flow_style_workflow_opens_as_a_workflow_whatever_its_name(
    tmp_path: Path, name: str, text: str
) -> None:
    file = tmp_path / name
    file.write_text(text)
    session = open_session(str(file))
    assert not session.replay and session.workflow.name == "flow"
    drive(session, single=False)
    assert session.run.status.value == "succeeded"


def test_an_export_opens_as_an_export_whatever_its_name(tmp_path: Path) -> None:
    live = session_of(USER_PROFILE)
    drive(live, single=False)
    renamed = tmp_path / "bug-report.txt"
    live.export_record().write(renamed)
    assert open_session(str(renamed)).replay


def test_a_truncated_export_is_one_clear_line(tmp_path: Path) -> None:
    file = tmp_path / "broken.json"
    file.write_text('{"format": "harness-run", "format_version": "1.0", "trace": [')
    with pytest.raises(OpenError) as caught:
        open_session(str(file))
    (line,) = caught.value.lines
    assert "not JSON" in line and "truncated" in line
