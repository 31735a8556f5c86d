"""A run's results written from its committed texts (``fast.object_both``), read only when a
value is asked for (``document.Results``): the same bytes as the results written from their
values, the same refusals, redaction as before."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_tui.engine.canonical import CanonicalError, check_json, quote
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord, fast, writing
from harness_tui.records.export.document import Results, plain
from harness_tui.records.export.redaction import REPLACEMENT
from harness_tui.records.export.writing import checksum, export_chunks
from harness_tui.workflow.python_source import load_python

_ECHO = '''
"""Tasks that return what the payload holds for them."""

from harness_tui import Harness

NAME = "echoes"


def echo(inputs):
    value = inputs["payload"]["outputs"][inputs["params"]["i"]]
    if isinstance(value, dict) and "nest" in value:  # too deep for the payload to hold
        made = 0
        for _ in range(value["nest"]):
            made = [made]
        return made
    if isinstance(value, dict) and "digits" in value:  # too long for the payload to hold
        return {{"n": int("9" * value["digits"])}}
    return value


def build():
    harness = Harness()
    for i in range({count}):
        harness.register(f"t{{i:05d}}", echo, params={{"i": i}})
    return harness
'''

ODD = [
    {"nested": {"b": [1, {"c": [[], {}, [None]]}], "a": {"z": {"y": {"x": "deep"}}}}},
    {"text": '\u00e9\u2028\u2029\U0001f600\x00\x1f\x7f"\\/ line\nbreak', "\uffff": 1, "a": 2},
    {"big": 2**64, "bigger": -(2**100), "edge": 2**63 - 1, "low": -(2**63)},
    {"at": 1e-4, "under": 9.999e-5, "small": 1e-5, "tiny": 3.5e-6, "sub": 5e-324},
    {"zero": -0.0, "large": 1e16, "larger": 1.2345e17, "max": 1.7976931348623157e308},
    {"sum": 0.1 + 0.2, "looks": "0.0000 e-5 1e-05", "null": None, "t": True, "f": False},
    5,
    -1.5,
    "a string",
    None,
    [],
    {},
    [1, [2, [3, [4]]], {"k": "v"}],
    {"k": 2**64},
]


def _workflow(tmp_path: Path, count: int) -> Any:
    path = tmp_path / f"echoes{count}.py"
    path.write_text(_ECHO.format(count=count), encoding="utf-8")
    return load_python(f"{path}:build")


def _run(workflow: Any, outputs: list[Any]) -> Any:
    orchestrator = TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.01))
    return orchestrator.start({"outputs": outputs}).run_to_end()


def _written(record: RunRecord, path: Path) -> bytes:
    return record.write(path).read_bytes()


def _from_values(run: Any, workflow: Any) -> bytes:
    """The export text as the two-pass way writes it from the values (no orjson)."""
    return RunRecord.from_run(run, workflow, environment={}).to_text().encode()


@pytest.fixture(scope="module")
def odd_workflow(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _workflow(tmp_path_factory.mktemp("odd"), len(ODD))


def test_odd_results_written_from_texts_are_the_bytes_written_from_values(
    odd_workflow: Any, tmp_path: Path
) -> None:
    run = _run(odd_workflow, ODD)
    record = RunRecord.from_run(run, odd_workflow, environment={})
    assert type(record._doc["results"]) is Results
    data = _written(record, tmp_path / "run.json")
    assert data == _from_values(run, odd_workflow)
    assert json.loads(data)["results"] == run.results


def test_results_are_read_only_when_a_value_is_asked_for(odd_workflow: Any, tmp_path: Path) -> None:
    run = _run(
        odd_workflow,
        [{"index": i, "name": f"\u00e9{i}", "nested": [i, {}]} for i in range(len(ODD))],
    )
    record = RunRecord.from_run(run, odd_workflow, environment={})
    _written(record, tmp_path / "run.json")
    results = record._doc["results"]
    assert type(results) is Results and results._values is None  # written, never read
    assert len(results) == len(ODD) and "t00003" in results and list(results) == list(run.results)
    assert record.results == run.results
    assert type(record.document["results"]) is dict
    assert record.document["results"] == run.results
    assert record.outputs == run.output_texts()


def test_a_record_written_twice_is_the_same_file(odd_workflow: Any, tmp_path: Path) -> None:
    run = _run(odd_workflow, ODD)
    record = RunRecord.from_run(run, odd_workflow, environment={})
    first = _written(record, tmp_path / "one.json")
    assert "checksum" in record._doc and type(record._doc["results"]) is Results
    assert _written(record, tmp_path / "two.json") == first  # written from the values then


def test_plain_makes_results_a_dict() -> None:
    results = Results({"a": '{"x":[1,2.5,null]}', "b": "3"})
    document = plain({"results": results, "other": 1})
    assert document == {"results": {"a": {"x": [1, 2.5, None]}, "b": 3}, "other": 1}
    assert type(document["results"]) is dict
    assert plain({"results": {}}) == {"results": {}}


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _workflow(tmp_path_factory.mktemp("many"), 2_100)


@pytest.mark.parametrize(
    "odd",
    [
        None,  # every run of 1,024 from its texts
        2**64,  # one run read by json (orjson reads it as a float)
        1e-5,  # one run left to Python's spelling of the float
    ],
    ids=["plain", "big-int", "small-float"],
)
def test_runs_of_results_from_texts_and_from_values_join_as_one(
    many: Any, tmp_path: Path, odd: Any
) -> None:
    outputs: list[Any] = [{"index": i, "half": i / 2} for i in range(2_100)]
    if odd is not None:
        outputs[1_500] = {"odd": odd}  # in the second run of 1,024
    run = _run(many, outputs)
    data = _written(RunRecord.from_run(run, many, environment={}), tmp_path / "run.json")
    assert data == _from_values(run, many)


def test_a_redacted_key_is_redacted_in_results(odd_workflow: Any, tmp_path: Path) -> None:
    outputs = [*ODD[:-1], {"secret": "hunter2", "kept": 1}]
    run = _run(odd_workflow, outputs)
    record = RunRecord.from_run(run, odd_workflow, redact=["secret"], environment={})
    data = _written(record, tmp_path / "run.json")
    assert b"hunter2" not in data
    results = json.loads(data)["results"]
    assert results[f"t{len(ODD) - 1:05d}"] == {"secret": REPLACEMENT, "kept": 1}
    assert RunRecord.read(tmp_path / "run.json").redacted == ["secret"]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ({"nest": 200}, "results is nested more than 200 levels deep"),
        ({"digits": 1_010}, "an integer in results has more than 1,000 digits"),
    ],
    ids=["too-deep", "too-long"],
)
def test_an_output_the_reader_refuses_is_refused_as_from_values(
    odd_workflow: Any, tmp_path: Path, value: Any, says: str
) -> None:
    outputs = [*ODD[:-1], value]
    run = _run(odd_workflow, outputs)
    record = RunRecord.from_run(run, odd_workflow, environment={})
    with pytest.raises(RecordError) as from_texts:
        record.write(tmp_path / "run.json")
    plained = RunRecord.from_run(run, odd_workflow, environment={})
    plained._doc = plain(plained._doc)  # the results as values, checked as such
    with pytest.raises(RecordError) as from_values:
        plained.write(tmp_path / "run.json")
    assert says in str(from_texts.value)
    assert str(from_texts.value) == str(from_values.value)
    assert not (tmp_path / "run.json").exists()


def test_an_output_just_within_the_reader_is_written(odd_workflow: Any, tmp_path: Path) -> None:
    outputs = [*ODD[:-2], {"nest": 199}, {"digits": 1_000}]  # 200 levels in results
    run = _run(odd_workflow, outputs)
    data = _written(RunRecord.from_run(run, odd_workflow, environment={}), tmp_path / "run.json")
    assert data == _from_values(run, odd_workflow)


# -- object_both: the texts, or None ------------------------------------------------------------


def _python_members(values: dict[str, Any]) -> str:
    """The members of ``values`` as the file lays out the results (indent 2, no braces)."""
    text = json.dumps(values, indent=2, sort_keys=True, ensure_ascii=False)
    return text.replace("\n", "\n  ")[6:-4]


def _members(texts: dict[str, str]) -> str:
    return ",".join(f"{quote(name)}:{texts[name]}" for name in sorted(texts))


def test_canonical_texts_are_laid_out_as_python_lays_out_their_values() -> None:
    values = {f"t{i}": value for i, value in enumerate(ODD)}
    texts = {name: check_json(value) for name, value in values.items()}
    for name, value in values.items():  # each alone, where orjson takes it
        one = fast.object_both([name], {name: texts[name]})
        assert one is None or one == (_python_members({name: value}), _members({name: texts[name]}))
    taken = {n: t for n, t in texts.items() if fast.object_both([n], {n: t}) is not None}
    assert len(taken) == len(ODD) - 4  # all but the big ints, the small floats, their look
    assert fast.object_both(sorted(taken), taken) == (
        _python_members({n: values[n] for n in taken}),
        _members(taken),
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"b":1,"a":2}',  # keys not sorted
        '{"a": 1}',  # not compact
        "0.00001",  # orjson's spelling of 1e-05
        "1e-05",  # Python's, which orjson writes otherwise
        "3.5e-6",
        "18446744073709551616",  # 2**64: a float to orjson
        "NaN",
        "1e400",
        "1.0e2",
        '"\\u00e9"',  # escaped where canonical JSON keeps the character
        '"\\ud800"',  # a lone surrogate
        '1,"t0a":2',  # a member of its own
        "",
        "[1,",
    ],
)
def test_a_text_that_is_not_orjsons_own_is_left_to_the_values(text: str) -> None:
    texts = {"t0": text, "t1": '{"index":1}'}
    assert fast.object_both(["t0", "t1"], texts) is None


def test_names_that_are_not_the_texts_own_are_left_to_the_values() -> None:
    texts = {"t0": "1", "t1": "2"}
    assert fast.object_both(["t0", "t1"], texts) is not None
    assert fast.object_both(["t1", "t0"], texts) is None  # not in sorted order
    assert fast.object_both([], texts) is None
    assert fast.object_both(["\ud800"], {"\ud800": "1"}) is None


def test_without_orjson_results_are_written_from_values(
    odd_workflow: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(odd_workflow, ODD)
    quick = _written(RunRecord.from_run(run, odd_workflow, environment={}), tmp_path / "a.json")
    monkeypatch.setattr(fast, "_state", [None])
    assert fast.object_both(["t0"], {"t0": "1"}) is None
    usual = _written(RunRecord.from_run(run, odd_workflow, environment={}), tmp_path / "b.json")
    assert quick == usual


# -- the float guard: the same answer as the plain search -------------------------------------


@settings(max_examples=400, deadline=None)
@given(
    st.binary(max_size=40) | st.lists(st.sampled_from([b"0", b".", b"e", b"-", b"1"])).map(b"".join)
)
def test_the_float_guard_answers_as_the_plain_search(text: bytes) -> None:
    assert fast._spelled_apart(text) == (b"e-" in text or b"0.0000" in text)


@pytest.mark.parametrize(("level", "value"), [(1, [{"a": 1}, {"b": [1, {}]}]), (2, {"k": [[]]})])
def test_a_layout_nested_by_orjson_is_the_layout_shifted(level: int, value: Any) -> None:
    both = fast.both(value, level)
    shifted = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    assert both == (shifted.replace("\n", "\n" + "  " * level), check_json(value))
    members = fast.members_both(value)
    assert members == (
        json.dumps(value, indent=2, sort_keys=True).replace("\n", "\n  ")[6:-4],
        check_json(value)[1:-1],
    )


# -- attempts: each paired with the start its trace shows -----------------------------------

_RETRIES = '''
"""A task that fails, is retried, and falls back; one that prints."""

from harness_tui import Harness

NAME = "retries"


def failing(inputs):
    raise ValueError("no")


def fallback(inputs):
    return {"fell": "back"}


def noisy(inputs):
    print("said")
    return 1


def build():
    harness = Harness()
    harness.register("noisy", noisy)
    harness.register("flaky", failing, max_retries=2, fallback=fallback)
    harness.register("after", noisy, depends_on=["flaky"])
    return harness
'''


def test_each_attempt_is_paired_with_the_start_its_trace_shows(tmp_path: Path) -> None:
    path = tmp_path / "retries.py"
    path.write_text(_RETRIES, encoding="utf-8")
    workflow = load_python(f"{path}:build")
    run = TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.25)).start({}).run_to_end()
    document = json.loads(_written(RunRecord.from_run(run, workflow), tmp_path / "run.json"))
    walls = {t["seq"]: t.get("wall") for t in document["timings"]}
    started = {
        (e["task"], e["attempt"]): walls[e["seq"]]
        for e in document["trace"]
        if e["status"] == "running"
    }
    ended = [e for e in document["trace"] if e["attempt"] and e["status"] != "running"]
    attempts = document["attempts"]
    assert [(a["task"], a["attempt"]) for a in attempts] == [
        (e["task"], e["attempt"]) for e in ended
    ]
    for made, event in zip(attempts, ended, strict=True):
        assert made["wall_started"] == started.get((event["task"], event["attempt"]))
        assert made["wall_ended"] == walls[event["seq"]]
        assert made["kind"] == ("fallback" if made["attempt"] > 3 else "task")
    kinds = [(a["task"], a["kind"], a["wall_started"] is None) for a in attempts]
    assert ("flaky", "fallback", True) in kinds  # a fallback has no running event
    assert [a["task"] for a in attempts].count("flaky") == 4
    assert any(a["log"] for a in attempts)


# -- objects and arrays of scalars: one text for both ways -------------------------------------

_HEAD = {"format": "harness-run", "format_version": "1.1"}


@pytest.mark.parametrize(
    "value",
    [
        {"source": 'a\nb\u2028\U0001f600\x00"', "n": 2**70, "f": 1e-5, "z": -0.0, "b": True},
        {"big": 1e16, "none": None, "tiny": 5e-324, "e": "1e-05 0.0000"},
        ["x", 1, 2.5, None, False, 2**64, 3.5e-6],
        {"nan": math.nan},
        {"inf": -math.inf},
        ["\ud800"],
        {"k": "\udc80"},
        {"\ud800": 1},
    ],
    ids=["odd-object", "odd-object-2", "odd-array", "nan", "inf", "surrogate", "in-value", "key"],
)
def test_scalars_written_once_both_ways_are_the_two_pass_bytes(value: Any, tmp_path: Path) -> None:
    document = {**_HEAD, "environment": value, "payload": {"p": 1}}
    target = tmp_path / "run.json"
    try:
        sealed = checksum(document)
    except CanonicalError as exc:
        with pytest.raises(CanonicalError, match=re.escape(str(exc))):
            writing.write_sealed(target, dict(document), None)
        assert list(tmp_path.iterdir()) == []
        return
    assert writing.write_sealed(target, dict(document), None) == sealed
    expected = "".join(export_chunks({**document, "checksum": sealed})).encode("utf-8")
    assert target.read_bytes() == expected
