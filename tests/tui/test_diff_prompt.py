"""`d` offers a sensible default in every mode and says which side is old and which new."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from harness_tui.engine.clock import FakeClock
from harness_tui.records.live import LiveRun
from harness_tui.tui.screens.diff import DiffScreen, DiffTargetModal
from harness_tui.workflow.loader import load_workflow

from .conftest import ROOT, make_app, settle


async def test_in_replay_d_compares_the_recorded_workflow_with_the_file_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    workflow = load_workflow("workflows/user_profile.yaml")
    live = LiveRun.start(workflow, workflow.payload, clock=FakeClock())
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
