"""Reading commands open the store read-only, and no store is made of a database that is
not one."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.engine.clock import FakeClock
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore, StoreError
from harness_tui.records.store import run_store as store_module
from harness_tui.records.store.schema import SCHEMA_VERSION
from harness_tui.workflow.loader import parse_workflow

DATA = Path(__file__).parent / "data"
ECHO = parse_workflow("name: echo\ntasks:\n  a: {run: builtin:echo, with: {x: 1}}\n")


def schema(path: Path) -> tuple[int, set[str]]:
    db = sqlite3.connect(path)
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    finally:
        db.close()
    return version, names


def test_a_reading_opening_reads_and_cannot_write(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        live = LiveRun.start(ECHO, ECHO.payload, RunSettings(store=store, clock=FakeClock()))
        live.drive()
    with RunStore(path, create=False) as reader:
        (row,) = reader.runs()
        assert row["status"] == "succeeded"
        assert reader.export(row["id"]).digests["run"] == live.run.digest
        with pytest.raises(StoreError, match="readonly"):
            reader.abandon(row["id"])


def test_an_old_store_is_upgraded_for_reading_when_it_can_be_written(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    shutil.copy(DATA / "store-v0.sqlite3", path)
    with RunStore(path, create=False) as reader:
        assert reader.schema_version == SCHEMA_VERSION
        assert len(reader.runs()) == 3


def test_an_old_read_only_store_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "runs.sqlite3"
    shutil.copy(DATA / "store-v0.sqlite3", path)
    # Permissions do not bind root, so the tool is told the file is read-only.
    monkeypatch.setattr(store_module, "_writable", lambda path: False)
    with pytest.raises(StoreError, match=r"must be upgraded to \d+, but it is read-only"):
        RunStore(path, create=False)
    result = CliRunner().invoke(cli, ["runs", "--store", str(path)])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "read-only" in line
    assert schema(path)[0] == 0  # untouched


@pytest.mark.parametrize("create", [True, False], ids=["writing", "reading"])
def test_another_programs_database_is_never_made_a_store(tmp_path: Path, create: bool) -> None:
    path = tmp_path / "notes.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (body TEXT)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="not a harness-tui run store"):
        RunStore(path, create=create)
    assert schema(path) == (0, {"notes"})


def test_a_negative_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "neg.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = -1")
    db.execute("CREATE TABLE runs (id TEXT)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="not a harness-tui run store"):
        RunStore(path)


def _checkpointed_store(tmp_path: Path) -> Path:
    path = tmp_path / "ro" / "runs.sqlite3"
    with RunStore(path) as store:
        LiveRun.start(ECHO, ECHO.payload, RunSettings(store=store, clock=FakeClock())).drive()
    assert sorted(p.name for p in path.parent.iterdir()) == ["runs.sqlite3"]  # checkpointed
    return path


def test_a_checkpointed_store_on_read_only_media_is_read_without_its_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On read-only media SQLite cannot make the -shm index of a WAL store; a checkpointed
    store is read as the unchanging file it is (permissions do not bind root: the tool is
    told, and the test checks no index was made)."""
    path = _checkpointed_store(tmp_path)
    monkeypatch.setattr(store_module, "_writable", lambda path: False)
    monkeypatch.setattr(store_module, "_writable_folder", lambda path: False)
    result = CliRunner().invoke(cli, ["runs", "--store", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert '"status": "succeeded"' in result.stdout
    assert sorted(p.name for p in path.parent.iterdir()) == ["runs.sqlite3"]


@pytest.mark.slow
def test_a_checkpointed_store_on_a_read_only_mount_is_read(tmp_path: Path) -> None:
    """The same on a real read-only bind mount (where the machine allows making one)."""
    import subprocess
    import sys

    path = _checkpointed_store(tmp_path)
    folder = path.parent
    script = (
        f"mount --bind {folder} {folder} && mount -o remount,ro,bind {folder} && "
        f"{sys.executable} -m harness_tui runs --store {path} --json"
    )
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True)
    if "mount" in done.stderr or "unshare" in done.stderr:
        pytest.skip(f"no read-only mount here: {done.stderr.strip()[:200]}")
    assert done.returncode == 0, done.stderr
    assert '"status": "succeeded"' in done.stdout
