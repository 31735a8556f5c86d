"""The run controller without an app: intents one at a time, the drive and its typed updates,
hold and release, pause and stop, leaving. A plain queue stands in for the screen."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.driver import StopReason
from harness_tui.engine.events import RunStatus, Status, TraceEvent
from harness_tui.records.runs.settings import RunSettings
from harness_tui.tui.controller import (
    Crashed,
    DriveStarted,
    EventsRecorded,
    Finished,
    Go,
    Held,
    Paused,
    RunController,
    RunUpdate,
    Ticked,
)
from harness_tui.tui.session import Session, open_session

ROOT = Path(__file__).resolve().parents[2]
USER_PROFILE = str(ROOT / "workflows/user_profile.yaml")
FLAKY = str(ROOT / "tests/tui/data/flaky_pipeline.yaml")
LONG = str(ROOT / "tests/tui/data/one_long_task.yaml")


class GatedClock(FakeClock):
    """Sleeps (a task's) wait for the gate: a drive is caught mid-attempt."""

    def __init__(self) -> None:
        super().__init__(start=100.0)
        self.gate = threading.Event()

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> None:
        self.gate.wait(5)
        super().sleep(seconds, cancel)


class Owner:
    """What the screen does with a controller, headless: receives its updates in order."""

    def __init__(self, session: Session | None) -> None:
        self.updates: queue.Queue[RunUpdate] = queue.Queue()
        self.controller = RunController(session, self.updates.put)
        self.seen: list[RunUpdate] = []

    def until_drive_ends(
        self, on_held: Callable[[RunController, Held], object] | None = None
    ) -> RunUpdate:
        """Take updates (showing their events) until one ends the drive; that one."""
        controller = self.controller
        while True:
            update = self.updates.get(timeout=10)
            self.seen.append(update)
            if controller.session is not None:
                controller.session.deliver(update.recorded)
            if isinstance(update, Held) and on_held is not None:
                on_held(controller, update)
            if controller.ends_drive(update):
                controller.drive_ended(update)
                controller.done()
                return update

    def kinds(self) -> list[str]:
        """The updates seen, but ticks (they come as time passes)."""
        return [type(u).__name__ for u in self.seen if not isinstance(u, Ticked)]


def owner_of(path: str, clock: FakeClock | None = None) -> Owner:
    return Owner(open_session(path, settings=RunSettings(clock=clock or FakeClock(tick=0.25))))


def shown(owner: Owner) -> list[TraceEvent]:
    session = owner.controller.session
    assert session is not None
    return list(session.run.events[: session.delivered])


def test_a_step_publishes_its_start_events_and_pause_as_typed_updates() -> None:
    owner = owner_of(USER_PROFILE)
    assert owner.controller.step() is Go.STARTED
    assert owner.controller.driving
    end = owner.until_drive_ends()
    assert end == Paused(2, StopReason.STEP, None)
    assert owner.kinds() == ["DriveStarted", "EventsRecorded", "Paused"]
    assert isinstance(owner.seen[0], DriveStarted) and owner.seen[0].single
    first = owner.controller.session.run.plan.names[0]  # type: ignore[union-attr]
    assert [(e.task, e.status) for e in shown(owner)] == [
        (first, Status.RUNNING),
        (first, Status.SUCCEEDED),
    ]
    assert not owner.controller.driving and not owner.controller.busy


def test_a_continue_ends_finished_with_the_run_status_as_an_enum() -> None:
    owner = owner_of(USER_PROFILE)
    assert owner.controller.continue_() is Go.STARTED
    end = owner.until_drive_ends()
    assert isinstance(end, Finished) and end.status is RunStatus.SUCCEEDED
    assert end.recorded == 8 and len(shown(owner)) == 8
    assert owner.controller.step() is Go.NOTHING  # finished: nothing to drive


def test_breakpoints_pause_a_continue_before_the_task() -> None:
    owner = owner_of(USER_PROFILE)
    session = owner.controller.session
    assert session is not None
    target = session.run.plan.names[2]
    session.toggle_breakpoint(target)
    owner.controller.continue_()
    assert owner.until_drive_ends() == Paused(4, StopReason.BREAKPOINT, target)


def test_steps_queue_behind_the_drive_and_run_one_at_a_time() -> None:
    clock = GatedClock()
    owner = owner_of(LONG, clock)
    controller = owner.controller
    try:
        assert controller.step() is Go.STARTED  # prepare
        owner.until_drive_ends()
        assert controller.step() is Go.STARTED  # crunch: held by the gate
        assert controller.step() is Go.QUEUED
        restarted: list[bool] = []

        def restart() -> bool:
            restarted.append(True)
            return False

        assert controller.submit("restart", restart)
        assert controller.pending() == 2 and controller.pending("step") == 1
        clock.gate.set()
        owner.until_drive_ends()  # crunch's step ends: the queued step starts at once
        assert controller.driving and controller.pending() == 1 and not restarted
        owner.until_drive_ends()  # publish's step ends: then the restart ran
        assert restarted == [True] and not controller.busy
        assert controller.session is not None and controller.session.run.finished
    finally:
        clock.gate.set()


def test_pause_drops_queued_steps_and_stops_after_the_task_in_progress() -> None:
    clock = GatedClock()
    owner = owner_of(LONG, clock)
    controller = owner.controller
    try:
        controller.continue_()
        session = controller.session
        assert session is not None
        for _ in range(500):  # the ticks show crunch running before its step retires
            update = owner.updates.get(timeout=10)
            owner.seen.append(update)
            session.deliver(update.recorded)
            running = session.running_attempt()
            if running is not None and running.task == "crunch":
                break
        assert controller.step() is Go.QUEUED and controller.continue_() is Go.QUEUED
        dropped, running = controller.pause()
        assert dropped == 2 and running is not None and running.task == "crunch"
        clock.gate.set()
        assert owner.until_drive_ends() == Paused(4, StopReason.PAUSED, None)
        assert controller.pending() == 0 and session.run.next_step is not None
        assert "Ticked" in [type(u).__name__ for u in owner.seen]
    finally:
        clock.gate.set()


def test_stop_cancels_the_attempt_and_the_rest() -> None:
    clock = GatedClock()
    owner = owner_of(LONG, clock)
    controller = owner.controller
    try:
        controller.continue_()
        session = controller.session
        assert session is not None
        for _ in range(500):
            if session.live.run.events and session.run.events[-1].task == "crunch":
                break
            threading.Event().wait(0.01)
        controller.stop()
        end = owner.until_drive_ends()
        assert isinstance(end, Finished) and end.status is RunStatus.CANCELLED
        assert session.run.task_status("publish") is Status.CANCELLED
    finally:
        clock.gate.set()


def test_break_on_failure_holds_at_each_failed_attempt_until_released() -> None:
    owner = owner_of(FLAKY)
    session = owner.controller.session
    assert session is not None
    session.break_on_failure = True
    held: list[tuple[str, int]] = []

    def release(controller: RunController, update: Held) -> None:
        # Held before the retry: the failed attempt is the trace's last event.
        assert session.run.events[update.recorded - 1] == update.event == controller.held
        held.append((update.event.task, update.event.attempt))
        assert controller.step() is Go.RELEASED  # finish this task

    owner.controller.continue_()
    end = owner.until_drive_ends(release)
    assert held == [("transform", 1), ("transform", 2), ("transform", 3)]
    assert isinstance(end, Paused) and end.reason is StopReason.STEP
    assert session.run.task_status("transform") is Status.FAILED
    session.break_on_failure = False
    owner.controller.continue_()
    end = owner.until_drive_ends()
    assert isinstance(end, Finished) and end.status is RunStatus.FAILED


def test_a_stale_update_never_shows_more_than_the_run_holds() -> None:
    owner = owner_of(USER_PROFILE)
    session = owner.controller.session
    assert session is not None
    owner.controller.continue_()
    owner.until_drive_ends()
    session.restart()  # an update of the run left behind may still arrive
    assert session.deliver(EventsRecorded(8).recorded) == set() and session.delivered == 0


def test_leaving_during_a_long_task_stops_it_within_the_wait() -> None:
    clock = GatedClock()
    owner = owner_of(LONG, clock)
    controller = owner.controller
    try:
        controller.continue_()
        session = controller.session
        assert session is not None
        for _ in range(500):
            if session.run.events and session.run.events[-1].task == "crunch":
                break
            threading.Event().wait(0.01)
        controller.leave(wait=0.2)
        assert session.run.finished and session.run.status is RunStatus.CANCELLED
    finally:
        clock.gate.set()


def test_the_controller_imports_no_textual() -> None:
    code = (
        "import sys; import harness_tui.tui.controller, harness_tui.tui.session; "
        "sys.exit(1 if any(m == 'textual' or m.startswith('textual.') for m in sys.modules) "
        "else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr or "textual was imported"


def test_a_drive_that_raises_ends_crashed_and_the_next_intent_still_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    owner = owner_of(USER_PROFILE)
    session = owner.controller.session
    assert session is not None

    def broken(*, single: bool = False) -> None:
        raise RuntimeError("a defect of ours")

    monkeypatch.setattr(session.live, "drive", broken)
    owner.controller.step()
    ran: list[str] = []

    def export() -> bool:
        ran.append("export")
        return False

    assert owner.controller.submit("export", export)
    end = owner.until_drive_ends()
    assert isinstance(end, Crashed) and str(end.error) == "a defect of ours"
    assert ran == ["export"] and not owner.controller.driving and not owner.controller.busy
