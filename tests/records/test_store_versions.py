"""The store's schema versions, migrations and run-status model (docs/formats.md, "Run store")."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.driver import StopReason
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore, StoreError
from harness_tui.records.store.schema import SCHEMA_VERSION
from harness_tui.workflow.loader import parse_workflow

DATA = Path(__file__).parent / "data"

# store-v0.sqlite3 was written by the last release without schema versions: two finished runs
# of a three-task workflow (one retry each) and a run of `pipeline` killed with SIGKILL while
# its second task slept 60 s (one task done of three). Only the folder names it held were
# scrubbed afterwards (tracebacks, the workflow's folder).
SLEEPY = """\
name: sleepy
payload: {n: 1}
tasks:
  a: {run: builtin:echo, with: {x: 1}}
  b: {run: builtin:sleep, depends_on: [a], with: {seconds: 5}}
  c: {run: builtin:echo, depends_on: [b]}
"""


@pytest.fixture
def v0_store(tmp_path: Path) -> Path:
    path = tmp_path / "runs.sqlite3"
    shutil.copy(DATA / "store-v0.sqlite3", path)
    return path


def test_the_fixture_is_a_store_of_version_0(v0_store: Path) -> None:
    with sqlite3.connect(v0_store) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
        names = sorted(
            name for name, status in conn.execute("SELECT workflow_name, status FROM runs")
        )
        columns = [row[1] for row in conn.execute("PRAGMA table_info(runs)")]
    assert names == ["ok", "ok", "pipeline"]
    assert "lease_owner" not in columns


def test_a_version_0_store_migrates_and_keeps_every_run(v0_store: Path) -> None:
    store = RunStore(v0_store)
    assert store.schema_version == SCHEMA_VERSION
    runs = store.runs()
    by_workflow: dict[str, list[str]] = {}
    for row in runs:
        by_workflow.setdefault(row["workflow"], []).append(row["status"])
    # The killed run held no lease (version 0 had none): it reads as interrupted, resumable.
    assert by_workflow == {"ok": ["succeeded", "succeeded"], "pipeline": ["interrupted"]}
    for row in runs:
        if row["status"] == "succeeded":
            assert store.export(row["id"]).digests["run"] == row["run_digest"]
    assert store.integrity_check() == "ok"
    store.close()
    # Opening again applies nothing more.
    again = RunStore(v0_store)
    assert again.schema_version == SCHEMA_VERSION and len(again.runs()) == 3


def test_an_interrupted_run_of_a_version_0_store_resumes_to_the_end(v0_store: Path) -> None:
    store = RunStore(v0_store)
    (row,) = [r for r in store.runs() if r["workflow"] == "pipeline"]
    assert row["tasks_done"] == 1
    live = LiveRun.resume(row["id"], RunSettings(store=store, clock=FakeClock()))
    assert live.run.cursor == 1
    assert live.drive().reason is StopReason.FINISHED
    assert live.run.status.value == "succeeded"
    (row,) = [r for r in store.runs() if r["workflow"] == "pipeline"]
    assert (row["status"], row["tasks_done"], row["run_digest"]) == (
        "succeeded",
        3,
        live.run.digest,
    )
    # Events written after the migration carry a wall time; those of version 0 do not.
    walls = [event.wall for event in store.load(row["id"]).events]
    assert walls[0] is None and all(w is not None for w in walls[2:])


def test_a_store_newer_than_the_tool_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    RunStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer than this harness-tui"):
        RunStore(path)
    result = CliRunner().invoke(cli, ["runs", "--store", str(path)])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and f"schema version {SCHEMA_VERSION + 1}" in line


def test_a_file_that_is_not_a_store_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    result = CliRunner().invoke(cli, ["runs", "--store", str(path)])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert "cannot open the run store" in line and "Traceback" not in result.output


def test_statuses_running_abandoned_then_resumed(tmp_path: Path) -> None:
    workflow = parse_workflow(SLEEPY)
    store = RunStore(tmp_path / "runs.sqlite3")
    live = LiveRun.start(workflow, workflow.payload, RunSettings(store=store, clock=FakeClock()))
    assert live.run_id is None and store.runs() == []  # nothing recorded before a drive
    assert live.drive(single=True).reason is StopReason.STEP
    run_id = live.run_id
    assert run_id is not None
    (row,) = store.runs()
    assert (row["status"], row["tasks_done"]) == ("running", 1)  # this process holds the lease
    with pytest.raises(StoreError, match="still running"):
        store.resume(run_id)
    live.abandon()
    (row,) = store.runs()
    assert row["status"] == "abandoned"
    resumed = LiveRun.resume(run_id, RunSettings(store=store, clock=FakeClock()))
    assert store.runs()[0]["status"] == "running"
    resumed.drive()
    (row,) = store.runs()
    assert (row["status"], row["tasks_done"]) == ("succeeded", 3)
    headless = LiveRun.start(workflow, workflow.payload, RunSettings(clock=FakeClock()))
    headless.drive()
    assert resumed.run.digest == row["run_digest"] == headless.run.digest


def test_a_lease_held_by_a_dead_process_reads_interrupted(tmp_path: Path) -> None:
    workflow = parse_workflow(SLEEPY)
    path = tmp_path / "runs.sqlite3"
    store = RunStore(path)
    live = LiveRun.start(workflow, workflow.payload, RunSettings(store=store, clock=FakeClock()))
    live.drive(single=True)
    owner = store.runs()[0]
    with sqlite3.connect(path) as conn:
        host = conn.execute("SELECT lease_owner FROM runs").fetchone()[0].rpartition(":")[0]
        # A pid that cannot be alive (above the kernel's pid_max).
        conn.execute("UPDATE runs SET lease_owner = ?", (f"{host}:99999999",))
    assert store.runs()[0]["status"] == "interrupted"
    with sqlite3.connect(path) as conn:
        # Another host: only the lease's expiry tells.
        conn.execute("UPDATE runs SET lease_owner = 'elsewhere:1', lease_until = 0")
    assert store.runs()[0]["status"] == "interrupted"
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE runs SET lease_until = 1e12")
    assert store.runs()[0]["status"] == "running"
    assert owner["id"] == store.runs()[0]["id"]


def test_a_store_that_fails_mid_run_does_not_stop_the_run(tmp_path: Path) -> None:
    workflow = parse_workflow(SLEEPY)
    store = RunStore(tmp_path / "runs.sqlite3")
    live = LiveRun.start(workflow, workflow.payload, RunSettings(store=store, clock=FakeClock()))
    live.drive(single=True)
    store.close()  # every later write fails
    assert live.drive().reason is StopReason.FINISHED
    assert live.run.status.value == "succeeded"
    assert live.problem is not None and "no longer recorded" in live.problem


def test_reading_commands_never_create_a_store(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = tmp_path / "typo" / "runs.sqlite3"
    for args in (["runs"], ["export", "x", str(tmp_path / "x.json")], ["resume", "x"]):
        result = runner.invoke(cli, [*args, "--store", str(missing)])
        assert result.exit_code == 2, args
        assert "no run store there" in result.stderr
    assert not missing.parent.exists()
    empty = tmp_path / "notes.yaml"
    empty.touch()
    result = runner.invoke(cli, ["runs", "--store", str(empty)])
    assert result.exit_code == 2 and "an empty file is not a run store" in result.stderr
    assert empty.read_bytes() == b""


def test_a_piped_run_list_is_not_cut_to_80_columns(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    workflow = parse_workflow(SLEEPY.replace("sleepy", "a_rather_long_workflow_name_here"))
    live = LiveRun.start(
        workflow, workflow.payload, RunSettings(store=RunStore(path), clock=FakeClock())
    )
    live.drive()
    result = CliRunner().invoke(cli, ["runs", "--store", str(path)])
    assert result.exit_code == 0
    assert "a_rather_long_workflow_name_here" in result.stdout and "succeeded" in result.stdout
    assert live.run_id is not None and live.run_id in result.stdout
