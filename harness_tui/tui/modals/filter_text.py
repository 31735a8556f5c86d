"""FilterTextModal: ask for a part of a name (Enter applies it, empty clears, escape keeps)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class FilterTextModal(ModalScreen[str | None]):
    """Returns the text typed ("" to clear the filter), or None on escape."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="modal-cancel")]

    def __init__(self, title: str, current: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            yield Input(self.current, placeholder="part of a name; empty shows all")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
