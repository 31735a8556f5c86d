"""A small app that opens straight on the diff screen (``harness-tui diff OLD NEW --tui``)."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.binding import Binding

from ..workflow.loader import Workflow
from .screens.diff import DiffScreen


class DiffApp(App[None]):
    """Shows one plan diff."""

    TITLE = "harness-tui diff"
    CSS_PATH = ["app.tcss", "screens/diff.tcss"]
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", id="quit", priority=True)]

    def __init__(self, old: Workflow, old_payload: Any, new: Workflow, new_payload: Any) -> None:
        super().__init__()
        self._args = (old, old_payload, new, new_payload)

    def on_mount(self) -> None:
        self.push_screen(DiffScreen(*self._args))


def run_diff_app(old: Workflow, old_payload: Any, new: Workflow, new_payload: Any) -> None:
    DiffApp(old, old_payload, new, new_payload).run()
