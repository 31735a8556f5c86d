"""Redaction that holds: no redacted value, and no digest of one, anywhere in the export."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.engine.canonical import digest, digest_text
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord
from harness_tui.records.export.redaction import REPLACEMENT, UNCHECKED
from harness_tui.records.runs.replay import replay
from harness_tui.workflow.loader import load_workflow

ROOT = Path(__file__).resolve().parents[2]
USER = 4821
TICKET = "the printer on floor 3 is on fire"

TASKS = """
def greet(inputs):
    user = inputs["payload"]["user"]
    print(f"looking up user {user}")
    return {"user": user, "note": f"user {user} about: {inputs['payload']['ticket']}"}


def charge(inputs):
    raise RuntimeError(f"no quota left for user {inputs['payload']['user']}")
"""

WORKFLOW = f"""# Support for user {USER}
name: leaky
payload: {{user: {USER}, ticket: "{TICKET}", region: eu}}
on_failure: continue
tasks:
  greet: {{run: "leaky_tasks:greet"}}
  charge: {{run: "leaky_tasks:charge", depends_on: [greet]}}
  tag: {{run: builtin:echo, depends_on: [greet], with: {{user: {USER}, label: kept}}}}
"""

ENVIRONMENT = {"python": "3", "implementation": "CPython", "platform": "test", "packages": {}}


@pytest.fixture
def exported(tmp_path: Path) -> tuple[Path, RunRecord]:
    (tmp_path / "leaky_tasks.py").write_text(TASKS, encoding="utf-8")
    path = tmp_path / "leaky.yaml"
    path.write_text(WORKFLOW, encoding="utf-8")
    workflow = load_workflow(path)
    orchestrator = TaskOrchestrator(
        workflow.graph, clock=FakeClock(tick=0.01), on_failure=workflow.on_failure
    )
    run = orchestrator.start(workflow.payload).run_to_end()
    plain = RunRecord.from_run(run, workflow, environment=ENVIRONMENT)
    assert str(USER) in plain.to_text() and TICKET in plain.to_text()  # there was a leak to stop
    record = RunRecord.from_run(run, workflow, redact=["user", "ticket"], environment=ENVIRONMENT)
    return record.write(tmp_path / "red.json"), plain


def test_no_redacted_value_is_left_anywhere(exported: tuple[Path, RunRecord]) -> None:
    path, _plain = exported
    text = path.read_text(encoding="utf-8")
    # Digests are hex: a run of four digits inside one is chance, not a leak.
    words = re.sub(r"\b[0-9a-f]{16,64}\b", "", text)
    assert str(USER) not in words
    for word in TICKET.split():
        if len(word) > 3:
            assert word not in words
    document = json.loads(text)
    assert document["payload"] == {"user": REPLACEMENT, "ticket": REPLACEMENT, "region": "eu"}
    assert "region: eu" in document["workflow"]["source"]
    assert f"user {REPLACEMENT}" in document["attempts"][0]["log"]["text"]
    errors = [e["error"]["message"] for e in document["trace"] if "error" in e]
    assert errors == [f"no quota left for user {REPLACEMENT}"]


def test_no_4_digit_id_can_be_confirmed_from_the_export(exported: tuple[Path, RunRecord]) -> None:
    path, _plain = exported
    text = path.read_text(encoding="utf-8")
    hexes = set(re.findall(r"[0-9a-f]{64}", text))
    for number in range(10000):
        for guess in (number, f"{number:04d}", str(number)):
            assert digest(guess) not in hexes
            assert digest_text(str(guess)) not in hexes
    assert "sha256:" not in text


def test_a_redacted_export_reads_keeps_digests_and_lists_what_it_skips(
    exported: tuple[Path, RunRecord],
) -> None:
    path, plain = exported
    record = RunRecord.read(path)
    assert record.digests == plain.digests
    assert record.unchecked == list(UNCHECKED)
    assert record.document["redaction"]["unchecked"] == list(UNCHECKED)
    assert record.workflow.payload["user"] == REPLACEMENT


def test_a_redacted_export_replays_its_recorded_trace(exported: tuple[Path, RunRecord]) -> None:
    path, plain = exported
    report = replay(RunRecord.read(path))
    assert report.identical and report.unchecked
    assert [(e.task, e.status, e.attempt, e.task_id) for e in report.run.events] == [
        (e.task, e.status, e.attempt, e.task_id) for e in plain.events
    ]


def test_verify_against_a_redacted_export_needs_a_payload_and_says_what_it_skipped(
    exported: tuple[Path, RunRecord],
) -> None:
    path, _plain = exported
    workflow = str(path.parent / "leaky.yaml")
    runner = CliRunner()
    missing = runner.invoke(cli, ["verify", workflow, "--against", str(path)])
    assert missing.exit_code == 2 and "give the payload" in missing.output
    stand_in = json.dumps({"user": 1, "ticket": "x", "region": "eu"})
    result = runner.invoke(cli, ["verify", workflow, "--against", str(path), "--payload", stand_in])
    assert result.exit_code == 0, result.output
    assert "on every task's attempts and statuses" in result.output
    assert "not checked: output of greet" in result.output
    assert "payload, plan, trace and run digests" in result.output
    real = json.dumps({"user": USER, "ticket": TICKET, "region": "eu"})
    full = runner.invoke(cli, ["verify", workflow, "--against", str(path), "--payload", real])
    assert full.exit_code == 0 and "not checked" not in full.output, full.output


def test_agent_triage_redacted_keeps_no_customer_or_ticket(tmp_path: Path) -> None:
    out = tmp_path / "red.json"
    result = CliRunner().invoke(
        cli,
        [
            "run",
            str(ROOT / "workflows/agent_triage.yaml"),
            "--no-store",
            "-q",
            "--redact",
            "customer,ticket",
            "--export",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "c-1042" not in text and "dashboard is down" not in text
    assert RunRecord.read(out).redacted == ["customer", "ticket"]


def test_a_value_the_workflow_also_needs_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "limits.yaml"
    path.write_text(
        "name: limits\npayload: {quota: 250}\ndefaults: {timeout_seconds: 250}\n"
        "tasks:\n  a: {run: builtin:echo}\n",
        encoding="utf-8",
    )
    workflow = load_workflow(path)
    run = TaskOrchestrator(workflow.graph).start(workflow.payload).run_to_end()
    with pytest.raises(RecordError, match=r"^cannot redact quota: a redacted value is also"):
        RunRecord.from_run(run, workflow, redact=["quota"])


def test_a_python_defined_workflow_has_its_spec_redacted(tmp_path: Path) -> None:
    out = tmp_path / "py.json"
    workflow = str(ROOT / "workflows/user_profile.py") + ":build_harness"
    args = ["run", workflow, "--no-store", "-q", "--redact", "user_id", "--export", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "u001" not in out.read_text(encoding="utf-8")
    record = RunRecord.read(out)
    assert record.document["spec"]["payload"] == {"user_id": REPLACEMENT}
    assert replay(record).identical
