"""PayloadModal: edit the run payload as JSON; it is validated before it is applied."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, TextArea

from ...engine.canonical import CanonicalError, check_json

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
        self.initial = json.dumps(payload, indent=2, ensure_ascii=False, sort_keys=True)

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
            value = json.loads(text)
            check_json(value, "payload")
        except json.JSONDecodeError as exc:
            error.update(Text(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"))
            error.add_class("-error")
            return
        except CanonicalError as exc:
            error.update(Text(str(exc)))
            error.add_class("-error")
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(NOTHING)
