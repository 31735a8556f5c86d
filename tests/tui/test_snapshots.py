"""SVG snapshots of meaningful workbench states (fixed clock, fixed terminal size).

Update with: python -m pytest tests/tui/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.export import RunRecord
from harness_tui.workflow.loader import load_workflow

from .conftest import ROOT, make_app, settle, workbench

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _repo_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_workbench_on_open(snap_compare: Any) -> None:
    assert snap_compare(make_app("workflows/user_profile.yaml"), terminal_size=SIZE)


def test_workbench_mid_run(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        for _ in range(5):
            await pilot.press("n")
            await settle(pilot)

    assert snap_compare(
        make_app("workflows/agent_triage.yaml"), terminal_size=SIZE, run_before=run_before
    )


def test_failed_task_with_inspector(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.press("c")
        await settle(pilot)
        workbench(pilot.app)._select("transform")  # type: ignore[arg-type]
        await pilot.pause()

    app = make_app("tests/tui/data/flaky_pipeline.yaml")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_breakpoint_hit(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        workbench(pilot.app)._select("check_quota")  # type: ignore[arg-type]
        await pilot.press("b", "c")
        await settle(pilot)

    assert snap_compare(
        make_app("workflows/user_profile.yaml"), terminal_size=SIZE, run_before=run_before
    )


def test_back_in_time(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.press("c")
        await settle(pilot)
        await pilot.press(*["left_square_bracket"] * 6)
        await pilot.pause()

    assert snap_compare(
        make_app("workflows/agent_triage.yaml"), terminal_size=SIZE, run_before=run_before
    )


def test_replay_mode(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workflow = load_workflow("workflows/user_profile.yaml")
    run = (
        TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.5))
        .start(workflow.payload)
        .run_to_end()
    )
    RunRecord.from_run(run, workflow).write(tmp_path / "user_profile-run.json")
    monkeypatch.chdir(tmp_path)

    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.press("n", "n")
        await settle(pilot)

    app = make_app("user_profile-run.json", replay=True)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_open_dialog(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "workflows").mkdir()
    for name in ("user_profile.yaml", "etl_fanout.yaml", "release_v2.yaml"):
        shutil.copy(ROOT / "workflows" / name, tmp_path / "workflows" / name)
    monkeypatch.chdir(tmp_path)
    assert snap_compare(make_app(None), terminal_size=SIZE)


def test_invalid_workflow(
    snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(ROOT / "tests/workflow/broken/30_many_problems.yaml", tmp_path / "pipeline.yaml")
    monkeypatch.chdir(tmp_path)
    assert snap_compare(make_app("pipeline.yaml"), terminal_size=SIZE)


def test_diff_screen(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.press("d")
        await pilot.pause()
        pilot.app.screen.query_one("#diff-target").value = "workflows/release_v1.yaml"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("n", "n")
        await pilot.pause()

    assert snap_compare(
        make_app("workflows/release_v2.yaml"), terminal_size=SIZE, run_before=run_before
    )


def test_small_terminal(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.press("n", "n")
        await settle(pilot)

    assert snap_compare(
        make_app("workflows/user_profile.yaml"), terminal_size=(80, 24), run_before=run_before
    )


def test_compact_dag_with_a_breakpoint_at_80x24(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        workbench(pilot.app)._select("check_policy")  # type: ignore[arg-type]
        await pilot.press("b", "c")
        await settle(pilot)

    assert snap_compare(
        make_app("workflows/agent_triage.yaml"), terminal_size=(80, 24), run_before=run_before
    )


def test_ring_dag_in_full_boxes(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        workbench(pilot.app)._select("t0")  # type: ignore[arg-type]
        await pilot.pause()

    assert snap_compare(
        make_app("tests/tui/data/ring.yaml"), terminal_size=SIZE, run_before=run_before
    )
