"""Faults under ``--executor dask`` (a LocalCluster of worker processes), through the command
line: a task that kills its worker is its one failure line and nothing of Dask's reaches the
terminal, many times over (the shutdown races); the processes a task leaves end with the
command; Ctrl+C stops a Dask run in steps. Dask end to end: the slow tier."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.faults.test_ctrl_c import check_two_presses_and_one_more

pytest.importorskip("distributed")

pytestmark = pytest.mark.slow

CORPUS = Path(__file__).resolve().parent / "corpus"
DYING = """\
import os
import signal


def ok(inputs):
    return "ok"


def exits(inputs):
    os._exit(1)


def killed(inputs):
    os.kill(os.getpid(), signal.SIGKILL)
"""
DIED = "DaskError: the Dask worker running the attempt died (or was killed)"


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness_tui", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
    )


def _dying(folder: Path, how: str) -> Path:
    (folder / "dying.py").write_text(DYING, encoding="utf-8")
    path = folder / f"{how}.yaml"
    path.write_text(
        f"name: {how}\ntasks:\n  a: {{run: dying:ok}}\n"
        f"  b: {{run: dying:ok, depends_on: [a]}}\n"
        + (f"  die: {{run: dying:{how}, depends_on: [b]}}\n" if how != "ok" else ""),
        encoding="utf-8",
    )
    return path


def _only_our_lines(err: str, how: str) -> None:
    """The command's own lines, the failure's one among them, and nothing else (Dask's log
    lines name their logger: ``distributed.``, ``tornado``; warnings and tracebacks say
    so)."""
    for word in ("distributed", "tornado", "Traceback", "Warning", "CommClosed"):
        assert word not in err, err
    lines = err.splitlines()
    assert lines[0] == (f"{how}: succeeded (2 succeeded)" if how == "ok" else
                        f"{how}: failed (2 succeeded, 1 failed)"), err  # fmt: skip
    failures = [line for line in lines if "Error" in line]
    assert failures == ([] if how == "ok" else [f"  die: {DIED}"])


@pytest.mark.parametrize("how", ["exits", "killed"])
def test_a_task_that_kills_its_worker_is_its_one_line(tmp_path: Path, how: str) -> None:
    workflow, export = _dying(tmp_path, how), tmp_path / "run.json"
    result = harness("run", str(workflow), "--no-store", "--executor", "dask", "--workers", "2",
                     "--export", str(export), cwd=tmp_path)  # fmt: skip
    assert result.returncode == 1, result.stderr
    _only_our_lines(result.stderr, how)
    events = {e["task"]: e for e in json.loads(export.read_text("utf-8"))["trace"]}
    assert events["die"]["error"] == {"type": "DaskError", "message": DIED.split(": ", 1)[1]}


def test_dask_runs_start_and_close_without_a_word_of_their_own(tmp_path: Path) -> None:
    """The shutdown races (a closing worker's folder purged by another cluster, a future
    cancelled while the client closes, a worker restarting as the cluster closes) were rare:
    many runs, two at a time (another cluster starting while one closes), clean or with a
    dying worker, and not one line of Dask's."""
    runs = [("ok", 0), ("exits", 1), ("killed", 1)] * 4
    for first, second in zip(runs[::2], runs[1::2], strict=True):
        started = [
            (how, code, subprocess.Popen(
                [sys.executable, "-m", "harness_tui", "run", str(_dying(tmp_path, how)),
                 "--no-store", "--executor", "dask", "--workers", "2"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
            ))
            for how, code in (first, second)
        ]  # fmt: skip
        for how, code, process in started:
            _, err = process.communicate(timeout=180)
            assert process.returncode == code, err
            _only_our_lines(err, how)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("task", ["fork_and_leave", "spawn_and_leave"])
def test_processes_a_dask_task_leaves_end_with_the_command(tmp_path: Path, task: str) -> None:
    """The LocalCluster's workers are the command's children: what a task starts there, and
    whatever that orphans, comes back to the command as the workers end, and ends with it."""
    marker = tmp_path / "pids"
    workflow = tmp_path / "leave.yaml"
    workflow.write_text(
        f"name: leave\ntasks:\n  t:\n    run: faulty:{task}\n"
        f"    with: {{marker: {json.dumps(str(marker))}}}\n",
        encoding="utf-8",
    )
    (tmp_path / "faulty.py").write_text((CORPUS / "faulty.py").read_text("utf-8"), "utf-8")
    result = harness("run", str(workflow), "--no-store", "-q", "--executor", "dask", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    pids = [int(p) for p in marker.read_text(encoding="ascii").split()]
    assert pids
    deadline = time.monotonic() + 10  # init reaps what the command killed
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in pids)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_ctrl_c_stops_a_dask_run_in_steps(tmp_path: Path) -> None:
    err = check_two_presses_and_one_more(tmp_path, ["--executor", "dask"])
    for word in ("distributed", "tornado", "Traceback", "Warning"):
        assert word not in err, err
