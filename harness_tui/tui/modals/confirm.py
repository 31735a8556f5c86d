"""ConfirmModal: a yes/no question before something is thrown away or code is run."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label

from ..sanitize import inert


def keys_line(yes: str, enter_says_yes: bool) -> str:
    """What the dialog's keys do, said under its question (``yes`` is the button's label)."""
    if enter_says_yes:
        return f"enter or y: {yes} · n or escape: cancel"
    return f"y: {yes} · enter, n or escape: cancel"


class ConfirmModal(ModalScreen[bool]):
    """Returns True for yes, False for no. ``y`` and ``n`` (or escape) answer at once; Enter
    presses the focused button, which is the action asked for (the user asked for it, and
    Enter never does nothing), unless ``default_yes`` is False (a deletion), where it is
    Cancel. The dialog says which."""

    BINDINGS = [
        Binding("escape,n", "answer(False)", "No", id="modal-no"),
        Binding("y", "answer(True)", "Yes", id="modal-yes"),
    ]

    def __init__(self, question: str, yes: str, *, default_yes: bool = True) -> None:
        super().__init__()
        self.question = question
        self.yes = yes
        self.default_yes = default_yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog", classes="dialog"):
            yield Label(inert(self.question), classes="dialog-title")
            yield Label(keys_line(self.yes, self.default_yes), classes="dialog-keys")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.yes, variant="warning", id="confirm-yes")
                yield Button("Cancel", id="confirm-no")

    def on_mount(self) -> None:
        focused = "#confirm-yes" if self.default_yes else "#confirm-no"
        self.query_one(focused, Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
