"""The executor contract as docs/executors.md states it: declared capabilities (never probed),
a registry that costs nothing for the built-ins, attempts that pickle by reference, and one
line for every wrong choice."""

from __future__ import annotations

import ast
import pickle
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness_tui.engine.attempt import Attempt, Executor, ExecutorError, Outcome, OutcomeKind
from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.executors import registry
from harness_tui.executors.process import ProcessExecutor
from harness_tui.executors.threads import ThreadExecutor
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.workflow.loader import parse_workflow

PACKAGE = Path(__file__).resolve().parents[2] / "harness_tui"
CAPABILITIES = {name for name in vars(Executor) if not name.startswith("_")} | {
    "admit",
    "for_thread",
}


def _executor_classes() -> set[str]:
    """Every class in the package named an executor or derived from one (transitively)."""
    bases: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = {ast.unparse(b).rpartition(".")[2] for b in node.bases}
    found = {"Executor", *(name for name in bases if name.endswith("Executor"))}
    while True:
        more = {name for name, of in bases.items() if of & found} - found
        if not more:
            return found - {"Executor"}
        found |= more


def test_no_capability_is_probed_and_no_concrete_executor_is_tested_outside_executors() -> None:
    concrete = _executor_classes()
    assert {"ThreadExecutor", "ProcessExecutor", "DaskExecutor", "RecordedExecutor"} <= concrete
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.parent.name == "executors":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            where = f"{path.relative_to(PACKAGE)}:{node.lineno}: {ast.unparse(node)}"
            if node.func.id in ("getattr", "hasattr") and len(node.args) > 1:
                name = node.args[1]
                probed = isinstance(name, ast.Constant) and name.value in CAPABILITIES
                if probed or "executor" in ast.unparse(node.args[0]).lower():
                    found.append(where)
            if node.func.id in ("isinstance", "issubclass") and len(node.args) > 1:
                named = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                if named & concrete:
                    found.append(where)
    assert found == []


def test_the_built_ins_never_read_the_installed_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    def unread(**kwargs: object) -> object:
        raise AssertionError("entry points were read for a built-in executor")

    monkeypatch.setattr(registry.metadata, "entry_points", unread)
    assert isinstance(registry.executor_from_option("threads"), ThreadExecutor)
    dask = registry.executor_from_option("dask=tcp://192.0.2.1:8786")
    assert dask.option() == "dask=tcp://192.0.2.1:8786"  # not started: nothing connected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("threads=4", "--executor threads takes no argument (not '4')"),
        ("dask=", "invalid executor 'dask=': write NAME or NAME=ARG"),
        ("nope", "unknown executor 'nope'; available: dask, threads"),
    ],
)
def test_a_wrong_choice_is_one_line(text: str, message: str) -> None:
    with pytest.raises(ExecutorError) as caught:
        registry.executor_from_option(text)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def _double(inputs: Mapping[str, Any]) -> Any:
    print("doubling")
    return inputs["payload"]["x"] * 2


class _Pickling(Executor):
    """Runs each attempt from its pickled copy, as an executor that ships attempts would."""

    name = "pickling"
    pickles = True

    def run(self, attempt: Attempt) -> Outcome:
        outcome: Outcome = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(attempt))()))
        return outcome


def test_an_attempt_pickles_by_reference_and_brings_its_log_back() -> None:
    graph = TaskGraph.from_nodes([TaskNode("double", _double)])
    run = TaskOrchestrator(graph, executor=_Pickling()).start({"x": 21}).run_to_end()
    assert run.results == {"double": 42}
    assert run.context.logs[("double", 1)].snapshot().text == "doubling\n"
    assert pickle.loads(pickle.dumps(Outcome(OutcomeKind.OK, 1))).kind is OutcomeKind.OK
    closure = Attempt("t", 1, "task", lambda inputs: 1, {}, None)
    with pytest.raises(ExecutorError, match="task 't': its callable"):
        pickle.dumps(closure)


def test_a_run_whose_tasks_cannot_be_pickled_is_refused_before_it_starts() -> None:
    graph = TaskGraph.from_nodes(
        [TaskNode("fine", _double), TaskNode("closure", lambda inputs: 1, depends_on=("fine",))]
    )
    with pytest.raises(ExecutorError) as caught:
        TaskOrchestrator(graph, executor=_Pickling())
    assert str(caught.value).startswith("task 'closure' cannot run on pickling: its callable")
    assert "\n" not in str(caught.value)
    TaskOrchestrator(graph, executor=ThreadExecutor())  # one that runs here takes anything


class _Blocking(Executor):
    """Runs nothing until it is cancelled: what a stop must reach."""

    name = "blocking"

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled: list[Attempt] = []
        self.released = threading.Event()

    def run(self, attempt: Attempt) -> Outcome:
        self.started.set()
        self.released.wait(10)
        return Outcome(OutcomeKind.CANCELLED)

    def cancel(self, attempt: Attempt) -> None:
        self.cancelled.append(attempt)
        self.released.set()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_stop_reaches_the_attempt_in_flight_through_cancel(workers: int) -> None:
    executor = _Blocking()
    graph = TaskGraph.from_nodes([TaskNode("wait", _double)])
    run = TaskOrchestrator(graph, executor=executor, workers=workers).start({"x": 1})
    stepper = threading.Thread(target=run.step)
    stepper.start()
    assert executor.started.wait(10)
    run.cancel()
    stepper.join(10)
    assert [a.task for a in executor.cancelled] == ["wait"]
    assert run.task_status("wait") == "cancelled"


ISOLATED = """
name: iso
tasks:
  a: {run: "builtin:echo", isolation: process}
"""


class _Elsewhere(Executor):
    name = "elsewhere"
    isolatable = False  # its attempts run in other processes already


@pytest.mark.parametrize(("executor", "wrapped"), [(ThreadExecutor(), True),
                         (_Pickling(), True), (_Elsewhere(), False)])  # fmt: skip
def test_process_isolation_wraps_the_executors_that_run_code_here(
    executor: Executor, wrapped: bool
) -> None:
    workflow = parse_workflow(ISOLATED, "iso.yaml")
    live = LiveRun.start(workflow, {}, RunSettings(executor=executor))
    used = live.run.orchestrator.executor
    if wrapped:
        assert isinstance(used, ProcessExecutor) and used.inner is executor
    else:
        assert used is executor
