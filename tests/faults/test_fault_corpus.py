"""The fault corpus: each way a task can misbehave, run through ``harness-tui run`` and
``resume`` in a subprocess, with the final state the harness must reach. The ``mode`` column
names the isolation that contains the fault (``process`` for what in-process cannot)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from harness_tui.records.runs.settings import RunSettings

CORPUS = Path(__file__).resolve().parent / "corpus"


class Fault(NamedTuple):
    name: str
    mode: str  # "in-process" or "process"
    status: str  # the faulty task's final status
    error: str | None  # its error type
    run_status: str
    exit_code: int
    seconds: float  # the run must end well within this (faults wait 30 s if not contained)


FAULTS = [
    Fault("exit_zero", "in-process", "failed", "SystemExit", "failed", 1, 25),
    Fault("exit_three", "in-process", "failed", "SystemExit", "failed", 1, 25),
    Fault("base_exception", "in-process", "failed", "BaseException", "failed", 1, 25),
    Fault("unprintable", "in-process", "failed", "_Unprintable", "failed", 1, 25),
    Fault("lone_surrogate", "in-process", "failed", "OutputNotJSON", "failed", 1, 25),
    Fault("swallow_timeout", "in-process", "timed_out", "Timeout", "failed", 1, 25),
    Fault("stray_thread", "in-process", "succeeded", None, "succeeded", 0, 25),
    # The task's view of the streams is closed or gone; the harness's own output is not.
    Fault("close_stdout", "in-process", "succeeded", None, "succeeded", 0, 25),
    Fault("stdout_none", "in-process", "succeeded", None, "succeeded", 0, 25),
    Fault("excepthook_none", "in-process", "succeeded", None, "succeeded", 0, 25),
    Fault(
        "keyboard_interrupt", "in-process", "cancelled", "KeyboardInterrupt", "cancelled", 130, 25
    ),
    # What in-process cannot contain: the task's own process ends, or ignores the timeout.
    Fault("hard_exit", "process", "failed", "ProcessExited", "failed", 1, 25),
    Fault("close_fds", "process", "succeeded", None, "succeeded", 0, 25),
    Fault("block_alarm", "process", "timed_out", "Timeout", "failed", 1, 25),
    Fault("hang", "process", "timed_out", "Timeout", "failed", 1, 25),
    # The in-process faults end the same way in a child process.
    Fault("exit_three", "process", "failed", "SystemExit", "failed", 1, 25),
    Fault("unprintable", "process", "failed", "_Unprintable", "failed", 1, 25),
    Fault("lone_surrogate", "process", "failed", "OutputNotJSON", "failed", 1, 25),
    Fault("stray_thread", "process", "succeeded", None, "succeeded", 0, 25),
    Fault("keyboard_interrupt", "process", "cancelled", "KeyboardInterrupt", "cancelled", 130, 25),
]
# In the fast tier, the in-process faults; the same faults in a child process, and every
# kill-then-resume, start several interpreters each: the slow tier runs them.
BY_MODE = [
    pytest.param(
        f, id=f"{f.name}-{f.mode}", marks=[pytest.mark.slow] if f.mode == "process" else []
    )
    for f in FAULTS
]


def harness(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload,no-any-return]
        [sys.executable, "-m", "harness_tui", *args],
        capture_output=True,
        text=True,
        timeout=60,
        **kwargs,
    )


def final_events(export: Path) -> dict[str, dict[str, object]]:
    document = json.loads(export.read_text(encoding="utf-8"))
    return {event["task"]: event for event in document["trace"]}


def runs(store: Path) -> list[dict[str, object]]:
    listed = harness("runs", "--store", str(store), "--json")
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)  # type: ignore[no-any-return]


def check_end(fault: Fault, export: Path, store: Path) -> None:
    events = final_events(export)
    faulty = events["faulty"]
    assert faulty["status"] == fault.status
    error = faulty.get("error")
    assert (error["type"] if isinstance(error, dict) else None) == fault.error
    assert events["cleanup"]["status"] == "succeeded"  # cleanups always run
    (row,) = runs(store)
    assert row["status"] == fault.run_status  # the store knows how it ended


def test_what_stops_a_run_is_as_documented() -> None:
    """The table in docs/reliability.md ("What stops a run") says what the fault table pins."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "reliability.md").read_text("utf-8")
    section = doc.split("## What stops a run", 1)[1].split("\n## ", 1)[0]
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| ") and "fault" not in line
    ]
    pinned = {f.name: f for f in FAULTS if f.mode == "in-process"}
    assert len(rows) == 5
    for _, name, status, run_status, code in rows:
        fault = pinned[name]
        assert (fault.status, fault.run_status, fault.exit_code) == (status, run_status, int(code))


@pytest.mark.parametrize("fault", BY_MODE)
def test_a_faulty_task_ends_the_run_with_a_final_status(fault: Fault, tmp_path: Path) -> None:
    store, export = tmp_path / "runs.sqlite3", tmp_path / "run.json"
    args = ["run", str(CORPUS / f"{fault.name}.yaml"), "--store", str(store)]
    args += ["--export", str(export)]
    if fault.mode == "process":
        args += ["--isolation", "process"]
    started = time.monotonic()
    result = harness(*args)
    assert time.monotonic() - started < fault.seconds
    assert result.returncode == fault.exit_code, result.stderr
    assert "Traceback" not in result.stderr
    assert f"fault_{fault.name}: {fault.run_status}" in result.stderr  # the summary
    check_end(fault, export, store)


@pytest.mark.parametrize("name", ["close_stdout", "stdout_none", "excepthook_none"])
def test_a_task_that_breaks_process_globals_leaves_the_export_on_stdout(
    name: str, tmp_path: Path
) -> None:
    """A task closes or drops ``sys.stdout``, or sets ``threading.excepthook`` to ``None``
    (without which no thread can be made). With four workers, ``--export -``: the export
    still reaches stdout, the summary stderr, and the store the final status."""
    store = tmp_path / "runs.sqlite3"
    args = ["run", str(CORPUS / f"{name}.yaml"), "--store", str(store), "--export", "-"]
    result = harness(*args, "--workers", "4")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "succeeded"
    assert f"fault_{name}: succeeded" in result.stderr
    (row,) = runs(store)
    assert row["status"] == "succeeded"


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS, ids=[f"{f.name}-{f.mode}" for f in FAULTS])
def test_a_faulty_task_ends_a_resumed_run_alike(fault: Fault, tmp_path: Path) -> None:
    """The run is killed before the fault; ``resume`` meets it and ends the run the same way."""
    store, export, marker = tmp_path / "runs.sqlite3", tmp_path / "run.json", tmp_path / "gate"
    (row,) = _killed_at(marker, [str(CORPUS / f"{fault.name}.yaml"), "--store", str(store)])
    args = ["resume", str(row["id"]), "--store", str(store), "--export", str(export)]
    if fault.mode == "process":
        args += ["--isolation", "process"]
    result = harness(*args)
    assert result.returncode == fault.exit_code, result.stderr
    assert "Traceback" not in result.stderr
    check_end(fault, export, store)


def _killed_at(marker: Path, args: list[str]) -> list[dict[str, object]]:
    """``run`` killed once ``marker`` exists (the gate task is running): the stored runs."""
    killed = subprocess.Popen(
        [sys.executable, "-m", "harness_tui", "run", *args, "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "FAULT_GATE": str(marker)},
    )
    _wait_for(marker, killed)
    killed.kill()
    killed.wait()
    return runs(Path(args[args.index("--store") + 1]))


def _wait_for(marker: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while not marker.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _sigint_workflow(tmp_path: Path) -> Path:
    marker = tmp_path / "started"
    path = tmp_path / "sigint.yaml"
    path.write_text(
        "name: sigint\n"
        "tasks:\n"
        "  first: {run: faulty:ok}\n"
        "  faulty:\n"
        "    run: faulty:wait_for_sigint\n"
        "    depends_on: [first]\n"
        f"    with: {{marker: {json.dumps(str(marker))}}}\n"
        "  after: {run: faulty:ok, depends_on: [faulty]}\n"
        "  cleanup: {run: faulty:cleanup, depends_on: [after], trigger: all_done}\n",
        encoding="utf-8",
    )
    (tmp_path / "faulty.py").write_text((CORPUS / "faulty.py").read_text("utf-8"), "utf-8")
    return path


def _interrupt(args: list[str], marker: Path, presses: int = 1) -> tuple[int, str]:
    """Run the command, press Ctrl+C ``presses`` times once ``marker`` exists: its exit
    code and stderr."""
    process = subprocess.Popen(
        [sys.executable, "-m", "harness_tui", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for(marker, process)
    for _ in range(presses):
        process.send_signal(signal.SIGINT)
        time.sleep(0.3 if presses > 1 else 0)
    _, err = process.communicate(timeout=30)
    return process.returncode, err


SIGINT = Fault("sigint", "in-process", "cancelled", "KeyboardInterrupt", "cancelled", 130, 30)


@pytest.mark.parametrize("mode", ["in-process", pytest.param("process", marks=pytest.mark.slow)])
def test_ctrl_c_stops_run_and_resume_alike(tmp_path: Path, mode: str) -> None:
    """Ctrl+C: the task is cancelled, cleanups run, the run ends ``cancelled`` and recorded,
    exit 130, in ``run`` and in ``resume`` alike."""
    workflow = _sigint_workflow(tmp_path)
    marker, store = tmp_path / "started", tmp_path / "runs.sqlite3"
    export = tmp_path / "run.json"
    isolation = ["--isolation", mode]
    code, err = _interrupt(
        ["run", str(workflow), "--store", str(store), "--export", str(export), *isolation],
        marker,
    )
    assert code == 130, err
    assert "Traceback" not in err and "Aborted" not in err
    check_end(SIGINT, export, store)

    # A run killed in that task, then resumed and interrupted.
    marker.unlink()
    (row,) = _killed_at(marker, [str(workflow), "--store", str(tmp_path / "k.db")])
    marker.unlink()
    resumed = tmp_path / "resumed.json"
    code, err = _interrupt(
        [
            "resume",
            str(row["id"]),
            "--store",
            str(tmp_path / "k.db"),
            "--export",
            str(resumed),
            *isolation,
        ],
        marker,
    )
    assert code == 130, err
    assert "Traceback" not in err and "Aborted" not in err
    check_end(SIGINT, resumed, tmp_path / "k.db")


@pytest.mark.parametrize("where", ["task", "defaults"])
def test_the_workflow_file_asks_for_a_process(tmp_path: Path, where: str) -> None:
    """``isolation: process`` on the task or in ``defaults:`` needs no command-line flag."""
    text = (CORPUS / "hard_exit.yaml").read_text("utf-8")
    if where == "task":
        text = text.replace(
            "run: faulty:hard_exit\n", "run: faulty:hard_exit\n    isolation: process\n"
        )
    else:
        text = text.replace(
            "on_failure: stop\n", "on_failure: stop\ndefaults: {isolation: process}\n"
        )
    workflow = tmp_path / "hard_exit.yaml"
    workflow.write_text(text, "utf-8")
    (tmp_path / "faulty.py").write_text((CORPUS / "faulty.py").read_text("utf-8"), "utf-8")
    store, export = tmp_path / "runs.sqlite3", tmp_path / "run.json"
    result = harness("run", str(workflow), "--store", str(store), "--export", str(export))
    assert result.returncode == 1, result.stderr
    (hard_exit,) = [f for f in FAULTS if f.name == "hard_exit"]
    check_end(hard_exit, export, store)


def test_isolation_never_wraps_a_replay() -> None:
    """A replay runs no code (I6): not in this process, not in a child either."""
    from harness_tui.engine.recorded import RecordedExecutor
    from harness_tui.executors.process import ProcessExecutor
    from harness_tui.records.runs.live import LiveRun
    from harness_tui.workflow.loader import load_workflow

    workflow = load_workflow(str(CORPUS / "hard_exit.yaml"))
    recorded = RecordedExecutor([], {})
    replay = LiveRun.start(workflow, {}, RunSettings(executor=recorded, isolation="process"))
    assert replay.run.orchestrator.executor is recorded
    live = LiveRun.start(workflow, {}, RunSettings(isolation="process"))
    assert isinstance(live.run.orchestrator.executor, ProcessExecutor)


def test_the_isolation_mode_is_not_in_the_digest(tmp_path: Path) -> None:
    """I3: where a task ran changes nothing in the canonical trace or the results."""
    digests = []
    for mode in ("in-process", "process"):
        export = tmp_path / f"{mode}.json"
        result = harness(
            "run", str(CORPUS / "stray_thread.yaml"), "--no-store", "-q", "--isolation", mode,
            "--export", str(export),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        digests.append(json.loads(export.read_text("utf-8"))["digests"])
    assert digests[0] == digests[1]


def test_a_rerun_isolates_what_it_reruns_and_starts_nothing_it_keeps(tmp_path: Path) -> None:
    log = tmp_path / "ran.txt"
    workflow = tmp_path / "where.yaml"
    workflow.write_text(
        "name: where\ndefaults: {isolation: process}\ntasks:\n"
        f"  a: {{run: faulty:where, with: {{log: {json.dumps(str(log))}}}}}\n"
        f"  b: {{run: faulty:where, depends_on: [a], with: {{log: {json.dumps(str(log))}}}}}\n",
        encoding="utf-8",
    )
    (tmp_path / "faulty.py").write_text((CORPUS / "faulty.py").read_text("utf-8"), "utf-8")
    first, again = tmp_path / "first.json", tmp_path / "again.json"
    ran = harness("run", str(workflow), "--no-store", "-q", "--export", str(first))
    assert ran.returncode == 0, ran.stderr
    rerun = harness("rerun", str(first), "--from", "b", "--no-store", "-q", "--export", str(again))
    assert rerun.returncode == 0, rerun.stderr
    assert log.read_text("utf-8").split() == ["a", "b", "b"]  # a was kept, not run again
    before = json.loads(first.read_text("utf-8"))["results"]
    after = json.loads(again.read_text("utf-8"))["results"]
    assert after["a"] == before["a"]
    assert after["b"] != os.getpid()  # started by the harness's child, not by this test


def test_one_ctrl_c_stops_a_parallel_run_at_once(tmp_path: Path) -> None:
    """With --workers the task runs in a pool thread: the stop reaches it there (its attempt
    is abandoned and recorded cancelled), so one press ends the run, not its 30 s task."""
    workflow = _sigint_workflow(tmp_path)
    marker, store = tmp_path / "started", tmp_path / "runs.sqlite3"
    started = time.monotonic()
    code, err = _interrupt(["run", str(workflow), "--store", str(store), "--workers", "2"], marker)
    assert code == 130, err
    assert time.monotonic() - started < 25  # not the task's 30 s
    (row,) = runs(store)
    assert row["status"] == "cancelled"


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize(
    ("task", "workers"),
    [
        ("fork_and_leave", "1"),
        ("spawn_and_leave", "4"),
        pytest.param("fork_and_leave", "4", marks=pytest.mark.slow),
        pytest.param("spawn_and_leave", "1", marks=pytest.mark.slow),
    ],
)
def test_processes_a_task_leaves_end_with_the_command(
    tmp_path: Path, task: str, workers: str
) -> None:
    marker = tmp_path / "pids"
    workflow = tmp_path / "leave.yaml"
    workflow.write_text(
        f"name: leave\ntasks:\n  t:\n    run: faulty:{task}\n"
        f"    with: {{marker: {json.dumps(str(marker))}}}\n",
        encoding="utf-8",
    )
    (tmp_path / "faulty.py").write_text((CORPUS / "faulty.py").read_text("utf-8"), "utf-8")
    result = harness("run", str(workflow), "--no-store", "-q", "--workers", workers, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    pids = [int(p) for p in marker.read_text(encoding="ascii").split()]
    assert pids
    deadline = time.monotonic() + 10  # init reaps what the command killed
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in pids)
