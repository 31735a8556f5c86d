"""``Harness(record=True)``: the Python API records a run, and answers one from a recording."""

from __future__ import annotations

import random
from typing import Any

import httpx

from harness_tui import Harness
from harness_tui.engine.recorded_calls import CallMode, CallSession

from .fake_model import FakeModel


def ask(inputs: Any) -> dict[str, Any]:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    reply = httpx.post(inputs["payload"]["url"] + "/v1/chat/completions", json=body)
    dice = inputs["io"].call("dice", random.random)
    return {"said": reply.json()["choices"][0]["message"]["content"], "dice": dice}


def _harness(record: bool | CallSession) -> Harness:
    harness = Harness(record=record)
    harness.register("ask", ask)
    return harness


def test_a_recording_harness_keeps_what_each_run_was_answered(fake_model: FakeModel) -> None:
    harness = _harness(True)
    payload = {"url": fake_model.url}
    first = harness.run(payload)
    http, dice = harness.recordings[("ask", 1)]
    assert (http.kind, http.status, dice.kind) == ("http", 200, "call")
    assert dice.value == first["results"]["ask"]["dice"]
    recordings = harness.recordings
    fake_model.stop()

    offline = _harness(CallSession(CallMode.OFFLINE, recordings, record=False))
    again = offline.run(payload)
    assert again["results"] == first["results"]
    assert offline.calls is not None and offline.calls.divergences() == []


def test_a_harness_records_nothing_unless_asked() -> None:
    harness = Harness()
    harness.register("roll", lambda inputs: inputs["io"].call("dice", random.random))
    harness.run({})
    assert harness.calls is None and harness.recordings == {}
