"""A small app that opens straight on the diff screen (``harness-tui diff OLD NEW --tui``)."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.binding import Binding

from ..records.export import RunRecord
from ..workflow.loader import Workflow
from .screens.diff import DiffScreen, record_diff_screen


class DiffApp(App[None]):
    """Shows one diff screen."""

    TITLE = "harness-tui diff"
    CSS_PATH = ["app.tcss", "screens/diff.tcss"]
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", id="quit", priority=True)]

    def __init__(self, screen: DiffScreen) -> None:
        super().__init__()
        self._screen = screen

    def on_mount(self) -> None:
        self.push_screen(self._screen)


def run_diff_app(old: Workflow, old_payload: Any, new: Workflow, new_payload: Any) -> None:
    """Two workflow versions: their plans."""
    DiffApp(DiffScreen(old, old_payload, new, new_payload)).run()


def run_record_diff_app(old: RunRecord, new: RunRecord) -> None:
    DiffApp(record_diff_screen(old, new)).run()
