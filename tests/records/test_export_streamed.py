"""Exports read a run of records at a time (issue 41): an export in this harness's layout is
read by :mod:`~harness_tui.records.export.streamed` into the views the whole-document reader
makes; any other file is left to that reader, which words its errors."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord, streamed
from harness_tui.records.export.reading import document_of
from harness_tui.records.export.streamed import read_lean
from harness_tui.records.export.writing import checksum, export_text
from harness_tui.workflow.loader import load_workflow

from .lean_views import assert_same_views

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests/records/data/golden"
SHIPPED = sorted((ROOT / "workflows").glob("*.yaml"))


def _sealed(document: dict[str, Any]) -> bytes:
    """The export file of ``document``, its checksum taken again."""
    document = {k: v for k, v in document.items() if k != "checksum"}
    return export_text({**document, "checksum": checksum(document)}).encode()


def _whole(data: bytes) -> RunRecord:
    """The record the whole-document reader makes of ``data``, its arrays let go."""
    return RunRecord(document_of([data], "run.json"), "run.json").let_arrays_go()


def _assert_same(data: bytes) -> None:
    """The streamed reader takes ``data`` and makes what the whole-document reader does."""
    lean = read_lean(data, "run.json")
    assert lean is not None, "not read a run of records at a time"
    assert_same_views(lean, _whole(data))


def _document(path: Path) -> dict[str, Any]:
    workflow = load_workflow(path)
    orchestrator = TaskOrchestrator(
        workflow.graph, clock=FakeClock(tick=0.01), on_failure=workflow.on_failure
    )
    run = orchestrator.start(workflow.payload).run_to_end()
    return RunRecord.from_run(run, workflow).document


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_a_shipped_workflows_export_is_read_a_run_at_a_time(path: Path, tmp_path: Path) -> None:
    _assert_same(_sealed(_document(path)))


@pytest.mark.parametrize("run_bytes", [1, 200, 1 << 18])
def test_any_cut_of_the_long_arrays_reads_the_same(
    document: dict[str, Any], run_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streamed, "_RUN_BYTES", run_bytes)  # 1: a record per run
    _assert_same(_sealed(document))


@pytest.mark.parametrize(
    "golden", [p for p in sorted(GOLDEN.glob("*.json")) if "redacted" not in p.name]
)
def test_the_golden_exports_are_read_a_run_at_a_time(golden: Path) -> None:
    _assert_same(golden.read_bytes())


def _with_text(document: dict[str, Any], text: str) -> dict[str, Any]:
    """``document`` with ``text`` in a result, a task's error and the payload."""
    changed = copy.deepcopy(document)
    task = changed["trace"][-1]["task"]
    changed["results"][task] = {"text": text, text: [text]}
    changed["payload"] = {"note": text}
    for event in changed["trace"]:
        if event.get("error"):
            event["error"]["message"] = text
    return changed


LAYOUT_TEXT = st.sampled_from(
    ['",\n  "', "},\n    {", "\n  ]", '": ', "\n}\n", "\\", '"', "\u2028", "é", "\x00", "\r\n"]
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(parts=st.lists(LAYOUT_TEXT | st.text(max_size=8), max_size=6))
def test_text_that_looks_like_the_layout_is_read_as_text(
    document: dict[str, Any], parts: list[str]
) -> None:
    _assert_same(_sealed(_with_text(document, "".join(parts))))


def _compact(data: bytes) -> bytes:
    return json.dumps(json.loads(data)).encode()


def _indent_4(data: bytes) -> bytes:
    return json.dumps(json.loads(data), indent=4, ensure_ascii=False).encode()


def _sorted_head(data: bytes) -> bytes:  # "format" in its sorted place
    return (json.dumps(json.loads(data), indent=2, sort_keys=True) + "\n").encode()


def _bom(data: bytes) -> bytes:
    return b"\xef\xbb\xbf" + data


def _twice(data: bytes) -> bytes:  # a key given twice: JSON keeps the last
    return data.replace(b'\n  "status": ', b'\n  "status": "failed",\n  "status": ', 1)


def _edited(data: bytes) -> bytes:  # a result changed after export: the checksum differs
    return data.replace(b'"index": 1', b'"index": 2', 1)


def _payload_at_top_indent(data: bytes) -> bytes:  # cut inside a value: not our layout
    document = json.loads(data)
    document["payload"] = {"a": 1, "b": [2, 3]}
    text = _sealed(document).decode()
    ours = '"payload": {\n    "a": 1,\n    "b": [\n      2,\n      3\n    ]\n  }'
    assert ours in text
    changed = text.replace(ours, '"payload": {\n  "a": 1,\n  "b": [2, 3]}')
    assert json.loads(changed) == json.loads(text)
    return changed.encode()


def _nan(data: bytes) -> bytes:
    return data.replace(b'"index": 1', b'"index": NaN', 1)


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2] + b"\n}\n"


@pytest.mark.parametrize(
    "change",
    [_compact, _indent_4, _sorted_head, _bom, _twice, _edited, _payload_at_top_indent, _nan,
     _truncated],
)  # fmt: skip
def test_a_file_not_in_the_layout_is_left_to_the_whole_reader(
    document: dict[str, Any], change: Any, tmp_path: Path
) -> None:
    data = change(_sealed(document))
    assert read_lean(data, "run.json") is None
    path = tmp_path / "run.json"
    path.write_bytes(data)
    try:
        whole = RunRecord.read(path)
    except RecordError as exc:
        with pytest.raises(RecordError) as lean:
            RunRecord.read(path, lean=True)
        assert str(lean.value) == str(exc)
    else:
        assert RunRecord.read(path, lean=True).events == whole.events


def test_a_redacted_export_is_left_to_the_whole_reader() -> None:
    data = (GOLDEN / "user_profile_redacted-1.1.json").read_bytes()
    assert read_lean(data, "run.json") is None


def test_an_export_read_a_run_at_a_time_holds_no_array(
    document: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(_sealed(document))
    record = RunRecord.read(path, lean=True)
    assert record.lean
    assert not {"trace", "timings", "attempts", "plan", "results"} & set(record.document)
    assert record.events == RunRecord.read(path).events


def _plan_index(d: dict[str, Any]) -> None:
    d["plan"][2]["index"] = 1


def _timing_twice(d: dict[str, Any]) -> None:
    d["timings"][3]["seq"] = d["timings"][1]["seq"]


def _timing_beyond(d: dict[str, Any]) -> None:
    d["timings"][3]["seq"] = len(d["trace"])


def _attempt(d: dict[str, Any]) -> None:
    d["attempts"][2]["attempt"] = 9


@pytest.mark.parametrize("edit", [_plan_index, _timing_twice, _timing_beyond, _attempt])
@pytest.mark.parametrize("run_bytes", [1, 1 << 18])
def test_a_claim_of_the_arrays_is_found_in_any_run(
    document: dict[str, Any], edit: Any, run_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streamed, "_RUN_BYTES", run_bytes)
    changed = copy.deepcopy(document)
    edit(changed)
    data = _sealed(changed)
    _assert_same(data)
    assert read_lean(data, "run.json").claim  # type: ignore[union-attr]


def test_events_read_a_run_at_a_time_share_the_plans_strings(document: dict[str, Any]) -> None:
    lean = read_lean(_sealed(document), "run.json")
    assert lean is not None
    names = {id(name) for name in lean.plan.names}
    ids = {id(task_id) for task_id in lean.plan.task_ids}
    assert all(id(e.task) in names and id(e.task_id) in ids for e in lean.events)


@pytest.mark.parametrize(
    ("array", "field"),
    [("trace", "zz"), ("trace", "error"), ("attempts", "io"), ("attempts", "log"),
     ("timings", "zz"), ("plan", "zz")],
)  # fmt: skip
def test_a_nested_field_of_a_record_is_bounded_as_the_free_parts_are(
    document: dict[str, Any], array: str, field: str, tmp_path: Path
) -> None:
    changed = copy.deepcopy(document)
    deep: Any = []
    for _ in range(250):
        deep = [deep]
    changed[array][1][field] = {
        "error": {"type": "E", "message": "m", "zz": deep},
        "io": [{"a": deep}],
        "log": {"text": "t", "zz": deep},
    }.get(field, deep)  # a field the schema does not know, or one in a known field
    path = tmp_path / "run.json"
    path.write_bytes(_sealed(changed))
    messages = set()
    for lean in (False, True):
        with pytest.raises(RecordError) as refused:
            RunRecord.read(path, lean=lean)
        messages.add(str(refused.value))
    assert messages == {f"{path}: {array} is nested more than 200 levels deep"}
