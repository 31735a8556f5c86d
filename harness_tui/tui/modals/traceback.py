"""TracebackModal: a failure's whole error message and traceback, scrollable and copyable."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, TextArea

from ..sanitize import inert, visible

NO_TRACEBACK = "(no traceback was recorded for this failure)"


def failure_text(error: Mapping[str, str] | None, traceback: str | None) -> str:
    """The error's ``type: message`` line, then the traceback, made visible (never raw).

    Args:
        error: the event's ``{"type", "message"}``, if any.
        traceback: the formatted traceback, if one was recorded.
    """
    parts = []
    if error:
        kind, message = error.get("type", ""), error.get("message", "")
        parts.append(f"{kind}: {message}" if kind else str(message))
    parts.append(traceback.rstrip("\n") if traceback else NO_TRACEBACK)
    return visible("\n\n".join(parts), multiline=True)


class TracebackModal(ModalScreen[None]):
    """Read-only text: select with the mouse or shift+arrows; ``y`` copies the selection, or
    everything when nothing is selected."""

    BINDINGS = [
        Binding("escape", "close", "Close", id="modal-close"),
        # ctrl+c reaches us only when the text area had no selection to copy.
        Binding("y,ctrl+c", "copy", "Copy", id="traceback-copy"),
    ]

    def __init__(self, title: str, error: Mapping[str, str] | None, traceback: str | None) -> None:
        super().__init__()
        self.failure_title = title
        self.text = failure_text(error, traceback)

    def compose(self) -> ComposeResult:
        with Vertical(id="traceback-dialog", classes="dialog"):
            title = Text("Error — ", style="bold")
            title.append_text(inert(self.failure_title))
            yield Label(title, classes="dialog-title")
            area = TextArea(self.text, read_only=True, soft_wrap=True, id="traceback-text")
            area.cursor_blink = False  # a reading view: a steady cursor, and stable snapshots
            yield area
            yield Label(
                "y copy (the selection, or all) · shift+arrows select · escape close",
                id="traceback-keys",
            )

    def action_copy(self) -> None:
        area = self.query_one(TextArea)
        chosen = area.selected_text or area.text
        self.app.copy_to_clipboard(chosen)
        lines = chosen.count("\n") + 1
        self.notify(f"copied {lines} line{'s' if lines != 1 else ''} to the clipboard")

    def action_close(self) -> None:
        self.dismiss(None)
