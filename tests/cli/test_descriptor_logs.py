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
