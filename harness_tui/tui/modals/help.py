"""HelpModal: every key binding with its id (ids are what a keymap file remaps)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static


class HelpModal(ModalScreen[None]):
    """Lists bindings as ``key  description  (id)``."""

    BINDINGS = [Binding("escape,f1,q", "close", "Close", id="modal-close")]

    def __init__(self, bindings: list[tuple[str, str, str]], keymap_path: str) -> None:
        super().__init__()
        self.rows = bindings
        self.keymap_path = keymap_path

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog", classes="dialog"):
            yield Label(
                "Keys — remap any of them by id in " + self.keymap_path, classes="dialog-title"
            )
            lines = [
                f"{key:>10}  {description:<34} {binding_id}"
                for key, description, binding_id in self.rows
            ]
            # Plain text: "[" and "]" are keys here, not markup.
            yield Static(Text("\n".join(lines)), id="help-keys")

    def action_close(self) -> None:
        self.dismiss(None)
