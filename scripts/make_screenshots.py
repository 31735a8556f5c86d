"""Regenerate screenshots/*.svg from the real app (the same factory the CLI uses).

Run from the repository root: python scripts/make_screenshots.py
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from harness_tui.engine.clock import FakeClock
from harness_tui.records.runs.settings import RunSettings
from harness_tui.tui.app import HarnessApp, create_app

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "screenshots"
SIZE = (130, 42)


async def settle(pilot: Pilot[Any]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def shoot(
    name: str, app: HarnessApp, actions: Callable[[Pilot[Any]], Awaitable[None]] | None = None
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        if actions is not None:
            await actions(pilot)
        await pilot.pause(0.2)
        app.save_screenshot(filename=f"{name}.svg", path=str(OUT))
    print(f"wrote screenshots/{name}.svg")


def app(path: str | None, **kwargs: Any) -> HarnessApp:
    return create_app(path, **kwargs, settings=RunSettings(clock=FakeClock(start=100.0, tick=0.25)))


async def mid_run(pilot: Pilot[Any]) -> None:
    screen: Any = pilot.app.screen
    screen._select("check_policy")
    await pilot.press("b")
    await pilot.press("c")
    await settle(pilot)


async def failed(pilot: Pilot[Any]) -> None:
    await pilot.press("c")
    await settle(pilot)
    screen: Any = pilot.app.screen
    screen._select("transform")
    await pilot.pause()


async def replay(pilot: Pilot[Any]) -> None:
    for _ in range(3):
        await pilot.press("n")
        await settle(pilot)


async def diff(pilot: Pilot[Any]) -> None:
    await pilot.press("d")
    await pilot.pause()
    target: Any = pilot.app.screen.query_one("#diff-target")
    target.value = "workflows/release_v1.yaml"
    await pilot.press("enter")
    await pilot.pause()
    await pilot.press("n", "n", "n")


async def timeline(pilot: Pilot[Any]) -> None:
    await pilot.press("c")
    await settle(pilot)
    await pilot.press("T")
    await pilot.pause(0.3)


async def browsing(pilot: Pilot[Any]) -> None:
    await pilot.press("down", "down", "m", "m")  # the failed and the succeeded run marked


async def logs_search(pilot: Pilot[Any]) -> None:
    await pilot.press("c")
    await settle(pilot)
    screen: Any = pilot.app.screen
    screen._select("chatty")
    await pilot.press("l")
    await pilot.pause()
    await pilot.press("slash", *"batch 2", "enter")
    await pilot.pause()


async def calls_view(pilot: Pilot[Any]) -> None:
    await pilot.press("c")
    await settle(pilot)
    screen: Any = pilot.app.screen
    screen._select("reply")
    await pilot.pause()
    await pilot.press("C")
    await pilot.pause()


async def main() -> None:
    os.chdir(ROOT)
    OUT.mkdir(exist_ok=True)
    await shoot("workbench", app("workflows/agent_triage.yaml"), mid_run)
    await shoot("failed-task", app("tests/tui/data/flaky_pipeline.yaml"), failed)
    await shoot("diff", app("workflows/release_v2.yaml"), diff)
    # Real time and four workers: the bars show what overlapped.
    parallel = create_app("workflows/etl_fanout.yaml", settings=RunSettings(workers=4))
    await shoot("timeline", parallel, timeline)
    with tempfile.TemporaryDirectory() as folder:
        from harness_tui.engine.orchestrator import TaskOrchestrator
        from harness_tui.records.export import RunRecord
        from harness_tui.workflow.loader import load_workflow

        workflow = load_workflow("workflows/agent_triage.yaml")
        run = (
            TaskOrchestrator(
                workflow.graph, clock=FakeClock(tick=0.25), on_failure=workflow.on_failure
            )
            .start(workflow.payload)
            .run_to_end()
        )
        export = Path(folder) / "agent_triage-run.json"
        RunRecord.from_run(run, workflow).write(export)
        for name in ("user_profile.yaml", "agent_triage.yaml", "etl_fanout.yaml"):
            (Path(folder) / "workflows").mkdir(exist_ok=True)
            shutil.copy(ROOT / "workflows" / name, Path(folder) / "workflows" / name)
        os.chdir(folder)
        await shoot("replay", app("agent_triage-run.json", replay=True), replay)
        await shoot("open-dialog", app(None))
        # The run browser on a store of four runs, one of each status it tells apart.
        sys.path.insert(0, str(ROOT))
        from tests.records.mixed_store import mixed_store

        mixed_store(Path(folder) / "runs.sqlite3")
        await shoot("run-browser", app(None, store_path="runs.sqlite3", browse=True), browsing)
        # A recorded agent run (a loopback fake model, stopped once recorded): its calls.
        from tests.tui.agent_run import recorded_agent_run

        agent = recorded_agent_run(Path(folder))
        await shoot("calls", app(agent.export.name, replay=True), calls_view)
        os.chdir(ROOT)
    await shoot("logs-search", app("tests/tui/data/printing_pipeline.yaml"), logs_search)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
