"""Ctrl+C pressed at a run once, twice and three times, in a real subprocess with SIGINT, as
docs/reliability.md ("What stops a run") says: the first stops the run (the task in flight
and those not started are cancelled, cleanups run), the second cancels the cleanups too, a
third leaves at once, the run ``interrupted`` and resumable. Each press comes when the
tasks' marker file says the run got there, never after a sleep."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent / "corpus"


def _workflow(folder: Path) -> Path:
    marker, pids = json.dumps(str(folder / "marker")), json.dumps(str(folder / "pids"))
    path = folder / "presses.yaml"
    path.write_text(
        "name: presses\n"
        "tasks:\n"
        "  first: {run: presses:ok}\n"
        "  busy:\n"
        "    run: presses:busy\n"
        "    depends_on: [first]\n"
        f"    with: {{marker: {marker}, pids: {pids}}}\n"
        "  after: {run: presses:ok, depends_on: [busy]}\n"
        "  cleanup:\n"
        "    run: presses:stubborn_cleanup\n"
        "    depends_on: [after]\n"
        "    trigger: all_done\n"
        f"    with: {{marker: {marker}}}\n",
        encoding="utf-8",
    )
    (folder / "presses.py").write_text((CORPUS / "presses.py").read_text("utf-8"), "utf-8")
    return path


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness_tui", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def press(folder: Path, args: list[str], steps: list[str], more: int = 0) -> tuple[int, str]:
    """Run the command; press Ctrl+C once the marker reads each of ``steps`` in turn, then
    ``more`` times at once. Its exit code and stderr."""
    marker = folder / "marker"
    process = subprocess.Popen(
        [sys.executable, "-m", "harness_tui", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=folder,
    )
    deadline = time.monotonic() + 90
    for step in steps:
        while not (marker.exists() and marker.read_text("ascii").startswith(step)):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, f"the run never got to {step}"
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
    for _ in range(more):
        process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=90)
    return process.returncode, err


def status(folder: Path, store: Path) -> tuple[str, str]:
    listed = harness("runs", "--store", str(store), "--json", cwd=folder)
    (row,) = json.loads(listed.stdout)
    return str(row["id"]), str(row["status"])


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def children_ended(folder: Path) -> bool:
    """The processes the busy task left behind are gone (init reaps what the command
    killed as it left)."""
    pids = [int(p) for p in (folder / "pids").read_text("ascii").split()]
    assert pids
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(_alive(pid) for pid in pids)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_the_third_ctrl_c_leaves_at_once_and_the_run_resumes(tmp_path: Path) -> None:
    """Serial: the first press interrupts the busy task, the second the cleanup, which
    swallows it; the third leaves at once. The line saying how to go on reaches the
    terminal (not the cleanup's log), the process the task left ends with the command, and
    the run is ``interrupted``, then resumed to its end."""
    workflow, store = _workflow(tmp_path), tmp_path / "runs.sqlite3"
    code, err = press(tmp_path, ["run", str(workflow), "--store", str(store)], ["A", "AB", "ABC"])
    run_id, state = status(tmp_path, store)
    assert (code, state) == (130, "interrupted"), err
    assert f"interrupted; continue with: harness-tui resume {run_id}\n" in err
    assert "Traceback" not in err
    assert children_ended(tmp_path)

    export = tmp_path / "resumed.json"
    resumed = harness("resume", run_id, "--store", str(store), "--export", str(export),
                      cwd=tmp_path)  # fmt: skip
    assert resumed.returncode == 130, resumed.stderr  # busy and after stay cancelled
    events = {e["task"]: e for e in json.loads(export.read_text("utf-8"))["trace"]}
    assert [events[t]["status"] for t in ("first", "busy", "after", "cleanup")] == [
        "succeeded", "cancelled", "cancelled", "succeeded",
    ]  # fmt: skip
    assert status(tmp_path, store)[1] == "cancelled"


def check_two_presses_and_one_more(folder: Path, executor: list[str]) -> str:
    """Parallel attempts (threads or Dask): the first press cancels the busy task and the
    cleanup starts, the second cancels the cleanup and the run ends ``cancelled``; a third
    pressed right after finds the command finishing, or leaving at once: either way exit
    130, one line, and a record that reads as the command left it. Its stderr."""
    workflow, store = _workflow(folder), folder / "runs.sqlite3"
    args = ["run", str(workflow), "--store", str(store), "--workers", "2", *executor]
    code, err = press(folder, args, ["A", "AB"], more=1)
    assert code == 130, err
    assert "Traceback" not in err
    run_id, state = status(folder, store)
    assert state in ("cancelled", "interrupted"), err
    if state == "interrupted":  # the third press came while the run was still driven
        assert f"interrupted; continue with: harness-tui resume {run_id}\n" in err
    assert children_ended(folder)
    return err


def test_ctrl_c_stops_a_parallel_run_in_steps(tmp_path: Path) -> None:
    err = check_two_presses_and_one_more(tmp_path, [])
    assert re.fullmatch(r"run id: \S+\n(.*\n)*", err), err
