"""SVG snapshots of the full error view (fixed clock and size).

Update with: python -m pytest tests/tui/test_error_snapshots.py --snapshot-update
"""

from __future__ import annotations

import re
import traceback
from types import SimpleNamespace
from typing import Any

import pytest
from textual.pilot import Pilot

from harness_tui.engine import executors
from harness_tui.tui.widgets.inspector import Inspector

from .conftest import ROOT, make_app, settle, workbench

FRAME = re.compile(r'File "[^"]*?([^"/\\]+)", line \d+')
CARETS = re.compile(r"\s*[~^]+\s*")


def portable_format_exc() -> str:
    """The real traceback without what differs between machines and Python versions: folders,
    line numbers, and the caret lines some versions draw under a call."""
    text = FRAME.sub(r'File ".../\1", line N', traceback.format_exc())
    return "\n".join(line for line in text.split("\n") if not CARETS.fullmatch(line))


@pytest.fixture(autouse=True)
def _repo_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_full_traceback_after_a_failure(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executors, "tb", SimpleNamespace(format_exc=portable_format_exc))

    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.press("c")
        await settle(pilot)
        workbench(pilot.app)._select("transform")  # type: ignore[arg-type]
        pilot.app.screen.query_one(Inspector).focus()
        await pilot.press("t")
        pilot.app.clear_notifications()  # the "run failed" toast would cover the view
        await pilot.pause()

    app = make_app("tests/tui/data/flaky_pipeline.yaml")
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
