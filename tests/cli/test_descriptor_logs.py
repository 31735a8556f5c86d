"""What a task, or a child process it starts, writes straight to file descriptors 1 and 2
joins the attempt's log, in order with what it prints; stdout stays the export alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TASKS = """\
import os, subprocess, sys
def direct(inputs):
    os.write(1, b"fd one\\n")
    print("python print", flush=True)
    os.write(2, b"fd two\\n")
    subprocess.run([sys.executable, "-c", "import os; os.write(1, b'child out\\\\n'); "
                    "os.write(2, b'child err\\\\n')"], check=True)
    return {"ok": True}
def after(inputs):
    os.write(1, b"after\\n")
    return 1
def quiet(inputs):
    return 2
"""
WORKFLOW = """\
name: fd
tasks:
  direct: {run: 'fd_tasks:direct'}
  after: {run: 'fd_tasks:after', depends_on: [direct]}
  quiet: {run: 'fd_tasks:quiet', depends_on: [after]}
"""


def test_descriptor_output_is_the_attempts_log_and_stdout_stays_clean(tmp_path: Path) -> None:
    (tmp_path / "fd_tasks.py").write_text(TASKS)
    (tmp_path / "fd.yaml").write_text(WORKFLOW)
    done = subprocess.run(
        [sys.executable, "-m", "harness_tui", "run", "fd.yaml", "--no-store", "-q",
         "--export", "-"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)  # nothing but the export
    logs = {a["task"]: a["log"] for a in document["attempts"]}
    assert logs["direct"] == {
        "text": "fd one\npython print\nfd two\nchild out\nchild err\n",
        "truncated": False,
    }
    assert logs["after"] == {"text": "after\n", "truncated": False}
    assert logs["quiet"] is None
    assert "fd one" not in done.stderr and "child" not in done.stderr


LINGER = """\
import os, subprocess, sys, threading
from harness_tui.engine.capture import (
    LogBuffer, attempt_began, attempt_ended, descriptors, drain,
)
stray = LogBuffer("", 0)
attempt = LogBuffer("t", 1, spill=stray)
go, written = threading.Event(), threading.Event()
def late():
    go.wait()
    os.write(1, b"late one\\n")
    os.write(2, b"late two\\n")
    written.set()
threading.Thread(target=late, daemon=True).start()
with descriptors(linger=LINGER):
    attempt_began(attempt)  # a run's attempt: the run's unattributed buffer is known
    attempt_ended(attempt)
    child = subprocess.Popen(["sh", "-c", "read x; echo child late"], stdin=subprocess.PIPE)
go.set()
written.wait()
child.communicate(b"now\\n")
# Wait for the routing, not on time: a lingering capture drains now; an ended one's reader
# ends once the child, its last writer, has gone.
drain()
for thread in threading.enumerate():
    if thread.name == "harness-descriptors" and not LINGER:
        thread.join(30)
print("ours", flush=True)
print(sorted(stray.snapshot().text.splitlines()), flush=True)
"""


def _after_the_capture(linger: bool) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LINGER.replace("LINGER", str(linger))],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def test_what_is_left_running_after_a_lingering_capture_never_reaches_the_terminal() -> None:
    """The workbench's capture lingers: a thread or child left running writes after it, and
    none of it reaches the shell, while the harness's own output still does."""
    done = _after_the_capture(linger=True)
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == (
        "ours\n['child late', 'late one', 'late two']\n",
        "",
    )  # all of it in the run's unattributed output


def test_a_child_still_holding_the_pipe_after_the_capture_never_reaches_the_terminal() -> None:
    """Without lingering, descriptors are the terminal's again (a thread's os.write gets
    there, as any program's), but a child started inside still writes into the pipe: that
    goes to the run's unattributed output, never out through the real stderr."""
    done = _after_the_capture(linger=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "late one\nours\n['child late']\n"
    assert done.stderr == "late two\n"
