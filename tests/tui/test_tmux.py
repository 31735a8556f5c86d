"""The real app in a real terminal (tmux), as a person uses it: a burst of steps, then export."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from harness_tui.records.export import RunRecord

from .conftest import ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def tmux(*args: str) -> str:
    result = subprocess.run(["tmux", *args], capture_output=True, text=True, check=True)
    return result.stdout


def wait_for(session: str, text: str, seconds: float = 20) -> str:
    deadline = time.monotonic() + seconds
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux("capture-pane", "-p", "-t", session)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")


def test_a_burst_of_n_then_export_equals_the_headless_run(tmp_path: Path) -> None:
    workflow = ROOT / "workflows/agent_triage.yaml"
    headless = tmp_path / "headless.json"
    subprocess.run(
        [sys.executable, "-m", "harness_tui", "run", str(workflow), "--no-store", "-q",
         "--export", str(headless)],
        check=False, capture_output=True, cwd=tmp_path,
    )  # fmt: skip
    session = f"harness-test-{uuid.uuid4().hex[:8]}"
    command = f"cd {tmp_path} && {sys.executable} -m harness_tui {workflow} --no-store"
    tmux("new-session", "-d", "-s", session, "-x", "140", "-y", "40", command)
    try:
        wait_for(session, "Step")
        for _ in range(10):  # seven tasks, pressed faster than they run
            tmux("send-keys", "-t", session, "n")
            time.sleep(0.05)
        wait_for(session, "succeeded  7/7", seconds=30)
        tmux("send-keys", "-t", session, "e")
        wait_for(session, "Export the run")
        tmux("send-keys", "-t", session, "Enter")
        wait_for(session, "exported")
        tmux("send-keys", "-t", session, "C-q")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False, capture_output=True)
    (exported,) = [p for p in tmp_path.glob("agent_triage-*.json")]
    assert RunRecord.read(exported).digests == RunRecord.read(headless).digests
