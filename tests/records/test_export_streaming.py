"""Exports are written as they are made (issue 41): the streamed text and checksum are byte for
byte what the whole-string encoders gave, on varied documents and on real runs."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_tui.engine.canonical import digest
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.files import FileError, atomic_write_chunks
from harness_tui.records.export import RunRecord, writing
from harness_tui.records.export.document import Rows
from harness_tui.records.export.writing import checksum, export_chunks, export_text
from harness_tui.workflow.loader import load_workflow

ROOT = Path(__file__).resolve().parents[2]


def whole_text(document: Mapping[str, Any]) -> str:
    """The export text as it was made before it was streamed: one ``json.dumps``."""
    first_keys = ("format", "format_version")
    rest = {k: v for k, v in document.items() if k not in first_keys}
    body = json.dumps(rest, indent=2, sort_keys=True, ensure_ascii=False)
    first = [
        f"  {json.dumps(k)}: {json.dumps(document[k], ensure_ascii=False)}"
        for k in first_keys
        if k in document
    ]
    if not first:
        return body + "\n"
    if not rest:
        return "{\n" + ",\n".join(first) + "\n}\n"
    return "{\n" + ",\n".join(first) + ",\n" + body[2:] + "\n"


VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=25,
)
KEYS = st.sampled_from(["format", "format_version", "trace", "plan", "é", "", "checksum", "a"])


def members(floats: st.SearchStrategy[float]) -> st.SearchStrategy[Any]:
    """An export's shapes: arrays of flat records (trace, timings), objects of small values
    (results), and anything else; text with braces, separators and control characters in
    it."""
    odd = st.sampled_from('}{,:"\\\x01\x02\n é')
    text = st.text(odd | st.characters(exclude_categories=("Cs",)), max_size=8)
    scalars = st.none() | st.booleans() | st.integers() | floats | text
    flat = st.dictionaries(st.text(max_size=5), scalars, max_size=5) | st.lists(scalars, max_size=5)
    return VALUES | st.lists(flat | VALUES, max_size=6) | st.dictionaries(st.text(max_size=4), flat)


MEMBERS = members(st.floats())
JSON_MEMBERS = members(st.floats(allow_nan=False, allow_infinity=False))


@settings(max_examples=150)
@given(st.dictionaries(KEYS | st.text(max_size=4), MEMBERS, max_size=8), st.sampled_from([1, 2, 3]))
def test_the_streamed_text_is_the_whole_one(document: dict[str, Any], run: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writing, "_RUN", run)  # records written together, in runs this long
        assert "".join(export_chunks(document)) == export_text(document) == whole_text(document)


@settings(max_examples=100)
@given(st.dictionaries(KEYS | st.text(max_size=4), JSON_MEMBERS, max_size=8))
def test_the_checksum_taken_in_pieces_is_the_whole_one(document: dict[str, Any]) -> None:
    assert checksum(document) == digest({k: v for k, v in document.items() if k != "checksum"})


@pytest.mark.parametrize(
    "document",
    [
        {"format": "harness-run", "results": {1: "a", 2: {"b": [1, 2]}}},  # keys json converts
        {"trace": [{"x": float("nan")}, [float("inf"), -0.0]], "format_version": "1.1"},
        {"a": {}, "b": [], "c": [{}, []], "d": {"e": {}}},
        {"format": "harness-run", "format_version": "1.1"},
        {"format": "harness-run"},
    ],
)
def test_edge_documents_are_written_as_json_writes_them(document: dict[Any, Any]) -> None:
    assert "".join(export_chunks(document)) == whole_text(document)


@pytest.mark.parametrize("path", sorted((ROOT / "workflows").glob("*.yaml")), ids=lambda p: p.stem)
def test_a_run_export_is_written_byte_for_byte_as_before(path: Path, tmp_path: Path) -> None:
    workflow = load_workflow(path)
    run = TaskOrchestrator(
        workflow.graph, clock=FakeClock(tick=0.01), on_failure=workflow.on_failure
    )
    record = RunRecord.from_run(run.start(workflow.payload).run_to_end(), workflow)
    written = record.write(tmp_path / "run.json")
    assert written.read_bytes() == whole_text(record.document).encode("utf-8")
    rest = {k: v for k, v in record.document.items() if k != "checksum"}
    assert record.document["checksum"] == digest(rest)
    assert RunRecord.read(written).document == record.document


def test_a_streamed_file_over_the_limit_is_not_written_and_its_size_is_said(
    tmp_path: Path,
) -> None:
    target = tmp_path / "out.json"
    target.write_text("old", encoding="utf-8")
    chunks = ["é" * 3000 for _ in range(10)]  # 60,000 bytes in UTF-8
    with pytest.raises(FileError, match="would be 60,000 bytes, over the 10,000-byte limit"):
        atomic_write_chunks(target, iter(chunks), 10_000)
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left
    atomic_write_chunks(target, iter(chunks), 60_000)
    assert target.read_text(encoding="utf-8") == "".join(chunks)


def _break_trace(d: dict[str, Any]) -> None:
    d["trace"][3]["seq"] = "three"


def _break_timing_and_status(d: dict[str, Any]) -> None:
    d["timings"][-1]["worker"] = -1
    d["status"] = "exploded"  # declared after trace, before timings: the whole reports it


def _break_trace_and_status(d: dict[str, Any]) -> None:
    d["trace"][-1]["attempt"] = -1  # trace is declared before status: the whole reports it
    d["status"] = "exploded"


def _break_plan_late(d: dict[str, Any]) -> None:
    d["plan"][-1]["level"] = None


def _break_attempt(d: dict[str, Any]) -> None:
    d["attempts"][0]["kind"] = "other"


def _break_the_array_itself(d: dict[str, Any]) -> None:
    d["trace"] = {"not": "a list"}


@pytest.mark.parametrize(
    "breaking",
    [_break_trace, _break_timing_and_status, _break_trace_and_status, _break_plan_late,
     _break_attempt, _break_the_array_itself],
)  # fmt: skip
def test_an_export_checked_in_runs_reports_the_whole_schemas_first_error(
    breaking: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic import ValidationError

    from harness_tui.records.errors import RecordError
    from harness_tui.records.export import validation
    from harness_tui.records.export.model import RunExport

    monkeypatch.setattr(validation, "_RUN", 2)  # runs of two members
    workflow = load_workflow(ROOT / "workflows/agent_triage.yaml")
    run = TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.01))
    document = RunRecord.from_run(run.start(workflow.payload).run_to_end(), workflow).document
    assert validation.first_error(document) is None  # as written: valid
    broken = json.loads(json.dumps(document))
    breaking(broken)
    with pytest.raises(ValidationError) as whole:
        RunExport.model_validate(broken)
    first = whole.value.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    with pytest.raises(RecordError, match=f"invalid export at {re.escape(where)}: "):
        RunRecord.parse(json.dumps(broken), "run.json")


# -- one pass: the file and its checksum together (write_sealed) ------------------------------

SEALED_KEYS = st.sampled_from(["trace", "plan", "é", "", "a", "zz"])


def _assert_written_as_in_two_passes(document: dict[str, Any], target: Path, run: int) -> None:
    """One pass over ``document``, its members in runs of ``run``, writes the two-pass way's
    text and returns its checksum."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writing, "_RUN", run)
        sealed = writing.write_sealed(target, dict(document), None)
    text, expected = _as_written_before(document)
    assert sealed == expected
    assert target.read_bytes() == text.encode("utf-8")


def _as_written_before(document: dict[str, Any]) -> tuple[str, str]:
    """The text and checksum of the two-pass way: the checksum, then the text."""
    sealed = digest(document)
    return whole_text({**document, "checksum": sealed}), sealed


@settings(max_examples=150, deadline=None)
@given(
    document=st.dictionaries(SEALED_KEYS | st.text(max_size=4), JSON_MEMBERS, max_size=8),
    run=st.sampled_from([1, 2, 3, 1024]),
)
def test_one_pass_writes_the_two_pass_text_and_checksum(
    document: dict[str, Any], run: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    document.pop("checksum", None)
    document |= {"format": "harness-run", "format_version": "1.1"}
    target = tmp_path_factory.mktemp("sealed") / "run.json"
    _assert_written_as_in_two_passes(document, target, run)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"trace": [{"x": float("nan")}]}, "float is not a JSON value"),
        ({"trace": [{"x": "\ud800"}]}, "not valid Unicode text"),
        ({"results": {"a": (1, 2)}}, "tuple is not a JSON value"),
    ],
)
def test_one_pass_refuses_as_the_checksum_does_and_writes_nothing(
    bad: dict[str, Any], message: str, tmp_path: Path
) -> None:
    document = {"format": "harness-run", "format_version": "1.1", **bad}
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        checksum(document)
    target = tmp_path / "run.json"
    with pytest.raises(type(caught.value), match=re.escape(str(caught.value))):
        writing.write_sealed(target, document, None)
    assert list(tmp_path.iterdir()) == []


def test_one_pass_over_the_limit_writes_nothing_and_says_the_size(tmp_path: Path) -> None:
    document = {"format": "harness-run", "format_version": "1.1", "trace": [{"a": "é" * 50}] * 99}
    text, _ = _as_written_before(document)
    size = len(text.encode("utf-8"))
    with pytest.raises(FileError, match=f"would be {size:,} bytes"):
        writing.write_sealed(tmp_path / "run.json", document, size - 1)
    assert list(tmp_path.iterdir()) == []
    writing.write_sealed(tmp_path / "run.json", document, size)
    assert (tmp_path / "run.json").read_text(encoding="utf-8") == text


def test_a_run_exported_to_a_device_is_sealed_the_two_pass_way(tmp_path: Path) -> None:
    workflow = load_workflow(ROOT / "workflows" / "user_profile.yaml")
    run = TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.01)).start(workflow.payload)
    record = RunRecord.from_run(run.run_to_end(), workflow)
    record.write("/dev/null")
    rest = {k: v for k, v in record.document.items() if k != "checksum"}
    assert record.document["checksum"] == digest(rest)


def _partial_run(steps: int) -> tuple[Any, Any]:
    workflow = load_workflow(ROOT / "workflows" / "user_profile.yaml")
    run = TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.01)).start(workflow.payload)
    for _ in range(steps):
        run.step()
    return run, workflow


def test_a_records_rows_are_the_run_as_it_was_when_it_was_made(tmp_path: Path) -> None:
    run, workflow = _partial_run(2)
    record = RunRecord.from_run(run, workflow)
    events = len(run.events)
    ended = sum(1 for e in run.events if e.attempt and e.status != "running")
    run.run_to_end()  # the run goes on after its export was made
    assert len(run.events) > events
    written = record.write(tmp_path / "run.json")
    read = RunRecord.read(written)
    assert len(read.events) == events
    assert len(read.document["attempts"]) == ended == 2
    assert read.document == record.document  # plain lists: as read back


def test_a_records_document_is_plain_lists_equal_to_what_it_writes(tmp_path: Path) -> None:
    run, workflow = _partial_run(100)
    record = RunRecord.from_run(run, workflow)
    assert isinstance(record._doc["trace"], Rows)  # made when written, not before
    document = record.document
    assert all(type(value) is not Rows for value in document.values())
    assert document["trace"] == run.canonical_trace()
    assert document["plan"] == run.plan.to_json()
    assert document["timings"] == [event.timing() for event in run.events]
    written = record.write(tmp_path / "run.json")
    assert written.read_bytes() == whole_text(document).encode("utf-8")


@pytest.mark.parametrize("path", sorted((ROOT / "workflows").glob("*.yaml")), ids=lambda p: p.stem)
def test_a_run_records_views_are_those_its_document_gives(path: Path) -> None:
    workflow = load_workflow(path)
    run = TaskOrchestrator(
        workflow.graph, clock=FakeClock(tick=0.01), on_failure=workflow.on_failure
    ).start(workflow.payload)
    record = RunRecord.from_run(run.run_to_end(), workflow)
    rebuilt = RunRecord(record.document)  # views made from the plain document
    assert record.events == rebuilt.events
    assert [e._asdict() for e in record.events] == [e._asdict() for e in rebuilt.events]
    assert list(record.outputs.items()) == list(rebuilt.outputs.items())
    assert record.workflow.digest == rebuilt.workflow.digest
    assert record.plan == rebuilt.plan


@pytest.mark.parametrize("run", [1, 2, 1024])
def test_one_pass_lays_out_objects_of_records_as_the_two_pass_way(run: int, tmp_path: Path) -> None:
    hostile = ['}\x01"', "\x02{", "a: b, c", '"}', "é\u2028", "\\", ""]
    results = {
        f"t{i}{name}": {"index": i, "label": name, "score": i / 7, "ok": i % 2 == 0}
        for i, name in enumerate(hostile * 3)
    }
    document = {
        "format": "harness-run",
        "format_version": "1.1",
        "results": results,
        "payload": {"user": {"id": "u1", "tier": "gold"}, "empty": {}, "n": 3},
    }
    target = tmp_path / "run.json"
    _assert_written_as_in_two_passes(document, target, run)


_ODD_TEXT = st.text(
    st.sampled_from('}{,:"\\\x01\x02\n é') | st.characters(exclude_categories=("Cs",))
)
_SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _ODD_TEXT
).filter(lambda v: not (isinstance(v, float) and v in (float("inf"), float("-inf"))))
_RECORDS = st.dictionaries(
    _ODD_TEXT, st.dictionaries(_ODD_TEXT, _SCALARS, min_size=1, max_size=4), max_size=12
)


@settings(max_examples=150, deadline=None)
@given(results=_RECORDS, run=st.sampled_from([1, 2, 3, 1024]))
def test_one_pass_lays_out_any_object_of_records_as_the_two_pass_way(
    results: dict[str, Any], run: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    document = {"format": "harness-run", "format_version": "1.1", "results": results}
    target = tmp_path_factory.mktemp("records") / "run.json"
    _assert_written_as_in_two_passes(document, target, run)
