"""What a person sees in a real terminal (tmux): quitting during a task, and a dialog opened
while toasts are up."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_tui.records.store import RunStore

from .conftest import ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

TASKS = """\
import os, threading, time
from pathlib import Path

def wait_for(name):
    for _ in range(600):
        if Path(name).exists():
            return
        time.sleep(0.05)

def crunch(inputs):
    def later():
        wait_for("thread-go")
        print("LEAK from a thread")
        os.write(1, b"LEAK through descriptor 1\\n")
    threading.Thread(target=later, daemon=False).start()
    wait_for("task-go")
    return {"done": True}
"""
WORKFLOW = """\
name: lingering
tasks:
  prepare: {run: builtin:echo}
  crunch: {run: 'linger_tasks:crunch', depends_on: [prepare]}
  publish: {run: builtin:echo, depends_on: [crunch]}
"""


class Pane:
    """One tmux server of our own and one pane in it, running a shell script."""

    def __init__(self, folder: Path, width: int, height: int) -> None:
        self.socket = f"harness-seams-{uuid.uuid4().hex[:8]}"
        self.folder = folder
        self.size = (str(width), str(height))

    def tmux(self, *args: str) -> str:
        command = ["tmux", "-L", self.socket, "-f", "/dev/null", *args]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout

    def start(self, *args: str) -> None:
        script = self.folder / "start.sh"
        quoted = " ".join(f"'{a}'" for a in args)
        script.write_text(
            f"unset COLUMNS LINES; cd '{self.folder}' && "
            f"'{sys.executable}' -m harness_tui {quoted}; echo SHELL-AGAIN; sleep 60\n"
        )
        width, height = self.size
        self.tmux("new-session", "-d", "-s", "t", "-x", width, "-y", height, f"sh {script}")

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "t")

    def wait_for(self, text: str, seconds: float = 30) -> str:
        deadline = time.monotonic() + seconds
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            assert time.monotonic() < deadline, f"{text!r} never appeared:\n{screen}"
            time.sleep(0.1)

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.tmux("send-keys", "-t", "t", key)
            time.sleep(0.15)

    def stop(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)


@pytest.fixture(params=[(80, 24), (120, 40)], ids=["80x24", "120x40"])
def pane(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Pane]:
    width, height = request.param
    term = Pane(tmp_path, width, height)
    try:
        yield term
    finally:
        term.stop()


def test_quitting_during_a_task_says_so_and_nothing_it_prints_reaches_the_shell(
    pane: Pane,
) -> None:
    folder = pane.folder
    (folder / "linger_tasks.py").write_text(TASKS)
    (folder / "lingering.yaml").write_text(WORKFLOW)
    pane.start("open", "lingering.yaml", "--store", "runs.db")
    pane.wait_for("Step")
    pane.keys("c")
    pane.wait_for("◐ crunch")
    pane.keys("C-q")
    pane.wait_for("Quitting: waiting for crunch to finish")  # not a blank or frozen screen
    (folder / "task-go").touch()
    pane.wait_for("waiting for 1 thread a task started to end")  # back in the shell
    (folder / "thread-go").touch()
    screen = pane.wait_for("SHELL-AGAIN")
    assert "LEAK" not in screen
    with RunStore(folder / "runs.db", create=False) as store:
        (row,) = store.runs()
        record = store.export(row["id"])
    stray = record.document["unattributed_log"]["text"]
    assert "LEAK from a thread" in stray and "LEAK through descriptor 1" in stray


def test_a_dialog_opened_over_toasts_is_never_covered(pane: Pane) -> None:
    pane.start(str(ROOT / "tests/tui/data/flaky_pipeline.yaml"), "--no-store")
    pane.wait_for("Step")
    pane.keys("f", "c")
    pane.wait_for("Held at a failed attempt")
    pane.tmux("send-keys", "-t", "t", "e")  # at once: the toast may still be on its way
    pane.wait_for("Export the run")
    time.sleep(0.5)  # what a person sees once it has settled
    screen = pane.screen()
    assert "Held at a failed attempt" not in screen and "then pause" not in screen
    pane.keys("Escape")
    pane.wait_for("Held at a failed attempt")  # still held: its hint comes back
    pane.keys("s")
