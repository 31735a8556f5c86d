"""A small app that opens straight on the diff screen (``harness-tui diff OLD NEW --tui``)."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.binding import Binding

from ..records.export import RunRecord
from ..workflow.loader import Workflow
from .actions import GLOBAL, bindings
from .modals.help import HelpModal
from .screens.diff import DiffScreen, record_diff_screen


class DiffApp(App[None]):
    """Shows one diff screen."""

    TITLE = "harness-tui diff"
    CSS_PATH = ["app.tcss", "screens/diff.tcss"]
    # Help and quit, as in the workbench (it reads no keymap: the keys are the defaults).
    KEYS = tuple(action for action in GLOBAL if action.id in ("help", "quit"))
    BINDINGS = bindings(KEYS)

    def __init__(self, screen: DiffScreen) -> None:
        super().__init__()
        self._screen = screen

    def on_mount(self) -> None:
        self.push_screen(self._screen)

    def action_help(self) -> None:
        actions = (*self._screen.ACTIONS, *self.KEYS)
        keys = [(", ".join(self.get_key_display(Binding(key.strip(), action.action))
                           for key in action.keys.split(",")), action)
                for action in actions]  # fmt: skip
        self.push_screen(HelpModal(keys, None))


def run_diff_app(old: Workflow, old_payload: Any, new: Workflow, new_payload: Any) -> None:
    """Two workflow versions: their plans."""
    DiffApp(DiffScreen(old, old_payload, new, new_payload)).run()


def run_record_diff_app(old: RunRecord, new: RunRecord) -> None:
    DiffApp(record_diff_screen(old, new)).run()
