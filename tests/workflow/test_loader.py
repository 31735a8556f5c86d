from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.engine.scheduler import DeterministicScheduler
from harness_tui.schemas import FILES, generate_schema, schema_text
from harness_tui.workflow.errors import WorkflowError
from harness_tui.workflow.generate import generate_workflow
from harness_tui.workflow.loader import load_workflow, parse_workflow


def test_user_profile_loads_with_defaults_applied(workflows: Path) -> None:
    workflow = load_workflow(workflows / "user_profile.yaml")
    assert workflow.name == "user_profile"
    assert len(workflow.graph) == 4
    quota = workflow.specs["check_quota"]
    assert quota["max_retries"] == 2 and quota["timeout_seconds"] == 5
    assert workflow.specs["enrich_user_data"]["timeout_seconds"] == 30  # from defaults
    assert workflow.graph["check_quota"].params == {"limit": 100}
    assert len(workflow.digest) == 64


def test_loading_and_planning_never_import_user_code(tmp_path: Path) -> None:
    (tmp_path / "evil_tasks.py").write_text("raise SystemExit('imported!')\n")
    (tmp_path / "wf.yaml").write_text(
        "name: evil\ntasks:\n  a: {run: evil_tasks:go}\n  b: {run: 'os:system', depends_on: [a]}\n"
    )
    workflow = load_workflow(tmp_path / "wf.yaml")
    DeterministicScheduler(workflow.graph).plan({})
    assert "evil_tasks" not in sys.modules


def test_references_resolve_relative_to_the_workflow_folder(tmp_path: Path) -> None:
    package = tmp_path / "mytasks_pkg_for_test"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "steps.py").write_text(
        "def double(inputs):\n    return inputs['payload']['n'] * 2\n"
    )
    (tmp_path / "wf.yaml").write_text(
        "name: rel\ntasks:\n  d: {run: 'mytasks_pkg_for_test.steps:double'}\n"
    )
    workflow = load_workflow(tmp_path / "wf.yaml")
    run = TaskOrchestrator(workflow.graph).start({"n": 21}).run_to_end()
    assert run.results == {"d": 42}
    assert str(tmp_path) not in sys.path


def test_missing_module_is_a_clear_task_failure(tmp_path: Path) -> None:
    workflow = parse_workflow("name: m\ntasks:\n  a: {run: 'no_such_module_xyz:go'}\n")
    run = TaskOrchestrator(workflow.graph).start({}).run_to_end()
    error = run.events[-1].error
    assert error is not None and error["type"] == "ResolveError"
    assert "cannot import 'no_such_module_xyz'" in error["message"]


@pytest.mark.parametrize(
    ("expr", "truth"),
    [
        ("payload.flag", True),
        ("payload.zero", True),  # JMESPath: numbers are truthy
        ("payload.empty", False),
        ("payload.missing", False),
        ("`false`", False),
        ("payload.items", True),
    ],
)
def test_when_follows_jmespath_truthiness(expr: str, truth: bool) -> None:
    text = f'name: c\ntasks:\n  t:\n    run: builtin:echo\n    when: "{expr}"\n'
    workflow = parse_workflow(text)
    run = (
        TaskOrchestrator(workflow.graph)
        .start({"flag": True, "zero": 0, "empty": [], "items": [1]})
        .run_to_end()
    )
    assert run.state.status("t").value == ("succeeded" if truth else "skipped")  # type: ignore[union-attr]


def test_builtins_echo_merge_select_fail_sleep() -> None:
    text = """
name: b
tasks:
  one: {run: builtin:echo, with: {a: 1, b: 1}}
  two: {run: builtin:echo, with: {b: 2}}
  merged: {run: builtin:merge, depends_on: [one, two]}
  picked: {run: builtin:select, depends_on: [merged], with: {expr: "results.merged.b"}}
  flaky: {run: builtin:fail, with: {times: 2, value: done}, max_retries: 2}
  nap: {run: builtin:sleep, with: {seconds: 30}, timeout_seconds: 5}
"""
    from harness_tui.engine.clock import FakeClock

    clock = FakeClock()
    workflow = parse_workflow(text)
    run = (
        TaskOrchestrator(workflow.graph, clock=clock, on_failure="continue").start({}).run_to_end()
    )
    assert run.results["merged"] == {"a": 1, "b": 2}
    assert run.results["picked"] == 2
    assert run.results["flaky"] == "done"
    assert run.state.status("nap").value == "timed_out"  # type: ignore[union-attr]


def test_size_and_task_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("name: big\n# " + "x" * 200 + "\ntasks: {a: {run: builtin:echo}}\n")
    monkeypatch.setenv("HARNESS_TUI_LIMITS", "file_bytes=100")
    with pytest.raises(WorkflowError, match="file is over 100 bytes, the limit"):
        load_workflow(big)
    monkeypatch.setenv("HARNESS_TUI_LIMITS", "tasks=3")
    with pytest.raises(WorkflowError, match="4 tasks; the limit is 3"):
        parse_workflow(generate_workflow(4, "chain"))


@pytest.mark.parametrize("kind", sorted(FILES))
def test_shipped_schemas_are_up_to_date(kind: str) -> None:
    assert schema_text(kind) == generate_schema(kind), "run: python -m harness_tui.schemas"


def test_schema_accepts_the_shipped_workflows(workflows: Path) -> None:
    schema = json.loads(schema_text("workflow"))
    assert set(schema["required"]) == {"name", "tasks"}
    task = schema["$defs"]["TaskSpec"]
    assert task["additionalProperties"] is False
    assert "with" in task["properties"]


@pytest.mark.parametrize("shape", ["wide", "chain", "layered"])
def test_generator_makes_valid_workflows(shape: str) -> None:
    workflow = parse_workflow(generate_workflow(120, shape))
    assert len(workflow.graph) == 120
    plan = DeterministicScheduler(workflow.graph).plan(workflow.payload)
    assert len(plan) == 120
