"""A diff of two stored runs (issue 41): their workflow parsed once, their exports compared
without being written, checksummed or made into plain lists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.engine.scheduler import DeterministicScheduler
from harness_tui.records.export import RunRecord
from harness_tui.records.export.document import Rows
from harness_tui.records.runs.divergence import compare_records
from harness_tui.records.store import RunStore
from harness_tui.workflow.loader import load_workflow
from tests.conftest import invoke

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "workflows" / "user_profile.yaml"


def _two_runs(store: RunStore) -> tuple[str, str]:
    workflow = load_workflow(WORKFLOW)
    ids = []
    for _ in range(2):
        run = TaskOrchestrator(workflow.graph, clock=FakeClock()).start(workflow.payload)
        run_id = store.record(run, workflow)
        run.run_to_end()
        store.finish(run, run_id)
        ids.append(run_id)
    return ids[0], ids[1]


def test_two_stored_runs_of_one_workflow_share_its_parsed_form(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    first, second = _two_runs(store)
    a, b = store.export(first), store.export(second)
    assert a.workflow is b.workflow  # one parse, and the plan diff's same-graph path


def test_comparing_stored_runs_neither_checksums_nor_lists_their_arrays(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    a, b = (store.export(run_id) for run_id in _two_runs(store))
    comparison = compare_records(a, b)
    assert comparison.tasks == [] and comparison.plan is not None
    for record in (a, b):
        assert "checksum" not in record._doc
        assert isinstance(record._doc["trace"], Rows)


def test_diff_of_two_run_ids(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    first, second = _two_runs(store)
    store.close()
    code, out, _ = invoke("diff", first, second, "--store", str(tmp_path / "runs.db"))
    assert code == 0 and "traces agree task by task" in out


def test_a_stored_runs_record_keeps_its_views_and_lets_the_run_go(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    first, _ = _two_runs(store)
    whole = store.export(first)
    lean = store.export(first).let_arrays_go()
    assert lean.lean and not {"trace", "timings", "attempts", "plan", "results"} & set(lean._doc)
    for view in ("events", "logs", "plan", "outputs", "digests", "status"):
        assert getattr(lean, view) == getattr(whole, view), view
    assert not any(type(value) is Rows for value in lean._doc.values())  # nothing holds the run


def test_stored_runs_share_their_task_names(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    a, b = (store.export(run_id) for run_id in _two_runs(store))
    for one, other in zip(a.events, b.events, strict=True):
        assert one.task is other.task and one.task_id is other.task_id


class _Reversed(DeterministicScheduler):
    def build_plan(self, payload: Any) -> list[str]:
        return list(reversed(super().build_plan(payload)))[::-1]  # the same order, its own


def test_a_record_of_a_run_knows_whether_its_plan_is_the_derived_one() -> None:
    workflow = load_workflow(WORKFLOW)
    graph = workflow.graph
    planned = TaskOrchestrator(graph, clock=FakeClock()).start(workflow.payload).run_to_end()
    followed = TaskOrchestrator(graph, clock=FakeClock()).start(workflow.payload, plan=planned.plan)
    custom = TaskOrchestrator(graph, clock=FakeClock(), scheduler=_Reversed(graph)).start(
        workflow.payload
    )
    made = {
        name: RunRecord.from_run(run, workflow)
        for name, run in (("planned", planned), ("followed", followed), ("custom", custom))
    }
    assert made["planned"].plan_derived
    assert not made["followed"].plan_derived and not made["custom"].plan_derived
    for record in made.values():  # the plan seen is the one its rows give
        assert record.plan == RunRecord(record.document).plan
