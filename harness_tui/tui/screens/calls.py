"""CallsModal: what one attempt asked models and APIs and what they answered.

A list of the attempt's exchanges (drawn row by row as they scroll into view: an attempt with
thousands of calls opens at once) above the exchange under the cursor, read as a person reads
it (:mod:`..call_text`): only that one is rendered, when the cursor reaches it.

It lives among the screens, not in ``modals/``: its list is a :class:`LineTable` widget, and
widgets open modals (the inspector its error view), so a modal that imported a widget would
make the two packages import each other. The inspector asks for it with a message instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from ...engine.exchanges import Exchange
from ..call_text import CallRow, call_row, exchange_text
from ..sanitize import inert
from ..widgets.line_table import Cell, Column, LineTable

Calls = Callable[[int], Sequence[Exchange]]
"""The exchanges of an attempt, by its number."""


class CallList(LineTable):
    """One row per exchange: seq, method, URL or name, status, size, duration."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            [
                Column("seq", "#", 4),
                Column("method", "method", 6),
                Column("target", "URL or name"),
                Column("status", "status", 9),
                Column("size", "size", 8),
                Column("time", "time", 7),
            ],
            id=id,
        )
        self.exchanges: Sequence[Exchange] = ()
        self._rows: dict[int, CallRow] = {}  # rows drawn so far

    def show(self, exchanges: Sequence[Exchange]) -> None:
        self.exchanges = exchanges
        self._rows.clear()
        self.cursor_row = 0
        self.scroll_to(y=0, animate=False)
        self.set_row_count(len(exchanges))

    def row(self, index: int) -> CallRow:
        found = self._rows.get(index)
        if found is None:
            found = self._rows[index] = call_row(self.exchanges[index])
        return found

    def cells(self, row: int) -> Sequence[Cell]:
        call = self.row(row)
        status = "bold red" if call.failed else ""
        return [(str(call.number), "dim"), (call.method, ""), (call.target, ""),
                (call.status, status), (call.size, ""), (call.duration, "")]  # fmt: skip


@dataclass(frozen=True, slots=True)
class AnswerEdit:
    """The user asked to edit one recorded answer (a what-if re-run, docs/recording.md).

    Attributes:
        task: the task.
        attempt: its attempt.
        index: the exchange's place in the attempt's one sequence, from 1.
        exchange: the exchange as recorded.
    """

    task: str
    attempt: int
    index: int
    exchange: Exchange


class CallsModal(ModalScreen[AnswerEdit | None]):
    """An attempt's calls; ``[`` and ``]`` show the task's other attempts; ``E`` edits the
    answer under the cursor (the modal closes with an :class:`AnswerEdit`)."""

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="calls-close"),
        Binding("E", "edit", "Edit answer", id="calls-edit"),
        Binding("left_square_bracket", "attempt(-1)", "Earlier attempt", id="calls-earlier"),
        Binding("right_square_bracket", "attempt(1)", "Later attempt", id="calls-later"),
        Binding("tab", "switch", "List or exchange", id="calls-switch"),
        Binding("y", "copy", "Copy", id="calls-copy"),
    ]

    def __init__(
        self, task: str, attempts: int, attempt: int, calls: Calls, seq: int | None = None
    ) -> None:
        """The calls of ``task``'s ``attempt`` (of ``attempts``), with the cursor on the
        exchange ``seq`` when given."""
        super().__init__()
        self.task_name = task
        self.attempts = attempts
        self.attempt = attempt
        self.calls = calls
        self.start_seq = seq
        self.shown: Exchange | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="calls-dialog", classes="dialog"):
            yield Label(id="calls-title", classes="dialog-title")
            yield CallList(id="calls-list")
            with VerticalScroll(id="calls-detail"):
                yield Static(id="calls-text")
            yield Label(
                "↑↓ call · tab exchange · [ ] attempt · y copy · E edit answer · escape close",
                id="calls-keys",
            )

    @property
    def table(self) -> CallList:
        return self.query_one(CallList)

    def on_mount(self) -> None:
        self._show_attempt()
        if self.start_seq is not None:
            rows = [e.seq for e in self.table.exchanges]
            if self.start_seq in rows:
                self.table.move_cursor(rows.index(self.start_seq))
                self._show_row(rows.index(self.start_seq))
        self.table.focus()

    def _show_attempt(self) -> None:
        exchanges = self.calls(self.attempt)
        title = Text("Calls — ", style="bold")
        title.append_text(inert(self.task_name))
        count = f"{len(exchanges)} call{'s' if len(exchanges) != 1 else ''}"
        title.append(f" · attempt {self.attempt} of {self.attempts} · {count}")
        self.query_one("#calls-title", Label).update(title)
        self.table.show(exchanges)
        self._show_row(0)

    def _show_row(self, row: int) -> None:
        exchanges = self.table.exchanges
        text = self.query_one("#calls-text", Static)
        if not exchanges:
            self.shown = None
            text.update(Text("This attempt recorded no calls.", style="dim"))
            return
        self.shown = exchanges[row]
        text.update(exchange_text(self.shown))
        self.query_one("#calls-detail").scroll_home(animate=False)

    def on_line_table_row_highlighted(self, message: LineTable.RowHighlighted) -> None:
        self._show_row(message.row)

    def action_attempt(self, delta: int) -> None:
        wanted = self.attempt + delta
        if 1 <= wanted <= self.attempts:
            self.attempt = wanted
            self._show_attempt()

    def action_switch(self) -> None:
        detail = self.query_one("#calls-detail")
        (self.table if detail.has_focus else detail).focus()

    def action_copy(self) -> None:
        if self.shown is None:
            return
        self.app.copy_to_clipboard(exchange_text(self.shown).plain)
        self.notify(f"copied call #{self.shown.seq + 1} to the clipboard")

    def action_edit(self) -> None:
        if self.shown is None:
            return
        index = list(self.table.exchanges).index(self.shown) + 1
        self.dismiss(AnswerEdit(self.task_name, self.attempt, index, self.shown))

    def action_close(self) -> None:
        self.dismiss(None)
