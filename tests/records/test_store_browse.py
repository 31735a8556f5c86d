"""The run browser's store queries: a page at a time, filtered, sorted; deletion."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from harness_tui.engine.clock import FakeClock
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore, StoreError
from harness_tui.records.store.queries import RunQuery, Sort
from harness_tui.records.store.schema import SCHEMA_VERSION
from harness_tui.workflow.loader import parse_workflow

from .mixed_store import GREET, mixed_store


@pytest.fixture
def store(tmp_path: Path) -> tuple[RunStore, dict[str, str]]:
    ids = mixed_store(tmp_path / "runs.sqlite3")
    return RunStore(tmp_path / "runs.sqlite3", create=False, write=True), ids


def test_every_run_is_listed_newest_first_with_its_status(
    store: tuple[RunStore, dict[str, str]],
) -> None:
    runs, ids = store
    rows, total = runs.browse(RunQuery())
    assert total == 4
    assert [row.status for row in rows] == ["abandoned", "interrupted", "failed", "succeeded"]
    assert [row.id for row in rows] == [ids[row.status] for row in rows]
    by = {row.status: row for row in rows}
    assert (by["succeeded"].tasks_done, by["succeeded"].tasks_total) == (3, 3)
    assert (by["interrupted"].tasks_done, by["abandoned"].tasks_done) == (1, 2)
    assert by["succeeded"].duration == 90.0 and by["interrupted"].duration is None
    assert by["failed"].run_digest is not None and by["abandoned"].run_digest is None
    # The list agrees with the store's full listing (the command line's `runs`).
    assert [(r["id"], r["status"]) for r in runs.runs()] == [(r.id, r.status) for r in rows]


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ({"interrupted"}, ["interrupted"]),
        ({"running"}, []),
        ({"failed", "abandoned"}, ["abandoned", "failed"]),
        ({"succeeded", "interrupted"}, ["interrupted", "succeeded"]),
    ],
)
def test_a_status_filter_reads_statuses_as_people_do(
    store: tuple[RunStore, dict[str, str]], statuses: set[str], expected: list[str]
) -> None:
    rows, total = store[0].browse(RunQuery(statuses=frozenset(statuses)))
    assert [row.status for row in rows] == expected and total == len(expected)


def test_text_filter_sort_and_pages(store: tuple[RunStore, dict[str, str]]) -> None:
    runs, ids = store
    rows, total = runs.browse(RunQuery(text="FLAK"))
    assert total == 1 and rows[0].id == ids["failed"]
    rows, _ = runs.browse(RunQuery(text=ids["succeeded"][-6:]))
    assert [row.id for row in rows] == [ids["succeeded"]]
    assert runs.browse(RunQuery(text="%"))[1] == 0  # LIKE's wildcards are taken literally
    rows, _ = runs.browse(RunQuery(sort=Sort.WORKFLOW, descending=False))
    assert [row.workflow for row in rows] == ["flaky", "greet", "greet", "greet"]
    rows, _ = runs.browse(RunQuery(sort=Sort.STARTED, descending=False))
    assert [row.status for row in rows] == ["succeeded", "failed", "interrupted", "abandoned"]
    rows, _ = runs.browse(RunQuery(sort=Sort.DURATION))
    assert [row.status for row in rows][-1] == "interrupted"  # no duration: last
    page, total = runs.browse(RunQuery(offset=1, limit=2))
    assert total == 4 and [row.status for row in page] == ["interrupted", "failed"]


def test_a_run_is_deleted_with_everything_stored_about_it(
    store: tuple[RunStore, dict[str, str]], tmp_path: Path
) -> None:
    runs, ids = store
    runs.delete(ids["failed"])
    rows, total = runs.browse(RunQuery())
    assert total == 3 and ids["failed"] not in {row.id for row in rows}
    runs.close()
    with sqlite3.connect(tmp_path / "runs.sqlite3") as db:
        for table in ("events", "outputs", "logs", "batches"):
            left = db.execute(f"SELECT COUNT(*) FROM {table} WHERE run_id = ?", (ids["failed"],))
            assert left.fetchone()[0] == 0, table
        kept = db.execute("SELECT COUNT(*) FROM batches WHERE run_id = ?", (ids["succeeded"],))
        assert kept.fetchone()[0] > 0
    db.close()
    with RunStore(tmp_path / "runs.sqlite3", create=False, write=True) as again:
        with pytest.raises(StoreError, match="no run"):
            again.delete(ids["failed"])
        assert again.export(ids["succeeded"]).status == "succeeded"


def test_a_run_held_by_a_live_lease_is_not_deleted(tmp_path: Path) -> None:
    workflow = parse_workflow(GREET)
    with RunStore(tmp_path / "runs.sqlite3") as runs:
        live = LiveRun.start(workflow, workflow.payload, RunSettings(store=runs, clock=FakeClock()))
        live.drive(single=True)
        assert live.run_id is not None
        with pytest.raises(StoreError, match="holds its lease"):
            runs.delete(live.run_id)
        (row,), _ = runs.browse(RunQuery())
        assert row.status == "running" and row.lease_live
        live.abandon()
        runs.delete(live.run_id)
        assert runs.browse(RunQuery()) == ([], 0)


def test_the_index_migration_comes_with_the_schema(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as runs:
        assert runs.schema_version == SCHEMA_VERSION
    with sqlite3.connect(tmp_path / "runs.sqlite3") as db:
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        plan = " ".join(
            str(row[-1])
            for row in db.execute(
                "EXPLAIN QUERY PLAN SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 5"
            )
        )
    db.close()
    assert {"runs_by_start", "runs_by_status"} <= names
    assert "runs_by_start" in plan  # the first page is read from the index, not sorted
