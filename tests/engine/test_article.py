"""The seed article's API, called exactly as its demo and its determinism check call it.

Only the import line differs from the article: users arrive with its code and it must work.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness_tui import (
    DeterministicScheduler,
    Harness,
    HarnessError,
    TaskGraph,
    TaskNode,
    TaskOrchestrator,
)

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = {"final": {"user_id": "u001", "level": "gold", "quota": 100}}


# The article's task functions: one mapping in, a JSON value out.
def extract_user_info(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"user_id": inputs["payload"]["user_id"]}


def check_quota(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"quota": 100}


def enrich_user_data(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"level": "gold"}


def compose_response(inputs: dict[str, Any]) -> dict[str, Any]:
    results = inputs["context"]["results"]
    return {
        "final": {
            "user_id": results["extract_user_info"]["user_id"],
            "level": results["enrich_user_data"]["level"],
            "quota": results["check_quota"]["quota"],
        }
    }


def build_harness() -> Harness:
    harness = Harness()
    harness.register(TaskNode("extract_user_info", extract_user_info))
    harness.register(TaskNode("check_quota", check_quota, depends_on=["extract_user_info"]))
    harness.register(
        TaskNode("enrich_user_data", enrich_user_data, depends_on=["extract_user_info"])
    )
    harness.register(
        TaskNode(
            "compose_response",
            compose_response,
            depends_on=["check_quota", "enrich_user_data"],
            max_retries=1,
        )
    )
    return harness


def test_the_demo() -> None:
    harness = build_harness()
    payload = {"user_id": "u001"}
    plan = harness.scheduler.build_plan(payload)
    print("Execution plan:", plan)
    result = harness.run(payload)
    assert set(result) == {"payload", "results", "trace"}
    assert result["payload"] == payload
    assert result["results"]["compose_response"] == EXPECTED
    assert plan[0] == "extract_user_info" and plan[-1] == "compose_response"
    assert [e["task"] for e in result["trace"] if e["status"] == "succeeded"] == plan


def test_the_determinism_check() -> None:
    harness = build_harness()
    payload = {"user_id": "u001"}
    plan_a = harness.scheduler.build_plan(payload)
    plan_b = harness.scheduler.build_plan(payload)
    run_a = harness.run(payload)
    run_b = harness.run(payload)
    assert plan_a == plan_b
    assert run_a["trace"] == run_b["trace"]
    assert run_a["results"] == run_b["results"]


def test_the_orchestrator_with_its_scheduler() -> None:
    harness = build_harness()
    scheduler = DeterministicScheduler(harness.graph)
    orchestrator = TaskOrchestrator(harness.graph, scheduler)
    assert orchestrator.scheduler is scheduler
    result = orchestrator.run({"user_id": "u001"})
    assert result["results"]["compose_response"] == EXPECTED


def test_the_graph_methods() -> None:
    graph = TaskGraph()
    graph.add_task(TaskNode("extract_user_info", extract_user_info))
    graph.add_task(TaskNode("check_quota", check_quota, depends_on=["extract_user_info"]))
    assert graph.get_task("check_quota").fn is check_quota
    assert [task.name for task in graph.all_tasks()] == ["extract_user_info", "check_quota"]
    assert graph.dependencies_of("check_quota") == ["extract_user_info"]
    assert graph.dependencies_of("extract_user_info") == []
    payload = {"user_id": "u001", "b": [1, "é"]}
    # The article's formula, written out: the payload argument comes first.
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    expected = hashlib.sha256(f"check_quota:{text}".encode()).hexdigest()[:16]
    assert graph.compute_task_id(payload, "check_quota") == expected
    assert TaskGraph.compute_task_id(payload, "check_quota") == expected
    with pytest.raises(KeyError):
        graph.get_task("nope")


def test_a_dependency_must_be_registered_first() -> None:
    graph = TaskGraph()
    with pytest.raises(ValueError, match="not registered"):
        graph.add_task(TaskNode("check_quota", check_quota, depends_on=["extract_user_info"]))


def test_a_cycle_is_a_runtime_error() -> None:
    nodes = [
        TaskNode("a", extract_user_info, depends_on=["b"]),
        TaskNode("b", extract_user_info, depends_on=["a"]),
    ]
    with pytest.raises(RuntimeError, match="cycle: a -> b -> a") as caught:
        DeterministicScheduler(TaskGraph.from_nodes(nodes)).build_plan({})
    assert isinstance(caught.value, HarnessError) and isinstance(caught.value, ValueError)


def test_the_task_node_defaults() -> None:
    node = TaskNode("t", extract_user_info)
    assert node.depends_on == () and node.max_retries == 0 and node.timeout_seconds == 30.0
    assert TaskNode("t", extract_user_info, timeout_seconds=None).timeout_seconds is None


def test_a_task_that_still_fails_raises_a_runtime_error() -> None:
    def broken(inputs: dict[str, Any]) -> None:
        raise ValueError("no quota service")

    harness = Harness()
    harness.register(TaskNode("broken", broken, max_retries=2))
    with pytest.raises(RuntimeError, match=r"'broken' failed after 3 attempt\(s\): ValueError"):
        harness.run({})


def test_register_keeps_the_keyword_form() -> None:
    harness = Harness()
    harness.register("extract_user_info", extract_user_info)
    harness.register("check_quota", check_quota, depends_on=["extract_user_info"])
    assert harness.graph.get_task("check_quota").timeout_seconds == 30.0
    with pytest.raises(TypeError):
        harness.register(TaskNode("x", check_quota), check_quota)


SCRIPT = """
import json
from tests.engine.test_article import build_harness
harness = build_harness()
payload = {"user_id": "u001", "tags": ["b", "a"], "meta": {"z": 1, "y": 2}}
plans = [harness.scheduler.build_plan(payload) for _ in range(2)]
runs = [harness.run(payload) for _ in range(2)]
assert plans[0] == plans[1] and runs[0] == runs[1]
print(json.dumps({"plan": plans[0], "run": runs[0]}, sort_keys=True))
"""


def test_plan_trace_and_results_are_identical_under_three_hash_seeds() -> None:
    outputs = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd=ROOT,
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1
    (only,) = outputs
    assert json.loads(only)["run"]["results"]["compose_response"] == EXPECTED


class ComposeLast(DeterministicScheduler):
    """The article's pattern: a subclass with its own order (enrich before check)."""

    def build_plan(self, payload: Any) -> list[str]:
        return ["extract_user_info", "enrich_user_data", "check_quota", "compose_response"]


class OnlyBuildPlan:
    """A duck-typed scheduler: nothing but the article's method."""

    def __init__(self, order: Any) -> None:
        self.order = order

    def build_plan(self, payload: Any) -> Any:
        return self.order


def succeeded(result: dict[str, Any]) -> list[str]:
    return [e["task"] for e in result["trace"] if e["status"] == "succeeded"]


def test_a_schedulers_own_plan_is_run() -> None:
    harness = build_harness()
    ours = harness.scheduler.build_plan({"user_id": "u001"})
    assert ours.index("check_quota") < ours.index("enrich_user_data")  # else nothing to show
    custom = ComposeLast(harness.graph)
    result = TaskOrchestrator(harness.graph, custom).run({"user_id": "u001"})
    assert succeeded(result) == custom.build_plan({})
    assert result["results"]["compose_response"] == EXPECTED
    duck = OnlyBuildPlan(custom.build_plan({}))
    assert succeeded(TaskOrchestrator(harness.graph, duck).run({"user_id": "u001"})) == duck.order  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("order", "message"),
    [
        (["check_quota", "extract_user_info", "enrich_user_data", "compose_response"],
         "puts 'check_quota' before its dependency 'extract_user_info': a plan must be a "
         "topological order of the graph"),
        (["extract_user_info", "check_quota", "enrich_user_data"], "left out 'compose_response'"),
        (["extract_user_info", "extract_user_info"], "returned 'extract_user_info' twice"),
        (["extract_user_info", "ghost"], "returned 'ghost', which is no task of the graph"),
        ("extract_user_info", "returned str, not a list of task names"),
    ],
    ids=["order", "missing", "twice", "unknown", "not-a-list"],
)  # fmt: skip
def test_a_plan_that_is_no_topological_order_is_one_clear_error(order: Any, message: str) -> None:
    harness = build_harness()
    with pytest.raises(HarnessError) as caught:
        TaskOrchestrator(harness.graph, OnlyBuildPlan(order)).run({"user_id": "u001"})  # type: ignore[arg-type]
    assert isinstance(caught.value, ValueError)
    assert str(caught.value) == f"tests.engine.test_article.OnlyBuildPlan.build_plan {message}"


def test_an_export_says_its_plan_came_from_a_custom_scheduler(tmp_path: Path) -> None:
    from harness_tui.records.export import RunRecord
    from harness_tui.records.runs.replay import replay_run
    from harness_tui.workflow.python_source import graph_workflow

    harness = build_harness()
    payload = {"user_id": "u001"}
    run = TaskOrchestrator(harness.graph, ComposeLast(harness.graph)).start(payload)
    run.run_to_end()
    record = RunRecord.from_run(run, graph_workflow(harness.graph, payload, "article"))
    record.write(tmp_path / "run.json")
    read = RunRecord.read(tmp_path / "run.json")
    assert read.scheduler == "tests.engine.test_article.ComposeLast"
    assert list(read.plan.names) == ComposeLast(harness.graph).build_plan(payload)
    replayed = replay_run(read).run_to_end()
    assert replayed.digest == run.digest
    # An order the deterministic scheduler would have chosen is not marked.
    plain = TaskOrchestrator(harness.graph, OnlyBuildPlan(harness.scheduler.build_plan(payload)))
    assert plain.start(payload).plan.scheduler is None  # type: ignore[arg-type]


def test_the_harness_scheduler_and_orchestrator_are_stable_objects() -> None:
    harness = Harness()
    scheduler, orchestrator = harness.scheduler, harness.orchestrator
    assert harness.scheduler is scheduler and harness.orchestrator is orchestrator
    assert orchestrator.scheduler is scheduler
    harness.register(TaskNode("extract_user_info", extract_user_info))  # seen by both
    assert scheduler.build_plan({"user_id": "u001"}) == ["extract_user_info"]
    assert orchestrator.run({"user_id": "u001"})["results"] == {
        "extract_user_info": {"user_id": "u001"}
    }


def test_the_final_failures_cause_is_the_tasks_exception() -> None:
    raised = ValueError("no quota service")

    def broken(inputs: dict[str, Any]) -> None:
        raise raised

    for workers in (1, 2):
        harness = Harness(workers=workers)
        harness.register(TaskNode("broken", broken, max_retries=1))
        with pytest.raises(RuntimeError) as caught:
            harness.run({})
        assert caught.value.__cause__ is raised


def test_the_article_run_keeps_the_key_order_tasks_returned() -> None:
    def unsorted(inputs: dict[str, Any]) -> dict[str, Any]:
        return {"zeta": 1, "alpha": {"y": 2, "b": [{"k": 1, "c": 2}]}}

    for workers in (1, 2):
        harness = Harness(workers=workers)
        harness.register(TaskNode("t", unsorted))
        result = harness.run({"user_id": "u001", "a": 1})
        output = result["results"]["t"]
        assert repr(output) == repr(unsorted({}))  # printed as the task returned it
        assert list(result["payload"]) == ["user_id", "a"]
    # Canonical encodings stay sorted: the run's output text and digests.
    run = harness.orchestrator.start({"user_id": "u001"}).run_to_end()
    assert run.output_text("t") == '{"alpha":{"b":[{"c":2,"k":1}],"y":2},"zeta":1}'
    assert list(run.results["t"]) == ["alpha", "zeta"]
