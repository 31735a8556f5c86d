"""Exports pinned byte for byte, and the reader's promise across versions of the format.

Regenerate the goldens after a deliberate format change with
``HARNESS_UPDATE_GOLDEN=1 python -m pytest tests/records/test_golden_exports.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness_tui.engine.clock import FakeClock
from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord
from harness_tui.records.export.model import FORMAT_VERSION
from harness_tui.records.export.writing import checksum
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.replay import replay
from harness_tui.records.runs.settings import RunSettings
from harness_tui.workflow.loader import load_workflow

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden"
ENVIRONMENT = {"python": "3.11", "implementation": "CPython", "platform": "golden"}

CASES = {
    "user_profile": ("workflows/user_profile.yaml", ()),
    "flaky_pipeline": ("tests/tui/data/flaky_pipeline.yaml", ()),
    "user_profile_redacted": ("workflows/user_profile.yaml", ("user_id",)),
}


def export_text(workflow_path: str, redact: tuple[str, ...]) -> str:
    workflow = load_workflow(workflow_path)
    live = LiveRun.start(
        workflow, workflow.payload, RunSettings(clock=FakeClock(start=10.0, tick=0.25))
    )
    live.drive()
    record = RunRecord.from_run(live.run, workflow, redact=redact, environment=ENVIRONMENT)
    # Tracebacks name the files of this checkout; the goldens must not depend on where the
    # project is checked out (nor carry a machine's paths), so the root becomes a placeholder
    # and the checksum is taken again over the result.
    for timing in record.document["timings"]:
        if timing.get("traceback"):
            timing["traceback"] = timing["traceback"].replace(str(ROOT), "<checkout>")
    record.document["checksum"] = checksum(record.document)
    return record.to_text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_exports_match_their_golden_files_byte_for_byte(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # exports name the workflow path as the user gave it
    text = export_text(*CASES[name])
    golden = GOLDEN / f"{name}-{FORMAT_VERSION}.json"
    if os.environ.get("HARNESS_UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8", newline="\n")
    assert text == golden.read_text(encoding="utf-8")
    record = RunRecord.read(golden)
    assert record.document["format_version"] == "1.1"


def test_a_1_1_export_records_attempts_beside_the_trace() -> None:
    record = RunRecord.read(GOLDEN / f"flaky_pipeline-{FORMAT_VERSION}.json")
    attempts = [(a["task"], a["attempt"], a["kind"]) for a in record.document["attempts"]]
    # fetch and audit once each, transform three times (two retries), publish never ran.
    assert attempts == [
        ("fetch", 1, "task"),
        ("transform", 1, "task"),
        ("transform", 2, "task"),
        ("transform", 3, "task"),
        ("audit", 1, "task"),
    ]
    for attempt in record.document["attempts"]:
        assert attempt["wall_started"] <= attempt["wall_ended"]
        assert attempt["worker"] == 0 and attempt["log"] is None
    assert record.document["forked_from"] is None and record.document["spec"] is None


def test_a_redacted_1_1_export_says_how_it_was_redacted() -> None:
    record = RunRecord.read(GOLDEN / f"user_profile_redacted-{FORMAT_VERSION}.json")
    redaction = record.document["redaction"]
    assert redaction["keys"] == ["user_id"] == record.redacted
    assert set(redaction["places"]) >= {"payload", "workflow", "results", "logs"}
    assert redaction["replacement"] == "<redacted>" and redaction["unchecked"]


def test_an_export_written_by_the_1_0_release_still_reads_and_replays() -> None:
    path = DATA / "export-1.0.json"
    record = RunRecord.read(path)
    assert record.document["format_version"] == "1.0"
    assert "attempts" not in record.document
    report = replay(record)
    assert report.identical
    assert report.run.digest == record.digests["run"]
    assert all(event.wall is None for event in record.events)


def test_unknown_fields_of_a_known_major_are_ignored_and_a_new_major_refused(
    tmp_path: Path,
) -> None:
    document = json.loads((DATA / "export-1.0.json").read_text(encoding="utf-8"))
    document["format_version"] = "1.7"
    document["from_the_future"] = {"anything": [1, 2]}
    document["checksum"] = checksum(document)
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(document), encoding="utf-8")
    assert replay(RunRecord.read(newer)).identical
    document["format_version"] = "2.0"
    document["checksum"] = checksum(document)
    newer.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(RecordError, match=r"format version '2.0' is not supported"):
        RunRecord.read(newer)
