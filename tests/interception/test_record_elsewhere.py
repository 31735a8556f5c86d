"""Recording and offline answering of attempts that run in another process: a child process
(``isolation: process``) and a Dask worker (``--executor dask``)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.engine.attempt import Attempt
from harness_tui.engine.recorded_calls import CallMode, CallSession, Exchange

from .fake_model import FakeModel

TASKS = """
import httpx

CHAT = "/v1/chat/completions"


def ask(inputs):
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}],
            "metadata": {"request_id": inputs["payload"]["request_id"]}}
    reply = httpx.post(inputs["payload"]["url"] + CHAT, json=body,
                       headers={"x-my-token": "tok-secret"})
    return reply.json()["choices"][0]["message"]["content"]


def dice(inputs):
    import random

    return inputs["io"].call("dice", random.random)
"""

WORKFLOW = """
name: elsewhere
payload: {url: "URL", request_id: r-1}
defaults: {isolation: process}
tasks:
  ask: {run: "elsewhere_tasks:ask"}
  dice: {run: "elsewhere_tasks:dice"}
"""


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "harness_tui", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=120,
    )  # fmt: skip


def _workflow(tmp_path: Path, fake_model: FakeModel, isolation: bool = True) -> Path:
    (tmp_path / "elsewhere_tasks.py").write_text(TASKS, encoding="utf-8")
    flow = tmp_path / "flow.yaml"
    text = WORKFLOW.replace("URL", fake_model.url)
    if not isolation:
        text = text.replace("defaults: {isolation: process}\n", "")
    flow.write_text(text, encoding="utf-8")
    return flow


def _record_then_verify(tmp_path: Path, fake_model: FakeModel, *options: str) -> None:
    flow = _workflow(tmp_path, fake_model, isolation=not options)
    ran = _cli("run", str(flow), "--record", "--no-store", "--export", "run.json", "-q",
               "--secret-header", "X-My-Token", *options, cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    fake_model.stop()
    document = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    io = {a["task"]: a["io"] for a in document["attempts"] if a.get("io")}
    assert [e["kind"] for e in io["ask"]] == ["http"] and io["ask"][0]["status"] == 200
    assert [e["kind"] for e in io["dice"]] == ["call"]
    assert "tok-secret" not in json.dumps(document)

    verified = _cli("verify", str(flow), "--against", "run.json", "--offline", *options,
                    cwd=tmp_path)  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "identical to run.json" in verified.stdout

    # A request the recording does not hold fails the attempt, with the line naming it;
    # --volatile leaves the field out of matching, and the attempt is answered.
    other = json.dumps({"url": fake_model.url, "request_id": "r-2"})
    diverged = _cli("verify", str(flow), "--against", "run.json", "--offline", "--payload",
                    other, *options, cwd=tmp_path)  # fmt: skip
    assert diverged.returncode == 1
    assert "$.metadata.request_id changed" in diverged.stdout
    volatile = _cli("verify", str(flow), "--against", "run.json", "--offline", "--payload",
                    other, "--volatile", "$.metadata.request_id", *options,
                    cwd=tmp_path)  # fmt: skip
    assert "request_id changed" not in volatile.stdout + volatile.stderr, volatile.stdout
    assert "CallDiverged" not in volatile.stdout + volatile.stderr, volatile.stdout
    assert "the payload changed" in volatile.stdout  # answered: only the payload differs


def test_isolated_attempts_are_recorded_and_answered_offline(
    fake_model: FakeModel, tmp_path: Path
) -> None:
    _record_then_verify(tmp_path, fake_model)


@pytest.mark.slow  # a local Dask cluster per command: about 20 s
def test_dask_attempts_are_recorded_and_answered_offline(
    fake_model: FakeModel, tmp_path: Path
) -> None:
    pytest.importorskip("distributed")
    _record_then_verify(tmp_path, fake_model, "--executor", "dask")


def _roll(inputs: object) -> float:
    return 0.25


def test_a_pickled_attempt_carries_its_recording_both_ways() -> None:
    recorded = Exchange(0, "call", "CALL", "dice", (), b'{"args":[],"kwargs":{}}', value=0.5)
    session = CallSession(CallMode.OFFLINE, {("t", 1): [recorded]}, volatile=["$.id"])
    io = session.open("t", 1)
    inputs = {"payload": None, "context": {"results": {}}, "params": {}, "task": "t"}
    attempt = Attempt("t", 1, "task", _roll, inputs, None, io=io)
    away = pickle.loads(pickle.dumps(attempt))
    assert away.io is not None and away.io.guarded and away.io.session.volatile_paths == ("$.id",)

    def task(inputs: object) -> object:
        return away.inputs["io"].call("dice", _roll, None)  # not the recorded arguments

    outcome = away._replace(fn=lambda i: [away.inputs["io"].call("dice", _roll)], detach=False)()
    assert outcome.value == [0.5] and outcome.calls is not None
    assert [e["value"] for e in outcome.calls["exchanges"]] == [0.5]
    diverged = away._replace(fn=task)()
    assert diverged.calls is not None and "call 'dice'" in str(diverged.calls["divergence"])
    io.absorb(diverged.calls)
    assert session.close(io) == diverged.calls["divergence"]


def test_a_volatile_path_that_cannot_be_read_is_refused_in_one_line(tmp_path: Path) -> None:
    flow = tmp_path / "flow.yaml"
    flow.write_text("name: w\ntasks:\n  a: {run: 'harness_tui.workflow.builtins:echo'}\n")
    result = CliRunner().invoke(cli, ["run", str(flow), "--record", "--no-store", "-q",
                                      "--volatile", "metadata"])  # fmt: skip
    assert result.exit_code == 2
    assert (
        result.output.strip()
        .splitlines()[-1]
        .endswith("--volatile: volatile path 'metadata' must start with '$'")
    )


def test_recording_settings_without_record_are_refused_in_one_line(tmp_path: Path) -> None:
    flow = tmp_path / "flow.yaml"
    flow.write_text("name: w\ntasks:\n  a: {run: 'harness_tui.workflow.builtins:echo'}\n")
    result = CliRunner().invoke(cli, ["run", str(flow), "--no-store", "-q",
                                      "--secret-header", "x-my-token"])  # fmt: skip
    assert result.exit_code == 2
    assert (
        result.output.strip()
        .splitlines()[-1]
        .endswith("--volatile and --secret-header apply to a recording: add --record")
    )
