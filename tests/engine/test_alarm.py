"""Timeouts on the main thread: one SIGALRM timer for the run, no signal bookkeeping per
attempt, and the same behaviour for hangs as a timer armed per attempt."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from harness_tui.engine.clock import SystemClock
from harness_tui.engine.graph import TaskGraph, TaskNode, Trigger
from harness_tui.engine.orchestrator import TaskOrchestrator

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no interval timers")


def _quick(inputs: Mapping[str, Any]) -> int:
    return 1


def _sleep(inputs: Mapping[str, Any]) -> str:
    time.sleep(inputs["params"]["seconds"])
    return "woke"


def _swallow(inputs: Mapping[str, Any]) -> str:
    try:
        time.sleep(5)
    except BaseException:
        time.sleep(5)  # the timeout is swallowed once; the repeated alarm ends this too
    return "late"


def _chain(*nodes: TaskNode) -> TaskGraph:
    linked = [nodes[0]] + [
        TaskNode(n.name, n.fn, (nodes[i].name,), timeout_seconds=n.timeout_seconds,
                 params=n.params, trigger=Trigger.ALL_DONE)
        for i, n in enumerate(nodes[1:])
    ]  # fmt: skip
    return TaskGraph.from_nodes(linked)


def test_a_run_of_timed_tasks_makes_no_signal_calls_per_attempt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert threading.current_thread() is threading.main_thread()
    calls = {"setitimer": 0, "getsignal": 0, "signal": 0}
    for name in calls:
        real = getattr(signal, name)

        def counted(*args: Any, _real: Any = real, _name: str = name) -> Any:
            calls[_name] += 1
            return _real(*args)

        monkeypatch.setattr(signal, name, counted)
    graph = _chain(*(TaskNode(f"t{i:04d}", _quick, timeout_seconds=30.0) for i in range(500)))
    run = TaskOrchestrator(graph, clock=SystemClock()).start({}).run_to_end()
    assert run.status == "succeeded"
    assert calls["getsignal"] <= 1 and calls["signal"] <= 1  # once per run
    # Armed once and disarmed at the end (plus, at the start, a timer some earlier run left
    # armed lapses): not 2 per attempt.
    assert calls["setitimer"] <= 3
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # no stray alarm after it


def test_each_attempt_gets_its_own_deadline_from_a_timer_set_for_another() -> None:
    """The timer armed for a long timeout still stops a later short one at its limit, and
    one armed for an attempt that ended stops the next only at that next one's limit."""
    graph = _chain(
        TaskNode("long", _quick, timeout_seconds=30.0),
        TaskNode("short", _sleep, timeout_seconds=0.2, params={"seconds": 10}),
        TaskNode("early", _sleep, timeout_seconds=0.4, params={"seconds": 0.2}),
        TaskNode("late", _sleep, timeout_seconds=0.4, params={"seconds": 10}),
    )
    started = time.monotonic()
    run = TaskOrchestrator(graph, clock=SystemClock(), on_failure="continue").start({})
    assert run.plan.names == ("long", "short", "early", "late")
    run.step()
    run.step()
    assert run.task_status("short") == "timed_out"
    assert time.monotonic() - started < 5  # not the 30 s the timer was first armed for
    run.step()
    assert run.task_status("early") == "succeeded"
    began = time.monotonic()
    run.step()  # the timer armed for "early" fires 0.2 s into "late": it must go on
    assert run.task_status("late") == "timed_out"
    assert time.monotonic() - began >= 0.39


def test_a_task_that_swallows_the_timeout_is_interrupted_again() -> None:
    graph = TaskGraph.from_nodes([TaskNode("t", _swallow, timeout_seconds=0.2)])
    started = time.monotonic()
    run = TaskOrchestrator(graph, clock=SystemClock()).start({}).run_to_end()
    assert run.task_status("t") == "timed_out"
    assert time.monotonic() - started < 3
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
