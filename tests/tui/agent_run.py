"""A recorded agent run for the calls view: a workflow whose tasks ask an OpenAI-style model
(the loopback fake of the recording tests) through httpx, one plain answer and one streamed,
run with recording on and exported; the server is stopped before anything is shown.

Its prompt is a file beside the task module, read when a task runs: changing it is a changed
prompt for a re-run from the export.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_tui.engine.recorded_calls import CallMode, CallSession
from harness_tui.interception import install
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.live import LiveRun
from harness_tui.workflow.loader import load_workflow
from tests.interception.fake_model import FakeModel

TASKS = """
import json
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).parent
SYSTEM = "You triage support tickets. Be brief."


def _ask(inputs, messages, stream=False):
    url = inputs["payload"]["model_url"] + "/v1/chat/completions"
    body = {"model": "fake-model", "messages": messages, "stream": stream}
    with httpx.Client(timeout=5) as client:
        if not stream:
            return client.post(url, json=body).json()["choices"][0]["message"]["content"]
        text = ""
        with client.stream("POST", url, json=body) as answer:
            for line in answer.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    text += json.loads(line[6:])["choices"][0]["delta"].get("content", "")
        return text


def classify(inputs):
    prompt = (HERE / "prompt.txt").read_text(encoding="utf-8").strip()
    ticket = inputs["payload"]["ticket"]
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": prompt.format(ticket=ticket)}]
    return _ask(inputs, messages)


def reply(inputs):
    label = inputs["context"]["results"]["classify"]
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": "Draft a reply for a ticket labelled " + label}]
    return _ask(inputs, messages, stream=True)
"""

FLOW = """
name: agent_calls
payload: {{ticket: "The dashboard shows error 500", model_url: "{url}"}}
tasks:
  classify: {{run: "{module}:classify"}}
  reply: {{run: "{module}:reply", depends_on: [classify]}}
"""

PROMPT = "Label this ticket in one word: {ticket}"

LABEL = "outage"
REPLY = "Sorry about the error 500. We are on it and will write again within the hour."


def answer(request: dict[str, Any]) -> str:
    """What the fake model says: the label, or (streamed) the reply."""
    return REPLY if request.get("stream") else LABEL


@dataclass(frozen=True)
class AgentRun:
    """Where the recorded run lies."""

    folder: Path
    workflow: Path
    export: Path
    prompt: Path
    results: dict[str, Any]


def recorded_agent_run(folder: Path) -> AgentRun:
    """Record the agent workflow against a fresh fake model, export it beside its code (a
    module of its own name: every call has its own prompt file), and stop the server."""
    module = f"agent_calls_{uuid.uuid4().hex[:8]}"
    (folder / f"{module}.py").write_text(TASKS, encoding="utf-8")
    prompt = folder / "prompt.txt"
    prompt.write_text(PROMPT, encoding="utf-8")
    install()
    server = FakeModel()
    server.server.answer = answer
    try:
        workflow_file = folder / "agent_calls.yaml"
        workflow_file.write_text(FLOW.format(url=server.url, module=module), encoding="utf-8")
        workflow = load_workflow(str(workflow_file))
        live = LiveRun.start(workflow, workflow.payload, calls=CallSession(CallMode.LIVE))
        live.driver.continue_()
    finally:
        server.stop()
    record = live.export()
    export = folder / "agent_calls-run.json"
    record.write(export)
    results = dict(RunRecord.read(export).results)
    return AgentRun(folder, workflow_file, export, prompt, results)
