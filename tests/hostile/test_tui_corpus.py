"""The workbench over the hostile corpus, headless: every screen drawn with each data escape
as visible text (nothing a terminal would obey in the rendered screen), markup in data shown
as written, huge text shortened, and a 128-character workflow name leaving the header's status
and progress in view."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.pilot import Pilot

from harness_tui.tui.modals.logs import LogsModal
from harness_tui.tui.modals.open_file import OpenFileModal
from harness_tui.tui.widgets.inspector import Inspector
from harness_tui.tui.widgets.run_header import RunHeader

from ..tui.conftest import make_app, settle, workbench
from .corpus import HOSTILE, OBEYED, SHOWN, Corpus, build

SIZE = (160, 48)
TITLE_SHOWN = "\\x1b]0;pwned\\x07"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build(tmp_path_factory.mktemp("hostile-tui"))


@pytest.fixture
def in_corpus(corpus: Corpus) -> Iterator[Corpus]:
    with contextlib.chdir(corpus.folder):
        yield corpus


def drawn(app: Any) -> str:
    """The text of the screen as the app draws it (what ``export_screenshot`` renders, as
    plain text), checked for anything a terminal would obey."""
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), force_terminal=True, record=True
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    text = console.export_text()
    raw = OBEYED.findall(text)
    assert not raw, raw[:5]
    return text


async def _run(app: Any, pilot: Pilot[Any]) -> None:
    await pilot.press("c")
    await settle(pilot)


async def test_the_inspector_shows_hostile_keys_and_multiline_values_as_text(
    in_corpus: Corpus,
) -> None:
    app = make_app("hostile.yaml", store_path=None)
    async with app.run_test(size=SIZE) as pilot:
        await _run(app, pilot)
        workbench(app)._select("echo")
        await pilot.pause()
        labels = [str(node.label) for node in _nodes(app.screen.query_one(Inspector).root)]
        assert any(label.startswith(SHOWN[:20]) for label in labels)  # a dict key
        assert any(label.startswith('multi: "one\\n') for label in labels)  # one line
        assert TITLE_SHOWN in drawn(app)


def _nodes(node: Any) -> Iterator[Any]:
    for child in node.children:
        yield child
        yield from _nodes(child)


async def test_logs_errors_and_toasts_are_drawn_inert(in_corpus: Corpus) -> None:
    app = make_app("hostile.yaml", store_path=None)
    async with app.run_test(size=SIZE) as pilot:
        await _run(app, pilot)
        workbench(app)._select("explode")
        await pilot.pause()
        assert "ValueError: " + SHOWN[:20] in drawn(app)  # trace and inspector
        app.notify(HOSTILE * 20_000, title=HOSTILE)  # a 1 MB message stays a toast
        await pilot.pause()
        (note,) = [n for n in app._notifications if n.title != "Run finished"]
        assert len(note.message) < 3_000 and note.message.endswith("more characters]")
        assert note.message.startswith(SHOWN) and note.title.startswith(SHOWN)
        assert not OBEYED.search(note.message + note.title)
        workbench(app)._select("shout")
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, LogsModal)
        assert "log " + SHOWN in drawn(app)


async def test_the_open_dialog_shows_a_hostile_file_name_as_text(in_corpus: Corpus) -> None:
    app = make_app(None, store_path=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, OpenFileModal)
        assert "evil" + SHOWN[:20] in drawn(app)


async def test_the_error_panel_shows_an_invalid_file_inert_and_short(in_corpus: Corpus) -> None:
    for name in ("invalid.yaml", "huge.yaml", in_corpus.invalid_file_name.name):
        app = make_app(name, store_path=None)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = drawn(app)
            assert "Cannot open" in screen
            if name == "huge.yaml":
                assert re.search(r"more characters\]", screen)
            elif name.startswith("bad"):
                assert "Cannot open bad" + SHOWN[:20] in screen
            else:
                assert "invalid task name '" + SHOWN[:20] in screen


async def test_a_forged_export_keeps_its_escapes_visible_in_replay(in_corpus: Corpus) -> None:
    app = make_app("forged.json", replay=True)
    async with app.run_test(size=SIZE) as pilot:
        await _run(app, pilot)
        assert "ValueError" in drawn(app)


async def test_a_128_character_name_leaves_status_and_progress_in_the_header(
    tmp_path: Path,
) -> None:
    name = "w" * 128
    path = tmp_path / "long.yaml"
    path.write_text(f"name: {name}\ntasks:\n  a: {{run: 'builtin:echo'}}\n", encoding="utf-8")
    app = make_app(path, store_path=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await _run(app, pilot)
        header = app.screen.query_one(RunHeader).render()
        assert header.plain.endswith("  succeeded  1/1")
        assert "…" in header.plain and header.cell_len <= 80


@pytest.mark.parametrize("kind", ["workflows", "exports"])
async def test_diff_tui_shows_changed_with_values_as_text(in_corpus: Corpus, kind: str) -> None:
    from harness_tui.records.export import RunRecord
    from harness_tui.tui.diff_app import DiffApp, record_diff_screen
    from harness_tui.tui.screens.diff import DiffScreen
    from harness_tui.workflow.loader import load_workflow

    if kind == "exports":
        screen = record_diff_screen(
            RunRecord.read("hostile.json"), RunRecord.read("hostile_v2.json")
        )
    else:
        old, new = load_workflow("hostile.yaml"), load_workflow("hostile_v2.yaml")
        screen = DiffScreen(old, old.payload, new, new.payload)
    app = DiffApp(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        labels = [str(node.label) for node in _nodes(app.screen.query_one(Inspector).root)]
        assert any(label.startswith(SHOWN[:20]) for label in labels)
        assert any(': "[/] [link=https://evil.example]x[/link] ' in label for label in labels)
        assert "DIFF" in drawn(app)


async def test_the_payload_editor_shows_controls_as_json_escapes(in_corpus: Corpus) -> None:
    from textual.widgets import TextArea

    from harness_tui.tui.modals.payload import PayloadModal

    app = make_app("hostile.yaml", store_path=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, PayloadModal)
        text = app.screen.query_one(TextArea).text
        assert "\\u009b31m" in text and "\\u202etxt.exe" in text  # the same JSON value
        drawn(app)
