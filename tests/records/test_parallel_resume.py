"""A ``run --workers 4`` killed (SIGKILL) while work completed ahead waits to retire resumes to
the serial run's digest: what had not retired was never stored, and runs again."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.engine.scheduler import DeterministicScheduler
from harness_tui.records.export import RunRecord
from harness_tui.workflow.loader import load_workflow


def serial_digest(workflow_path: Path, tmp_path: Path) -> str:
    out = tmp_path / "serial.json"
    subprocess.run(
        [sys.executable, "-m", "harness_tui", "run", str(workflow_path), "--no-store", "-q",
         "--export", str(out)],
        capture_output=True, check=True,
    )  # fmt: skip
    return RunRecord.read(out).digests["run"]


def stored_tasks(db: Path) -> int:
    """Tasks the store holds (0 while the run is not registered yet)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as conn:
            runs, done = conn.execute(
                "SELECT (SELECT COUNT(*) FROM runs), (SELECT COALESCE(SUM(tasks), 0) FROM batches)"
            ).fetchone()
    except sqlite3.OperationalError:  # being created
        return 0
    return int(done) if runs else 0


TASKS = """\
import os
import time
from pathlib import Path


def work(inputs):
    name = inputs["task"]["name"]
    if os.environ.get("HOLD_AT") == name:  # the test kills the run here
        Path(os.environ["HOLD_MARKER"]).touch()
        time.sleep(120)
    time.sleep(inputs["params"]["seconds"])
    if os.environ.get("DONE_DIR"):
        (Path(os.environ["DONE_DIR"]) / name).touch()
    return {"slept": inputs["params"]["seconds"]}
"""


def chains_workflow(chains: int, length: int) -> str:
    tasks = {
        f"c{c}_{i}": {
            "run": "chain_tasks:work",
            "with": {"seconds": 0.01 * (1 + (c + i) % 3)},
            **({"depends_on": [f"c{c}_{i - 1}"]} if i else {}),
        }
        for c in range(chains)
        for i in range(length)
    }
    return json.dumps({"name": "chains", "payload": {"n": chains}, "tasks": tasks})


def kill_and_resume(tmp_path: Path, chains: int, length: int, position: int) -> None:
    """Hold the run in the task at plan ``position`` until every task that does not depend
    on it completed (ahead of the held one: none of them retired), kill it, resume it."""
    workflow_path = tmp_path / "chains.yaml"
    workflow_path.write_text(chains_workflow(chains, length))
    (tmp_path / "chain_tasks.py").write_text(TASKS)
    expected = serial_digest(workflow_path, tmp_path)
    graph = load_workflow(workflow_path).graph
    plan = DeterministicScheduler(graph).build_plan({"n": chains})
    held = plan[position]
    ahead = [name for name in plan[position + 1 :] if held not in graph.ancestors(name)]
    assert ahead, "the case must have work that completes ahead of the held task"
    db, marker, done = tmp_path / "runs.db", tmp_path / "holding", tmp_path / "done"
    done.mkdir()
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "harness_tui", "run", str(workflow_path)),
            *("--store", str(db), "-q", "--workers", "4"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "HOLD_AT": held, "HOLD_MARKER": str(marker), "DONE_DIR": str(done)},
    )
    try:
        deadline = time.monotonic() + 60
        while not (
            marker.exists()
            and all((done / name).exists() for name in ahead)
            and stored_tasks(db) >= position  # what retired before it is stored
        ):
            assert process.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "the run never got ahead of the held task"
            time.sleep(0.01)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    with sqlite3.connect(db) as conn:
        (run_id,) = conn.execute("SELECT id FROM runs").fetchone()
    assert stored_tasks(db) == position  # nothing completed ahead of the held task was stored
    out = tmp_path / "resumed.json"
    result = CliRunner().invoke(
        cli, ["resume", run_id, "--store", str(db), "--export", str(out), "--workers", "4"]
    )
    assert result.exit_code == 0, result.output
    assert RunRecord.read(out).digests["run"] == expected


def test_killed_with_work_completed_ahead_resumes_to_the_serial_digest(tmp_path: Path) -> None:
    kill_and_resume(tmp_path, chains=3, length=3, position=2)


@pytest.mark.slow
@pytest.mark.parametrize(("chains", "length", "position"), [(4, 5, 0), (4, 5, 7), (8, 3, 12)])
def test_killed_deep_runs_resume_to_the_serial_digest(
    tmp_path: Path, chains: int, length: int, position: int
) -> None:
    kill_and_resume(tmp_path, chains, length, position)
