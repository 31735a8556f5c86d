"""The content sniffer: an export is told by a top-level ``format`` key, wherever the file
is large, and a workflow that merely mentions the marker stays a workflow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_tui.engine.clock import FakeClock
from harness_tui.files import FileKind, file_kind
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.workflow.generate import generate_workflow
from harness_tui.workflow.loader import parse_workflow

DATA = Path(__file__).parent / "data"


def large_export(tasks: int = 500) -> RunRecord:
    workflow = parse_workflow(generate_workflow(tasks), "big.yaml")
    live = LiveRun.start(workflow, workflow.payload, RunSettings(clock=FakeClock()))
    live.drive()
    return live.export()


def test_an_export_starts_with_its_format_and_keeps_every_other_key_sorted() -> None:
    record = RunRecord.parse(
        (DATA / "golden" / "user_profile-1.1.json").read_text(encoding="utf-8"), "golden"
    )
    text = record.to_text()
    assert text.startswith('{\n  "format": "harness-run",\n  "format_version": "1.1",\n  "')
    keys = list(json.loads(text))
    assert keys[:2] == ["format", "format_version"]
    assert keys[2:] == sorted(keys[2:])
    assert RunRecord.parse(text).digests == record.digests


def test_a_large_export_is_an_export(tmp_path: Path) -> None:
    path = large_export().write(tmp_path / "big.json")
    assert path.stat().st_size > 65536
    assert file_kind(path) is FileKind.EXPORT


def test_a_large_1_1_export_written_with_attempts_first_is_an_export(tmp_path: Path) -> None:
    document = large_export().document
    path = tmp_path / "old.json"
    path.write_text(json.dumps(document, indent=2, sort_keys=True), encoding="utf-8")
    assert path.read_text(encoding="utf-8").index('"format"') > 65536
    assert file_kind(path) is FileKind.EXPORT


def test_an_export_of_the_1_0_release_is_an_export() -> None:
    assert file_kind(DATA / "export-1.0.json") is FileKind.EXPORT


MARKER = '{"format": "harness-run", "glob": "*.json"}'


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "collect", "tasks": {"a": {"run": "builtin:echo", "with": ' + MARKER + "}}}",
        '{name: collect, tasks: {a: {run: "builtin:echo", with: ' + MARKER + "}}}",
        '{"description": "\\"format\\": \\"harness-run\\"", "tasks": {}}',
        '{"tasks": [{"format": "harness-run"}], "name": "x"}',
        '{"format": "harness-workflow", "x": {"format": "harness-run"}}',
        '["format", {"format": "harness-run"}]',
        "name: plain\ntasks: {}\n",
    ],
    ids=["json-with", "flow-yaml-with", "in-a-string", "in-a-list", "other-format", "list", "yaml"],
)
def test_a_workflow_that_mentions_the_marker_below_the_top_is_a_workflow(
    text: str, tmp_path: Path
) -> None:
    path = tmp_path / "workflow.json"
    path.write_text(text, encoding="utf-8")
    assert file_kind(path) is FileKind.WORKFLOW


def test_the_marker_as_a_top_level_key_after_nested_objects_is_found(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('\ufeff {"a": {"b": ["}", "{"]}, "format" : "harness-run"}', encoding="utf-8")
    assert file_kind(path) is FileKind.EXPORT
