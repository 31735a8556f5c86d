"""FindTaskModal: jump to a task by typing part of its name (for workflows of thousands)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

SHOWN = 200


class FindTaskModal(ModalScreen[str | None]):
    """Filter the plan's tasks by substring; Enter picks the highlighted (or first) one."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="modal-cancel")]

    def __init__(self, tasks: Sequence[str]) -> None:
        super().__init__()
        self.tasks = list(tasks)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"Find a task ({len(self.tasks)} in the plan)", classes="dialog-title")
            yield Input(placeholder="part of a task name", id="find-filter")
            yield OptionList(*self._options(""), id="find-list")

    def _options(self, text: str) -> list[Option]:
        needle = text.lower()
        found = [t for t in self.tasks if needle in t.lower()]
        options = [Option(Text(t), id=t) for t in found[:SHOWN]]
        if len(found) > SHOWN:
            options.append(Option(Text(f"… {len(found) - SHOWN} more: type more"), disabled=True))
        return options or [Option(Text("no task matches"), disabled=True)]

    def on_input_changed(self, event: Input.Changed) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(self._options(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        options = self.query_one(OptionList)
        index = options.highlighted if options.highlighted is not None else 0
        if options.option_count and not options.get_option_at_index(index).disabled:
            self.dismiss(options.get_option_at_index(index).id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
