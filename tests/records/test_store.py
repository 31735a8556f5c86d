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
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore
from harness_tui.workflow.loader import load_workflow

ROOT = Path(__file__).resolve().parents[2]

SLOW = """\
name: slow_chain
description: Six tasks that take real time, for crash tests.
payload: {batch: 7}
tasks:
  fetch: {run: builtin:sleep, with: {seconds: 0.15}}
  parse: {run: builtin:sleep, depends_on: [fetch], with: {seconds: 0.15}}
  enrich: {run: builtin:sleep, depends_on: [parse], with: {seconds: 0.15}}
  score:
    {run: builtin:fail, depends_on: [enrich], max_retries: 1, with: {times: 1, value: {score: 3}}}
  store: {run: builtin:sleep, depends_on: [score], with: {seconds: 0.15}}
  report: {run: builtin:merge, depends_on: [score, store]}
"""


def test_runs_are_recorded_as_they_happen_and_listed(tmp_path: Path) -> None:
    workflow = load_workflow(ROOT / "workflows/user_profile.yaml")
    store = RunStore(tmp_path / "runs.db")
    run = TaskOrchestrator(workflow.graph, clock=FakeClock()).start(workflow.payload)
    run_id = store.record(run, workflow)
    run.step()
    (row,) = store.runs()
    assert row["id"] == run_id and row["status"] == "running" and row["tasks_done"] == 1
    run.run_to_end()
    store.finish(run, run_id)
    (row,) = store.runs()
    assert row["status"] == "succeeded" and row["tasks_done"] == 4
    assert row["run_digest"] == run.digest
    exported = store.export(run_id)
    assert exported.digests == run.digests()
    assert store.integrity_check() == "ok"


def test_runs_json_and_export_commands(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    runner = CliRunner()
    result = runner.invoke(
        cli, ["run", str(ROOT / "workflows/user_profile.yaml"), "--store", db, "-q"]
    )
    assert result.exit_code == 0
    listed = json.loads(runner.invoke(cli, ["runs", "--store", db, "--json"]).stdout)
    assert [set(r) >= {"id", "status"} for r in listed] == [True]
    out = tmp_path / "x.json"
    result = runner.invoke(cli, ["export", listed[0]["id"], str(out), "--store", db])
    assert result.exit_code == 0, result.output
    assert RunRecord.read(out).digests["run"] == listed[0]["run_digest"]
    missing = runner.invoke(cli, ["export", "nope", str(out), "--store", db])
    assert missing.exit_code == 2 and "no run 'nope'" in missing.stderr


def test_a_command_closes_the_store_and_leaves_no_write_ahead_log(tmp_path: Path) -> None:
    """The next command opens a clean file: nothing to recover or check."""
    db = tmp_path / "runs.db"
    store = ["--store", str(db)]
    result = CliRunner().invoke(cli, ["run", str(ROOT / "workflows/user_profile.yaml"), *store])
    assert result.exit_code == 0, result.output
    with RunStore(db, create=False) as reader:
        (run_id,) = [row["id"] for row in reader.runs()]
    out = tmp_path / "out"
    out.mkdir()
    for command in (
        ["runs"],
        ["export", run_id, str(out / "run.json")],
        ["rerun", run_id, "--from", "check_quota", "-q"],
        ["run", str(ROOT / "workflows/user_profile.yaml"), "-q"],
    ):
        result = CliRunner().invoke(cli, [*command, *store])
        assert result.exit_code == 0, (command, result.output)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "runs.db"], command
    with RunStore(db, create=False) as reader:
        assert len(reader.runs()) == 3


def test_stored_batches_give_back_every_field_of_every_event(tmp_path: Path) -> None:
    """Timings, walls, workers (0 and not), tracebacks and missing times come back exactly
    from the batch rows, over several batches."""
    import harness_tui.records.store.writer as store_module

    def boom(inputs: object) -> None:
        raise ValueError("boom")

    nodes = [TaskNode(f"t{i}", lambda inputs: 1, max_retries=0) for i in range(5)]
    nodes += [
        TaskNode("bad", boom, depends_on=("t0",), max_retries=1),
        TaskNode("after", lambda inputs: 2, depends_on=("bad",)),
    ]
    graph = TaskGraph.from_nodes(nodes)
    workflow = load_workflow(ROOT / "workflows/user_profile.yaml")
    store = RunStore(tmp_path / "runs.db")
    old, store_module.GROUP_EVENTS = store_module.GROUP_EVENTS, 3
    try:
        clock = FakeClock(start=1.7e9, tick=0.125)
        run = TaskOrchestrator(graph, clock=clock, on_failure="continue", workers=3).start({})
        run_id = store.record(run, workflow)
        run.run_to_end()
        store.finish(run, run_id)
    finally:
        store_module.GROUP_EVENTS = old
    loaded = store.load(run_id)
    assert loaded.events == list(run.events)
    assert any(e.worker for e in run.events) and any(e.traceback for e in run.events)
    assert any(None in (e.started_at, e.ended_at) for e in run.events)
    assert {task: json.loads(text) for task, text in loaded.outputs.items()} == run.results
    with sqlite3.connect(tmp_path / "runs.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM batches").fetchone()[0] > 2
    store.close()


def test_a_recorded_run_is_freed_without_the_cyclic_collector(tmp_path: Path) -> None:
    """Once its end is recorded, nothing the store keeps holds the run in a cycle: a 100k-task
    run is not left for a full collection (at exit: a pass over every object it made)."""
    import gc
    import weakref

    from harness_tui.records.runs.live import LiveRun

    workflow = load_workflow(ROOT / "workflows/user_profile.yaml")
    with RunStore(tmp_path / "runs.db") as store:
        live = LiveRun.start(
            workflow, workflow.payload, RunSettings(store=store, clock=FakeClock())
        )
        live.drive()
        assert live.run.finished
        gone = weakref.ref(live.run)
        gc.disable()
        try:
            del live
            assert gone() is None
        finally:
            gc.enable()


def _uninterrupted_digest(workflow_path: Path, tmp_path: Path) -> str:
    out = tmp_path / "whole.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness_tui",
            "run",
            str(workflow_path),
            "--no-store",
            "-q",
            "--export",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.returncode == 0
    return RunRecord.read(out).digests["run"]


def _wait_for_tasks(db: Path, count: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if db.exists():
            try:
                with sqlite3.connect(db) as conn:
                    runs, done = conn.execute(
                        "SELECT (SELECT COUNT(*) FROM runs), "
                        "(SELECT COALESCE(SUM(tasks), 0) FROM batches)"
                    ).fetchone()
                # The store file exists before the run is registered: wait for its row too.
                if runs and done >= count:
                    return
            except sqlite3.OperationalError:
                pass
        assert process.poll() is None, "the run ended before it could be killed"
        time.sleep(0.01)
    raise AssertionError("the run made no progress")


HOLDING = """\
import os
import time
from pathlib import Path


def work(inputs):
    if os.environ.get("HOLD_AT") == inputs["task"]["name"]:  # the test kills the run here
        Path(os.environ["HOLD_MARKER"]).touch()
        time.sleep(120)
    time.sleep(inputs["params"]["seconds"])
    return {"slept": inputs["params"]["seconds"]}
"""
HOLD_AT = {0: "fetch", 1: "parse", 3: "store", 4: "store"}
"""Where the killed run holds: the first task from that plan position that sleeps."""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("killed_after", "workers"), [(0, 1), (1, 1), (3, 1), (4, 1), (1, 4), (3, 4)]
)
def test_sigkill_then_resume_equals_the_uninterrupted_run(
    tmp_path: Path, killed_after: int, workers: int
) -> None:
    """Killed with 1 or 4 workers, resumed with the other count: the serial run's digest.

    The killed run holds inside the task after the first ``killed_after`` ones until it is
    killed, so it cannot reach its end first on a slow machine (a 50 ms sleep before the kill
    could)."""
    workflow_path = tmp_path / "slow.yaml"
    workflow_path.write_text(SLOW.replace("builtin:sleep", "holding_tasks:work"))
    (tmp_path / "holding_tasks.py").write_text(HOLDING)
    expected = _uninterrupted_digest(workflow_path, tmp_path)
    db, marker = tmp_path / "runs.db", tmp_path / "holding"
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "harness_tui", "run", str(workflow_path)),
            *("--store", str(db), "-q", "--workers", str(workers)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "HOLD_AT": HOLD_AT[killed_after], "HOLD_MARKER": str(marker)},
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert process.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "the run never reached the task it holds in"
        time.sleep(0.01)
    _wait_for_tasks(db, killed_after, process)  # what it retired is stored (group commit)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    # The killed process held the run's lease: the store reads the run as interrupted.
    (row,) = RunStore(db).runs()
    assert row["status"] == "interrupted"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        (run_id,) = conn.execute("SELECT id FROM runs").fetchone()
        (done,) = conn.execute("SELECT COALESCE(SUM(tasks), 0) FROM batches").fetchone()
    assert done < 6
    out = tmp_path / "resumed.json"
    result = CliRunner().invoke(
        cli, ["resume", run_id, "--store", str(db), "--export", str(out),
              "--workers", str(5 - workers)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert RunRecord.read(out).digests["run"] == expected
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        status, digest = conn.execute("SELECT status, run_digest FROM runs").fetchone()
    assert (status, digest) == ("succeeded", expected)


def test_export_a_stored_run_redacted(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    runner = CliRunner()
    assert (
        runner.invoke(
            cli, ["run", str(ROOT / "workflows/user_profile.yaml"), "--store", db, "-q"]
        ).exit_code
        == 0
    )
    (row,) = json.loads(runner.invoke(cli, ["runs", "--store", db, "--json"]).stdout)
    out = tmp_path / "redacted.json"
    result = runner.invoke(
        cli, ["export", row["id"], str(out), "--store", db, "--redact", "user_id"]
    )
    assert result.exit_code == 0, result.output
    record = RunRecord.read(out)
    assert record.redacted == ["user_id"]
    assert record.payload == {"user_id": record.payload["user_id"]}
    assert record.payload["user_id"] == "<redacted>"
    assert record.digests["run"] == row["run_digest"]
    assert record.status == "succeeded"


def test_a_cancelled_stored_run_exports_redacted_with_a_valid_checksum(tmp_path: Path) -> None:
    import threading

    from harness_tui.executors.threads import ThreadExecutor
    from harness_tui.workflow.loader import parse_workflow

    workflow = parse_workflow(
        "name: hang\npayload: {secret: s3}\ntasks:\n"
        "  slow: {run: builtin:sleep, with: {seconds: 30}}\n"
        "  after: {run: builtin:echo, depends_on: [slow]}\n"
    )
    store = RunStore(tmp_path / "runs.db")
    run = TaskOrchestrator(workflow.graph, executor=ThreadExecutor(isolate=True)).start(
        workflow.payload
    )
    run_id = store.record(run, workflow)
    threading.Timer(0.2, run.cancel).start()
    run.run_to_end()
    store.finish(run, run_id)
    out = tmp_path / "cancelled.json"
    store.export(run_id, redact=["secret"]).write(out)
    record = RunRecord.read(out)  # the checksum covers the status it carries
    assert record.status == "cancelled"
    assert record.payload["secret"] == "<redacted>"


def _stored_finals(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COALESCE(SUM(tasks), 0) FROM batches").fetchone()[0])


def test_group_commit_writes_a_batch_when_full_due_or_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness_tui.records.store.writer as store_module

    workflow = load_workflow(ROOT / "workflows/user_profile.yaml")
    db = tmp_path / "runs.db"
    store = RunStore(db)
    monkeypatch.setattr(store_module, "GROUP_SECONDS", 3600.0)
    monkeypatch.setattr(store_module, "GROUP_EVENTS", 4)  # two tasks of two events each
    run = TaskOrchestrator(workflow.graph, clock=FakeClock()).start(workflow.payload)
    run_id = store.record(run, workflow)
    run.step()
    assert _stored_finals(db) == 0  # pending: another process sees nothing yet
    run.step()
    assert _stored_finals(db) == 2  # full
    run.step()
    store.flush(run_id)  # a pause
    assert _stored_finals(db) == 3
    monkeypatch.setattr(store_module, "GROUP_SECONDS", 0.05)
    run.step()  # the last task: written by the store's own thread once its time is up
    deadline = time.monotonic() + 10
    while _stored_finals(db) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _stored_finals(db) == 4
    store.finish(run, run_id)
    store.close()
    assert RunStore(db).export(run_id).digests == run.digests()
