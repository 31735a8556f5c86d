"""Feedback that is not about running: the header and the payload editor at 80x24, and a
keymap that names ids nobody has."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from textual.widgets import Button

from harness_tui.tui.modals.payload import PayloadModal
from harness_tui.tui.preferences import Preferences
from harness_tui.tui.widgets.run_header import HeaderParts, RunHeader, header_text

from .conftest import ROOT, make_app, settle, workbench

SMALL = (80, 24)
PARTS = HeaderParts(
    replay=False,
    name="flaky_pipeline",
    path="pipelines/nightly/customer-ledger/flaky_pipeline.yaml",
    payload="3a42d48d",
    status="failed",
    progress="4/4",
    cursor="⏪ event 9 of 10",
)


@pytest.mark.parametrize(
    ("width", "expected"),
    [
        (200, f"flaky_pipeline  {PARTS.path}  payload 3a42d48d  failed  4/4  ⏪ event 9 of 10"),
        (100, f"flaky_pipeline  {PARTS.path}  failed  4/4  ⏪ event 9 of 10"),
        (78, "flaky_pipeline  flaky_pipeline.yaml  failed  4/4  ⏪ event 9 of 10"),
        (50, "flaky_pipeline  failed  4/4  ⏪ event 9 of 10"),
        (40, "flaky_pi…  failed  4/4  ⏪ event 9 of 10"),
    ],
)
def test_the_header_gives_up_payload_then_path_then_name_never_the_status(
    width: int, expected: str
) -> None:
    text = header_text(PARTS, width)
    assert text.plain == expected
    assert text.cell_len <= width


async def test_at_80x24_the_header_shows_status_and_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / "pipelines/nightly/customer-ledger"
    deep.mkdir(parents=True)
    shutil.copy(ROOT / "tests/tui/data/flaky_pipeline.yaml", deep / "flaky_pipeline.yaml")
    monkeypatch.chdir(tmp_path)
    app = make_app("pipelines/nightly/customer-ledger/flaky_pipeline.yaml")
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("left_square_bracket")
        await pilot.pause()
        header = app.screen.query_one(RunHeader)
        line = header.render().plain
        assert line.startswith("flaky_pipeline ")
        assert "failed  3/4  ⏪ seq 9 of 0–10" in line  # one back from the last of 11
        assert header.render().cell_len <= header.content_size.width


async def test_the_payload_editor_keeps_its_buttons_on_an_80x24_screen(in_repo: Path) -> None:
    app = make_app("workflows/user_profile.yaml")
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("y")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, PayloadModal)
        for button in modal.query(Button):
            region = button.region
            assert region.height == 3 and region.bottom <= SMALL[1], (button.id, region)
        await pilot.click("#payload-cancel")
        await pilot.pause()
        assert app.screen is workbench(app)


async def test_unknown_ids_in_keymap_json_are_named_in_a_warning(tmp_path: Path) -> None:
    keymap = tmp_path / "keymap.json"
    mapping = {"run-step": "j", "run-stpe": "k", "show-traceback": "x", "zoom": "z"}
    keymap.write_text(json.dumps(mapping), encoding="utf-8")
    app = make_app(ROOT / "workflows/user_profile.yaml", preferences=Preferences(keymap=keymap))
    async with app.run_test(size=(120, 40)) as pilot:
        warnings = [n for n in app._notifications if n.severity == "warning"]
        assert len(warnings) == 1
        assert "unknown binding ids ignored: run-stpe, zoom" in warnings[0].message
        await pilot.press("j")  # the known ids still apply
        await settle(pilot)
        assert workbench(app).session.run.cursor == 1  # type: ignore[union-attr]


async def test_a_keymap_that_is_not_an_object_is_reported(tmp_path: Path) -> None:
    keymap = tmp_path / "keymap.json"
    keymap.write_text('["run-step", "j"]', encoding="utf-8")
    app = make_app(ROOT / "workflows/user_profile.yaml", preferences=Preferences(keymap=keymap))
    async with app.run_test(size=(120, 40)):
        messages = [n.message for n in app._notifications if n.severity == "warning"]
        assert messages == [f"{keymap}: ignored (not a JSON object of id: keys)"]
