"""Who may resume a run: one process at a time, a reused pid is not the lease holder, a run
that crashed before recording its end gets it on resume, and --force takes a run over."""

from __future__ import annotations

import os
import socket
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore, StoreError
from harness_tui.records.store.leases import lease_owner, process_start
from harness_tui.workflow.loader import parse_workflow

CHAIN = parse_workflow(
    "name: chain\ntasks:\n"
    "  a: {run: builtin:echo, with: {x: 1}}\n"
    "  b: {run: builtin:echo, depends_on: [a]}\n"
    "  c: {run: builtin:echo, depends_on: [b]}\n"
)
START = process_start(os.getpid())
needs_proc = pytest.mark.skipif(not START, reason="no /proc/<pid>/stat here")


def set_lease(path: Path, owner: str | None) -> None:
    with sqlite3.connect(path) as db:
        db.execute("UPDATE runs SET lease_owner = ?, lease_until = 0", (owner,))
    db.close()


def stopped_run(path: Path, steps: int = 1) -> str:
    """A run of CHAIN stopped after ``steps`` tasks, its process gone (no lease)."""
    with RunStore(path) as store:
        live = LiveRun.start(CHAIN, CHAIN.payload, RunSettings(store=store, clock=FakeClock()))
        for _ in range(steps):
            live.drive(single=True)
        assert live.run_id is not None
    set_lease(path, None)
    return live.run_id


def status(path: Path) -> tuple[str, str | None]:
    with RunStore(path, create=False) as store:
        (row,) = store.runs()
    return row["status"], row["run_digest"]


def test_of_two_processes_resuming_one_run_only_one_takes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "runs.db"
    run_id = stopped_run(path)
    first, second = RunStore(path), RunStore(path)
    load = RunStore.load

    def load_then_lose_the_race(self: RunStore, wanted: str) -> object:
        stored = load(self, wanted)
        if self is second:  # both have read "interrupted"; the first leases it now
            LiveRun.resume(wanted, RunSettings(store=first, clock=FakeClock()))
        return stored

    monkeypatch.setattr(RunStore, "load", load_then_lose_the_race)
    holder = f"process {os.getpid()} on {socket.gethostname()}"
    with pytest.raises(StoreError, match=f"run {run_id} was taken by {holder} meanwhile"):
        LiveRun.resume(run_id, RunSettings(store=second, clock=FakeClock()))
    assert status(path)[0] == "running"  # held by the first


def test_the_lease_owner_names_the_process_start_time() -> None:
    assert lease_owner() == f"{socket.gethostname()}:{os.getpid()}:{START}"


@needs_proc
def test_a_reused_pid_does_not_keep_a_dead_run_running(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    stopped_run(path)
    host, pid = socket.gethostname(), os.getpid()
    set_lease(path, f"{host}:{pid}:{int(START) + 1}")  # our pid, another process's start
    assert status(path)[0] == "interrupted"
    set_lease(path, f"{host}:{pid}:{START}")
    assert status(path)[0] == "running"
    set_lease(path, f"{host}:{pid}")  # written before start times: the pid alone decides
    assert status(path)[0] == "running"


def test_a_run_that_died_before_recording_its_end_is_finished_by_resume(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        run = TaskOrchestrator(CHAIN.graph, clock=FakeClock()).start(CHAIN.payload)
        run_id = store.record(run, CHAIN)
        run.run_to_end()  # every task stored, then the process dies before store.finish
    set_lease(path, None)
    assert status(path) == ("interrupted", None)
    with RunStore(path) as store:
        live = LiveRun.resume(run_id, RunSettings(store=store, clock=FakeClock()))
    assert live.run.finished and live.problem is None
    assert status(path) == ("succeeded", run.digest)


def test_resume_force_takes_over_a_run_whose_lease_looks_live(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    run_id = stopped_run(path)
    set_lease(path, lease_owner())  # a live process (this one) seems to hold it
    args = ["resume", run_id, "--store", str(path)]
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 2
    assert "still running" in refused.stderr and "--force" in refused.stderr
    taken = CliRunner().invoke(cli, [*args, "--force"])
    assert taken.exit_code == 0, taken.output
    assert status(path)[0] == "succeeded"
    help_text = CliRunner().invoke(cli, ["resume", "--help"]).output
    assert "--force" in help_text and "Take over a run whose lease still looks live" in help_text
