"""What-if re-runs of a recorded agent workflow against the loopback fake model server:
an overridden output, an edited recorded answer, a changed parameter (issue 35)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import calls_of, invoke

from .fake_model import FakeModel

MODULE = "whatif_agent"
TASKS = """\
import httpx

CALLS = []
CHAT = "/v1/chat/completions"


def _ask(inputs, content):
    body = {"model": "m", "messages": [{"role": "user", "content": content}]}
    reply = httpx.post(inputs["payload"]["url"] + CHAT, json=body, timeout=10)
    return reply.json()["choices"][0]["message"]["content"]


def research(inputs):
    CALLS.append("research")
    return {"notes": _ask(inputs, "research " + inputs["payload"]["topic"])}


def critique(inputs):
    CALLS.append("critique")
    return _ask(inputs, "critique " + inputs["payload"]["topic"])


def summarize(inputs):
    CALLS.append("summarize")
    notes = inputs["context"]["results"]["research"]["notes"]
    return _ask(inputs, f"summarize ({inputs['params']['style']}): {notes}")


def report(inputs):
    CALLS.append("report")
    results = inputs["context"]["results"]
    title = _ask(inputs, "a title for: " + results["summarize"])
    return {"title": title, "summary": results["summarize"], "critique": results["critique"]}
"""
WORKFLOW = f"""\
name: agent
payload: {{url: "URL", topic: tides}}
tasks:
  research: {{run: '{MODULE}:research'}}
  critique: {{run: '{MODULE}:critique'}}
  summarize: {{run: '{MODULE}:summarize', depends_on: [research], with: {{style: long}}}}
  report: {{run: '{MODULE}:report', depends_on: [summarize, critique]}}
"""


@pytest.fixture
def agent(tmp_path: Path, fake_model: FakeModel) -> Iterator[Path]:
    """The agent workflow recorded once against the fake model (``run.json``)."""
    (tmp_path / f"{MODULE}.py").write_text(TASKS, encoding="utf-8")
    (tmp_path / "agent.yaml").write_text(WORKFLOW.replace("URL", fake_model.url), "utf-8")
    sys.modules.pop(MODULE, None)
    code, _, err = harness("run", str(tmp_path / "agent.yaml"), "--record", "--no-store", "-q",
                           "--export", str(tmp_path / "run.json"))  # fmt: skip
    assert code == 0, err
    assert calls() == ["critique", "report", "research", "summarize"]
    yield tmp_path
    sys.modules.pop(MODULE, None)


def calls() -> list[str]:
    """The task functions called since the last look, by name."""
    return sorted(calls_of(MODULE))


harness = invoke


def differing(old: Path, new: Path) -> dict[str, str]:
    """Task -> cause, as ``diff --json`` names them."""
    code, out, err = harness("diff", str(old), str(new), "--json")
    assert code == 0, err
    return {d["task"]: d["cause"] for d in json.loads(out)["tasks"]}


def test_an_overridden_summary_re_runs_only_its_descendants_and_verifies_offline(
    agent: Path, fake_model: FakeModel
) -> None:
    sent = fake_model.server.calls
    code, _, err = harness("rerun", str(agent / "run.json"), "--no-store", "-q",
                           "--set-output", 'summarize="a hand-written summary"', "--calls", "fill",
                           "--export", str(agent / "fork.json"))  # fmt: skip
    assert code == 0, err
    assert calls() == ["report"]  # summarize not called; research and critique kept
    assert fake_model.server.calls - sent == 1  # only report's new title was asked
    fake_model.stop()

    fork = json.loads((agent / "fork.json").read_text(encoding="utf-8"))
    assert fork["format_version"] == "1.3"
    assert fork["forked_from"]["overrides"] == [
        {"task": "summarize", "kind": "output", "value": "a hand-written summary"}
    ]
    assert fork["results"]["report"]["summary"] == "a hand-written summary"
    assert differing(agent / "run.json", agent / "fork.json") == {
        "summarize": "output overridden by the user",
        "report": "upstream summarize differs",
    }
    code, out, err = harness("verify", str(agent / "agent.yaml"), "--against",
                             str(agent / "fork.json"), "--offline")  # fmt: skip
    assert code == 0, out + err
    assert "identical to" in out
    assert calls() == ["critique", "report", "research"]  # every task ran but the overridden one


def test_offline_a_descendant_asking_something_new_is_the_divergence(
    agent: Path, fake_model: FakeModel
) -> None:
    fake_model.stop()
    code, out, err = harness("rerun", str(agent / "run.json"), "--no-store",
                             "--set-output", 'summarize="short"')  # fmt: skip
    assert code == 1
    assert calls() == ["report"]
    assert "task 'report' attempt 1: request POST" in out + err
    assert "$.messages[0].content changed" in err


def test_an_edited_answer_changes_exactly_the_tasks_that_consumed_it(
    agent: Path, fake_model: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(agent)
    answer = {"choices": [{"message": {"role": "assistant", "content": "edited notes"}}]}
    (agent / "answer.json").write_text(json.dumps(answer), encoding="utf-8")
    sent = fake_model.server.calls
    code, _, err = harness("rerun", str(agent / "run.json"), "--no-store", "-q",
                           "--set-answer", "research#1:1=@answer.json", "--calls", "fill",
                           "--export", str(agent / "fork.json"))  # fmt: skip
    assert code == 0, err
    assert calls() == ["report", "research", "summarize"]
    assert fake_model.server.calls - sent == 2  # research answered from the edited recording
    fork = json.loads((agent / "fork.json").read_text(encoding="utf-8"))
    assert fork["results"]["research"] == {"notes": "edited notes"}
    assert fork["forked_from"]["overrides"][0] == {
        "task": "research", "kind": "answer", "value": answer, "attempt": 1, "exchange": 1
    }  # fmt: skip
    assert differing(agent / "run.json", agent / "fork.json") == {
        "research": "recorded answer 1 of attempt 1 edited by the user",
        "summarize": "upstream research differs",
        "report": "upstream summarize differs",
    }
    fake_model.stop()
    code, out, err = harness("verify", str(agent / "agent.yaml"), "--against",
                             str(agent / "fork.json"), "--offline")  # fmt: skip
    assert code == 0, out + err


def test_a_changed_parameter_re_runs_the_task_and_its_descendants(
    agent: Path, fake_model: FakeModel
) -> None:
    sent = fake_model.server.calls
    code, _, err = harness("rerun", str(agent / "run.json"), "--no-store", "-q",
                           "--with", 'summarize.style="terse"', "--calls", "fill",
                           "--export", str(agent / "fork.json"))  # fmt: skip
    assert code == 0, err
    assert calls() == ["report", "summarize"]
    assert fake_model.server.calls - sent == 2
    fork = json.loads((agent / "fork.json").read_text(encoding="utf-8"))
    (override,) = fork["forked_from"]["overrides"]
    assert override["patch"] == [
        {"op": "replace", "path": "/tasks/summarize/with/style", "value": "terse"}
    ]
    source = json.loads(fork["workflow"]["source"])  # the patched workflow, written as JSON
    assert source["tasks"]["summarize"]["with"] == {"style": "terse"}
    causes = differing(agent / "run.json", agent / "fork.json")
    assert causes == {
        "summarize": 'set by the user: with.style: "long" -> "terse"',
        "report": "upstream summarize differs",
    }
    fake_model.stop()
    code, out, err = harness("verify", str(agent / "agent.yaml"), "--against",
                             str(agent / "fork.json"), "--offline")  # fmt: skip
    assert code == 0, out + err
