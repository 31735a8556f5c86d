"""The action table is the one source of bindings, palette commands, F1 help and the key tables
of docs/reference.md."""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from harness_tui.tui.actions import DIFF, GLOBAL, INSPECTOR, NOTHING_OPEN, WORKBENCH, Action
from harness_tui.tui.app import HarnessApp
from harness_tui.tui.controller import WorkbenchState
from harness_tui.tui.modals.help import HelpModal
from harness_tui.tui.preferences import Preferences
from harness_tui.tui.screens.diff import DiffScreen
from harness_tui.tui.screens.workbench import WorkbenchScreen

from .conftest import ROOT, make_app, settle, workbench

# Users' keymap files name these ids: renaming one silently drops their remapping.
PUBLISHED_IDS = {
    "run-step", "run-continue", "run-pause", "stop-task", "run-restart", "toggle-breakpoint",
    "toggle-break-on-failure", "time-back", "time-forward", "find-task", "open-file",
    "reload-workflow", "export-run", "edit-payload", "diff-workflow", "diff-next",
    "diff-previous", "diff-close", "help", "quit",
}  # fmt: skip


def test_ids_are_unique_kebab_case_and_none_was_renamed() -> None:
    ids = [action.id for action in (*WORKBENCH, *DIFF, *GLOBAL)]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", i) for i in ids), ids
    assert set(ids) >= PUBLISHED_IDS


@pytest.mark.parametrize(
    ("owner", "actions"), [(WorkbenchScreen, WORKBENCH), (DiffScreen, DIFF), (HarnessApp, GLOBAL)]
)
def test_every_action_exists_and_palette_titles_read_area_verb(
    owner: type, actions: tuple[Action, ...]
) -> None:
    screen = owner(None) if owner is WorkbenchScreen else None
    for action in actions:
        if screen is not None:  # the workbench runs its actions by id, each by one handler
            assert callable(screen.handler(action)), action
        else:
            assert callable(getattr(owner, f"action_{action.action}", None)), action
        title = action.title
        assert title == "" or re.fullmatch(r"[a-z]+: [A-Z][\w ]*", title), title


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_key_tables", ROOT / "scripts/make_key_tables.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_key_tables_of_the_reference_are_generated_from_the_table() -> None:
    page = (ROOT / "docs/reference.md").read_text(encoding="utf-8")
    assert _script().with_keys(page) == page, "run: python scripts/make_key_tables.py"
    for action in (*WORKBENCH, *DIFF, *GLOBAL):
        assert f"`{action.id}`" in page


async def test_a_key_remapped_in_keymap_json_runs_the_action_and_shows_in_help(
    tmp_path: Path,
) -> None:
    keymap = tmp_path / "keymap.json"
    keymap.write_text(json.dumps({"run-step": "j"}), encoding="utf-8")
    app = make_app(ROOT / "workflows/user_profile.yaml", preferences=Preferences(keymap=keymap))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("j")
        await settle(pilot)
        assert workbench(app).session.run.cursor == 1  # type: ignore[union-attr]
        await pilot.press("f1")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, HelpModal)
        keys = {action.id: shown for shown, action in modal.rows}
        assert keys["run-step"] == "j"
        assert keys["time-back"] == "["
        assert list(keys) == [a.id for a in (*WORKBENCH, *INSPECTOR, *GLOBAL)]


async def test_help_fits_each_key_on_one_line_at_80_columns() -> None:
    app = make_app(ROOT / "workflows/user_profile.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        await pilot.pause()
        keys = app.screen.query_one("#help-keys")
        longest = max(len(line) for line in str(keys.render()).splitlines())
        assert longest <= keys.content_region.width
        rows = len(app.screen.rows) + 1  # type: ignore[attr-defined]  # and the palette's key
        assert keys.virtual_size.height == rows
        assert "Command palette" in str(keys.render())  # the footer leaves it out at 80


def test_with_nothing_open_only_opening_can_act_and_everything_else_says_so() -> None:
    closed = WorkbenchState()
    acting = {action.id for action in WORKBENCH if action.why_not(closed) is None}
    assert acting == {"open-file", "reload-workflow"}
    assert {action.why_not(closed) for action in WORKBENCH} == {None, NOTHING_OPEN}


def test_each_refusal_follows_the_state_it_names() -> None:
    by_id = {action.id: action for action in WORKBENCH}
    fresh = WorkbenchState(open=True)
    assert by_id["export-run"].why_not(fresh) == "nothing to export yet: step first (n)"
    assert by_id["export-run"].why_not(replace(fresh, recorded=True)) is None
    assert by_id["time-back"].why_not(replace(fresh, at_start=False)) is None
    assert by_id["time-forward"].why_not(replace(fresh, live_end=False)) is None
    assert by_id["stop-task"].why_not(fresh) == "nothing is running"
    assert by_id["stop-task"].why_not(replace(fresh, driving=True)) is None
    finished = replace(fresh, finished=True, driving=True)
    assert by_id["run-step"].why_not(finished) == "the run is finished: r starts it over"
    assert by_id["edit-payload"].why_not(replace(fresh, replay=True)) is not None


async def test_a_greyed_key_with_nothing_open_says_nothing_is_open(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed\n")
    app = make_app(broken)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert NOTHING_OPEN in [n.message for n in app._notifications]


async def test_the_palette_says_why_an_action_cannot_act_now() -> None:
    app = make_app(ROOT / "workflows/user_profile.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("c")
        await settle(pilot)
        run = workbench(app).session.run  # type: ignore[union-attr]
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "run: Step")
        assert "not now: the run is finished" in command.help
        command.callback()
        await settle(pilot)
        assert "the run is finished: r starts it over" in [n.message for n in app._notifications]
        assert workbench(app).session.run is run and run.finished  # type: ignore[union-attr]
