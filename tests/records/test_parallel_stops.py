"""A parallel run stopped at any moment records what a serial run stopped at the same plan
position records, and its export replays (docs/parallel.md, "Stops with workers").

Deep shapes (independent chains, layers of one slow and many fast tasks, random DAGs) with
skewed durations, retries, a failing task under ``on_failure: stop`` and ``all_done`` cleanups;
the user's stop lands when the run has recorded a random number of events, from the run's own
thread (as Ctrl+C does) or from another one (as ``s`` in the workbench does), while work runs
ahead on the workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_tui.engine.events import Status, TraceEvent
from harness_tui.engine.orchestrator import Run, TaskOrchestrator
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.replay import replay
from harness_tui.workflow.loader import Workflow, parse_workflow

Task = dict[str, object]


def _sleep(seconds: float, deps: list[str]) -> Task:
    return {"run": "builtin:sleep", "with": {"seconds": seconds}, "depends_on": deps}


@st.composite
def durations(draw: st.DrawFn) -> float:
    """Mostly short, sometimes ten times longer (skewed)."""
    return draw(st.sampled_from([0.0, 0.002, 0.005, 0.005, 0.01, 0.03]))


@st.composite
def workflows(draw: st.DrawFn) -> Workflow:
    shape = draw(st.sampled_from(["chains", "layers", "random"]))
    tasks: dict[str, Task] = {}
    if shape == "chains":
        for c in range(draw(st.integers(2, 4))):
            for i in range(draw(st.integers(2, 5))):
                tasks[f"c{c}_{i}"] = _sleep(draw(durations()), [f"c{c}_{i - 1}"] if i else [])
    elif shape == "layers":
        previous: list[str] = []
        for layer in range(draw(st.integers(2, 4))):
            tasks[f"l{layer}_slow"] = _sleep(0.04, previous)
            fast = [f"l{layer}_f{i}" for i in range(draw(st.integers(2, 5)))]
            for name in fast:
                tasks[name] = _sleep(draw(durations()), previous)
            previous = fast
    else:
        for i in range(draw(st.integers(4, 14))):
            deps = draw(st.sets(st.integers(0, i - 1), max_size=min(i, 3))) if i else set()
            tasks[f"r{i:02d}"] = _sleep(draw(durations()), [f"r{d:02d}" for d in sorted(deps)])
    names = list(tasks)
    if draw(st.booleans()):  # a flaky task its retry covers
        name = draw(st.sampled_from(names))
        tasks[name] = {**tasks[name], "run": "builtin:fail", "with": {"times": 1},
                       "max_retries": 1}  # fmt: skip
    if draw(st.booleans()):  # a task that finally fails: in stop mode, the run stops there
        name = draw(st.sampled_from(names))
        tasks[name] = {**tasks[name], "run": "builtin:fail", "with": {"times": 9}}
    for n in range(draw(st.integers(0, 2))):  # cleanups after some of the work
        deps = sorted(draw(st.sets(st.sampled_from(names), min_size=1, max_size=3)))
        tasks[f"cleanup{n}"] = {"run": "builtin:echo", "depends_on": deps, "trigger": "all_done"}
    document = {
        "name": f"stops_{shape}",
        "payload": {"shape": shape},
        "on_failure": draw(st.sampled_from(["stop", "continue"])),
        "tasks": tasks,
    }
    return parse_workflow(json.dumps(document), f"{shape}.yaml")


def run_of(workflow: Workflow, workers: int) -> Run:
    return TaskOrchestrator(workflow.graph, on_failure=workflow.on_failure, workers=workers).start(
        workflow.payload
    )


def stop_at(run: Run, events: int, from_thread: bool) -> threading.Thread | None:
    """Stop ``run`` once it has recorded ``events`` events: from its own thread, in the
    listener, or from another thread started there (the stop then lands a little later)."""
    stopper = threading.Thread(target=run.cancel) if from_thread else None

    def listen(event: TraceEvent) -> None:
        if event.seq + 1 == events:
            if stopper is None:
                run.cancel()
            else:
                stopper.start()

    run.add_listener(listen)
    return stopper


def check_stopped_run(workflow: Workflow, workers: int, events: int, from_thread: bool) -> None:
    serial = run_of(workflow, 1).run_to_end()
    run = run_of(workflow, workers)
    stopper = stop_at(run, events, from_thread)
    run.run_to_end()
    if stopper is not None and stopper.ident is not None:
        stopper.join()
    trace, expected = run.canonical_trace(), serial.canonical_trace()
    stopped = next((i for i, e in enumerate(run.events) if e.status is Status.CANCELLED), None)
    if stopped is None:  # the stop came after the last task, or never
        assert trace == expected
        assert run.digests() == serial.digests()
    else:  # everything before the stop is the serial run's, event for event
        assert trace[:stopped] == expected[:stopped]
    report = replay(RunRecord.from_run(run, workflow))
    where = report.diff.first.describe() if report.diff.first else "digests differ"
    assert report.identical, where
    assert report.run.status is run.status


# Found by the property below: a task fails in stop mode, its cleanup runs, and the user
# stops the run during that cleanup (a second stop): the later cleanup is cancelled too. The
# replay's wind-down ran that cleanup, past the stop its record shows before it.
STOPPED_TWICE = {
    "name": "stops_chains", "payload": {"shape": "chains"}, "on_failure": "stop",
    "tasks": {
        "c0_0": _sleep(0.0, []), "c0_1": _sleep(0.0, ["c0_0"]), "c0_2": _sleep(0.0, ["c0_1"]),
        "c1_0": _sleep(0.0, []), "c1_1": _sleep(0.0, ["c1_0"]),
        "c2_0": _sleep(0.0, []), "c2_1": _sleep(0.0, ["c2_0"]),
        "c3_0": _sleep(0.0, []),
        "c3_1": {"run": "builtin:fail", "with": {"times": 9}, "depends_on": ["c3_0"]},
        "cleanup0": {"run": "builtin:echo", "depends_on": ["c0_0"], "trigger": "all_done"},
        "cleanup1": {"run": "builtin:echo", "depends_on": ["c2_0"], "trigger": "all_done"},
    },
}  # fmt: skip


@pytest.mark.parametrize("workers", [1, 4])
def test_a_stop_during_the_cleanup_of_a_failure_replays(workers: int) -> None:
    workflow = parse_workflow(json.dumps(STOPPED_TWICE), "chains.yaml")
    check_stopped_run(workflow, workers, 15, False)  # stopped as cleanup0 starts


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workflows(), st.sampled_from([4, 8]), st.integers(1, 60), st.booleans())
def test_a_parallel_run_stopped_at_any_moment_is_a_serial_stop_and_replays(
    workflow: Workflow, workers: int, events: int, from_thread: bool
) -> None:
    check_stopped_run(workflow, workers, events, from_thread)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workflows(), st.sampled_from([2, 4, 8]), st.integers(1, 80), st.booleans())
def test_many_parallel_runs_stopped_at_any_moment_replay(
    workflow: Workflow, workers: int, events: int, from_thread: bool
) -> None:
    check_stopped_run(workflow, workers, events, from_thread)


CTRL_C_TASKS = """\
import os
import time
from pathlib import Path


def work(inputs):
    name = inputs["task"]["name"]
    if name == os.environ["PRESS_AT"]:  # the test presses Ctrl+C once this task runs
        Path(os.environ["PRESS_MARKER"]).touch()
    time.sleep(inputs["params"]["seconds"])
    return {"slept": inputs["params"]["seconds"]}
"""


def ctrl_c_then_replay(tmp_path: Path, workers: int, press_at: str) -> None:
    """``run --workers N`` of independent chains and a slow layer, Ctrl+C once ``press_at``
    runs: the export of the stopped run replays identically."""
    tasks: dict[str, Task] = {}
    for c in range(4):
        for i in range(4):
            seconds = 0.3 if (c, i) == (0, 1) else 0.02 * (1 + (c * i) % 3)
            tasks[f"c{c}_{i}"] = {"run": "ctrl_c_tasks:work", "with": {"seconds": seconds},
                                  **({"depends_on": [f"c{c}_{i - 1}"]} if i else {})}  # fmt: skip
    tasks["cleanup"] = {"run": "builtin:echo", "depends_on": ["c1_3"], "trigger": "all_done"}
    workflow = tmp_path / "chains.yaml"
    workflow.write_text(json.dumps({"name": "chains", "tasks": tasks}))
    (tmp_path / "ctrl_c_tasks.py").write_text(CTRL_C_TASKS)
    marker, export = tmp_path / "pressed", tmp_path / "run.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "harness_tui", "run", str(workflow), "--no-store", "-q",
         "--workers", str(workers), "--export", str(export)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PRESS_AT": press_at, "PRESS_MARKER": str(marker)},
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the task never ran"
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    record = RunRecord.read(export)
    assert record.document["status"] == "cancelled"
    result = subprocess.run(
        [sys.executable, "-m", "harness_tui", "replay", str(export)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr


def test_ctrl_c_with_workers_records_a_run_that_replays(tmp_path: Path) -> None:
    ctrl_c_then_replay(tmp_path, 4, "c0_1")


@pytest.mark.slow
@pytest.mark.parametrize(("workers", "press_at"), [(4, "c2_2"), (8, "c0_1"), (8, "c3_3")])
def test_ctrl_c_with_more_workers_at_other_moments_replays(
    tmp_path: Path, workers: int, press_at: str
) -> None:
    ctrl_c_then_replay(tmp_path, workers, press_at)


CHAINS = {
    "c0_0": {"run": "builtin:fail", "with": {"times": 9}},
    "c0_1": _sleep(0.0, ["c0_0"]),
    "c1_0": _sleep(0.0, []),
    "c1_1": _sleep(0.0, ["c1_0"]),
    "c1_2": _sleep(0.0, ["c1_1"]),
    "c1_3": _sleep(0.0, ["c1_2"]),
    "c1_4": _sleep(0.0, ["c1_3"]),
}
CLEANUPS = {
    "cleanup0": {"run": "builtin:echo", "depends_on": ["c0_0"], "trigger": "all_done"},
    "cleanup1": {"run": "builtin:echo", "depends_on": ["c0_0"], "trigger": "all_done"},
}


@pytest.mark.parametrize("workers", [1, 4])
def test_a_stop_that_cancels_nothing_replays_as_a_stopped_run(workers: int) -> None:
    """The stop lands while the last task of the work runs, which finishes all the same; what
    follows are ``all_done`` cleanups, which run after a stop too: no event says the run was
    stopped, and the replay still ends ``cancelled``, as recorded (found by the property)."""
    document = {
        "name": "stops_chains",
        "payload": {"shape": "chains"},
        "on_failure": "continue",
        "tasks": {**CHAINS, **CLEANUPS},
    }
    workflow = parse_workflow(json.dumps(document), "chains.yaml")
    serial = run_of(workflow, 1).run_to_end()
    started = min(e.seq for e in serial.events if e.task == "c1_4")
    assert {e.task for e in serial.events[started + 2 :]} <= set(CLEANUPS)  # only cleanups after
    check_stopped_run(workflow, workers, started + 1, from_thread=False)
