"""The calls view in a real terminal (tmux), at 80x24 and 120x40, on a recorded agent run whose
model server is stopped: a streamed answer reads as one message, ``F`` offline reproduces the
outputs, and a changed prompt fails with the field diff in the error view."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_tui.records.export import RunRecord

from .agent_run import REPLY, AgentRun, recorded_agent_run
from .test_tmux_seams import Pane

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture(params=[(80, 24), (120, 40)], ids=["80x24", "120x40"])
def agent(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[AgentRun, Pane]]:
    run = recorded_agent_run(tmp_path)  # the server is stopped once it is recorded
    width, height = request.param
    pane = Pane(tmp_path, width, height)
    try:
        yield run, pane
    finally:
        pane.stop()


def _select(pane: Pane, task: str) -> None:
    pane.keys("/")
    pane.wait_for("Find a task")
    pane.tmux("send-keys", "-t", "t", "-l", task)
    pane.keys("Enter")


def test_a_streamed_answer_reads_as_one_message_and_F_offline_reproduces_the_run(
    agent: tuple[AgentRun, Pane],
) -> None:
    run, pane = agent
    pane.start(run.export.name, "--no-store")
    pane.wait_for("REPLAY")
    pane.keys("c")
    pane.wait_for("2/2")
    _select(pane, "reply")
    pane.keys("C")
    pane.wait_for("events assembled into one message")
    screen = pane.wait_for("assistant: Sorry about the error 500.")
    assert "within the hour." in screen  # the last chunk too, in the same message
    pane.keys("Escape")
    _select(pane, "classify")
    pane.keys("F")
    pane.wait_for("offline: from the recording")
    pane.keys("y")
    pane.wait_for("OFFLINE")
    pane.keys("c")
    pane.wait_for("succeeded  2/2")
    pane.keys("e")
    pane.wait_for("Export the run")
    pane.keys("Enter")
    pane.wait_for("exported")
    (exported,) = [p for p in run.folder.glob("agent_calls-*.json") if p != run.export]
    assert RunRecord.read(exported).results == run.results


def test_a_changed_prompt_shows_the_field_diff(agent: tuple[AgentRun, Pane]) -> None:
    run, pane = agent
    run.prompt.write_text("Classify this ticket: {ticket}", encoding="utf-8")
    pane.start(run.export.name, "--no-store")
    pane.wait_for("REPLAY")
    _select(pane, "classify")
    pane.keys("F")
    pane.wait_for("offline: from the recording")
    pane.keys("y")
    pane.wait_for("OFFLINE")
    pane.keys("c")
    pane.wait_for("failed  2/2")
    _select(pane, "classify")
    pane.keys("t")
    pane.wait_for("CallDiverged: task 'classify' attempt 1: request POST")
    pane.wait_for("$.messages[1].content (changed)")
    screen = pane.wait_for('+ sent:     "Classify this ticket')
    assert '- recorded: "Label this ticket in one word' in screen
    assert REPLY not in screen
