from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord
from harness_tui.records.export.writing import checksum
from harness_tui.records.runs.replay import replay
from harness_tui.workflow.loader import Workflow, load_workflow, parse_workflow

ROOT = Path(__file__).resolve().parents[2]


def record_of(workflow: Workflow, payload: Any = None, **kwargs: Any) -> RunRecord:
    orchestrator = TaskOrchestrator(
        workflow.graph, clock=FakeClock(tick=0.01), on_failure=workflow.on_failure
    )
    run = orchestrator.start(workflow.payload if payload is None else payload).run_to_end()
    return RunRecord.from_run(run, workflow, **kwargs)


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    record = record_of(load_workflow(ROOT / "workflows/agent_triage.yaml"))
    return record.write(tmp_path / "run.json")


def test_round_trip_is_byte_identical(exported: Path, tmp_path: Path) -> None:
    again = RunRecord.read(exported).write(tmp_path / "again.json")
    assert again.read_bytes() == exported.read_bytes()


NOT_CANONICAL = {"timings", "attempts", "environment", "checksum"}


def test_two_exports_of_one_run_differ_only_in_timings_environment_checksum() -> None:
    workflow = load_workflow(ROOT / "workflows/user_profile.yaml")
    run = TaskOrchestrator(workflow.graph).start(workflow.payload).run_to_end()
    one = RunRecord.from_run(run, workflow).document
    two = RunRecord.from_run(run, workflow).document
    two["environment"] = {"python": "elsewhere"}
    differing = {k for k in one if one[k] != two.get(k)}
    assert differing <= NOT_CANONICAL
    other_run = TaskOrchestrator(workflow.graph).start(workflow.payload).run_to_end()
    three = RunRecord.from_run(other_run, workflow).document
    assert {k for k in one if one[k] != three[k]} <= NOT_CANONICAL


def test_replay_reproduces_plan_trace_and_digests(exported: Path) -> None:
    report = replay(RunRecord.read(exported))
    assert report.identical
    assert report.run.digests() == RunRecord.read(exported).digests


def _tamper(path: Path, change: Any) -> Path:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document, indent=2))
    return path


def _resign(document: dict[str, Any]) -> None:
    document["checksum"] = checksum(document)


def _edit_trace(d: dict[str, Any]) -> None:
    d["trace"][1]["attempt"] = 2
    _resign(d)


def _edit_result(d: dict[str, Any]) -> None:
    d["results"]["classify"]["category"] = "billing"
    _resign(d)


def _other_payload(d: dict[str, Any]) -> None:
    d["payload"]["seed"] = 11
    _resign(d)


def _edited_workflow(d: dict[str, Any]) -> None:
    d["workflow"]["source"] = d["workflow"]["source"].replace("escalate:", "escalate_now:")
    _resign(d)


TAMPERING = {
    "truncated": (lambda p: p.write_text(p.read_text()[:500]), "the file may be truncated"),
    "not-json": (lambda p: p.write_text("hello"), "not JSON (Expecting value, line 1"),
    "not-an-export": (lambda p: p.write_text('{"a": 1}'), "not a harness-tui run export"),
    "bad-checksum": (
        lambda p: _tamper(p, lambda d: d["results"].update(extra=1)),
        "checksum mismatch: the file was changed after it was exported",
    ),
    "edited-trace": (lambda p: _tamper(p, _edit_trace), "trace does not match its digest"),
    "edited-result": (
        lambda p: _tamper(p, _edit_result),
        "result of 'classify' does not match its output digest",
    ),
    "major-version": (
        lambda p: _tamper(p, lambda d: d.update(format_version="2.0")),
        "format version '2.0' is not supported (this harness-tui reads 1.x)",
    ),
    "plan-vs-workflow": (
        lambda p: _tamper(p, _other_payload),
        "plan does not match the embedded workflow and payload",
    ),
    "workflow-edited": (
        lambda p: _tamper(p, _edited_workflow),
        "embedded workflow does not match its digest",
    ),
    "schema": (
        lambda p: _tamper(p, lambda d: d.update(trace="nope")),
        "invalid export at trace: Input should be a valid list",
    ),
}


@pytest.mark.parametrize("case", TAMPERING, ids=list(TAMPERING))
def test_tampered_exports_are_refused_with_one_clear_line(exported: Path, case: str) -> None:
    corrupt, message = TAMPERING[case]
    corrupt(exported)
    with pytest.raises(RecordError) as caught:
        RunRecord.read(exported)
    assert message in str(caught.value)
    assert str(caught.value).startswith(str(exported))
    result = CliRunner().invoke(cli, ["replay", str(exported)])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_huge_file_is_refused(exported: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_TUI_LIMITS", "export_bytes=1000")
    with pytest.raises(RecordError, match="over the 1,000-byte limit"):
        RunRecord.read(exported)


def test_unknown_fields_of_a_known_version_are_ignored(exported: Path) -> None:
    def add(d: dict[str, Any]) -> None:
        d["format_version"] = "1.7"
        d["future_field"] = {"x": 1}
        _resign(d)

    _tamper(exported, add)
    assert RunRecord.read(exported).status == "succeeded"


def test_export_referencing_os_system_replays_without_running_anything(tmp_path: Path) -> None:
    source = (
        "name: dangerous\n"
        "tasks:\n"
        "  wipe: {run: 'os:system', with: {cmd: 'rm -rf /'}}\n"
        "  after: {run: 'shutil:rmtree', depends_on: [wipe]}\n"
    )
    workflow = parse_workflow(source, "dangerous.yaml")
    # Forge a recorded run: the orchestrator runs harmless stand-ins in place of the refs.
    from harness_tui.engine.graph import TaskGraph, TaskNode

    harmless = TaskGraph.from_nodes(
        TaskNode(n.name, lambda i: {"ok": True}, n.depends_on, params=n.params)
        for n in workflow.graph.nodes.values()
    )
    run = TaskOrchestrator(harmless, clock=FakeClock()).start({}).run_to_end()
    path = RunRecord.from_run(run, workflow).write(tmp_path / "dangerous.json")
    code = (
        "import sys, os, shutil\n"
        "calls = []\n"
        "os.system = lambda *a: calls.append(a)\n"
        "shutil.rmtree = lambda *a: calls.append(a)\n"
        "from harness_tui.records.export import RunRecord\n"
        "from harness_tui.records.runs.replay import replay\n"
        f"report = replay(RunRecord.read({str(path)!r}))\n"
        "print(report.identical, calls)\n"
    )
    import subprocess

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "True []"


def test_redacted_export_keeps_digests_and_still_verifies(tmp_path: Path) -> None:
    workflow = load_workflow(ROOT / "workflows/user_profile.yaml")
    plain = record_of(workflow)
    redacted = record_of(workflow, redact=["user_id"])
    path = redacted.write(tmp_path / "redacted.json")
    document = json.loads(path.read_text())
    shown = json.dumps([document["payload"], document["results"]])
    assert "u001" not in shown and "<redacted>" in shown
    again = RunRecord.read(path)
    assert again.digests == plain.digests
    assert again.redacted == ["user_id"]
    assert replay(again).unchecked
    result = CliRunner().invoke(
        cli,
        [
            "verify",
            str(ROOT / "workflows/user_profile.yaml"),
            "--against",
            str(path),
            "--payload",
            '{"user_id": "u001"}',
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("identical to")


def test_verify_against_names_the_task_whose_output_changed(tmp_path: Path) -> None:
    (tmp_path / "steps_mod_for_verify.py").write_text(
        "import os\n"
        "def base(inputs):\n    return {'n': 1}\n"
        "def middle(inputs):\n    return {'n': int(os.environ.get('PLANTED', '2'))}\n"
        "def last(inputs):\n    return inputs['context']['results']['middle']\n"
    )
    wf = tmp_path / "wf.yaml"
    wf.write_text(
        "name: planted\ntasks:\n"
        "  base: {run: 'steps_mod_for_verify:base'}\n"
        "  middle: {run: 'steps_mod_for_verify:middle', depends_on: [base]}\n"
        "  last: {run: 'steps_mod_for_verify:last', depends_on: [middle]}\n"
    )
    runner = CliRunner()
    out = tmp_path / "good.json"
    assert (
        runner.invoke(cli, ["run", str(wf), "--no-store", "-q", "--export", str(out)]).exit_code
        == 0
    )
    sys.modules.pop("steps_mod_for_verify", None)
    result = runner.invoke(cli, ["verify", str(wf), "--against", str(out)], env={"PLANTED": "3"})
    sys.modules.pop("steps_mod_for_verify", None)
    assert result.exit_code == 1
    assert result.stdout == (
        "diverges from the record: middle: same inputs, different output: this task is "
        'non-deterministic (output {"n": 2} -> {"n": 3}) (2 tasks differ)\n'
    )


def test_chrome_trace_and_jsonl(tmp_path: Path) -> None:
    wf = str(ROOT / "workflows/agent_triage.yaml")
    chrome = tmp_path / "trace.json"
    jsonl = tmp_path / "events.jsonl"
    result = CliRunner().invoke(
        cli,
        [
            "run",
            wf,
            "--no-store",
            "-q",
            "--export",
            str(chrome),
            "--format",
            "chrome-trace",
            "--jsonl",
            str(jsonl),
        ],
    )
    assert result.exit_code == 0, result.output
    timeline = json.loads(chrome.read_text())["traceEvents"]
    complete = [e for e in timeline if e["ph"] == "X"]
    assert {e["name"] for e in complete} >= {"classify", "draft_reply", "check_policy"}
    assert all(e["dur"] >= 0 for e in complete)
    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [e["seq"] for e in lines] == list(range(len(lines)))
    assert "started_at" not in lines[0]


def test_golden_check_and_update(tmp_path: Path) -> None:
    wf = str(ROOT / "workflows/user_profile.yaml")
    golden = tmp_path / "golden.json"
    runner = CliRunner()
    assert runner.invoke(cli, ["golden", wf, str(golden), "--update"]).exit_code == 0
    ok = runner.invoke(cli, ["golden", wf, str(golden)])
    assert ok.exit_code == 0 and ok.stdout.startswith("ok:")
    changed = runner.invoke(cli, ["golden", wf, str(golden), "--payload", '{"user_id": "u002"}'])
    assert changed.exit_code == 1
    assert "golden mismatch" in changed.stdout


def test_two_exports_of_one_workflow_share_its_parsed_form_while_open(
    exported: Path, tmp_path: Path
) -> None:
    import gc

    from harness_tui.workflow import loader

    first, second = RunRecord.read(exported), RunRecord.read(exported)
    assert first.workflow is second.workflow  # one parse for a diff of two of its runs
    other = record_of(load_workflow(ROOT / "workflows/user_profile.yaml"))
    assert other.workflow is not first.workflow
    source = first.document["workflow"]["source"]
    assert [key for key in loader._SHARED if key[0] == source]
    del first, second
    gc.collect()
    assert not [key for key in loader._SHARED if key[0] == source]  # let go
