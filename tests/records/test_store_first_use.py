"""A store survives being created or upgraded by several processes at once: each one either
makes the whole store or finds it made, never half of it (an empty file, a schema version
that does not match the tables)."""

from __future__ import annotations

import multiprocessing
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore
from harness_tui.records.store.schema import MIGRATIONS, SCHEMA_VERSION

WORKFLOW = "name: tiny\ntasks:\n  a: {run: builtin:echo, with: {x: 1}}\n"


def _open_and_record(path: str, barrier: Any, errors: Any) -> None:
    """A child process: opens the store, held with the other child right after reading the
    store's version (before creating or upgrading it), then records a run in it."""
    from harness_tui.engine.clock import FakeClock
    from harness_tui.records.runs.live import LiveRun
    from harness_tui.records.store import schema as store_module
    from harness_tui.workflow.loader import parse_workflow

    def pause(_path: Path, _version: int | None) -> None:
        barrier.wait(timeout=60)  # both have read the version: neither has changed it

    store_module.pause_before_migrating = pause
    try:
        workflow = parse_workflow(WORKFLOW)
        with RunStore(path) as store:
            LiveRun.start(
                workflow, workflow.payload, RunSettings(store=store, clock=FakeClock())
            ).drive()
    except BaseException as exc:
        errors.put(f"{type(exc).__name__}: {exc}")
        raise SystemExit(1) from None


def _two_at_once(path: Path) -> list[str]:
    context = multiprocessing.get_context("spawn")
    barrier, errors = context.Barrier(2), context.Queue()
    children = [
        context.Process(target=_open_and_record, args=(str(path), barrier, errors))
        for _ in range(2)
    ]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=120)
    found = []
    while not errors.empty():
        found.append(errors.get())
    assert [child.exitcode for child in children] == [0, 0], found
    return found


def _check_usable(path: Path, runs: int) -> None:
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        columns = [row[1] for row in db.execute("PRAGMA table_info(runs)")]
    db.close()
    assert columns.count("lease_owner") == 1
    with RunStore(path, create=False) as store:
        rows = store.runs()
    assert [row["status"] for row in rows] == ["succeeded"] * runs
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_two_processes_creating_one_store_at_once_both_record(tmp_path: Path) -> None:
    path = tmp_path / "new" / "runs.sqlite3"
    assert _two_at_once(path) == []
    _check_usable(path, runs=2)


def test_two_processes_upgrading_one_store_at_once_both_record(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    with sqlite3.connect(path) as db:  # a store of schema version 1, as an old release left it
        db.executescript(MIGRATIONS[0])
        db.execute("PRAGMA user_version = 1")
    db.close()
    assert _two_at_once(path) == []
    _check_usable(path, runs=2)


@pytest.mark.slow
def test_twenty_runs_on_a_new_store_at_once_all_succeed(tmp_path: Path) -> None:
    workflow = tmp_path / "tiny.yaml"
    workflow.write_text(WORKFLOW, encoding="utf-8")
    for trial in range(3):
        path = tmp_path / f"trial{trial}" / "new.sqlite3"
        command = [sys.executable, "-m", "harness_tui", "run", str(workflow), "-q"]
        children = [
            subprocess.Popen(
                [*command, "--store", str(path)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(20)
        ]
        outcomes = [(child.communicate()[1], child.returncode) for child in children]
        failures = [err for err, code in outcomes if err or code]
        assert failures == [], f"trial {trial}"
        _check_usable(path, runs=20)
