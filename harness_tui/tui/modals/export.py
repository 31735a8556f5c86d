"""ExportModal: choose where to write the run export (Enter writes)."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class ExportModal(ModalScreen[Path | None]):
    """Proposes ``<workflow>-<short run digest>.json`` in the current folder."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="modal-cancel")]

    def __init__(self, default: Path) -> None:
        super().__init__()
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog", classes="dialog"):
            yield Label(
                "Export the run — .json: the export; .md or .html: a report to read. "
                "Enter writes, escape cancels",
                classes="dialog-title",
            )
            yield Input(str(self.default), id="export-path")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(Path(event.value.strip()).expanduser())

    def action_cancel(self) -> None:
        self.dismiss(None)
