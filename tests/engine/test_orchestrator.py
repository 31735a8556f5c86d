from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.events import RunStatus, Status
from harness_tui.engine.graph import TaskGraph, TaskNode, Trigger
from harness_tui.engine.orchestrator import (
    OnFailure,
    ResumeError,
    RetiredStep,
    Run,
    TaskOrchestrator,
)
from harness_tui.engine.recorded import RecordedExecutor
from harness_tui.executors.threads import ThreadExecutor

Inputs = Mapping[str, Any]
PAYLOAD = {"user_id": "u001"}


def flaky(failures: int, value: Any = "ok") -> Callable[[Inputs], Any]:
    """Fails its first ``failures`` calls, then returns ``value``."""
    calls = {"n": 0}

    def fn(inputs: Inputs) -> Any:
        calls["n"] += 1
        if calls["n"] <= failures:
            raise ConnectionError(f"attempt {inputs['task']['attempt']} failed")
        return value

    return fn


def const(value: Any) -> Callable[[Inputs], Any]:
    return lambda inputs: value


def boom(inputs: Inputs) -> Any:
    raise ValueError("boom")


def run_of(*nodes: TaskNode, on_failure: str = "stop", clock: FakeClock | None = None) -> Run:
    orchestrator = TaskOrchestrator(
        TaskGraph.from_nodes(nodes), clock=clock or FakeClock(), on_failure=on_failure
    )
    return orchestrator.start(PAYLOAD).run_to_end()


def statuses(run: Run) -> list[tuple[str, str, int]]:
    return [(e.task, e.status.value, e.attempt) for e in run.events]


def final(run: Run) -> dict[str, str]:
    return {step.task: run.state.status(step.task).value for step in run.plan}  # type: ignore[union-attr]


def test_retries_then_success_wait_the_fixed_interval_on_the_clock() -> None:
    clock = FakeClock()
    run = run_of(TaskNode("t", flaky(2), max_retries=3, retry_interval=1.5), clock=clock)
    assert statuses(run) == [
        ("t", "running", 1),
        ("t", "failed", 1),
        ("t", "running", 2),
        ("t", "failed", 2),
        ("t", "running", 3),
        ("t", "succeeded", 3),
    ]
    assert clock.sleeps == [1.5, 1.5]
    assert run.events[1].error == {"type": "ConnectionError", "message": "attempt 1 failed"}
    assert "ConnectionError" in (run.events[1].traceback or "")
    assert run.results == {"t": "ok"}
    assert run.status is RunStatus.SUCCEEDED


def test_retries_exhausted_fail_the_run_and_cancel_the_rest() -> None:
    run = run_of(
        TaskNode("a", flaky(5), max_retries=1),
        TaskNode("b", const(1), depends_on=("a",)),
        TaskNode("c", const(2)),
    )
    assert run.status is RunStatus.FAILED
    assert [s for s in statuses(run) if s[0] == "a"] == [
        ("a", "running", 1),
        ("a", "failed", 1),
        ("a", "running", 2),
        ("a", "failed", 2),
    ]
    assert final(run)["b"] == "cancelled"
    assert run.state.status("a") is Status.FAILED


def test_fallback_produces_the_output_after_every_attempt_failed() -> None:
    run = run_of(
        TaskNode("q", boom, max_retries=1, fallback=const({"quota": 0})),
        TaskNode("use", lambda i: i["context"]["results"]["q"]["quota"] + 1, depends_on=("q",)),
    )
    assert [s for s in statuses(run) if s[0] == "q"][-1] == ("q", "fallback", 3)
    assert run.results == {"q": {"quota": 0}, "use": 1}
    assert run.status is RunStatus.SUCCEEDED


def test_failing_fallback_fails_the_task() -> None:
    run = run_of(TaskNode("q", boom, fallback=boom))
    assert statuses(run) == [("q", "running", 1), ("q", "failed", 1), ("q", "failed", 2)]
    assert run.status is RunStatus.FAILED


def test_timeout_through_the_fake_clock_without_real_sleeping() -> None:
    def slow(inputs: Any) -> str:
        inputs.clock.sleep(10)  # instant on a fake clock, but 10 s pass on it
        return "late"

    started = time.monotonic()
    run = run_of(TaskNode("s", slow, timeout_seconds=5, max_retries=1, fallback=const("canned")))
    assert time.monotonic() - started < 2
    assert statuses(run) == [
        ("s", "running", 1),
        ("s", "timed_out", 1),
        ("s", "running", 2),
        ("s", "timed_out", 2),
        ("s", "fallback", 3),
    ]
    assert run.events[1].error == {"type": "Timeout", "message": "attempt exceeded 5 s"}
    assert run.results == {"s": "canned"}


@pytest.mark.parametrize("mode", ["signal", "thread"])
def test_real_timeout_interrupts_or_abandons_a_hanging_task(mode: str) -> None:
    release = threading.Event()

    def hang(inputs: Any) -> str:
        release.wait(5)
        return "never seen"

    graph = TaskGraph.from_nodes([TaskNode("h", hang, timeout_seconds=0.2)])
    orchestrator = TaskOrchestrator(graph, executor=ThreadExecutor(timeouts=mode))
    started = time.monotonic()
    run = orchestrator.start(PAYLOAD).run_to_end()
    elapsed = time.monotonic() - started
    release.set()
    assert statuses(run)[-1] == ("h", "timed_out", 1)
    assert elapsed < 2
    assert run.results == {}


def test_condition_false_skips_and_all_succeeded_propagates_the_skip() -> None:
    run = run_of(
        TaskNode("gate", const(1), when=lambda scope: scope["payload"]["user_id"] == "nobody"),
        TaskNode("after", const(2), depends_on=("gate",)),
        TaskNode("tolerant", const(3), depends_on=("gate",), trigger=Trigger.NONE_FAILED),
        TaskNode("always", const(4), depends_on=("gate",), trigger=Trigger.ALL_DONE),
    )
    assert final(run) == {
        "gate": "skipped",
        "after": "skipped",
        "tolerant": "succeeded",
        "always": "succeeded",
    }
    assert run.status is RunStatus.SUCCEEDED
    assert run.results == {"tolerant": 3, "always": 4}


def test_condition_sees_ancestor_results() -> None:
    run = run_of(
        TaskNode("score", const({"value": 7})),
        TaskNode(
            "high",
            const("yes"),
            depends_on=("score",),
            when=lambda s: s["results"]["score"]["value"] > 5,
        ),
        TaskNode(
            "low",
            const("no"),
            depends_on=("score",),
            when=lambda s: s["results"]["score"]["value"] <= 5,
        ),
    )
    assert final(run) == {"score": "succeeded", "high": "succeeded", "low": "skipped"}


def test_condition_error_is_a_clear_failure() -> None:
    run = run_of(TaskNode("x", const(1), when=lambda s: s["payload"]["missing"]))
    assert statuses(run) == [("x", "failed", 0)]
    assert run.events[0].error == {"type": "ConditionError", "message": "KeyError: 'missing'"}


@pytest.mark.parametrize(
    ("trigger", "expected"),
    [
        (Trigger.ALL_SUCCEEDED, "upstream_failed"),
        (Trigger.NONE_FAILED, "upstream_failed"),
        (Trigger.ALL_DONE, "succeeded"),
    ],
)
def test_trigger_rules_after_a_failure_in_continue_mode(trigger: Trigger, expected: str) -> None:
    run = run_of(
        TaskNode("bad", boom),
        TaskNode("good", const(1)),
        TaskNode("join", const(2), depends_on=("bad", "good"), trigger=trigger),
        on_failure="continue",
    )
    assert final(run) == {"bad": "failed", "good": "succeeded", "join": expected}
    assert run.status is RunStatus.FAILED


def test_continue_mode_runs_independent_branches_and_marks_dependents() -> None:
    run = run_of(
        TaskNode("bad", boom),
        TaskNode("child", const(1), depends_on=("bad",)),
        TaskNode("grandchild", const(1), depends_on=("child",)),
        TaskNode("other", const(2)),
        on_failure=OnFailure.CONTINUE,
    )
    assert final(run) == {
        "bad": "failed",
        "child": "upstream_failed",
        "grandchild": "upstream_failed",
        "other": "succeeded",
    }


def test_stop_mode_cancels_everything_after_the_failure_in_one_step() -> None:
    graph = TaskGraph.from_nodes(
        [
            TaskNode("bad", boom),
            TaskNode("x", const(1)),
            TaskNode("y", const(2)),
            TaskNode("z", const(3)),
        ]
    )
    run = TaskOrchestrator(graph, clock=FakeClock()).start(PAYLOAD)
    order = list(run.plan.names)
    failing_step = []
    while not run.finished:
        events = run.step()
        if any(e.task == "bad" for e in events):
            failing_step = [(e.task, e.status.value) for e in events]
    position = order.index("bad")
    assert failing_step == [("bad", "running"), ("bad", "failed")] + [
        (task, "cancelled") for task in order[position + 1 :]
    ]
    assert all(final(run)[task] == "succeeded" for task in order[:position])
    assert run.status is RunStatus.FAILED


def test_non_json_output_fails_the_attempt_with_its_path() -> None:
    run = run_of(TaskNode("t", const({"rows": [1, {2, 3}]})))
    assert statuses(run) == [("t", "running", 1), ("t", "failed", 1)]
    assert run.events[1].error == {
        "type": "OutputNotJSON",
        "message": "$output.rows[1]: set is not a JSON value (use a sorted list)",
    }


def test_mutating_inputs_does_not_affect_other_tasks_or_retries() -> None:
    seen: list[Any] = []

    def vandal(inputs: Inputs) -> str:
        inputs["payload"]["user_id"] = "hacked"
        inputs["context"]["results"]["source"]["items"].append("junk")
        if inputs["task"]["attempt"] == 1:
            raise RuntimeError("first try")
        return "done"

    def reader(inputs: Inputs) -> list[Any]:
        seen.append(inputs["payload"]["user_id"])
        return list(inputs["context"]["results"]["source"]["items"])

    run = run_of(
        TaskNode("source", const({"items": [1]})),
        TaskNode("vandal", vandal, depends_on=("source",), max_retries=1),
        TaskNode("reader", reader, depends_on=("source", "vandal")),
    )
    assert run.results["reader"] == [1]
    assert seen == ["u001"]
    assert run.payload == PAYLOAD


def test_a_task_sees_only_its_ancestors() -> None:
    def peek(inputs: Inputs) -> list[str]:
        results = inputs["context"]["results"]
        assert "sibling" not in results
        with pytest.raises(KeyError):
            results["sibling"]
        return sorted(results)

    run = run_of(
        TaskNode("root", const(0)),
        TaskNode("mid", const(1), depends_on=("root",)),
        TaskNode("sibling", const(2)),
        TaskNode("leaf", peek, depends_on=("mid",)),
    )
    assert run.results["leaf"] == ["mid", "root"]


def test_inputs_follow_the_task_contract() -> None:
    captured: dict[str, Any] = {}

    def grab(inputs: Inputs) -> int:
        captured.update({k: inputs[k] for k in inputs})
        return 1

    run = run_of(TaskNode("g", grab, params={"limit": 3}))
    assert captured["payload"] == PAYLOAD
    assert dict(captured["context"]["results"]) == {}
    assert captured["params"] == {"limit": 3}
    assert captured["task"] == {
        "name": "g",
        "task_id": run.plan[0].task_id,
        "attempt": 1,
        "depends_on": [],
    }


def test_snapshots_are_views_of_the_past() -> None:
    run = run_of(TaskNode("a", const(1)), TaskNode("b", const(2), depends_on=("a",)))
    first = run.snapshot(1)  # after a succeeded
    assert first.status("a") is Status.SUCCEEDED
    assert first.status("b") is None
    assert first.results == {"a": 1}
    assert len(first.events) == 2
    before = run.snapshot(-1)
    assert before.results == {} and before.status("a") is None
    assert run.snapshot().results == {"a": 1, "b": 2}
    with pytest.raises(IndexError):
        run.snapshot(99)


def test_cancel_from_another_thread_stops_a_hanging_attempt() -> None:
    release = threading.Event()

    def hang(inputs: Any) -> str:
        release.wait(5)
        return "x"

    graph = TaskGraph.from_nodes(
        [TaskNode("h", hang), TaskNode("after", const(1), depends_on=("h",))]
    )
    run = TaskOrchestrator(graph, executor=ThreadExecutor(isolate=True)).start(PAYLOAD)
    threading.Timer(0.2, run.cancel).start()
    run.run_to_end()
    release.set()
    assert statuses(run) == [("h", "running", 1), ("h", "cancelled", 1), ("after", "cancelled", 0)]
    assert run.status is RunStatus.CANCELLED


def test_listeners_receive_every_event_in_order() -> None:
    got: list[int] = []
    graph = TaskGraph.from_nodes([TaskNode("a", const(1)), TaskNode("b", flaky(1), max_retries=1)])
    orchestrator = TaskOrchestrator(
        graph, clock=FakeClock(), listeners=[lambda e: got.append(e.seq)]
    )
    run = orchestrator.start(PAYLOAD).run_to_end()
    assert got == list(range(len(run.events))) == [e.seq for e in run.events]


@pytest.mark.parametrize("workers", [1, 3])
def test_retired_steps_carry_the_canonical_text_and_the_digest_is_unchanged(workers: int) -> None:
    """A retire listener gets each event's canonical text, and the run's trace hash takes
    them in (a digest asked for mid-run makes it skip some): the digests stay those of a run
    without a listener."""

    def build() -> Run:
        nodes = [
            TaskNode("a", const(1)),
            TaskNode("b", flaky(2), max_retries=2, depends_on=("a",)),
            TaskNode("c", boom, depends_on=("a",)),
            TaskNode("d", const(4), depends_on=("b",)),
            TaskNode("e", const(5), depends_on=("c", "d"), trigger=Trigger.ALL_DONE),
        ]
        graph = TaskGraph.from_nodes(nodes)
        return TaskOrchestrator(graph, clock=FakeClock(), on_failure="continue", workers=workers)

    plain = build().start(PAYLOAD).run_to_end()
    heard: list[str] = []
    run = build().start(PAYLOAD)

    def listen(retired: RetiredStep) -> None:
        assert list(retired.canonical) == [e.canonical_text() for e in retired.events]
        heard.extend(retired.canonical)
        if retired.step.task == "b":
            run.digests()  # hashes up to here itself: the next step is not taken in

    run.on_retire(listen)
    run.run_to_end()
    assert heard == [e.canonical_text() for e in plain.events]
    assert run.digests() == plain.digests()
    assert run.status is plain.status is RunStatus.FAILED


def test_timings_stay_out_of_the_canonical_trace() -> None:
    def build() -> Run:
        return (
            TaskOrchestrator(
                TaskGraph.from_nodes(
                    [TaskNode("a", const(1)), TaskNode("b", flaky(1), max_retries=1)]
                ),
                clock=FakeClock(start=time.time(), tick=0.37),
            )
            .start(PAYLOAD)
            .run_to_end()
        )

    one, two = build(), build()
    assert one.events[0].started_at != two.events[0].started_at
    assert one.canonical_trace() == two.canonical_trace()
    assert one.digests() == two.digests()
    assert "started_at" not in one.canonical_trace()[0]


def test_declaration_order_does_not_change_trace_or_digest() -> None:
    nodes = [
        TaskNode("a", const(1)),
        TaskNode("b", const(2), depends_on=("a",)),
        TaskNode("c", const(3), depends_on=("a",)),
        TaskNode("d", const(4), depends_on=("b", "c")),
    ]
    one = (
        TaskOrchestrator(TaskGraph.from_nodes(nodes), clock=FakeClock()).start(PAYLOAD).run_to_end()
    )
    two = (
        TaskOrchestrator(TaskGraph.from_nodes(nodes[::-1]), clock=FakeClock())
        .start(PAYLOAD)
        .run_to_end()
    )
    assert one.digest == two.digest


def test_input_digest_is_merkle_over_ancestors() -> None:
    def build(root_value: int) -> Run:
        return run_of(
            TaskNode("root", const(root_value)),
            TaskNode("mid", const("same"), depends_on=("root",)),
            TaskNode("leaf", const("same"), depends_on=("mid",)),
        )

    one, two = build(1), build(2)

    def running_digest(run: Run, task: str) -> str | None:
        return next(
            e.input_digest for e in run.events if e.task == task and e.status is Status.RUNNING
        )

    assert running_digest(one, "root") == running_digest(two, "root")
    # mid's output is the same in both runs, but its input (root's output) differed: leaf knows.
    assert running_digest(one, "leaf") != running_digest(two, "leaf")


def test_replay_with_recorded_executor_reproduces_the_run_without_code() -> None:
    nodes = [
        TaskNode("a", flaky(1, {"v": 1}), max_retries=2),
        TaskNode("b", boom, depends_on=("a",), fallback=const("fb")),
        TaskNode("c", const(3), depends_on=("b",)),
    ]
    live = (
        TaskOrchestrator(TaskGraph.from_nodes(nodes), clock=FakeClock()).start(PAYLOAD).run_to_end()
    )
    outputs = {name: commit.text for name, commit in live.state.commits.items()}

    def forbidden(inputs: Inputs) -> Any:
        raise AssertionError("user code ran during replay")

    codeless = [
        TaskNode(
            n.name,
            forbidden,
            n.depends_on,
            n.max_retries,
            fallback=forbidden if n.fallback else None,
        )
        for n in nodes
    ]
    replay = (
        TaskOrchestrator(
            TaskGraph.from_nodes(codeless),
            executor=RecordedExecutor(live.events, outputs),
            clock=FakeClock(),
        )
        .start(PAYLOAD)
        .run_to_end()
    )
    assert replay.canonical_trace() == live.canonical_trace()
    assert replay.digests() == live.digests()


def test_resume_after_interruption_equals_uninterrupted_run() -> None:
    def nodes() -> list[TaskNode]:
        return [
            TaskNode("a", const(1)),
            TaskNode("b", flaky(1, 2), depends_on=("a",), max_retries=1),
            TaskNode("c", const(3), depends_on=("b",)),
        ]

    whole = (
        TaskOrchestrator(TaskGraph.from_nodes(nodes()), clock=FakeClock())
        .start(PAYLOAD)
        .run_to_end()
    )
    for cut in range(len(whole.events) + 1):
        executed: list[str] = []

        def tracking(node: TaskNode) -> TaskNode:
            fn = node.fn
            assert fn is not None

            def wrapped(inputs: Inputs) -> Any:
                executed.append(node.name)
                return fn(inputs)

            return TaskNode(node.name, wrapped, node.depends_on, node.max_retries)

        partial = whole.events[:cut]
        outputs = {n: c.text for n, c in whole.state.commits.items()}
        orchestrator = TaskOrchestrator(
            TaskGraph.from_nodes([tracking(n) for n in nodes()]), clock=FakeClock()
        )
        resumed = orchestrator.resume(PAYLOAD, partial, outputs)
        resumed.run_to_end()
        assert resumed.digests() == whole.digests(), cut
        assert resumed.canonical_trace() == whole.canonical_trace(), cut
        last_seq = {e.task: e.seq for e in whole.events}
        completed = {task for task, seq in last_seq.items() if seq < cut}
        assert not completed & set(executed), (cut, executed)
        assert set(executed) == set(last_seq) - completed, cut


def test_resume_refuses_events_of_another_plan() -> None:
    graph = TaskGraph.from_nodes([TaskNode("a", const(1))])
    run = TaskOrchestrator(graph, clock=FakeClock()).start(PAYLOAD).run_to_end()
    with pytest.raises(ResumeError, match="plan has a"):
        TaskOrchestrator(graph).resume({"user_id": "other"}, run.events, {"a": "1"})
    with pytest.raises(ResumeError, match="missing or altered"):
        TaskOrchestrator(graph).resume(PAYLOAD, run.events, {"a": "2"})


@pytest.mark.parametrize("isolate", [False, True])
@pytest.mark.parametrize("timeouts", ["signal", "thread"])
def test_the_executor_does_not_change_the_trace(isolate: bool, timeouts: str) -> None:
    def nodes() -> list[TaskNode]:
        return [
            TaskNode("a", const({"x": 1}), timeout_seconds=5),
            TaskNode("b", flaky(1, [1, 2]), depends_on=("a",), max_retries=1),
            TaskNode("c", boom, depends_on=("a",), fallback=const("fb")),
            TaskNode("d", const(4), depends_on=("b", "c"), timeout_seconds=5),
        ]

    reference = (
        TaskOrchestrator(TaskGraph.from_nodes(nodes()), clock=FakeClock())
        .start(PAYLOAD)
        .run_to_end()
    )
    other = (
        TaskOrchestrator(
            TaskGraph.from_nodes(nodes()),
            executor=ThreadExecutor(isolate=isolate, timeouts=timeouts),
        )
        .start(PAYLOAD)
        .run_to_end()
    )
    assert other.canonical_trace() == reference.canonical_trace()
    assert other.digests() == reference.digests()


def test_a_user_cancelled_run_stays_cancelled_when_restored() -> None:
    release = threading.Event()

    def hang(inputs: Any) -> str:
        release.wait(5)
        return "x"

    def graph() -> TaskGraph:
        return TaskGraph.from_nodes(
            [TaskNode("h", hang), TaskNode("after", const(1), depends_on=("h",))]
        )

    run = TaskOrchestrator(graph(), executor=ThreadExecutor(isolate=True)).start(PAYLOAD)
    threading.Timer(0.2, run.cancel).start()
    run.run_to_end()
    release.set()
    for cut in (2, len(run.events)):
        restored = TaskOrchestrator(graph()).resume(PAYLOAD, run.events[:cut], {})
        restored.run_to_end()
        assert restored.status is RunStatus.CANCELLED
        assert restored.canonical_trace() == run.canonical_trace()
