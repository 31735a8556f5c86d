"""orjson's text of an export's records (``records/export/fast.py``): Python's byte for byte,
or none; an export is the same bytes written with or without it, and read the same."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_tui.engine.canonical import CanonicalError, check_json, combine_digests
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord, fast
from harness_tui.records.export.streamed import read_lean
from harness_tui.records.runs.replay import replay
from harness_tui.workflow.loader import load_workflow

ROOT = Path(__file__).resolve().parents[2]

_text = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()))
_floats = st.one_of(
    st.floats(),  # NaN and the infinities too
    st.builds(lambda m, e: m * 10.0**e, st.floats(-10, 10), st.integers(-12, 20)),
)
_finite_floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.builds(lambda m, e: m * 10.0**e, st.floats(-10, 10), st.integers(-12, 20)),
)


def _scalars(floats: st.SearchStrategy[float]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.booleans(), st.integers(), floats, _text)


def _runs(floats: st.SearchStrategy[float]) -> st.SearchStrategy[list[dict[str, Any]]]:
    record = st.dictionaries(_text, _scalars(floats), min_size=1, max_size=6)
    return st.lists(record, min_size=1, max_size=5)


def _values(floats: st.SearchStrategy[float]) -> st.SearchStrategy[Any]:
    return st.recursive(
        _scalars(floats),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
        max_leaves=12,
    )


def _python_layout(value: Any, level: int) -> str:
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    return text.replace("\n", "\n" + "  " * level)


def _expected(value: Any) -> str | None:
    try:
        return check_json(value)
    except CanonicalError:
        return None


@settings(max_examples=400, deadline=None)
@given(st.one_of(_runs(_floats), _values(_floats)))
def test_orjson_text_is_canonical_json_or_none(value: Any) -> None:
    text = fast.compact(value)
    expected = _expected(value)
    if expected is None:  # NaN, infinity, a lone surrogate: never written by orjson
        assert text is None
    else:
        assert text is None or text == expected
    texts = fast.both(value, 2)
    if expected is None:
        assert texts is None
    else:
        assert texts is None or texts == (_python_layout(value, 2), expected)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_runs(_finite_floats), _values(_finite_floats)))
def test_values_with_finite_floats_may_hold_null(value: Any) -> None:
    text = fast.compact(value, finite=True)
    expected = _expected(value)
    assert text is None or text == expected
    texts = fast.both(value, 1, finite=True)
    assert texts is None or texts == (_python_layout(value, 1), expected)


def test_a_run_of_times_is_taken_from_orjson() -> None:
    run = [
        {"seq": 0, "started_at": 41896.136856749, "wall": 1796181647.9082382},
        {"ended_at": 0.25, "seq": 1, "task": "t\u00e9", "traceback": 'a\nb\t\x00"\\'},
    ]
    assert fast.compact(run) == check_json(run)
    assert fast.both(run, 1) == (_python_layout(run, 1), check_json(run))
    large = [1e16, -1.2345e17, 1.7976931348623157e308, 1e-4]  # written alike (the probe)
    assert fast.compact(large) == check_json(large)
    with_null = [{"log": None, "seq": 2}]
    assert fast.compact(with_null) is None  # a null may be a float that is not finite
    assert fast.compact(with_null, finite=True) == check_json(with_null)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_text, _values(_finite_floats), max_size=6))
def test_outputs_read_by_orjson_are_the_standard_librarys_values(outputs: dict[str, Any]) -> None:
    texts = {}
    for name, value in outputs.items():
        text = _expected(value)
        if text is not None:  # a committed output is canonical JSON
            texts[name] = text
    read = fast.values_of(texts)
    expected = {name: json.loads(text) for name, text in texts.items()}
    assert list(read) == list(expected)
    assert [check_json(v) for v in read.values()] == [check_json(v) for v in expected.values()]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_text, _values(_floats), max_size=6))
def test_outputs_written_by_orjson_are_canonical_json_or_none(outputs: dict[str, Any]) -> None:
    texts = fast.texts_of(outputs)
    expected = {name: _expected(value) for name, value in outputs.items()}
    if None in expected.values():  # NaN, an infinity, a lone surrogate: never written
        assert texts is None
    else:
        assert texts is None or list(texts.items()) == list(expected.items())


def test_outputs_orjson_reads_otherwise_are_read_by_json() -> None:
    texts = {"b": check_json({"n": 2**70}), "a": check_json([1e-05, 1.5]), "c": "1"}
    read = fast.values_of(texts)
    assert read == {"b": {"n": 2**70}, "a": [1e-05, 1.5], "c": 1}
    assert type(read["b"]["n"]) is int and list(read) == ["b", "a", "c"]
    assert fast.values_of({"x": '{"a":[1,{"b":null}]}'}) == {"x": {"a": [1, {"b": None}]}}


@pytest.mark.parametrize(
    "value",
    [[1e-05], [3.5e-06], [-0.00001234], [2**64], ["\ud800"], [{"a": 1e-7}], [{1: 2}]],
    ids=["1e-05", "3.5e-06", "small-negative", "2**64", "surrogate", "1e-7", "int-key"],
)
def test_what_orjson_spells_apart_or_refuses_is_left_to_the_usual_way(value: Any) -> None:
    assert fast.compact(value, finite=True) is None
    assert fast.both(value, 1, finite=True) is None


def test_a_json_library_that_writes_otherwise_is_not_used() -> None:
    class Unsigned:  # writes 1e16 as 1e16 (Python: 1e+16), which the guard does not see
        OPT_SORT_KEYS, OPT_INDENT_2 = orjson.OPT_SORT_KEYS, orjson.OPT_INDENT_2

        @staticmethod
        def dumps(value: Any, option: int = 0) -> bytes:
            return orjson.dumps(value, option=option).replace(b"e+", b"e")

    class Upper:  # escapes a control character in capitals
        OPT_SORT_KEYS, OPT_INDENT_2 = orjson.OPT_SORT_KEYS, orjson.OPT_INDENT_2

        @staticmethod
        def dumps(value: Any, option: int = 0) -> bytes:
            return orjson.dumps(value, option=option).replace(b"\\u001f", b"\\u001F")

    assert fast._probe_passes(orjson)
    assert not fast._probe_passes(Unsigned)
    assert not fast._probe_passes(Upper)


# -- exports with and without it --------------------------------------------------------------


def _record(tick: float = 0.01) -> RunRecord:
    workflow = load_workflow(ROOT / "workflows/agent_triage.yaml")  # failures, fallbacks
    orchestrator = TaskOrchestrator(
        workflow.graph, clock=FakeClock(tick=tick), on_failure=workflow.on_failure
    )
    run = orchestrator.start(workflow.payload).run_to_end()
    return RunRecord.from_run(run, workflow, run_id="r1", environment={"python": "3"})


def _taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each call of the fast path gave a text."""
    seen: list[bool] = []
    encoded = fast._encoded

    def spy(value: Any, option: int, finite: bool) -> bytes | None:
        text = encoded(value, option, finite)
        seen.append(text is not None)
        return text

    monkeypatch.setattr(fast, "_encoded", spy)
    return seen


def test_an_export_is_the_same_bytes_with_or_without_orjson(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _taken(monkeypatch)
    quick = _record().write(tmp_path / "quick.json").read_bytes()
    assert any(seen)  # the runs of records were written by orjson
    monkeypatch.setattr(fast, "_state", [None])
    usual = _record().write(tmp_path / "usual.json").read_bytes()
    assert quick == usual
    RunRecord.read(tmp_path / "quick.json")  # and it reads, checksum and all


def test_a_lean_read_is_the_same_with_or_without_orjson(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _record().write(tmp_path / "run.json").read_bytes()
    seen = _taken(monkeypatch)
    quick = read_lean(data, "run.json")
    assert quick is not None and any(seen)
    monkeypatch.setattr(fast, "_state", [None])
    usual = read_lean(data, "run.json")
    assert usual is not None
    assert quick == usual
    assert list(quick.outputs.items()) == list(usual.outputs.items())


def test_times_orjson_spells_apart_are_written_and_read_the_usual_way(tmp_path: Path) -> None:
    path = _record(tick=0.00001).write(tmp_path / "run.json")  # 4e-05, 8e-05...
    data = path.read_bytes()
    assert b'"started_at": 4e-05' in data
    assert read_lean(data, "run.json") is not None
    RunRecord.read(path)


def _forged(data: bytes, old: str, new: str, hashed: str) -> bytes:
    """``data`` with the first ``old`` written ``new``, and a checksum taken over the
    canonical text with it spelled ``hashed`` (what a reader that trusted orjson's text of
    what it read would hash)."""
    document = json.loads(data)
    del document["checksum"]
    text = check_json(document).replace(old.replace(" ", ""), hashed, 1)
    sealed = hashlib.sha256(text.encode()).hexdigest()
    forged = data.replace(old.encode(), new.encode(), 1)
    assert forged != data
    return forged.replace(json.loads(data)["checksum"].encode(), sealed.encode())


@pytest.mark.parametrize(
    ("tick", "old", "new", "hashed"),
    [
        (0.00001, '"started_at": 4e-05,', '"started_at": 0.00004,', '"started_at":0.00004,'),
        (0.00001, '"started_at": 8e-05,', '"started_at": 8.0e-5,', '"started_at":8.0e-5,'),
        # In a run of records orjson writes (no float it spells apart), and in free form.
        (0.01, '"started_at": 0.04,', '"started_at": 1e400,', '"started_at":null,'),
        (
            0.01,
            '"attempt": 1,',
            '"attempt": 1, "attempt_x": [1e400],',
            '"attempt":1,"attempt_x":[null],',
        ),
        (0.01, '"approved": false,', '"approved": 1e400,', '"approved":null,'),
    ],
    ids=[
        "orjson-spelling",
        "exponent-spelling",
        "infinity-as-null",
        "free-infinity-as-null",
        "output-infinity-as-null",
    ],
)
def test_a_checksum_over_another_spelling_is_refused_by_both_readers(
    tmp_path: Path, tick: float, old: str, new: str, hashed: str
) -> None:
    data = _record(tick=tick).write(tmp_path / "run.json").read_bytes()
    forged = _forged(data, old, new, hashed)
    path = tmp_path / "forged.json"
    path.write_bytes(forged)
    assert read_lean(forged, "forged.json") is None
    with pytest.raises(RecordError):
        RunRecord.read(path)


def test_a_replay_reads_back_every_recorded_time(tmp_path: Path) -> None:
    record = RunRecord.read(_record().write(tmp_path / "run.json"))
    report = replay(record)
    assert report.identical
    times = [(e.started_at, e.ended_at, e.wall) for e in report.run.events]
    assert times == [(e.started_at, e.ended_at, e.wall) for e in record.events]
    assert any(e.status == "fallback" for e in record.events)  # a fallback's first reading


OUTPUTS = """
def deep(inputs):
    value = []
    for _ in range(inputs["params"]["depth"] - 1):
        value = [value]
    return value

def long(inputs):
    return int("9" * inputs["params"]["digits"])
"""


@pytest.mark.parametrize(
    ("task", "params", "refused"),
    [
        # The shortest texts that break a bound: 2 characters a level, 1 a digit.
        ("deep", {"depth": 7}, "results is nested more than 7 levels deep"),
        ("deep", {"depth": 6}, None),  # with the results object, 7 levels
        ("long", {"digits": 21}, "an integer in results has more than 20 digits"),
        ("long", {"digits": 20}, None),
    ],
)
def test_outputs_past_the_readers_bounds_are_refused_by_the_writer(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    task: str,
    params: dict[str, int],
    refused: str | None,
) -> None:
    # A record made from a run walks only the outputs whose text is long enough to break a
    # bound (see check_free_form); each bound is met here by the shortest text that breaks it.
    from harness_tui.workflow import limits

    bounds = "export_depth=7,int_digits=200" if task == "deep" else "int_digits=20"
    monkeypatch.setenv(limits.ENV_VAR, bounds)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "bound_tasks.py").write_text(OUTPUTS, encoding="utf-8")
    spec = f'name: bounds\ntasks:\n  t: {{run: "bound_tasks:{task}", with: {json.dumps(params)}}}\n'
    (tmp_path / "bounds.yaml").write_text(spec, encoding="utf-8")
    workflow = load_workflow(tmp_path / "bounds.yaml")
    run = TaskOrchestrator(workflow.graph).start(workflow.payload).run_to_end()
    assert run.status == "succeeded"
    record = RunRecord.from_run(run, workflow)
    if refused is None:
        record.write(tmp_path / "run.json")
        RunRecord.read(tmp_path / "run.json")
    else:
        with pytest.raises(RecordError, match=refused):
            record.write(tmp_path / "run.json")


@pytest.mark.parametrize(
    ("output", "says"),
    [
        ([[]] * 3 + [[[[[[[[]]]]]]]], "results is nested more than 7 levels deep"),
        ({"n": -(10**21)}, "an integer in results has more than 20 digits"),
        (10**21, "an integer in results has more than 20 digits"),
    ],
    ids=["deep", "long-in-object", "long"],
)
def test_a_read_refuses_an_output_past_its_bounds_whichever_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: Any, says: str
) -> None:
    # The lean reader knows each output's text and walks only those long enough to break a
    # bound; both readers refuse the same outputs with the same line.
    from harness_tui.records.export.writing import checksum, export_text
    from harness_tui.workflow import limits

    document = json.loads(_record().write(tmp_path / "run.json").read_bytes())
    document["results"][next(iter(document["results"]))] = output
    del document["checksum"]
    document["checksum"] = checksum(document)
    data = export_text(document).encode()
    (tmp_path / "bad.json").write_bytes(data)
    monkeypatch.setenv(limits.ENV_VAR, "export_depth=7,int_digits=20")
    assert read_lean(data, "bad.json") is None
    with pytest.raises(RecordError, match=says):
        RunRecord.read(tmp_path / "bad.json")
    with pytest.raises(RecordError, match=says):
        RunRecord.read(tmp_path / "bad.json", lean=True)


def test_a_replay_takes_no_trace_digest_on_trust(tmp_path: Path) -> None:
    # A record never read (so never checked) whose trace digest is wrong: its replay's
    # digests differ, though the replayed trace is the recorded one.
    document = json.loads(_record().write(tmp_path / "run.json").read_bytes())
    digests = document["digests"]
    digests["trace"] = "0" * 64
    digests["run"] = combine_digests(
        {k: digests[k] for k in ("payload", "plan", "results", "trace")}
    )
    record = RunRecord(document)
    report = replay(record)
    assert report.diff.identical and not report.digests_match
    checked = RunRecord.read(tmp_path / "run.json")
    assert checked.trace_digest_checked and replay(checked).identical
