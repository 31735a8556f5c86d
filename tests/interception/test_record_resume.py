"""``resume --record``: the HTTP of the attempts a resumed run still has to run is recorded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness_tui.engine.recorded_calls import CallMode, CallSession
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore
from harness_tui.workflow.loader import load_workflow

from .fake_model import FakeModel

TASKS = """
import httpx


def ask(inputs):
    body = {"model": "m", "messages": [{"role": "user", "content": inputs["task"]["name"]}]}
    reply = httpx.post(inputs["payload"]["url"] + "/v1/chat/completions", json=body)
    return reply.json()["choices"][0]["message"]["content"]
"""

WORKFLOW = """
name: resumed
payload: {url: "URL"}
tasks:
  first: {run: "resumed_tasks:ask"}
  second: {run: "resumed_tasks:ask", depends_on: [first]}
"""


@pytest.mark.parametrize("before", [False, True], ids=["resume-record", "recorded-before"])
def test_resume_records_the_http_of_the_attempts_still_to_run(
    fake_model: FakeModel, tmp_path: Path, before: bool
) -> None:
    """With ``--record``, or without it when the run recorded before it stopped."""
    (tmp_path / "resumed_tasks.py").write_text(TASKS, encoding="utf-8")
    flow = tmp_path / "flow.yaml"
    flow.write_text(WORKFLOW.replace("URL", fake_model.url), encoding="utf-8")
    workflow = load_workflow(flow)
    store = RunStore(tmp_path / "runs.sqlite3")
    calls = CallSession(CallMode.LIVE) if before else None
    live = LiveRun.start(workflow, workflow.payload, RunSettings(store=store), calls=calls)
    live.drive(single=True)  # "first" ran
    live.abandon()
    run_id = live.run_id
    assert run_id is not None
    store.close()

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    resumed = subprocess.run(
        [sys.executable, "-m", "harness_tui", "resume", run_id, "--store", "runs.sqlite3",
         *([] if before else ["--record"]), "--export", "run.json"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    document = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    io = {a["task"]: a.get("io") for a in document["attempts"]}
    assert (io["first"] is not None) is before
    (exchange,) = io["second"]
    assert exchange["url"].endswith("/v1/chat/completions") and exchange["status"] == 200
    assert json.loads(exchange["request_body"]["text"])["messages"][0]["content"] == "second"


SECRET_TASKS = """
import os

import httpx


def ask(inputs):
    if not inputs["params"].get("call"):
        return "no call"
    said = inputs["task"]["name"] + os.environ.get("SECRET_TASKS_MORE", "")
    body = {"model": "m", "messages": [{"role": "user", "content": said}]}
    reply = httpx.post(inputs["payload"]["url"] + "/v1/chat/completions", json=body,
                       headers={"X-Token": "tok-" + inputs["task"]["name"]})
    return reply.json()["choices"][0]["message"]["content"]
"""


@pytest.mark.parametrize("first_calls", [True, False], ids=["first-called", "first-did-not"])
def test_a_resumed_recording_keeps_its_secret_headers_out_and_goes_on_recording(
    fake_model: FakeModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first_calls: bool
) -> None:
    """Before: resuming forgot the run's --secret-header (the resumed attempts stored it, in
    the store and the export), and a run that had recorded no exchange yet stopped recording."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "secret_tasks", raising=False)
    (tmp_path / "secret_tasks.py").write_text(SECRET_TASKS, encoding="utf-8")
    flow = tmp_path / "flow.yaml"
    flow.write_text(
        f"name: resumed\npayload: {{url: {fake_model.url!r}}}\ntasks:\n"
        f"  first: {{run: 'secret_tasks:ask', with: {{call: {str(first_calls).lower()}}}}}\n"
        "  second: {run: 'secret_tasks:ask', depends_on: [first], with: {call: true}}\n",
        encoding="utf-8",
    )
    workflow = load_workflow(flow)
    store = RunStore(tmp_path / "runs.sqlite3")
    calls = CallSession(CallMode.LIVE, secret_headers=["X-Token"])
    live = LiveRun.start(workflow, workflow.payload, RunSettings(store=store), calls=calls)
    live.drive(single=True)  # "first" ran
    live.abandon()
    run_id = live.run_id
    assert run_id is not None
    resumed = LiveRun.resume(run_id, RunSettings(store=store))  # no --record: as it did
    resumed.drive()
    assert resumed.run.status.value == "succeeded"
    recorded = resumed.run.recordings()
    (exchange,) = recorded[("second", 1)]
    assert exchange.status == 200
    assert all(name.lower() != "x-token" for name, _ in exchange.request_headers)
    text = store.export(run_id).document
    assert "tok-" not in json.dumps(text)
    store.close()


def test_a_rerun_of_a_stored_recording_sending_what_it_lacks_keeps_its_secret_headers_out(
    fake_model: FakeModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: rerun RUN_ID --calls fill recorded the run's --secret-header in what it sent."""
    from click.testing import CliRunner

    from harness_tui.cli import cli

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "secret_tasks", raising=False)
    (tmp_path / "secret_tasks.py").write_text(SECRET_TASKS, encoding="utf-8")
    flow = tmp_path / "flow.yaml"
    flow.write_text(
        f"name: fill\npayload: {{url: {fake_model.url!r}}}\ntasks:\n"
        "  first: {run: 'secret_tasks:ask', with: {call: true}}\n",
        encoding="utf-8",
    )
    workflow = load_workflow(flow)
    store = RunStore(tmp_path / "runs.sqlite3")
    calls = CallSession(CallMode.LIVE, secret_headers=["X-Token"])
    live = LiveRun.start(workflow, workflow.payload, RunSettings(store=store), calls=calls)
    live.drive()
    run_id = live.run_id
    assert run_id is not None
    store.close()
    monkeypatch.setenv("SECRET_TASKS_MORE", " again")  # a request the recording lacks
    fork = tmp_path / "fork.json"
    result = CliRunner().invoke(cli, ["rerun", run_id, "--store", str(tmp_path / "runs.sqlite3"),
                                      "--from", "first", "--calls", "fill", "--no-store", "-q",
                                      "--export", str(fork)])  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(fork.read_text(encoding="utf-8"))
    (exchange,) = [e for a in document["attempts"] for e in a.get("io") or ()]
    assert "first again" in exchange["request_body"]["text"]  # it was sent, and recorded
    assert "tok-" not in fork.read_text(encoding="utf-8")
