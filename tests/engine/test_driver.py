"""The one run driver: holds (breakpoints), hooks, batches, pause and cancel from other threads."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.driver import Driver, Stop, StopReason
from harness_tui.engine.events import RunStatus, Status, TraceEvent
from harness_tui.engine.graph import TaskGraph, TaskNode, Trigger
from harness_tui.engine.orchestrator import Run, TaskOrchestrator
from harness_tui.executors.threads import ThreadExecutor

from .test_orchestrator import PAYLOAD, boom, const, flaky

Inputs = Mapping[str, Any]


def chain(*nodes: TaskNode, on_failure: str = "stop") -> Run:
    return TaskOrchestrator(
        TaskGraph.from_nodes(nodes), clock=FakeClock(), on_failure=on_failure
    ).start(PAYLOAD)


def abcd(c: Any = None, on_failure: str = "continue") -> Run:
    return chain(
        TaskNode("a", const(1)),
        TaskNode("b", const(2), depends_on=("a",)),
        TaskNode("c", c or const(3), depends_on=("b",)),
        TaskNode("d", const(4), depends_on=("c",), trigger=Trigger.ALL_DONE),
        on_failure=on_failure,
    )


def test_a_breakpoint_holds_dispatch_but_the_step_you_are_on_runs() -> None:
    run = abcd()
    driver = Driver(run, breakpoints={"b"})
    assert driver.continue_() == Stop(StopReason.BREAKPOINT, "b")
    assert [e.task for e in run.events] == ["a", "a"]
    # Continuing from the breakpoint runs b (you are on it) and goes on to the end.
    assert driver.continue_() == Stop(StopReason.FINISHED)
    assert run.finished and run.results == {"a": 1, "b": 2, "c": 3, "d": 4}


def test_breakpoints_changed_between_drives_are_seen() -> None:
    run = abcd()
    breakpoints: set[str] = set()
    driver = Driver(run, breakpoints=breakpoints)
    driver.step()
    breakpoints.add("d")
    assert driver.continue_() == Stop(StopReason.BREAKPOINT, "d")
    assert run.next_step is not None and run.next_step.task == "d"


def test_step_retires_exactly_one_task_even_when_it_is_held() -> None:
    run = abcd()
    driver = Driver(run, breakpoints={"a", "b"})
    assert driver.step() == Stop(StopReason.STEP)
    assert driver.step() == Stop(StopReason.STEP)
    assert run.cursor == 2
    driver.step()
    assert driver.step() == Stop(StopReason.FINISHED)
    assert run.status is RunStatus.SUCCEEDED


def test_break_on_failure_pauses_after_the_failed_step_retires() -> None:
    run = abcd(c=boom)
    driver = Driver(run, break_on_failure=True)
    assert driver.continue_() == Stop(StopReason.FAILURE, "c")
    assert run.next_step is not None and run.next_step.task == "d"
    driver.break_on_failure = False
    assert driver.continue_() == Stop(StopReason.FINISHED)
    assert run.results == {"a": 1, "b": 2, "d": 4}


def test_after_attempt_sees_each_attempt_as_it_happens() -> None:
    run = chain(TaskNode("a", flaky(2), max_retries=3), TaskNode("b", const(1), depends_on=("a",)))
    seen: list[tuple[str, int, str]] = []

    def hook(event: TraceEvent) -> bool:
        seen.append((event.task, event.attempt, event.status.value))
        return event.status is Status.FAILED and event.attempt == 2

    driver = Driver(run, after_attempt=hook)
    # The hook asked to pause on attempt 2; the step still retires (attempt 3 succeeds).
    assert driver.continue_() == Stop(StopReason.FAILURE, "a")
    assert seen == [("a", 1, "failed"), ("a", 2, "failed"), ("a", 3, "succeeded")]
    assert run.task_status("a") is Status.SUCCEEDED and run.cursor == 1


def test_a_retry_that_succeeds_does_not_break_without_break_on_failure() -> None:
    run = chain(TaskNode("a", flaky(1), max_retries=1), TaskNode("b", const(1), depends_on=("a",)))
    assert Driver(run).continue_() == Stop(StopReason.FINISHED)
    assert run.status is RunStatus.SUCCEEDED


def test_after_step_can_end_the_drive() -> None:
    run = abcd()
    retired: list[list[str]] = []

    def after_step(events: Sequence[TraceEvent]) -> bool:
        retired.append([e.status.value for e in events])
        return len(retired) == 2

    assert Driver(run, after_step=after_step).continue_() == Stop(StopReason.PAUSED)
    assert retired == [["running", "succeeded"], ["running", "succeeded"]]
    assert run.cursor == 2


def test_events_arrive_in_batches_and_all_of_them_arrive() -> None:
    run = chain(*[TaskNode(f"t{i}", const(i)) for i in range(30)])
    ticks = iter(range(1000))
    batches: list[list[TraceEvent]] = []
    # A fake monotonic clock that moves 1 s per reading, batches every 5 s.
    driver = Driver(run, on_events=batches.append, batch_seconds=5, now=lambda: next(ticks))
    driver.continue_()
    assert 1 < len(batches) < 30
    delivered = [e.seq for batch in batches for e in batch]
    assert delivered == list(range(len(run.events)))


def test_one_batch_per_step_without_coalescing() -> None:
    run = abcd()
    batches: list[list[TraceEvent]] = []
    Driver(run, on_events=batches.append).continue_()
    assert [len(b) for b in batches] == [2, 2, 2, 2]


def _blocking_task(started: threading.Event, release: threading.Event) -> Any:
    def fn(inputs: Inputs) -> str:
        started.set()
        release.wait(5)
        return "done"

    return fn


def test_pause_from_another_thread_returns_after_the_current_step() -> None:
    started, release = threading.Event(), threading.Event()
    run = chain(
        TaskNode("a", _blocking_task(started, release)),
        TaskNode("b", const(2), depends_on=("a",)),
    )
    driver = Driver(run)
    result: list[Stop] = []
    worker = threading.Thread(target=lambda: result.append(driver.continue_()))
    worker.start()
    assert started.wait(5)
    assert driver.busy
    driver.pause()
    release.set()
    worker.join(5)
    assert result == [Stop(StopReason.PAUSED)]
    assert run.cursor == 1 and run.task_status("a") is Status.SUCCEEDED
    assert not driver.busy


def test_cancel_from_another_thread_cancels_the_attempt_and_the_rest() -> None:
    started, release = threading.Event(), threading.Event()
    run = TaskOrchestrator(
        TaskGraph.from_nodes(
            [
                TaskNode("a", _blocking_task(started, release)),
                TaskNode("b", const(2), depends_on=("a",)),
            ]
        ),
        executor=ThreadExecutor(isolate=True),
    ).start(PAYLOAD)
    driver = Driver(run)
    result: list[Stop] = []
    worker = threading.Thread(target=lambda: result.append(driver.continue_()))
    worker.start()
    assert started.wait(5)
    driver.cancel()
    worker.join(5)
    release.set()
    assert result == [Stop(StopReason.FINISHED)]
    assert run.status is RunStatus.CANCELLED
    assert [e.status for e in run.final_events()] == [Status.CANCELLED, Status.CANCELLED]


def test_a_second_drive_of_the_same_run_at_once_is_refused() -> None:
    started, release = threading.Event(), threading.Event()
    run = chain(TaskNode("a", _blocking_task(started, release)))
    driver = Driver(run)
    worker = threading.Thread(target=driver.continue_)
    worker.start()
    assert started.wait(5)
    with pytest.raises(RuntimeError, match="already being driven"):
        driver.step()
    release.set()
    worker.join(5)
    assert run.status is RunStatus.SUCCEEDED


def test_run_to_end_is_the_driver_without_holds() -> None:
    run = abcd(c=boom, on_failure="stop")
    assert run.run_to_end() is run
    # d is an all_done cleanup: it runs after the stop.
    assert [e.status.value for e in run.final_events()] == [
        "succeeded",
        "succeeded",
        "failed",
        "succeeded",
    ]
    assert run.status is RunStatus.FAILED


def _held_drive(driver: Driver, single: bool = False) -> tuple[threading.Thread, list[Stop]]:
    result: list[Stop] = []
    thread = threading.Thread(
        target=lambda: result.append(driver.step() if single else driver.continue_())
    )
    thread.start()
    return thread, result


def _wait_held(driver: Driver, attempt: int = 1) -> TraceEvent:
    for _ in range(500):
        held = driver.held
        if held is not None and held.attempt == attempt:
            return held
        threading.Event().wait(0.01)
    raise AssertionError(f"the run was never held at attempt {attempt}")


def test_break_on_failure_holds_at_the_failed_attempt_before_its_retry() -> None:
    run = chain(
        TaskNode("a", flaky(2), max_retries=3),
        TaskNode("b", const(1), depends_on=("a",)),
    )
    held: list[tuple[str, int]] = []
    driver = Driver(
        run,
        break_on_failure=True,
        hold_attempts=True,
        on_hold=lambda e: held.append((e.task, e.attempt)),
    )
    thread, result = _held_drive(driver)
    first = _wait_held(driver)
    # Held at attempt 1: its failure is in the trace, attempt 2 has not started.
    assert (first.task, first.attempt, first.status) == ("a", 1, Status.FAILED)
    assert [(e.attempt, e.status.value) for e in run.events] == [(1, "running"), (1, "failed")]
    assert driver.release()
    assert _wait_held(driver, attempt=2).status is Status.FAILED
    driver.release()
    thread.join(5)
    # After the holds the drive went on as a continue: a succeeded on attempt 3, b ran.
    assert result == [Stop(StopReason.FINISHED)]
    assert held == [("a", 1), ("a", 2)] and run.status is RunStatus.SUCCEEDED
    assert not driver.release()  # nothing held any more


def test_a_step_released_from_a_hold_ends_with_its_task() -> None:
    run = chain(
        TaskNode("a", flaky(1), max_retries=1),
        TaskNode("b", const(1), depends_on=("a",)),
    )
    driver = Driver(run, break_on_failure=True, hold_attempts=True)
    thread, result = _held_drive(driver)
    _wait_held(driver)
    driver.release(single=True)
    thread.join(5)
    assert result == [Stop(StopReason.STEP)] and run.cursor == 1
    assert run.task_status("a") is Status.SUCCEEDED


def test_cancel_releases_a_held_run_and_cancels_the_rest() -> None:
    run = chain(TaskNode("a", boom, max_retries=2), TaskNode("b", const(1), depends_on=("a",)))
    driver = Driver(run, break_on_failure=True, hold_attempts=True)
    thread, result = _held_drive(driver)
    _wait_held(driver)
    driver.cancel()
    thread.join(5)
    assert result == [Stop(StopReason.FINISHED)] and run.status is RunStatus.CANCELLED
    statuses = [(e.task, e.attempt, e.status.value) for e in run.events]
    assert statuses[-2:] == [("a", 2, "cancelled"), ("b", 0, "cancelled")]
