"""OutputModal: a task's output (or one of its recorded answers) as JSON, to re-run what
follows from it with another one (a what-if re-run); the plan of what will re-run is shown
first, the JSON checked in one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, TextArea

from ...engine.untrusted import json_visible
from ...workflow.limits import current
from ...workflow.payload import PayloadError, editable_text, parse_payload
from ..sanitize import inert

NOTHING = object()


class OutputModal(ModalScreen[Any]):
    """Returns the new output, or ``OutputModal.CANCELLED``.

    Args:
        title: what applying does (``summarize: another output, then re-run what follows``).
        plan: what will re-run and what keeps its record, one line.
        output: the task's output now (None when it has none: a failed task), or the answer.
        what: what is edited, as the one-line error names it (``output``, ``answer``).
        check: a further check of the value: its one-line problem, or None.
    """

    CANCELLED = NOTHING
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="modal-cancel"),
        Binding("ctrl+s", "apply", "Apply", id="output-apply"),
    ]

    def __init__(
        self,
        title: str,
        plan: str,
        output: Any,
        what: str = "output",
        check: Callable[[Any], str | None] | None = None,
    ) -> None:
        super().__init__()
        self.what = what
        self.check = check
        self.title_text = title
        self.plan = plan
        self.note = ""
        limit = current().payload_bytes
        size = len(json.dumps(output, ensure_ascii=False, separators=(",", ":")).encode())
        if size > limit:  # no edit of it could apply, and the editor would take minutes
            self.note = (f"The {what} now is {size:,} bytes of JSON, past the {limit:,} an edited "
                         f"{what} may hold: write another.")  # fmt: skip
            output = None
        # As the payload editor: C1 and bidi controls escaped, the same JSON value.
        self.initial = json_visible(editable_text(output))

    def compose(self) -> ComposeResult:
        with Vertical(id="output-dialog", classes="dialog"):
            yield Label(
                inert(f"{self.title_text} — ctrl+s applies, escape cancels"),
                classes="dialog-title",
            )
            yield Label(inert(self.plan), id="output-plan")
            yield TextArea(
                self.initial, language="json", id="output-editor", show_line_numbers=True
            )
            yield Label(inert(self.note), id="output-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Apply", variant="primary", id="output-apply")
                yield Button("Cancel", id="output-cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "output-apply":
            self.action_apply()
        else:
            self.action_cancel()

    def action_apply(self) -> None:
        text = self.query_one(TextArea).text
        error = self.query_one("#output-error", Label)
        try:
            parsed = parse_payload(text.strip(), self.what)
        except PayloadError as exc:
            error.update(inert(str(exc)))
            error.add_class("-error")
            return
        problem = self.check(parsed.value) if self.check is not None else None
        if problem is not None:
            error.update(inert(problem))
            error.add_class("-error")
            return
        self.dismiss(parsed.value)

    def action_cancel(self) -> None:
        self.dismiss(NOTHING)
