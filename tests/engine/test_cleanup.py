"""Stop and cleanup (docs/architecture.md): after a stop, all_done cleanups still run; a second stop
cancels them too; exports of format 1.0 replay under the old rule."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.events import RunStatus, Status
from harness_tui.engine.graph import TaskGraph, TaskNode, Trigger
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.executors.threads import ThreadExecutor
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.replay import replay

from .test_orchestrator import PAYLOAD, boom, const

DATA = Path(__file__).resolve().parents[1] / "records" / "data"


def pipeline(deploy: Any, cleanups_on_stop: bool = True, **kw: Any) -> TaskOrchestrator:
    graph = TaskGraph.from_nodes(
        [
            TaskNode("build", const(1)),
            TaskNode("deploy", deploy, depends_on=("build",)),
            TaskNode("notify", const(2), depends_on=("deploy",)),
            TaskNode("report", const(3), depends_on=("build",)),
            TaskNode("cleanup", const("clean"), depends_on=("deploy",), trigger=Trigger.ALL_DONE),
        ]
    )
    return TaskOrchestrator(graph, cleanups_on_stop=cleanups_on_stop, **kw)


def finals(run: Any) -> dict[str, str]:
    return {e.task: e.status.value for e in run.final_events()}


def test_a_final_failure_cancels_the_rest_but_the_cleanup_runs() -> None:
    run = pipeline(boom, clock=FakeClock()).start(PAYLOAD).run_to_end()
    assert run.status is RunStatus.FAILED
    order = list(run.plan.names)
    after = order[order.index("deploy") + 1 :]
    expected = (
        {task: ("succeeded" if task == "cleanup" else "cancelled") for task in after}
        | {task: "succeeded" for task in order[: order.index("deploy")]}
        | {"deploy": "failed"}
    )
    assert finals(run) == expected and "cancelled" in expected.values()
    assert run.results["cleanup"] == "clean"


def test_the_old_rule_cancels_the_cleanup_too() -> None:
    run = pipeline(boom, cleanups_on_stop=False, clock=FakeClock()).start(PAYLOAD).run_to_end()
    assert finals(run)["cleanup"] == "cancelled"


def _hang(started: threading.Event, release: threading.Event) -> Any:
    def fn(inputs: Any) -> int:
        started.set()
        release.wait(5)
        return 0

    return fn


def test_a_user_stop_cancels_the_work_and_runs_the_cleanup() -> None:
    started, release = threading.Event(), threading.Event()
    orchestrator = pipeline(_hang(started, release), executor=ThreadExecutor(isolate=True))
    run = orchestrator.start(PAYLOAD)
    threading.Thread(target=lambda: (started.wait(5), run.cancel())).start()
    run.run_to_end()
    release.set()
    assert run.status is RunStatus.CANCELLED
    assert finals(run)["deploy"] == "cancelled" and finals(run)["cleanup"] == "succeeded"


def test_a_second_stop_cancels_the_cleanup_too() -> None:
    started, release = threading.Event(), threading.Event()
    orchestrator = pipeline(_hang(started, release), executor=ThreadExecutor(isolate=True))
    run = orchestrator.start(PAYLOAD)
    threading.Thread(target=lambda: (started.wait(5), run.cancel(), run.cancel())).start()
    run.run_to_end()
    release.set()
    assert run.status is RunStatus.CANCELLED
    assert finals(run)["cleanup"] == "cancelled"


def test_a_stop_at_the_final_failure_itself_is_one_stop_and_the_cleanup_runs() -> None:
    """The workbench holds a run at a failed attempt; stopping it there (to re-run it) stops
    the run once, as the failure does: the cleanup still runs."""
    run = pipeline(boom, clock=FakeClock()).start(PAYLOAD)
    run.add_listener(
        lambda e: run.cancel() if (e.task, e.status) == ("deploy", Status.FAILED) else None
    )
    run.run_to_end()
    assert run.status is RunStatus.FAILED
    assert finals(run)["deploy"] == "failed" and finals(run)["cleanup"] == "succeeded"


def test_a_1_0_export_replays_under_the_old_rule() -> None:
    record = RunRecord.read(DATA / "export-1.0-cleanup.json")
    assert record.document["format_version"] == "1.0"
    assert [(e.task, e.status.value) for e in record.events][-2:] == [
        ("cleanup", "cancelled"),
        ("notify", "cancelled"),
    ]
    assert replay(record).identical


def test_a_stop_during_a_retry_interval_ends_the_wait_at_once() -> None:
    import time

    from harness_tui.engine.clock import SystemClock

    graph = TaskGraph.from_nodes([TaskNode("a", boom, max_retries=1, retry_interval=30.0)])
    run = TaskOrchestrator(graph, clock=SystemClock()).start(PAYLOAD)
    threading.Timer(0.2, run.cancel).start()
    started = time.monotonic()
    run.run_to_end()
    assert time.monotonic() - started < 5
    assert run.status is RunStatus.CANCELLED


def test_an_empty_graph_runs_to_an_empty_success() -> None:
    result = TaskOrchestrator(TaskGraph()).run({})
    assert result == {"payload": {}, "results": {}, "trace": []}


def test_a_listener_that_raises_is_dropped_and_the_run_stays_whole() -> None:
    run = pipeline(const(5), clock=FakeClock()).start(PAYLOAD)

    def broken(event: Any) -> None:
        raise OSError(28, "No space left on device")

    run.add_listener(broken)
    run.run_to_end()
    assert run.status is RunStatus.SUCCEEDED
    assert [type(e) for e in run.listener_errors] == [OSError]
    reference = pipeline(const(5), clock=FakeClock()).start(PAYLOAD).run_to_end()
    assert run.digest == reference.digest
