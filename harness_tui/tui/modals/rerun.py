"""RerunModal: before a re-run from an export runs task code, how its tasks reach models and
APIs: offline by default (answered from the recording, nothing sent), fill or live."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, RadioButton, RadioSet

from ...engine.recorded_calls import CallMode
from ..call_modes import MODES
from ..sanitize import inert
from .confirm import keys_line

SAYS = {
    CallMode.OFFLINE: "offline: from the recording, nothing sent (o)",
    CallMode.FILL: "fill: recorded answers, the rest sent (i)",
    CallMode.LIVE: "live: every request sent (l)",
}
"""Each mode's choice, with its key."""


class RerunModal(ModalScreen[CallMode | None]):
    """The mode chosen when the user runs the code (``y``, or Enter: the Run button has the
    focus, the action asked for), None when they cancel (escape or ``n``)."""

    BINDINGS = [
        Binding("escape,n", "cancel", "Cancel", id="rerun-cancel"),
        Binding("y", "run", "Run", id="rerun-run"),
        Binding("o", "mode('offline')", "Offline", id="rerun-offline"),
        Binding("i", "mode('fill')", "Fill", id="rerun-fill"),
        Binding("l", "mode('live')", "Live", id="rerun-live"),
    ]

    def __init__(self, question: str, calls: int) -> None:
        """``question``: what runs (made visible); ``calls``: how many exchanges the
        recording holds."""
        super().__init__()
        self.question = question
        self.calls = calls
        self.mode = MODES[0]

    def compose(self) -> ComposeResult:
        with Vertical(id="rerun-dialog", classes="dialog"):
            yield Label(inert(self.question), classes="dialog-title")
            yield Label(f"The export recorded {self.calls} calls. Models and APIs:")
            with RadioSet(id="rerun-modes"):
                for mode in MODES:
                    yield RadioButton(SAYS[mode], value=mode is self.mode, id=f"rerun-{mode}")
            yield Label(keys_line("run the code", True), classes="dialog-keys")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Run the code", variant="warning", id="rerun-yes")
                yield Button("Cancel", id="rerun-no")

    def on_mount(self) -> None:
        self.query_one("#rerun-yes", Button).focus()

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        self.mode = MODES[event.index]

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(self.mode if event.button.id == "rerun-yes" else None)

    def action_mode(self, name: str) -> None:
        self.mode = CallMode(name)
        self.query_one(f"#rerun-{name}", RadioButton).value = True

    def action_run(self) -> None:
        self.dismiss(self.mode)

    def action_cancel(self) -> None:
        self.dismiss(None)
