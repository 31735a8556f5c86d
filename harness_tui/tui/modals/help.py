"""HelpModal: every key binding with its id (ids are what a keymap file remaps)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from ..actions import Action


class HelpModal(ModalScreen[None]):
    """Lists actions as ``keys  label  id``, with the keys as the keymap has them."""

    BINDINGS = [Binding("escape,f1,q", "close", "Close", id="modal-close")]

    def __init__(self, rows: Sequence[tuple[str, Action]], keymap_path: str | None) -> None:
        """``keymap_path``: the file that remaps these keys (None: an app with no keymap)."""
        super().__init__()
        self.rows = rows
        self.keymap_path = keymap_path

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog", classes="dialog"):
            # Plain text: a path may hold "[".
            title = Text(
                "Keys" if self.keymap_path is None
                else "Keys — remap any of them by id in\n" + self.keymap_path
            )  # fmt: skip
            yield Label(title, classes="dialog-title")
            width = max((len(action.label) for _, action in self.rows), default=0)
            lines = [
                f"{keys:>10}  {action.label:<{width}}  {action.id}" for keys, action in self.rows
            ]
            # The footer leaves out the palette's hint under 100 columns: said here instead.
            lines.append(f"{'^p':>10}  Command palette: every action, and why one cannot act")
            # Plain text: "[" and "]" are keys here, not markup.
            yield Static(Text("\n".join(lines)), id="help-keys")

    def action_close(self) -> None:
        self.dismiss(None)
