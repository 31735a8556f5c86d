"""The task spec fields are named once, in engine.spec; the file format and the views agree."""

from __future__ import annotations

from harness_tui.engine.diff import plan_diff
from harness_tui.engine.graph import TaskGraph, TaskNode, Trigger
from harness_tui.engine.spec import SPEC_FIELDS, TASK_FIELDS, task_spec
from harness_tui.workflow.loader import parse_workflow
from harness_tui.workflow.model import TaskSpec


def test_spec_fields_are_the_keys_of_task_spec_in_order() -> None:
    assert SPEC_FIELDS == (
        "run", "depends_on", "max_retries", "retry_interval", "timeout_seconds", "fallback",
        "when", "trigger", "with",
    )  # fmt: skip
    assert tuple(task_spec(TaskNode("a", ref="builtin:echo"))) == SPEC_FIELDS


def test_the_workflow_file_format_declares_exactly_the_task_fields() -> None:
    declared = {field.alias or name for name, field in TaskSpec.model_fields.items()}
    assert declared == set(TASK_FIELDS)


def test_a_diff_reports_a_change_in_every_spec_field() -> None:
    old = TaskNode("t", ref="m:f", depends_on=("a",))
    new = TaskNode(
        "t", ref="m:g", depends_on=("b",), max_retries=1, retry_interval=2.0,
        timeout_seconds=3.0, fallback_ref="m:h", when_source="payload.x",
        trigger=Trigger.ALL_DONE, params={"k": 1},
    )  # fmt: skip
    roots = [TaskNode(name, ref="m:f") for name in ("a", "b")]
    result = plan_diff(
        TaskGraph.from_nodes([*roots, old]), {}, TaskGraph.from_nodes([*roots, new]), {}
    )
    assert tuple(result.tasks["t"].fields) == SPEC_FIELDS


def test_the_loaded_spec_holds_every_task_field() -> None:
    workflow = parse_workflow("name: w\ntasks:\n  a: {run: builtin:echo}\n")
    assert set(workflow.specs["a"]) == set(TASK_FIELDS)
