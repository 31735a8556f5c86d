from __future__ import annotations

import math

import pytest

from harness_tui.engine.graph import (
    MAX_RETRY_INTERVAL_SECONDS,
    MAX_TIMEOUT_SECONDS,
    GraphError,
    TaskGraph,
    TaskNode,
)


def nodes(spec: dict[str, list[str]]) -> list[TaskNode]:
    return [TaskNode(name, None, tuple(deps)) for name, deps in spec.items()]


@pytest.mark.parametrize(
    ("spec", "messages"),
    [
        (
            {"a": ["b"], "b": ["c"], "c": ["a"]},
            ["cycle: a -> b -> c -> a"],
        ),
        (
            {"a": ["a"]},
            ["task 'a' depends on itself"],
        ),
        (
            {"a": ["ghost"], "b": ["a", "phantom"]},
            [
                "task 'a' depends on unknown task 'ghost'",
                "task 'b' depends on unknown task 'phantom'",
            ],
        ),
        (
            {"x": ["y"], "y": ["x"], "p": ["q"], "q": ["p"], "ok": []},
            ["cycle: p -> q -> p", "cycle: x -> y -> x"],
        ),
        (
            {"bad name": [], "1st": []},
            [
                "invalid task name 'bad name': use letters, digits, '_' or '-', starting with "
                "a letter or '_' (at most 128 characters)",
                "invalid task name '1st': use letters, digits, '_' or '-', starting with a "
                "letter or '_' (at most 128 characters)",
            ],
        ),
    ],
    ids=["cycle", "self", "unknown", "two-cycles", "names"],
)
def test_every_problem_is_reported(spec: dict[str, list[str]], messages: list[str]) -> None:
    with pytest.raises(GraphError) as caught:
        TaskGraph.from_nodes(nodes(spec))
    assert sorted(p.message for p in caught.value.problems) == sorted(messages)


def test_cycle_is_reported_in_execution_order_inside_a_larger_graph() -> None:
    spec = {"root": [], "a": ["root", "c"], "b": ["a"], "c": ["b"], "leaf": ["c"]}
    with pytest.raises(GraphError) as caught:
        TaskGraph.from_nodes(nodes(spec))
    (problem,) = caught.value.problems
    assert problem.kind == "cycle"
    assert problem.message == "cycle: a -> c -> b -> a"  # "->" reads "depends on"


def test_duplicates_and_field_errors_are_collected_together() -> None:
    with pytest.raises(GraphError) as caught:
        TaskGraph.from_nodes(
            [
                TaskNode("a"),
                TaskNode("a"),
                TaskNode("b", max_retries=-1),
                TaskNode("c", timeout_seconds=0),
            ]
        )
    kinds = sorted(p.kind for p in caught.value.problems)
    assert kinds == ["duplicate", "invalid_field", "invalid_field"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("timeout_seconds", math.inf, "timeout_seconds must be a number of seconds above 0"),
        ("timeout_seconds", 1e300, "timeout_seconds must be a number of seconds above 0"),
        ("timeout_seconds", math.nan, "timeout_seconds must be a number of seconds above 0"),
        ("retry_interval", math.inf, "retry_interval must be a number of seconds from 0 to"),
        ("retry_interval", 86_401, "retry_interval must be a number of seconds from 0 to"),
    ],
)
def test_timeouts_and_intervals_are_finite_and_bounded(
    field: str, value: float, message: str
) -> None:
    with pytest.raises(GraphError, match=message):
        TaskGraph.from_nodes([TaskNode("a", **{field: value})])
    bound = MAX_TIMEOUT_SECONDS if field == "timeout_seconds" else MAX_RETRY_INTERVAL_SECONDS
    assert TaskGraph.from_nodes([TaskNode("a", **{field: bound})])["a"] is not None


def test_any_declaration_order_and_article_add_task() -> None:
    graph = TaskGraph.from_nodes(nodes({"d": ["b", "c"], "c": ["a"], "b": ["a"], "a": []}))
    assert graph.ancestors("d") == {"a", "b", "c"}
    assert graph.descendants("a") == {"b", "c", "d"}
    incremental = TaskGraph()
    incremental.add_task(TaskNode("a"))
    with pytest.raises(GraphError, match="not registered yet"):
        incremental.add_task(TaskNode("b", depends_on=("c",)))
    incremental.add_task(TaskNode("b", depends_on=["a"]))
    assert incremental["b"].depends_on == ("a",)
    with pytest.raises(GraphError, match="duplicate task name 'a'"):
        incremental.add_task(TaskNode("a"))


def test_large_chain_cycle_check_does_not_hit_recursion_limit() -> None:
    n = 20_000
    graph = TaskGraph.from_nodes(
        TaskNode(f"t{i}", depends_on=(f"t{i - 1}",) if i else ()) for i in range(n)
    )
    assert len(graph) == n
    with pytest.raises(GraphError, match="cycle"):
        TaskGraph.from_nodes(TaskNode(f"t{i}", depends_on=(f"t{(i - 1) % n}",)) for i in range(n))
