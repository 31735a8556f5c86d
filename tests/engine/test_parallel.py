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


def _node(name: str, deps: list[str], ms: int, draw: st.DrawFn) -> TaskNode:
    failures = draw(st.sampled_from([0, 0, 0, 1, 3]))
    params = {"ms": ms, "hangs": False, "failures": failures}
    return TaskNode(name, behaviour, depends_on=tuple(deps), max_retries=draw(st.integers(0, 1)),
                    timeout_seconds=None, fallback=rescue if failures > 2 and draw(st.booleans())
                    else None, params=params)  # fmt: skip


@st.composite
def deep_graphs(draw: st.DrawFn) -> tuple[TaskGraph, OnFailure]:
    """Independent chains, or layers of one slow task and many fast ones, with skewed
    durations (most tasks 0-3 ms, some 40 ms), failures, retries and an ``all_done`` cleanup:
    the shapes where work completes far ahead of its retirement."""
    skewed = st.sampled_from([0, 1, 2, 3, 3, 40])
    nodes: list[TaskNode] = []
    if draw(st.booleans()):
        for c in range(draw(st.integers(2, 5))):
            for i in range(draw(st.integers(2, 6))):
                deps = [f"c{c}_{i - 1}"] if i else []
                nodes.append(_node(f"c{c}_{i}", deps, draw(skewed), draw))
    else:
        previous: list[str] = []
        for layer in range(draw(st.integers(2, 4))):
            nodes.append(_node(f"l{layer}_slow", previous, 40, draw))
            fast = [f"l{layer}_f{i}" for i in range(draw(st.integers(2, 6)))]
            nodes.extend(_node(name, previous, draw(skewed), draw) for name in fast)
            previous = fast
    names = [node.name for node in nodes]
    if draw(st.booleans()):
        deps = tuple(sorted(draw(st.sets(st.sampled_from(names), min_size=1, max_size=3))))
        nodes.append(TaskNode("cleanup", behaviour, depends_on=deps, trigger=Trigger.ALL_DONE,
                              timeout_seconds=None,
                              params={"ms": 0, "hangs": False, "failures": 0}))  # fmt: skip
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


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deep_graphs())
def test_deep_dags_with_skewed_durations_give_the_serial_trace_and_digest(
    case: tuple[TaskGraph, OnFailure],
) -> None:
    check_serial_trace_and_digest(case)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deep_graphs())
def test_many_deep_dags_give_the_serial_trace_and_digest(
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


class InOrder:
    """A scheduler whose plan is the graph's declaration order (a topological one here)."""

    def __init__(self, graph: TaskGraph) -> None:
        self.names = list(graph.nodes)

    def build_plan(self, payload: Any) -> list[str]:
        return self.names


def _chain_behind_a_held_task() -> tuple[TaskGraph, list[bool], threading.Event]:
    """``held`` (first in the plan) waits until the chain b0 -> b1 -> b2, planned after it,
    has completed: possible only if each b starts once its dependency *completed* (not
    retired: nothing retires while ``held`` runs) and a finished b frees its worker."""
    chain_done = threading.Event()
    seen: list[bool] = []

    def held(inputs: Mapping[str, Any]) -> int:
        seen.append(chain_done.wait(10))
        return 1

    def link(inputs: Mapping[str, Any]) -> int:
        if inputs["task"]["name"] == "b2":
            chain_done.set()
        return 1

    nodes = [TaskNode("a_held", held, timeout_seconds=None)]
    nodes += [TaskNode(f"b{i}", link, depends_on=(f"b{i - 1}",) if i else (),
                       timeout_seconds=None) for i in range(3)]  # fmt: skip
    return TaskGraph.from_nodes(nodes), seen, chain_done


def test_a_task_starts_once_its_dependencies_completed_and_a_done_job_frees_its_worker() -> None:
    graph, seen, _ = _chain_behind_a_held_task()
    run = TaskOrchestrator(graph, InOrder(graph), workers=2).start({}).run_to_end()
    assert seen == [True]
    assert run.status.value == "succeeded"
    assert [e.task for e in run.events if e.status is Status.SUCCEEDED] == list(run.plan.names)


def test_completed_jobs_wait_in_a_bounded_buffer_then_dispatch_waits() -> None:
    bound = 64  # max(64, 8 x 2 workers)
    filled, release = threading.Event(), threading.Event()
    finished: list[str] = []

    def held(inputs: Mapping[str, Any]) -> int:
        release.wait(10)
        return 1

    def quick(inputs: Mapping[str, Any]) -> int:
        finished.append(inputs["task"]["name"])
        if len(finished) == bound:
            filled.set()
        return 1

    nodes = [TaskNode("a_held", held, timeout_seconds=None)]
    nodes += [TaskNode(f"q{i:03d}", quick, timeout_seconds=None) for i in range(bound + 20)]
    graph = TaskGraph.from_nodes(nodes)
    run = TaskOrchestrator(graph, InOrder(graph), workers=2).start({})
    driving = threading.Thread(target=run.run_to_end)
    driving.start()
    assert filled.wait(10), "the buffer never filled"
    time.sleep(0.1)  # nothing more starts while the buffer is full (a check of absence)
    assert len(finished) == bound
    release.set()
    driving.join(10)
    assert run.status.value == "succeeded" and len(finished) == bound + 20


def test_nothing_new_starts_after_a_drive_returned() -> None:
    started: list[str] = []
    gate, five = threading.Event(), threading.Event()

    def work(inputs: Mapping[str, Any]) -> int:
        started.append(inputs["task"]["name"])
        if len(started) == 5:
            five.set()
        if inputs["task"]["name"] != run.plan.names[0]:
            gate.wait(10)
        return 1

    graph = TaskGraph.from_nodes([TaskNode(f"t{i}", work, timeout_seconds=None)
                                  for i in range(12)])  # fmt: skip
    run = TaskOrchestrator(graph, workers=4).start({})
    Driver(run).step()  # the first task retires; the workers had taken the next four
    assert five.wait(10)
    gate.set()
    time.sleep(0.1)  # they finish; nothing more starts (a check of absence)
    assert len(started) == 5
    Driver(run).continue_()
    assert run.status.value == "succeeded" and len(started) == 12


def test_work_completed_ahead_of_a_stop_is_retired_cancelled_and_cleanups_see_that() -> None:
    """The chain completes ahead of ``a_held``, which then fails in stop mode: the chain is
    recorded cancelled, as serially, and the cleanup (which had completed ahead too, seeing
    the chain succeeded) runs again and sees it cancelled."""
    graph, _, chain_done = _chain_behind_a_held_task()
    nodes = [dataclasses.replace(node) for node in graph.nodes.values()]

    def held_then_fails(inputs: Mapping[str, Any]) -> int:
        chain_done.wait(10)
        raise RuntimeError("boom")

    nodes[0] = dataclasses.replace(nodes[0], fn=held_then_fails)
    nodes.append(TaskNode("cleanup", lambda i: sorted(i["context"]["results"]),
                          depends_on=("b2",), trigger=Trigger.ALL_DONE,
                          timeout_seconds=None))  # fmt: skip
    stopping = TaskGraph.from_nodes(nodes)
    serial = TaskOrchestrator(stopping, InOrder(stopping)).start({})
    chain_done.set()
    serial.run_to_end()
    chain_done.clear()
    parallel = TaskOrchestrator(stopping, InOrder(stopping), workers=4).start({}).run_to_end()
    assert parallel.canonical_trace() == serial.canonical_trace()
    assert [parallel.task_status(f"b{i}") for i in range(3)] == [Status.CANCELLED] * 3
    assert parallel.task_status("cleanup") is Status.SUCCEEDED
    assert parallel.results["cleanup"] == []


def test_a_hung_attempt_a_stop_left_behind_returns_late_and_changes_nothing() -> None:
    """Attempts run in their worker's thread; a stop takes over the job the run waits for
    (recorded ``cancelled``) and the worker's late result, when the call returns, is thrown
    away, its thread replaced (the cleanup still finds a worker)."""
    entered, release, late = threading.Event(), threading.Event(), threading.Event()

    def hang(inputs: Mapping[str, Any]) -> int:
        entered.set()
        release.wait(10)
        late.set()
        return 1

    def cleanup(inputs: Mapping[str, Any]) -> str:
        return "clean"

    nodes = [TaskNode("h", hang, timeout_seconds=None),
             TaskNode("cleanup", cleanup, depends_on=("h",), trigger=Trigger.ALL_DONE,
                      timeout_seconds=None)]  # fmt: skip
    run = TaskOrchestrator(TaskGraph.from_nodes(nodes), workers=2).start({})

    def stop() -> None:
        entered.wait(10)
        run.cancel()

    stopper = threading.Thread(target=stop)
    stopper.start()
    run.run_to_end()
    stopper.join()
    trace = run.canonical_trace()
    assert [(e["task"], e["status"], e["attempt"]) for e in trace] == [
        ("h", "running", 1), ("h", "cancelled", 1), ("cleanup", "running", 1),
        ("cleanup", "succeeded", 1),
    ]  # fmt: skip
    assert not late.is_set()
    release.set()
    assert late.wait(10)
    assert run.canonical_trace() == trace and run.status.value == "cancelled"


def test_a_hung_fallback_a_stop_left_behind_is_recorded_as_its_attempt() -> None:
    entered, release = threading.Event(), threading.Event()

    def boom(inputs: Mapping[str, Any]) -> int:
        raise RuntimeError("boom")

    def hang(inputs: Mapping[str, Any]) -> int:
        entered.set()
        release.wait(10)
        return 1

    graph = TaskGraph.from_nodes([TaskNode("f", boom, fallback=hang, timeout_seconds=None)])
    run = TaskOrchestrator(graph, workers=2).start({})
    stopper = threading.Thread(target=lambda: entered.wait(10) and run.cancel())
    stopper.start()
    run.run_to_end()
    stopper.join()
    release.set()
    assert [(e.status, e.attempt) for e in run.events] == [
        (Status.RUNNING, 1), (Status.FAILED, 1), (Status.CANCELLED, 2),
    ]  # fmt: skip
    assert run.events[-1].error == {"type": "Cancelled", "message": "stopped by the user"}
