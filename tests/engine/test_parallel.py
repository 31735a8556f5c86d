"""Parallel execution keeps the serial trace: dispatch out of order, retire in plan order
(docs/parallel.md)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_tui.engine.driver import Driver
from harness_tui.engine.events import Status
from harness_tui.engine.graph import TaskGraph, TaskNode, Trigger
from harness_tui.engine.orchestrator import OnFailure, TaskOrchestrator

TIMEOUT = 0.05
"""The limit of a task that hangs. Only such tasks have a timeout, and every attempt of theirs
sleeps five times as long, so whether an attempt times out never depends on how busy the
machine is: a task that must finish has no timer to race (a 20 ms attempt under a 0.2 s limit
timed out on a loaded machine, and the runs then differed for a reason the property is not
about)."""


def behaviour(inputs: Mapping[str, Any]) -> Any:
    """A pure function of (params, attempt): how long it takes, whether it fails."""
    params, attempt = inputs["params"], inputs["task"]["attempt"]
    if params["hangs"]:
        time.sleep(5 * TIMEOUT)  # every attempt: always timed out
        return None
    time.sleep(params["ms"] / 1000)
    if attempt <= params["failures"]:
        raise ValueError(f"{inputs['task']['name']} failed at attempt {attempt}")
    return {"seen": sorted(inputs["context"]["results"]), "ms": params["ms"]}


async def async_behaviour(inputs: Mapping[str, Any]) -> Any:
    """:func:`behaviour` as a coroutine (the same outcomes, awaited)."""
    params, attempt = inputs["params"], inputs["task"]["attempt"]
    if params["hangs"]:
        await asyncio.sleep(5 * TIMEOUT)
        return None
    await asyncio.sleep(params["ms"] / 1000)
    if attempt <= params["failures"]:
        raise ValueError(f"{inputs['task']['name']} failed at attempt {attempt}")
    return {"seen": sorted(inputs["context"]["results"]), "ms": params["ms"]}


def rescue(inputs: Mapping[str, Any]) -> Any:
    return {"fallback": inputs["task"]["name"]}


@st.composite
def graphs(draw: st.DrawFn) -> tuple[TaskGraph, OnFailure]:
    count = draw(st.integers(2, 8))
    nodes = []
    for i in range(count):
        deps = draw(st.sets(st.integers(0, i - 1), max_size=min(i, 3))) if i else set()
        params = {
            "ms": draw(st.integers(0, 20)),
            "hangs": draw(st.sampled_from([False, False, False, False, True])),
            "failures": draw(st.sampled_from([0, 0, 1, 2])),
        }
        nodes.append(
            TaskNode(
                f"t{i}",
                behaviour,
                depends_on=tuple(f"t{d}" for d in sorted(deps)),
                max_retries=draw(st.integers(0, 2)),
                timeout_seconds=TIMEOUT if params["hangs"] else None,
                fallback=rescue if draw(st.booleans()) else None,
                when=(lambda s: True) if draw(st.integers(0, 4)) else (lambda s: False),
                trigger=draw(st.sampled_from(list(Trigger))),
                params=params,
            )
        )
    return TaskGraph.from_nodes(nodes), draw(st.sampled_from(list(OnFailure)))


def check_serial_trace_and_digest(case: tuple[TaskGraph, OnFailure]) -> None:
    """Serial, 2 and 8 workers, and the same tasks as coroutines: one trace, one digest."""
    graph, on_failure = case
    coroutines = TaskGraph.from_nodes(
        dataclasses.replace(node, fn=async_behaviour) for node in graph.nodes.values()
    )
    runs = [
        TaskOrchestrator(tasks, on_failure=on_failure, workers=workers).start({}).run_to_end()
        for tasks, workers in ((graph, 1), (graph, 2), (graph, 8), (coroutines, 1),
                               (coroutines, 8))
    ]  # fmt: skip
    serial = runs[0]
    for run in runs[1:]:
        assert run.canonical_trace() == serial.canonical_trace()
        assert run.digests() == serial.digests()
        assert run.status is serial.status


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_any_worker_count_and_async_tasks_give_the_serial_trace_and_digest(
    case: tuple[TaskGraph, OnFailure],
) -> None:
    check_serial_trace_and_digest(case)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_many_random_dags_give_the_serial_trace_and_digest(
    case: tuple[TaskGraph, OnFailure],
) -> None:
    check_serial_trace_and_digest(case)


def test_workers_run_tasks_at_once_and_retire_them_in_plan_order() -> None:
    started = threading.Barrier(4, timeout=5)

    def meet(inputs: Mapping[str, Any]) -> int:
        started.wait()  # only returns when four tasks are running at the same time
        return 1

    graph = TaskGraph.from_nodes([TaskNode(f"t{i}", meet) for i in range(4)])
    run = TaskOrchestrator(graph, workers=4).start({}).run_to_end()
    assert run.status.value == "succeeded"
    assert [e.seq for e in run.events] == list(range(8))
    assert [e.task for e in run.events if e.status is Status.SUCCEEDED] == list(run.plan.names)


def test_a_breakpoint_holds_dispatch_at_its_plan_index() -> None:
    ran: list[str] = []

    def note(inputs: Mapping[str, Any]) -> str:
        ran.append(inputs["task"]["name"])
        return "ok"

    graph = TaskGraph.from_nodes([TaskNode(f"t{i}", note) for i in range(6)])
    run = TaskOrchestrator(graph, workers=4).start({})
    held = run.plan.names[3]
    stop = Driver(run, breakpoints={held}).continue_()
    assert stop.task == held and run.cursor == 3
    time.sleep(0.05)  # nothing at or after the breakpoint started meanwhile
    assert sorted(ran) == sorted(run.plan.names[:3])
    Driver(run, breakpoints={held}).continue_()
    assert run.finished and sorted(ran) == sorted(run.plan.names)


def test_a_stop_mode_failure_abandons_later_work_as_serial_records_it() -> None:
    release = threading.Event()

    def slow(inputs: Mapping[str, Any]) -> int:
        release.wait(5)
        return 1

    def boom(inputs: Mapping[str, Any]) -> int:
        raise RuntimeError("boom")

    cleanup = TaskNode("cleanup", lambda i: "clean", depends_on=("a",), trigger=Trigger.ALL_DONE)
    nodes = [TaskNode("a", boom), TaskNode("b", slow), TaskNode("c", slow), cleanup]
    graph = TaskGraph.from_nodes(nodes)
    serial = TaskOrchestrator(graph).start({})
    release.set()
    serial.run_to_end()
    release.clear()
    parallel = TaskOrchestrator(graph, workers=4).start({})
    threading.Timer(0.3, release.set).start()
    parallel.run_to_end()
    assert parallel.canonical_trace() == serial.canonical_trace()
    assert parallel.task_status("cleanup") is Status.SUCCEEDED


def test_a_stop_reaches_the_task_being_waited_for_even_without_a_timeout() -> None:
    forever = threading.Event()

    def hang(inputs: Mapping[str, Any]) -> int:
        forever.wait()
        return 1

    nodes = [TaskNode("h", hang, timeout_seconds=None), TaskNode("g", hang, timeout_seconds=60),
             TaskNode("cleanup", lambda i: "clean", depends_on=("h", "g"),
                      trigger=Trigger.ALL_DONE)]  # fmt: skip
    run = TaskOrchestrator(TaskGraph.from_nodes(nodes), workers=4).start({})
    threading.Timer(0.3, run.cancel).start()
    started = time.monotonic()
    run.run_to_end()
    forever.set()
    assert time.monotonic() - started < 5
    assert run.status.value == "cancelled"
    assert run.task_status("h") is Status.CANCELLED and run.task_status("g") is Status.CANCELLED
    assert run.task_status("cleanup") is Status.SUCCEEDED  # the first stop keeps cleanups
