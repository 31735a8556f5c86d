"""A run's unattributed output (threads that wrote after their attempt ended) is kept like an
attempt's log: stored when the run finishes, exported, replayed, and shown by ``u`` in the
logs view (issue 12)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_tui.engine.capture import UNATTRIBUTED, AttemptLog
from harness_tui.engine.clock import FakeClock
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.replay import replay, replay_run
from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore
from harness_tui.tui.modals.logs import LogsModal, LogView
from harness_tui.workflow.loader import load_workflow

MODULE = "late_thread_tasks"
LATE = AttemptLog("a line from a thread after its attempt\n")


@pytest.fixture
def workflow_file(tmp_path: Path) -> Iterator[Path]:
    # ``after`` runs once ``leaves`` has ended and lets the thread ``leaves`` started write:
    # the line is written after its attempt, yet before the run finishes.
    (tmp_path / f"{MODULE}.py").write_text(
        "import threading\n"
        "go, done = threading.Event(), threading.Event()\n"
        "def leaves(inputs):\n"
        "    def late():\n"
        "        go.wait(5)\n"
        "        print('a line from a thread after its attempt')\n"
        "        done.set()\n"
        "    threading.Thread(target=late, daemon=True).start()\n"
        "    return 1\n"
        "def after(inputs):\n"
        "    go.set()\n"
        "    assert done.wait(5)\n"
        "    return 2\n"
    )
    path = tmp_path / "late.yaml"
    path.write_text(
        f"name: late\ntasks:\n  leaves: {{run: '{MODULE}:leaves'}}\n"
        f"  after: {{run: '{MODULE}:after', depends_on: [leaves]}}\n"
    )
    sys.modules.pop(MODULE, None)
    yield path
    sys.modules.pop(MODULE, None)


def test_the_unattributed_log_is_stored_exported_and_replayed(
    workflow_file: Path, tmp_path: Path
) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    workflow = load_workflow(workflow_file)
    live = LiveRun.start(workflow, workflow.payload, RunSettings(store=store, clock=FakeClock()))
    live.drive()
    assert live.run.unattributed_log() == LATE
    assert live.run.log("leaves", 1) == AttemptLog("")
    assert live.run_id is not None
    assert store.load(live.run_id).logs[UNATTRIBUTED] == LATE
    path = store.export(live.run_id).write(tmp_path / "run.json")
    record = RunRecord.read(path)
    assert record.document["unattributed_log"] == {"text": LATE.text, "truncated": False}
    assert record.logs[UNATTRIBUTED] == LATE
    assert replay(record).identical  # beside the trace: in no digest
    assert replay_run(record).unattributed_log() == LATE
    assert store.resume(live.run_id)[1].unattributed_log() == LATE


async def test_u_in_the_logs_view_shows_the_unattributed_output(
    workflow_file: Path, tmp_path: Path
) -> None:
    from textual.app import App

    workflow = load_workflow(workflow_file)
    live = LiveRun.start(workflow, workflow.payload, RunSettings(clock=FakeClock()))
    live.drive()
    run = replay_run(RunRecord.read(live.export().write(tmp_path / "run.json")))

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(LogsModal(run, "leaves"))

    async with Host().run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        modal = pilot.app.screen
        assert isinstance(modal, LogsModal)
        assert [line for line in modal.query_one(LogView).lines if line] == []
        await pilot.press("u")
        await pilot.pause()
        assert list(modal.query_one(LogView).lines)[:1] == [LATE.text.strip()]
        await pilot.press("u")
        await pilot.pause()
        assert [line for line in modal.query_one(LogView).lines if line] == []
