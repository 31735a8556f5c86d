"""The user's preferences in the workbench: ASCII glyphs everywhere, a remembered theme, the
theme config.toml names winning over it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness_tui.tui.glyphs import ASCII
from harness_tui.tui.preferences import Preferences

from ..conftest import ROOT
from .conftest import make_app, settle

GLYPHS = {chr(code) for code in ASCII}


async def _screen_text(preferences: Preferences) -> str:
    app = make_app(ROOT / "workflows/agent_triage.yaml", preferences=preferences)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("c")
        await settle(pilot)
        return app.export_screenshot()


async def test_ascii_glyphs_leave_no_glyph_on_screen() -> None:
    drawn = await _screen_text(Preferences())
    assert GLYPHS & set(drawn)  # the ordinary look draws glyphs: the check below can fail
    assert not GLYPHS & set(await _screen_text(Preferences(glyphs="ascii")))


async def test_a_picked_theme_is_remembered_and_the_configured_one_wins(tmp_path: Path) -> None:
    state = tmp_path / "state" / "state.json"
    app = make_app(None, preferences=Preferences(state=state))
    async with app.run_test(size=(80, 24)) as pilot:
        app.theme = "nord"
        await pilot.pause()
    assert json.loads(state.read_text()) == {"theme": "nord"}

    app = make_app(None, preferences=Preferences(state=state))
    async with app.run_test(size=(80, 24)):
        assert app.theme == "nord"

    app = make_app(None, preferences=Preferences(theme="gruvbox", state=state))
    async with app.run_test(size=(80, 24)):
        assert app.theme == "gruvbox"


async def test_an_unknown_theme_is_a_warning_and_a_damaged_state_is_ignored(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state.json"
    state.write_bytes(b"\x00not json")
    app = make_app(None, preferences=Preferences(theme="no-such-theme", state=state))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("escape")  # the open dialog: a toast waits until it closes
        await pilot.pause()
        warnings = [n.message for n in app._notifications if n.severity == "warning"]
        assert len(warnings) == 1 and "unknown theme 'no-such-theme'" in warnings[0]
        assert app.theme == "textual-dark"


def test_ascii_glyphs_on_the_command_line() -> None:
    env = {**os.environ, "HARNESS_TUI_CONFIG": "", "HARNESS_TUI_GLYPHS": "ascii"}
    command = [
        sys.executable,
        "-m",
        "harness_tui",
        "diff",
        str(ROOT / "workflows/release_v1.yaml"),
        str(ROOT / "workflows/release_v2.yaml"),
    ]
    plain = subprocess.run(
        command, capture_output=True, text=True, env={**env, "HARNESS_TUI_GLYPHS": "unicode"}
    )
    ascii_only = subprocess.run(command, capture_output=True, text=True, env=env)
    assert plain.returncode == ascii_only.returncode == 0
    assert GLYPHS & set(plain.stdout)
    assert ascii_only.stdout.isascii() and ascii_only.stdout.strip()
