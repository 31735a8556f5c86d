"""Hostile exports: every malformed value and every field that contradicts the trace is one
line and exit 2, even when the checksum was recomputed to match."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.engine.canonical import digest_text
from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord
from harness_tui.records.export.redaction import UNCHECKED
from harness_tui.records.export.writing import checksum

ROOT = Path(__file__).resolve().parents[2]
BOMB = (ROOT / "tests/workflow/broken/46_alias_bomb.yaml").read_text()


def _deep(levels: int) -> Any:
    return json.loads("[" * levels + "]" * levels)


def _source(text: str) -> Callable[[dict[str, Any]], None]:
    def change(d: dict[str, Any]) -> None:
        d["workflow"]["source"] = text
        d["workflow"]["digest"] = digest_text(text)

    return change


def _fake_redaction(d: dict[str, Any]) -> None:
    """Redaction markers that claim every check unchecked while nothing was redacted."""
    d["redacted"] = ["zzz"]
    d["redaction"] = {
        "keys": ["zzz"],
        "replacement": "<redacted>",
        "places": [],
        "unchecked": list(UNCHECKED),
    }


Edit = Callable[[dict[str, Any]], Any]


def _fake_redaction_and(change: Edit) -> Edit:
    def both(d: dict[str, Any]) -> None:
        _fake_redaction(d)
        change(d)

    return both


CASES: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "nan-in-timings": (
        lambda d: d["timings"][0].update(started_at=float("nan")),
        "NaN is not a JSON number",
    ),
    "infinity-in-payload": (
        lambda d: d["payload"].update(x=float("-inf")),
        "-Infinity is not a JSON number",
    ),
    "huge-int-in-results": (
        lambda d: d["results"].update(x=10**2000),
        "an integer in results has more than 1,000 digits",
    ),
    "deep-payload": (
        lambda d: d["payload"].update(x=_deep(300)),
        "payload is nested more than 200 levels deep",
    ),
    "deep-environment": (
        lambda d: d["environment"].update(x=_deep(300)),
        "environment is nested more than 200 levels deep",
    ),
    "lone-surrogate": (
        lambda d: d["environment"].update(x="\ud800"),
        "$.environment.x: str is not a JSON value (not valid Unicode text",
    ),
    "lone-surrogate-in-source": (
        lambda d: d["workflow"].update(source=d["workflow"]["source"] + "# \udc00\n"),
        "$.workflow.source: str is not a JSON value (not valid Unicode text",
    ),
    "alias-bomb-in-source": (
        _source(BOMB),
        "aliases expand to more than 100,000 values (an alias bomb?)",
    ),
    "status": (
        lambda d: d.update(status="failed"),
        "status 'failed' contradicts the trace (it allows cancelled or succeeded)",
    ),
    "status-pending": (
        lambda d: d.update(status="pending"),
        "status 'pending' contradicts the trace",
    ),
    "plan-index": (lambda d: d["plan"][1].update(index=0), "plan row 1 has index 0"),
    "timing-seq-outside": (
        lambda d: d["timings"][0].update(seq=10**40),
        "a timing for no trace event (seq 10000000000000000000000000000000000000000)",
    ),
    "timing-seq-twice": (
        lambda d: d["timings"][1].update(seq=0),
        "a second timing for trace event (seq 0)",
    ),
    "attempt-not-in-trace": (
        lambda d: d["attempts"][0].update(attempt=9),
        "attempt 9 of 'classify' is not in the trace",
    ),
    "redaction-keys": (
        lambda d: d.update(redaction={"keys": ["x"], "replacement": "r", "places": []}),
        "redaction keys differ from the redacted keys",
    ),
    "result-missing-unchecked": (
        _fake_redaction_and(lambda d: d["results"].pop("classify")),
        "result of 'classify' is missing",
    ),
    "result-edited-under-fake-redaction": (
        _fake_redaction_and(lambda d: d["results"].update(classify={"label": "edited"})),
        "result of 'classify' does not match its output digest",
    ),
    "payload-edited-under-fake-redaction": (
        _fake_redaction_and(lambda d: d["payload"].update(edited=True)),
        "plan does not match the embedded workflow and payload",
    ),
    "attempt-negative": (
        lambda d: d["trace"][0].update(attempt=-1),
        "invalid export at trace.0.attempt: Input should be greater than or equal to 0",
    ),
    "format-version-number": (
        lambda d: d.update(format_version=1.1),
        "format_version must be a string such as '1.1', not the float 1.1",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_hostile_export_is_one_line_and_exit_2(
    document: dict[str, Any], tmp_path: Path, case: str
) -> None:
    change, message = CASES[case]
    edited = copy.deepcopy(document)
    change(edited)
    with contextlib.suppress(ValueError):  # not JSON: the reader must refuse it before
        edited["checksum"] = checksum(edited)
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(edited, allow_nan=True), encoding="utf-8")
    with pytest.raises(RecordError) as caught:
        RunRecord.read(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)
    result = CliRunner().invoke(cli, ["replay", str(path)])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    assert message in result.stderr


def test_the_untouched_document_is_read(document: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "fine.json"
    path.write_text(RunRecord(document).to_text(), encoding="utf-8")
    assert RunRecord.read(path).status == "succeeded"


@pytest.mark.parametrize("name", ["\x85", "a\u2028b", "x\ny", "\x1b[2J"])
def test_a_trace_task_name_that_breaks_lines_is_quoted_in_the_one_line(
    document: dict[str, Any], name: str
) -> None:
    edited = copy.deepcopy(document)
    edited["trace"][3]["task"] = name
    edited.pop("checksum")
    edited["checksum"] = checksum(edited)
    with pytest.raises(RecordError) as caught:
        RunRecord.parse(json.dumps(edited), "run.json")
    message = str(caught.value)
    assert "does not match the plan" in message
    assert len(message.splitlines()) == 1 and "\x1b" not in message
