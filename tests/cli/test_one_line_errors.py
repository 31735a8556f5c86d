"""Hostile or broken input ends in one line and exit 2, never a traceback: huge integers,
deep nesting, a NUL in a recorded path, malformed golden files; and verify passes a large
payload to its child runs through a file, not their command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord
from harness_tui.records.export.writing import checksum

ROOT = Path(__file__).resolve().parents[2]
EXPORT_1_0 = ROOT / "tests/records/data/export-1.0.json"
HUGE = "1" * 5000  # past the 4,300 digits Python converts from text


def one_error_line(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


@pytest.fixture
def echo_workflow(tmp_path: Path) -> Path:
    path = tmp_path / "echo.yaml"
    path.write_text("name: echo\ntasks:\n  a: {run: 'builtin:echo', with: {x: 1}}\n")
    return path


def test_a_payload_with_a_huge_integer(echo_workflow: Path) -> None:
    line = one_error_line("plan", str(echo_workflow), "--payload", HUGE)
    assert line == "error: --payload: a number has more than 4,300 digits"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "harness-run", "n": ' + HUGE + "}", "a number has more than 4,300 digits"),
        ('{"format": "harness-run", "n": ' + "[" * 100_000 + "]" * 100_000 + "}", "too deeply"),
    ],
    ids=["huge-integer", "deep"],
)
def test_an_export_with_a_huge_integer_or_deep_nesting(
    text: str, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "hostile.json"
    path.write_text(text)
    assert message in one_error_line("replay", str(path))


def test_an_export_whose_workflow_path_holds_a_nul(tmp_path: Path) -> None:
    document = json.loads(EXPORT_1_0.read_text(encoding="utf-8"))
    document["workflow"]["path"] = "work\x00flow.yaml"
    document["checksum"] = checksum(document)
    path = tmp_path / "nul.json"
    path.write_text(json.dumps(document))
    with pytest.raises(RecordError, match="is not a usable path"):
        RunRecord.read(path)
    assert "is not a usable path" in one_error_line("replay", str(path))


def test_golden_update_into_a_missing_folder(echo_workflow: Path, tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "golden.json"
    line = one_error_line("golden", str(echo_workflow), str(target), "--update")
    assert line.startswith(f"error: cannot write {target}")


PINNED = '{"payload": null, "plan": [], "results": {}, '
"""The other sections of a golden file, so that the trace is what is malformed."""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "not a JSON object"),
        (PINNED + '"trace": [{"seq": 0}]}', "a trace event lacks 'task'"),
        (PINNED + '"trace": 5}', "its trace is not a list"),
        (PINNED + '"trace": [5]}', "a trace event"),
        (
            PINNED + '"trace": [{"seq": 0, "task": "a", "task_id": "b", "status": "bogus", '
            '"attempt": 1}]}',
            "a trace event 'bogus' is not a valid",
        ),
        ('{"trace": [], "n": ' + HUGE + "}", "a number has more than 4,300 digits"),
        ("{", "not JSON"),
        ('{"trace": []}', "it lacks payload, plan, results"),
    ],
    ids=["list", "no-task", "trace-int", "event-int", "status", "huge", "truncated", "lacks"],
)
def test_a_malformed_golden_file(
    text: str, message: str, echo_workflow: Path, tmp_path: Path
) -> None:
    golden = tmp_path / "golden.json"
    golden.write_text(text)
    line = one_error_line("golden", str(echo_workflow), str(golden))
    assert line.startswith(f"error: {golden}: ") and message in line


def test_verify_with_a_payload_too_large_for_a_command_line(
    echo_workflow: Path, tmp_path: Path
) -> None:
    payload = tmp_path / "big.json"
    payload.write_text(json.dumps({"blob": "x" * 200_000}))
    result = CliRunner().invoke(cli, ["verify", str(echo_workflow), "--payload", f"@{payload}"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("deterministic: 2 runs under different hash seeds agree")


@pytest.mark.parametrize(
    "args",
    [
        ["run", "FOLDER"],
        ["validate", "FOLDER"],
        ["open", "FOLDER"],
        ["run", "WORKFLOW", "--workers", "0"],
        ["run", "WORKFLOW", "--isolation", "proc"],
        ["report", "WORKFLOW", "--format", "pdf"],
        ["resume", "--no-such-option"],
        ["plan"],
        ["examples", "WORKFLOW"],
    ],
)
def test_a_misused_argument_or_option_is_one_line(
    args: list[str], echo_workflow: Path, tmp_path: Path
) -> None:
    named = {"FOLDER": str(tmp_path), "WORKFLOW": str(echo_workflow)}
    result = CliRunner().invoke(cli, [named.get(arg, arg) for arg in args])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    assert "--help)" in result.stderr and "Usage:" not in result.stderr


def test_an_output_nested_deeper_than_the_reader_reads_is_not_exported(tmp_path: Path) -> None:
    (tmp_path / "deeptask.py").write_text(
        "def deep(inputs):\n    value = []\n    for _ in range(250):\n        value = [value]\n"
        "    return value\n"
    )
    workflow = tmp_path / "deep.yaml"
    workflow.write_text('name: deep\ntasks:\n  d: {run: "deeptask:deep"}\n')
    target = tmp_path / "out.json"
    result = CliRunner().invoke(
        cli, ["run", str(workflow), "--no-store", "-q", "--export", str(target)]
    )
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert "nested more than 200 levels deep" in line and "not written" in line
    assert not target.exists()
