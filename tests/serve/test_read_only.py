"""``serve --replay`` opens an export read-only: whatever could run or import code is refused
(opening another file, re-running from a task, reloading, diffing), in keys and palette alike."""

from __future__ import annotations

from pathlib import Path

from harness_tui.tui.actions import READ_ONLY, WORKBENCH
from tests.tui.conftest import ROOT, make_app, settle, workbench

FLAKY = ROOT / "tests/tui/data/flaky_pipeline.yaml"
SIZE = (120, 40)


async def test_a_read_only_replay_refuses_everything_that_runs_code(tmp_path: Path) -> None:
    app = make_app(FLAKY)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await settle(pilot)
        session = workbench(app).session
        assert session is not None
        export = session.export_record().write(tmp_path / "run.json")
    replay = make_app(export, replay=True, read_only=True)
    async with replay.run_test(size=SIZE) as pilot:
        screen = workbench(replay)
        refused = {a.id for a in WORKBENCH if screen.why_not(a) == READ_ONLY}
        assert refused == {
            "open-file",
            "reload-workflow",
            "rerun-from-task",
            "diff-workflow",
            "edit-output",
            "edit-params",
        }
        screen._select("transform")
        for key in ("o", "F", "d", "E", "W"):
            await pilot.press(key)
            await pilot.pause()
            assert replay.screen is screen, key  # no modal: not even a question
        assert sum(READ_ONLY in n.message for n in replay._notifications) == 5
        await pilot.press("c")  # stepping the recorded run still works
        await settle(pilot)
        assert screen.session is not None and screen.session.replay
        assert screen.session.run.finished
