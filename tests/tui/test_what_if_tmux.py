"""``E`` on a failed task in a real terminal (tmux): mark it done with an output, the fork
continues, and the diff screen names the override (issue 35)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from .test_tmux import tmux, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

TASKS = """\
def fetch(inputs):
    return 1
def summarize(inputs):
    raise ValueError("model down")
def report(inputs):
    return "REPORT " + inputs["context"]["results"]["summarize"]
"""
WORKFLOW = """\
name: mark_done
tasks:
  fetch: {run: 'mark_done_tasks:fetch'}
  summarize: {run: 'mark_done_tasks:summarize', depends_on: [fetch]}
  report: {run: 'mark_done_tasks:report', depends_on: [summarize]}
"""


def gone(session: str, text: str, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while text in tmux("capture-pane", "-p", "-t", session):
        assert time.monotonic() < deadline, f"{text!r} never went away"
        time.sleep(0.1)


def emptied(session: str, seconds: float = 20) -> None:
    """Wait until the editor's first line is empty."""
    deadline = time.monotonic() + seconds
    while not re.search(r"▊ 1 +▎", tmux("capture-pane", "-p", "-t", session)):
        assert time.monotonic() < deadline, "the editor never emptied"
        time.sleep(0.1)


def test_mark_a_failed_task_done_in_a_real_terminal(tmp_path: Path) -> None:
    (tmp_path / "mark_done_tasks.py").write_text(TASKS, encoding="utf-8")
    (tmp_path / "mark_done.yaml").write_text(WORKFLOW, encoding="utf-8")
    session = f"harness-test-{uuid.uuid4().hex[:8]}"
    command = f"cd {tmp_path} && {sys.executable} -m harness_tui mark_done.yaml --no-store"
    tmux("new-session", "-d", "-s", session, "-x", "140", "-y", "40", command)
    try:
        wait_for(session, "Step")
        tmux("send-keys", "-t", session, "c")
        wait_for(session, "run failed")
        tmux("send-keys", "-t", session, "/")
        wait_for(session, "Find a task")
        tmux("send-keys", "-t", session, "-l", "summarize")
        wait_for(session, "▊  summarize ")  # typed into the filter: Enter picks it
        tmux("send-keys", "-t", session, "Enter")
        gone(session, "Find a task")
        tmux("send-keys", "-t", session, "E")
        wait_for(session, "Mark summarize done with this output and continue")
        wait_for(session, "Re-runs: report")
        tmux("send-keys", "-t", session, "C-e")  # the line's end (one byte, unlike End)
        for _ in range(4):  # the output it has: null
            tmux("send-keys", "-t", session, "BSpace")
        emptied(session)  # deleting is a bound action, typing is not: wait before typing
        tmux("send-keys", "-t", session, "-l", '"by hand"')
        tmux("send-keys", "-t", session, "C-s")
        screen = wait_for(session, "DIFF")
        assert "plans identical · runs: 2 tasks" in screen
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False, capture_output=True)
