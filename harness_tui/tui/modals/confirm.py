"""ConfirmModal: a yes/no question before something is thrown away."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label

from ..sanitize import inert


class ConfirmModal(ModalScreen[bool]):
    """Returns True for yes (Enter or ``y``), False for no (escape or ``n``)."""

    BINDINGS = [
        Binding("escape,n", "answer(False)", "No", id="modal-no"),
        Binding("y", "answer(True)", "Yes", id="modal-yes"),
    ]

    def __init__(self, question: str, yes: str) -> None:
        super().__init__()
        self.question = question
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog", classes="dialog"):
            yield Label(inert(self.question), classes="dialog-title")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.yes, variant="warning", id="confirm-yes")
                yield Button("Cancel", id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
