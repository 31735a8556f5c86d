"""QuittingModal: what quitting waits for, shown until the app exits (never a blank screen)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label

from ..sanitize import inert


def waiting_text(tasks: tuple[str, ...], seconds: float) -> str:
    """One sentence: the tasks a quit waits for, how long at most, and what happens then."""
    if not tasks:
        what = "the run to pause"
    else:
        names = ", ".join(tasks[:3]) + (f" and {len(tasks) - 3} more" if len(tasks) > 3 else "")
        what = f"{names} to finish"
    return (
        f"Quitting: waiting for {what}, at most {seconds:g} s: the run is then left "
        "resumable (a task still running by then is stopped, and the run ends cancelled)."
    )


class QuittingModal(ModalScreen[None]):
    """Says what quitting waits for; takes every key, so nothing starts meanwhile."""

    def __init__(self, tasks: tuple[str, ...], seconds: float) -> None:
        super().__init__()
        self.tasks = tasks
        self.seconds = seconds

    def compose(self) -> ComposeResult:
        with Vertical(id="quitting-dialog", classes="dialog"):
            # Task names come from the workflow file: shown, never obeyed.
            yield Label(inert(waiting_text(self.tasks, self.seconds)), classes="dialog-title")
