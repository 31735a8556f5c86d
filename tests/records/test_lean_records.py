"""Records read lean (replay, diff): the same views and the same first error as a whole read,
without the document's long arrays."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord
from harness_tui.records.export.writing import checksum, export_text
from harness_tui.records.runs.replay import replay

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True, params=["export", "compact"])
def layout(request: pytest.FixtureRequest) -> str:
    """How the files are laid out: as this harness writes them (read a run of records at a
    time), or as compact JSON (read whole)."""
    return str(request.param)


def _written(document: dict[str, Any], path: Path, layout: str) -> Path:
    document = {**document, "checksum": checksum(document)}
    text = export_text(document) if layout == "export" else json.dumps(document)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_lean_record_has_the_views_of_a_whole_one(
    document: dict[str, Any], tmp_path: Path, layout: str
) -> None:
    path = _written(document, tmp_path / "run.json", layout)
    whole, lean = RunRecord.read(path), RunRecord.read(path, lean=True)
    assert lean.lean and not whole.lean
    assert not {"trace", "timings", "attempts", "plan", "results"} & set(lean.document)
    for view in ("events", "logs", "plan", "outputs", "digests", "status", "payload"):
        assert getattr(lean, view) == getattr(whole, view), view
    assert lean.plan_derived  # checked against the payload's: the replay follows it
    assert replay(lean).identical


def test_a_lean_record_is_not_written(
    document: dict[str, Any], tmp_path: Path, layout: str
) -> None:
    lean = RunRecord.read(_written(document, tmp_path / "run.json", layout), lean=True)
    with pytest.raises(RuntimeError, match="read lean"):
        lean.write(tmp_path / "again.json")
    with pytest.raises(RuntimeError, match="read lean"):
        lean.recordings  # noqa: B018 - in the attempts, which are gone
    with pytest.raises(RuntimeError, match="read lean"):
        lean.results  # noqa: B018


Edit = Callable[[dict[str, Any]], Any]


def _both(*edits: Edit) -> Edit:
    def edit(d: dict[str, Any]) -> None:
        for change in edits:
            change(d)

    return edit


def _plan_index(d: dict[str, Any]) -> None:
    d["plan"][1]["index"] = 0


def _timing_twice(d: dict[str, Any]) -> None:
    d["timings"][1]["seq"] = 0


def _attempt(d: dict[str, Any]) -> None:
    d["attempts"][0]["attempt"] = 9


def _status(d: dict[str, Any]) -> None:
    d["status"] = "failed"


def _trace(d: dict[str, Any]) -> None:
    d["trace"][0]["input_digest"] = "0" * 64


@pytest.mark.parametrize(
    "edit",
    [_plan_index, _timing_twice, _attempt, _both(_status, _attempt), _both(_trace, _plan_index),
     _both(_timing_twice, _attempt), _both(_status, _timing_twice)],
)  # fmt: skip
def test_a_lean_read_reports_the_first_error_a_whole_read_does(
    document: dict[str, Any], tmp_path: Path, layout: str, edit: Edit
) -> None:
    changed = copy.deepcopy(document)
    edit(changed)
    path = _written(changed, tmp_path / "run.json", layout)
    with pytest.raises(RecordError) as whole:
        RunRecord.read(path)
    with pytest.raises(RecordError) as lean:
        RunRecord.read(path, lean=True)
    assert str(lean.value) == str(whole.value)


def _not_json(d: dict[str, Any]) -> None:
    d["format"] = float("nan")  # written as NaN: not JSON


@pytest.mark.parametrize(
    ("first", "second"),
    [(_plan_index, _not_json), (None, _not_json), (_trace, None), (_not_json, _trace),
     (_status, _timing_twice), (None, _attempt)],
)  # fmt: skip
def test_a_pair_read_reports_the_first_error_two_reads_do(
    document: dict[str, Any], tmp_path: Path, layout: str, first: Edit | None, second: Edit | None
) -> None:
    paths = []
    for name, edit in (("one.json", first), ("two.json", second)):
        changed = copy.deepcopy(document)
        if edit is not None:
            edit(changed)
        if edit is _not_json:
            (tmp_path / name).write_text(json.dumps(changed), encoding="utf-8")
        else:
            _written(changed, tmp_path / name, layout)
        paths.append(tmp_path / name)
    with pytest.raises(RecordError) as apart:
        RunRecord.read(paths[0], lean=True)
        RunRecord.read(paths[1], lean=True)
    with pytest.raises(RecordError) as paired:
        RunRecord.read_pair(*paths)
    assert str(paired.value) == str(apart.value)


def test_a_pair_read_gives_the_records_two_reads_do(
    document: dict[str, Any], tmp_path: Path, layout: str
) -> None:
    path = _written(document, tmp_path / "run.json", layout)
    one, other = RunRecord.read_pair(path, path)
    alone = RunRecord.read(path, lean=True)
    assert one.events == other.events == alone.events
    assert one.lean and other.lean and one.plan_derived and other.plan_derived


LOGGING_TASKS = """
import itertools

_calls = itertools.count()


def flaky(inputs):
    print("attempt of " + inputs["params"]["name"])
    if next(_calls) % 2 == 0:
        raise RuntimeError("the first try fails")
    return {"ok": True}


def loud(inputs):
    print("x" * 500)
    return 1


def silent(inputs):
    return 2
"""

LOGGING_FLOW = """
name: logs
tasks:
  a: {run: "logging_tasks:flaky", max_retries: 1, with: {name: a}}
  b: {run: "logging_tasks:loud", depends_on: [a]}
  c: {run: "logging_tasks:silent", depends_on: [a]}
  d: {run: "logging_tasks:flaky", depends_on: [b, c], max_retries: 1, with: {name: d}}
"""


def test_a_record_made_from_a_run_has_the_logs_its_export_gives(tmp_path: Path) -> None:
    """The views a record made from a run takes from the run (a diff of stored runs) are the
    ones its export is read back with: logs of retried attempts in the order they ended, a
    cut log marked truncated, a silent attempt absent."""
    from harness_tui.engine.clock import FakeClock
    from harness_tui.engine.orchestrator import TaskOrchestrator
    from harness_tui.workflow.loader import load_workflow

    (tmp_path / "logging_tasks.py").write_text(LOGGING_TASKS, encoding="utf-8")
    (tmp_path / "flow.yaml").write_text(LOGGING_FLOW, encoding="utf-8")
    workflow = load_workflow(tmp_path / "flow.yaml")
    orchestrator = TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.01), log_limit=100)
    run = orchestrator.start(workflow.payload).run_to_end()
    made = RunRecord.from_run(run, workflow, environment={})
    assert "logs" in made.__dict__  # the run's own, not made from the attempts' records
    read = RunRecord.parse(made.to_text())
    assert list(made.logs.items()) == list(read.logs.items())
    assert list(made.logs) == [("a", 1), ("a", 2), ("b", 1), ("d", 1), ("d", 2)]
    assert made.logs[("b", 1)].truncated and not made.logs[("a", 1)].truncated
