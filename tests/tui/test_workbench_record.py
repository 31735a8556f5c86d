"""``open --record``: the workbench's live runs record what their attempts were answered."""

from __future__ import annotations

from pathlib import Path

from harness_tui.records.runs.settings import Recording
from harness_tui.records.store import RunStore
from harness_tui.tui.widgets.run_header import RunHeader

from .conftest import make_app, settle, workbench

TASKS = """
import random


def roll(inputs):
    return inputs["io"].call("dice", random.random)
"""

FLOW = """
name: dice
tasks:
  roll: {run: "workbench_dice:roll"}
"""


async def test_live_runs_of_a_recording_workbench_keep_their_calls(tmp_path: Path) -> None:
    (tmp_path / "workbench_dice.py").write_text(TASKS, encoding="utf-8")
    flow = tmp_path / "flow.yaml"
    flow.write_text(FLOW, encoding="utf-8")
    db = tmp_path / "runs.db"
    app = make_app(flow, store_path=str(db), recording=Recording())
    async with app.run_test(size=(120, 30)) as pilot:
        session = workbench(app).session
        assert session is not None and session.recording
        header = app.screen.query_one(RunHeader)
        assert header.parts is not None and header.parts.recording
        assert " REC " in header.render().plain
        await pilot.press("c")
        await settle(pilot)
        (dice,) = session.run.recordings()[("roll", 1)]
        assert dice.kind == "call" and dice.value == session.run.results["roll"]
        run_id = session.run_id
    assert run_id is not None
    store = RunStore(db)
    try:
        assert store.export(run_id).recordings[("roll", 1)] == [dice]
    finally:
        store.close()


async def test_a_workbench_that_does_not_record_says_nothing_of_it(tmp_path: Path) -> None:
    (tmp_path / "workbench_dice.py").write_text(TASKS, encoding="utf-8")
    flow = tmp_path / "flow.yaml"
    flow.write_text(FLOW, encoding="utf-8")
    app = make_app(flow)
    async with app.run_test(size=(120, 30)) as pilot:
        header = app.screen.query_one(RunHeader)
        assert header.parts is not None and not header.parts.recording
        await pilot.press("c")
        await settle(pilot)
        assert workbench(app).session.run.recordings() == {}  # type: ignore[union-attr]
