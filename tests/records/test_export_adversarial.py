"""Adversarial checks of the one-pass export writer (``write_sealed``), the lazy ``Rows`` of a
record made from a run, and the reading shortcuts (issue 41): each must give what the two-pass
way gave, byte for byte or error for error."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_tui.engine.canonical import CanonicalError
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.export import RunRecord, writing
from harness_tui.records.export.document import Rows, plain
from harness_tui.records.export.writing import checksum, export_chunks
from harness_tui.workflow.loader import load_workflow

ROOT = Path(__file__).resolve().parents[2]
HEAD = {"format": "harness-run", "format_version": "1.1"}


# -- refusals: the one pass must refuse as the checksum does ----------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param({"payload": "\ud800"}, id="lone-surrogate-in-a-scalar-value"),
        pytest.param({"environment": {"\udc80": 1}}, id="lone-surrogate-in-a-nested-key"),
        pytest.param({"payload": {1, 2}}, id="set-in-an-object-value"),
        pytest.param({"results": {"a": b"bytes"}}, id="bytes-in-an-object-value"),
        pytest.param({"trace": [{"a": {"b": "\ud800"}}]}, id="lone-surrogate-in-a-non-record"),
        pytest.param({"trace": [{"a": {1}}]}, id="set-in-a-record-run"),
    ],
)
def test_one_pass_refuses_outside_flat_records_as_the_checksum_does(
    bad: dict[str, Any], tmp_path: Path
) -> None:
    """write_sealed promises 'the same refusals' as the two-pass way (a CanonicalError naming
    the path). Outside a run of flat records the one pass writes the file text before it
    hashes, so a lone surrogate escapes as UnicodeEncodeError and a set or bytes as
    TypeError from json.dumps, neither of which it falls back on."""
    document = {**HEAD, **bad}
    with pytest.raises(CanonicalError) as caught:
        checksum(document)
    with pytest.raises(CanonicalError, match=re.escape(str(caught.value))):
        writing.write_sealed(tmp_path / "run.json", dict(document), None)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "environment",
    [
        pytest.param({"x": {1}}, id="set"),
        pytest.param({"x": "\ud800"}, id="lone-surrogate"),
        pytest.param({"x": b"b"}, id="bytes"),
    ],
)
def test_a_run_record_with_a_non_json_environment_is_refused_in_one_line(
    environment: dict[str, Any], tmp_path: Path
) -> None:
    """Before the one pass, RunRecord.from_run took the checksum and refused a non-JSON value
    with a CanonicalError (a HarnessError: one line at the CLI). Now the refusal comes at
    write time, and it must still be that error, not a TypeError or UnicodeEncodeError."""
    workflow = load_workflow(ROOT / "workflows" / "user_profile.yaml")
    run = TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.01)).start(workflow.payload)
    run.run_to_end()
    with pytest.raises(CanonicalError, match=r"\$\.environment\.x: "):
        RunRecord.from_run(run, workflow, environment=environment).write(tmp_path / "run.json")
    assert list(tmp_path.iterdir()) == []


# -- read_pair: the second file's problems are still one RecordError naming it ----------------


def _user_profile_document() -> dict[str, Any]:
    workflow = load_workflow(ROOT / "workflows" / "user_profile.yaml")
    run = TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.01)).start(workflow.payload)
    return RunRecord.from_run(run.run_to_end(), workflow, environment={"a": 1}).document


def _with_invalid_source(document: dict[str, Any], *, fix_digest: bool) -> dict[str, Any]:
    """The export with an embedded source that is no workflow, its checksum recomputed."""
    import copy

    from harness_tui.engine.canonical import digest_text

    changed = copy.deepcopy(document)
    changed["workflow"]["source"] = "name: x\ntasks: [oops"
    if fix_digest:
        changed["workflow"]["digest"] = digest_text(changed["workflow"]["source"])
    changed.pop("checksum")
    changed["checksum"] = checksum(changed)
    return changed


@pytest.mark.parametrize(
    ("fix_digest", "message"),
    [
        (True, "embedded workflow is invalid: "),
        (False, "embedded workflow does not match its digest"),
    ],
)
def test_read_pair_reports_the_second_files_invalid_workflow_as_a_record_error(
    fix_digest: bool, message: str, tmp_path: Path
) -> None:
    """read_pair now asks ``other.workflow`` (to share the derived plan) before
    ``other._check()``, so the second file's unparsable embedded workflow escapes as a raw
    WorkflowError (no file name; before its digest check), where the first file's gives
    the RecordError ``<file>: embedded workflow is invalid/does not match its digest``."""
    import json

    from harness_tui.records.errors import RecordError

    document = _user_profile_document()
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(document), encoding="utf-8")
    bad.write_text(
        json.dumps(_with_invalid_source(document, fix_digest=fix_digest)), encoding="utf-8"
    )
    with pytest.raises(RecordError, match=re.escape(f"{bad}: {message}")):
        RunRecord.read_pair(bad, good)  # the first file: as it always was
    with pytest.raises(RecordError, match=re.escape(f"{bad}: {message}")):
        RunRecord.read_pair(good, bad)  # the second: the same error


def test_diff_names_the_second_file_whose_embedded_workflow_is_invalid(tmp_path: Path) -> None:
    import json

    from tests.conftest import invoke

    document = _user_profile_document()
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(document), encoding="utf-8")
    bad.write_text(json.dumps(_with_invalid_source(document, fix_digest=False)), encoding="utf-8")
    code, _, err = invoke("diff", str(good), str(bad))
    assert code == 2
    assert err == f"error: {bad}: embedded workflow does not match its digest\n"


# -- Rows: a record made from a run is written again as it was written first -------------------


def test_a_record_of_a_run_not_yet_stepped_can_be_written_twice(tmp_path: Path) -> None:
    """A record made from a run with no events yet (started, paused before its first step)
    holds empty Rows for its trace and timings. Its first write (one pass) turns an empty
    Rows into [], but once it has its checksum a second write goes through export_chunks,
    whose _indented hands the empty Rows to json.dumps: TypeError ("Object of type Rows is
    not JSON serializable"). Before, the same record wrote the same file twice."""
    workflow = load_workflow(ROOT / "workflows" / "user_profile.yaml")
    run = TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.01)).start(workflow.payload)
    assert len(run.events) == 0
    record = RunRecord.from_run(run, workflow, environment={"a": 1})
    first = record.write(tmp_path / "first.json")
    second = record.write(tmp_path / "second.json")
    assert second.read_bytes() == first.read_bytes()
    assert record.to_text().encode("utf-8") == first.read_bytes()


def test_export_chunks_writes_empty_rows_as_an_empty_list() -> None:
    """export_chunks takes Rows as lists (``kind = list``) except when they are empty."""
    from harness_tui.records.export.writing import export_text

    document = {**HEAD, "trace": Rows((), dict), "timings": Rows((), dict)}
    assert export_text(document) == export_text({**HEAD, "trace": [], "timings": []})


def _circular() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


def _deep(levels: int) -> list[Any]:
    top: list[Any] = []
    here = top
    for _ in range(levels):
        here.append([])
        here = here[0]
    return top


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param({"payload": _circular()}, id="circular-value"),
        pytest.param({"trace": [{"a": _circular()}]}, id="circular-trace-member"),
        pytest.param({"payload": _deep(3000)}, id="nested-deeper-than-the-recursion-limit"),
    ],
)
def test_one_pass_refuses_a_circular_or_too_deep_value_as_the_checksum_does(
    bad: dict[str, Any], tmp_path: Path
) -> None:
    """The same root cause as above (the file text is made before the checksum's canonical
    JSON): json.dumps's 'Circular reference detected' ValueError and a RecursionError escape
    the one pass, where the checksum says 'circular or too deeply nested'."""
    document = {**HEAD, **bad}
    with pytest.raises(CanonicalError, match="circular or too deeply nested") as caught:
        checksum(document)
    with pytest.raises(CanonicalError, match=re.escape(str(caught.value))):
        writing.write_sealed(tmp_path / "run.json", dict(document), None)
    assert list(tmp_path.iterdir()) == []


# -- what held: the one pass on Rows, hostile text and nested members (passes) ---------------

_ODD = st.sampled_from([*'}{,:"\\\x01\x02\x03\né\u2028\ufeff\U0001f600[', "}\x01{"])
_TEXT = st.lists(_ODD | st.characters(exclude_categories=("Cs",)), max_size=5).map("".join)
_KEY = _TEXT | st.sampled_from(["checksum", "a", "", "A", "ch", "chz"])
_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT
)
_NESTED = st.recursive(
    _SCALAR, lambda c: st.lists(c, max_size=3) | st.dictionaries(_KEY, c, max_size=3), max_leaves=6
)
_MEMBER = st.dictionaries(_KEY, _SCALAR, max_size=4) | st.dictionaries(_KEY, _NESTED, max_size=3)
_TOP = _KEY.filter(lambda k: k not in ("checksum", "format", "format_version"))


def _same(member: Any) -> Any:
    return member


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    document=st.dictionaries(_TOP, st.lists(_MEMBER, max_size=6) | _NESTED, max_size=5),
    run=st.sampled_from([1, 2, 1024]),
)
def test_one_pass_over_rows_of_hostile_members_writes_the_two_pass_bytes(
    document: dict[str, Any], run: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    document = {
        **HEAD,
        **{k: Rows(tuple(v), _same) if type(v) is list else v for k, v in document.items()},
    }
    whole = plain(document)
    sealed = checksum(whole)
    expected = "".join(export_chunks({**whole, "checksum": sealed})).encode("utf-8")
    target = tmp_path_factory.mktemp("rows") / "run.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writing, "_RUN", run)
        assert writing.write_sealed(target, dict(document), None) == sealed
    assert target.read_bytes() == expected
