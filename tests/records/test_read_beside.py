"""Large exports read lean in a child process while the workflow is parsed here: the same
records, the same first error, the same file read here when the child cannot help."""

from __future__ import annotations

import copy
import json
import sys
import weakref
from pathlib import Path
from typing import Any

import pytest

from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord
from harness_tui.records.export import beside as beside_module
from harness_tui.records.export.beside import Beside
from harness_tui.records.export.streamed import Lean
from harness_tui.records.export.writing import checksum, export_text
from harness_tui.workflow import loader

from .test_lean_records import _both, _not_json, _plan_index, _status, _timing_twice, _trace


def _written(document: dict[str, Any], path: Path) -> Path:
    path.write_text(export_text({**document, "checksum": checksum(document)}), encoding="utf-8")
    return path


def _views(record: RunRecord) -> dict[str, Any]:
    return {
        "document": record.document, "events": record.events, "logs": list(record.logs.items()),
        "plan": record.plan, "outputs": list(record.outputs.items()), "digests": record.digests,
        "claim": record._array_claim, "derived": record.plan_derived,
        "trace_checked": record.trace_digest_checked,
    }  # fmt: skip


def test_a_record_read_beside_is_the_one_read_here(
    document: dict[str, Any], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    path = _written(document, tmp_path / "run.json")
    read_beside = RunRecord.read(path, lean=True)
    assert len(answers) == 1 and type(answers[0]) is Lean  # the child read it
    monkeypatch.setattr(beside_module, "BESIDE_BYTES", 1 << 60)
    read_here = RunRecord.read(path, lean=True)
    assert len(answers) == 1  # no child this time
    assert _views(read_beside) == _views(read_here)


def test_the_workflow_is_parsed_here_before_the_child_is_asked_and_once(
    document: dict[str, Any], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    path = _written(document, tmp_path / "run.json")
    happened: list[str] = []
    parse = loader.parse_workflow

    def parsed(*args: Any, **kwargs: Any) -> Any:
        happened.append("parse")
        return parse(*args, **kwargs)

    outcome = Beside.outcome

    def asked(self: Beside) -> object:
        happened.append("asked")
        return outcome(self)

    monkeypatch.setattr(loader, "parse_workflow", parsed)
    monkeypatch.setattr(loader, "_SHARED", weakref.WeakValueDictionary())  # none parsed yet
    monkeypatch.setattr(Beside, "outcome", asked)
    one, other = RunRecord.read_pair(path, path)  # one file named twice: a child each
    assert happened == ["parse", "asked", "asked"]
    assert one.workflow is other.workflow
    assert one.events == other.events


@pytest.mark.parametrize(
    ("first", "second"),
    [(_plan_index, _not_json), (None, _not_json), (_trace, None), (_not_json, _trace),
     (_status, _timing_twice), (_both(_trace, _plan_index), None)],
)  # fmt: skip
def test_a_pair_read_beside_reports_the_error_a_read_here_does(
    document: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    first: Any, second: Any,
) -> None:  # fmt: skip
    paths = []
    for name, edit in (("one.json", first), ("two.json", second)):
        changed = copy.deepcopy(document)
        if edit is not None:
            edit(changed)
        if edit is _not_json:  # not JSON, and so not read lean: the child says to read it whole
            (tmp_path / name).write_text(json.dumps(changed), encoding="utf-8")
        else:
            _written(changed, tmp_path / name)
        paths.append(tmp_path / name)
    with pytest.raises(RecordError) as here:
        RunRecord.read_pair(*paths)
    monkeypatch.setattr(beside_module, "BESIDE_BYTES", 1)
    monkeypatch.setattr(beside_module, "core_free", lambda: True)
    with pytest.raises(RecordError) as read_beside:
        RunRecord.read_pair(*paths)
    assert str(read_beside.value) == str(here.value)


def test_a_file_the_child_cannot_read_is_its_one_line(
    document: dict[str, Any], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    path = _written(document, tmp_path / "run.json")
    child = beside_module._CHILD.replace("serve(sys.argv[4]", "serve(sys.argv[4] + '.gone'")
    monkeypatch.setattr(beside_module, "_CHILD", child)  # the file is gone when it reads
    with pytest.raises(RecordError, match="cannot read") as raised:
        RunRecord.read(path, lean=True)
    assert answers == [raised.value]
    assert str(raised.value).startswith(f"{path}: ")  # named as given


def test_a_file_over_the_limit_is_refused_here_without_a_child(
    document: dict[str, Any], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    path = _written(document, tmp_path / "run.json")
    monkeypatch.setenv("HARNESS_TUI_LIMITS", "export_bytes=1000")
    with pytest.raises(RecordError, match="over the 1,000-byte limit"):
        RunRecord.read(path, lean=True)
    assert answers == []


@pytest.mark.parametrize(
    "child",
    [
        "import sys; sys.exit(3)",  # dies
        "import sys; sys.stdout.buffer.write(b'not a pickle')",  # answers nonsense
        "import pickle, sys; sys.stdout.buffer.write(pickle.dumps(('lean', 'x')))",  # wrong type
    ],
)
def test_a_child_that_gives_no_answer_leaves_the_file_to_be_read_here(
    document: dict[str, Any], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch, child: str,
) -> None:  # fmt: skip
    path = _written(document, tmp_path / "run.json")
    monkeypatch.setattr(beside_module, "_CHILD", child)
    record = RunRecord.read(path, lean=True)
    assert answers == [beside_module.NOT_READ]
    assert record.lean and record.events and record.plan_derived


def test_no_child_starts_when_none_can(
    document: dict[str, Any], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    path = _written(document, tmp_path / "run.json")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    record = RunRecord.read(path, lean=True)
    assert answers == [beside_module.NOT_READ]
    assert record.lean and record.events


def test_a_child_not_asked_is_stopped(
    document: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first file's error is raised before the second's child is asked: it is ended,
    not left reading."""
    monkeypatch.setattr(beside_module, "BESIDE_BYTES", 100)  # the broken file is read here
    monkeypatch.setattr(beside_module, "core_free", lambda: True)
    children: list[Beside] = []
    start = Beside.__init__

    def started(self: Beside, path: str, name: str) -> None:
        start(self, path, name)
        children.append(self)

    monkeypatch.setattr(Beside, "__init__", started)
    broken = tmp_path / "broken.json"
    broken.write_text("{}", encoding="utf-8")
    sound = _written(document, tmp_path / "run.json")
    monkeypatch.setattr(beside_module, "_CHILD", "import time; time.sleep(60)")
    with pytest.raises(RecordError):
        RunRecord.read_pair(broken, sound)
    assert len(children) == 1 and children[0].process is not None
    assert children[0].process.poll() is not None


def test_small_files_and_pipes_are_read_here(
    document: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    monkeypatch.setattr(Beside, "__init__", lambda self, path, name: made.append(name))
    path = _written(document, tmp_path / "run.json")
    assert path.stat().st_size < beside_module.BESIDE_BYTES
    assert RunRecord.read(path, lean=True).events
    assert beside_module._file_for_child("/dev/null") is None  # a device: read once, here
    assert beside_module._file_for_child(str(tmp_path / "missing.json")) is None
    assert made == []


@pytest.mark.parametrize(
    ("cores", "load", "free"),
    [(2, 0.9, True), (2, 1.6, False), (1, 0.0, False), (8, 6.0, True), (8, 7.6, False)],
)
def test_a_child_is_started_only_with_a_core_free(
    monkeypatch: pytest.MonkeyPatch, cores: int, load: float, free: bool
) -> None:
    monkeypatch.setattr(beside_module.os, "sched_getaffinity", lambda _pid: set(range(cores)))
    monkeypatch.setattr(beside_module.os, "getloadavg", lambda: (load, load, load))
    assert beside_module.core_free() is free
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # a bundled program: no interpreter
    assert beside_module.core_free() is False


def test_a_busy_machine_reads_here(
    document: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    monkeypatch.setattr(Beside, "__init__", lambda self, path, name: made.append(name))
    monkeypatch.setattr(beside_module, "BESIDE_BYTES", 1)
    monkeypatch.setattr(beside_module, "core_free", lambda: False)
    assert RunRecord.read(_written(document, tmp_path / "run.json"), lean=True).events
    assert made == []
