"""Export 1.2: recorded calls beside the trace, in the checksum, outside every digest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.engine.recorded_calls import CallMode, CallSession
from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.settings import RunSettings
from harness_tui.workflow.loader import Workflow, load_workflow

TASKS = """
import random
import threading


def roll(inputs):
    return inputs["io"].call("dice", lambda token: random.random(), inputs["payload"]["token"])


def echo(inputs):
    print("y" * inputs["payload"]["size"])
    return inputs["io"].call("echo", lambda text: text, "x" * inputs["payload"]["size"])
"""

FLOW = """
name: dice
payload: {token: tok-secret-1, size: 10}
tasks:
  roll: {run: "recorded_export_tasks:roll"}
  echo: {run: "recorded_export_tasks:echo"}
"""


@pytest.fixture
def workflow(tmp_path: Path) -> Workflow:
    (tmp_path / "recorded_export_tasks.py").write_text(TASKS, encoding="utf-8")
    (tmp_path / "flow.yaml").write_text(FLOW, encoding="utf-8")
    return load_workflow(tmp_path / "flow.yaml")


def _record(workflow: Workflow, calls: CallSession | None, **kwargs: object) -> RunRecord:
    orchestrator = TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.01))
    run = orchestrator.start(workflow.payload, calls=calls).run_to_end()
    return RunRecord.from_run(run, workflow, **kwargs)  # type: ignore[arg-type]


def test_recordings_round_trip_through_an_export(workflow: Workflow, tmp_path: Path) -> None:
    record = _record(workflow, CallSession(CallMode.LIVE))
    assert record.document["format_version"] == "1.2"
    path = record.write(tmp_path / "run.json")
    again = RunRecord.read(path)
    (dice,) = again.recordings[("roll", 1)]
    assert (dice.kind, dice.url, dice.request_body) == (
        "call", "dice", b'{"args":["tok-secret-1"],"kwargs":{}}',
    )  # fmt: skip
    assert dice.value == again.results["roll"]
    plain = _record(workflow, None)
    assert plain.document["format_version"] == "1.1"
    assert "io" not in plain.document["attempts"][0]


def test_recordings_are_outside_every_digest_and_inside_the_checksum(
    workflow: Workflow, tmp_path: Path
) -> None:
    recorded = _record(workflow, CallSession(CallMode.LIVE))
    replayed = CallSession(CallMode.OFFLINE, recorded.recordings, record=False)
    unrecorded = _record(workflow, replayed)  # same answers, nothing recorded
    assert unrecorded.document["format_version"] == "1.1"
    assert unrecorded.digests == recorded.digests
    path = recorded.write(tmp_path / "run.json")
    document = json.loads(path.read_text(encoding="utf-8"))
    attempt = next(a for a in document["attempts"] if a.get("io"))
    attempt["io"][0]["value"] = 0.5
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(RecordError, match="checksum mismatch"):
        RunRecord.read(path)


def test_a_malformed_recording_is_one_line(workflow: Workflow) -> None:
    record = _record(workflow, CallSession(CallMode.LIVE))
    attempt = next(a for a in record.document["attempts"] if a.get("io"))
    attempt["io"][0]["chunks"] = [{"base64": "not base64!"}]
    with pytest.raises(RecordError, match=r"attempts\[\d\]\.io\[0\]\.chunks\[0\]: not base64"):
        record.recordings  # noqa: B018 - reading is the check


def test_redaction_reaches_recorded_calls(workflow: Workflow) -> None:
    record = _record(workflow, CallSession(CallMode.LIVE), redact=["token"])
    text = record.to_text()
    assert "tok-secret-1" not in text
    assert "recorded calls" in record.document["redaction"]["places"]


def test_logs_go_first_and_recordings_too_big_refuse_the_export(workflow: Workflow) -> None:
    big = dict(workflow.payload, size=20_000)
    orchestrator = TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.01))
    run = orchestrator.start(big, calls=CallSession(CallMode.LIVE)).run_to_end()
    record = RunRecord.from_run(run, workflow)
    size = len(record.to_text().encode("utf-8"))
    assert record.within(size)[0] is record
    smaller, _ = record.within(size - 1000)
    assert smaller.logs == {} and smaller.recordings == record.recordings
    with pytest.raises(RecordError, match="recorded calls alone take the export over"):
        record.within(size - 25_000)


def test_the_store_keeps_recordings_and_exports_them(workflow: Workflow, tmp_path: Path) -> None:
    from harness_tui.records.runs.live import LiveRun
    from harness_tui.records.store import RunStore

    store = RunStore(tmp_path / "runs.db", create=True)
    live = LiveRun.start(workflow, workflow.payload, RunSettings(store=store), calls=CallSession())
    run_id = live.ensure_recorded()
    assert run_id is not None
    live.drive()
    store.close()
    again = RunStore(tmp_path / "runs.db")
    stored = again.load(run_id)
    assert stored.recordings == live.run.recordings()
    exported = again.export(run_id)
    assert exported.document["format_version"] == "1.2"
    assert exported.recordings == live.run.recordings()
    again.close()


def test_verify_offline_with_a_damaged_recording_is_one_line(
    workflow: Workflow, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from harness_tui.cli import cli
    from harness_tui.records.export.writing import checksum

    record = _record(workflow, CallSession(CallMode.LIVE))
    attempt = next(a for a in record.document["attempts"] if a.get("io"))
    attempt["io"][0]["seq"] = "first"
    record.document["checksum"] = checksum(record.document)
    path = record.write(tmp_path / "run.json")
    result = CliRunner().invoke(cli, ["verify", workflow.path, "--against", str(path), "--offline"])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: ") and "io[0].seq: expected a number from 0" in line


DEEP = """
def deep(inputs):
    answer = []
    for _ in range(250):
        answer = [answer]
    return len(inputs["io"].call("deep", lambda: answer))
"""


def test_a_recorded_answer_nested_past_the_readers_depth_is_not_written(
    tmp_path: Path,
) -> None:
    # The reader bounds the depth of recorded calls as of every free part: the writer refuses
    # what it would refuse (a recorded run's attempts are rows made as they are written).
    (tmp_path / "deep_export_tasks.py").write_text(DEEP, encoding="utf-8")
    (tmp_path / "deep.yaml").write_text(
        'name: deep\ntasks:\n  deep: {run: "deep_export_tasks:deep"}\n', encoding="utf-8"
    )
    record = _record(load_workflow(tmp_path / "deep.yaml"), CallSession(CallMode.LIVE))
    with pytest.raises(RecordError, match="attempts is nested more than 200 levels deep"):
        record.write(tmp_path / "run.json")
    assert not (tmp_path / "run.json").exists()
