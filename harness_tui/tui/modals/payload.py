"""PayloadModal: edit the run payload as JSON; it is validated before it is applied."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, TextArea

from ...engine.untrusted import json_visible
from ...workflow.payload import PayloadError, editable_text, parse_payload
from ..sanitize import inert

NOTHING = object()


class PayloadModal(ModalScreen[Any]):
    """Returns the new payload, or ``PayloadModal.CANCELLED``."""

    CANCELLED = NOTHING
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="modal-cancel"),
        Binding("ctrl+s", "apply", "Apply", id="payload-apply"),
    ]

    def __init__(self, payload: Any) -> None:
        super().__init__()
        # JSON leaves C1 and bidi controls raw; escaped, the text is the same JSON value and
        # the editor draws nothing a terminal would obey.
        self.initial = json_visible(editable_text(payload))

    def compose(self) -> ComposeResult:
        with Vertical(id="payload-dialog", classes="dialog"):
            yield Label(
                "Payload (JSON) — ctrl+s applies and replans, escape cancels",
                classes="dialog-title",
            )
            yield TextArea(
                self.initial, language="json", id="payload-editor", show_line_numbers=True
            )
            yield Label("", id="payload-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Apply", variant="primary", id="payload-apply")
                yield Button("Cancel", id="payload-cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "payload-apply":
            self.action_apply()
        else:
            self.action_cancel()

    def action_apply(self) -> None:
        text = self.query_one(TextArea).text
        error = self.query_one("#payload-error", Label)
        try:
            parsed = parse_payload(text.strip(), "payload")
        except PayloadError as exc:
            error.update(inert(str(exc)))
            error.add_class("-error")
            return
        self.dismiss(parsed.value)

    def action_cancel(self) -> None:
        self.dismiss(NOTHING)
