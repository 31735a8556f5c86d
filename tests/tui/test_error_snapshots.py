"""SVG snapshots of the full error view and of the 80x24 header (fixed clock and size).

Update with: python -m pytest tests/tui/test_error_snapshots.py --snapshot-update
"""

from __future__ import annotations

import re
import shutil
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from textual.pilot import Pilot

from harness_tui.engine import failures
from harness_tui.tui.widgets.inspector import Inspector

from .conftest import ROOT, make_app, settle, workbench

FRAME = re.compile(r'File "[^"]*?([^"/\\]+)", line \d+')
CARETS = re.compile(r"\s*[~^]+\s*")


def portable_format_exception(*args: Any) -> list[str]:
    """The real traceback without what differs between machines and Python versions: folders,
    line numbers, and the caret lines some versions draw under a call."""
    text = FRAME.sub(r'File ".../\1", line N', "".join(traceback.format_exception(*args)))
    return ["\n".join(line for line in text.split("\n") if not CARETS.fullmatch(line))]


@pytest.fixture(autouse=True)
def _repo_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_full_traceback_after_a_failure(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(failures, "tb", SimpleNamespace(format_exception=portable_format_exception))

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


def test_header_at_80x24(
    snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / "pipelines/nightly/customer-ledger"
    deep.mkdir(parents=True)
    shutil.copy(ROOT / "tests/tui/data/flaky_pipeline.yaml", deep / "flaky_pipeline.yaml")
    monkeypatch.chdir(tmp_path)

    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("left_square_bracket")
        pilot.app.clear_notifications()
        await pilot.pause()

    app = make_app("pipelines/nightly/customer-ledger/flaky_pipeline.yaml")
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
