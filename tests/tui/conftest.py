from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from harness_tui.engine.clock import FakeClock
from harness_tui.records.runs.settings import RunSettings
from harness_tui.tui import screens
from harness_tui.tui.app import HarnessApp, create_app
from harness_tui.tui.screens.workbench import WorkbenchScreen

from ..records.mixed_store import mixed_store

ROOT = Path(__file__).resolve().parents[2]


# Every run setting but the store, which the app opens at its ``store_path``.
RUN_SETTINGS = tuple(f.name for f in dataclasses.fields(RunSettings) if f.name != "store")


def make_app(path: str | Path | None, **kwargs: Any) -> HarnessApp:
    """The app exactly as the CLI builds it, with a fixed clock for stable timings; the run
    settings among ``kwargs`` (:data:`RUN_SETTINGS`) become its :class:`RunSettings`."""
    fields = {name: kwargs.pop(name) for name in RUN_SETTINGS if name in kwargs}
    fields.setdefault("clock", FakeClock(start=100.0, tick=0.25))
    settings = RunSettings(**fields)
    return create_app(None if path is None else str(path), settings=settings, **kwargs)


async def settle(pilot: Pilot[Any]) -> None:
    """Wait for the run worker and the messages it posted."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def workbench(app: HarnessApp) -> WorkbenchScreen:
    screen = app.screen
    assert isinstance(screen, WorkbenchScreen), type(screen)
    return screen


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(ROOT)
    yield ROOT


__all__ = ["ROOT", "make_app", "screens", "settle", "workbench"]


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A run store with one run of each status the run browser shows (its path, the ids)."""
    path = tmp_path / "runs.sqlite3"
    return path, mixed_store(path)
