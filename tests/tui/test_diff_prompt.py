"""`d` offers a sensible default in every mode and says which side is old and which new."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable, Input

from harness_tui.engine.clock import FakeClock
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.tui.screens.diff import DiffScreen, DiffTargetModal, DiffTitle
from harness_tui.tui.widgets.inspector import Inspector
from harness_tui.workflow.loader import load_workflow

from .conftest import ROOT, make_app, settle


async def test_in_replay_d_compares_the_recorded_workflow_with_the_file_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    workflow = load_workflow("workflows/user_profile.yaml")
    live = LiveRun.start(workflow, workflow.payload, RunSettings(clock=FakeClock()))
    live.drive()
    export = tmp_path / "run.json"
    live.export().write(export)
    app = make_app(export)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("d")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, DiffTargetModal)
        assert modal.query_one(Input).value == "workflows/user_profile.yaml"
        assert "old: the workflow this run was recorded with" in modal.sides
        await pilot.press("enter")
        await settle(pilot)
        diff = app.screen
        assert isinstance(diff, DiffScreen)
        assert diff.old is not None and diff.old.source == workflow.source
        assert diff.diff.identical


async def test_live_d_defaults_to_head_as_the_old_side(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    app = make_app("workflows/user_profile.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("d")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, DiffTargetModal)
        assert modal.query_one(Input).value == "@HEAD"
        assert modal.sides.startswith("old: what you type")


async def test_two_exports_open_in_the_diff_screen_with_each_tasks_run_difference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness_tui.cli import cli
    from harness_tui.records.export import RunRecord
    from harness_tui.tui.diff_app import DiffApp, record_diff_screen

    old, new = tmp_path / "v1.json", tmp_path / "v2.json"
    runner = CliRunner()
    for workflow, target in (("release_v1", old), ("release_v2", new)):
        made = runner.invoke(cli, ["run", str(ROOT / f"workflows/{workflow}.yaml"), "--no-store",
                                   "-q", "--export", str(target)])  # fmt: skip
        assert made.exit_code == 0, made.output
    opened: list[DiffScreen] = []
    monkeypatch.setattr(DiffApp, "run", lambda app: opened.append(app._screen))
    assert runner.invoke(cli, ["diff", str(old), str(new), "--tui"]).exit_code == 0
    assert len(opened) == 1 and opened[0].runs is not None  # --tui is not ignored for exports
    app = DiffApp(record_diff_screen(RunRecord.read(old), RunRecord.read(new)))
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        title = str(screen.query_one(DiffTitle).render())
        assert "runs: 12 tasks differ" in title
        table = screen.query_one("#diff-rows", DataTable)
        labels = [str(column.label) for column in table.columns.values()]
        assert labels[1:] == ["old", " ", "new", "run"]  # the paths are in the title
        package = next(i for i, row in enumerate(screen.diff.rows) if row.task == "package")
        table.move_cursor(row=package)
        await pilot.pause()
        tree = screen.query_one(Inspector)
        (run,) = [node for node in tree.root.children if str(node.label) == "run"]
        lines = [str(child.label) for child in run.children]
        assert any("kind" in line and "inputs" in line for line in lines), lines
        # Strings show as JSON: the quotes of the values inside the cause are escaped.
        assert any('with.format: \\"tar\\" -> \\"oci\\"' in line for line in lines), lines
