"""TracePanel: the live trace, append-only (new events extend the row count; nothing is
rebuilt), with each failure's error on its row."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from textual.binding import Binding
from textual.message import Message

from ...engine.events import Status, TraceEvent
from ..looks import status_label
from ..sanitize import visible
from ..task_filter import TaskFilter
from .line_table import Cell, Column, LineTable
from .status_styles import status_styles


class TracePanel(LineTable):
    """One row per delivered trace event; enter travels to the event under the cursor, home
    and end to the first and the last."""

    BINDINGS = [Binding("enter", "choose", "Travel here", show=False, id="trace-travel")]

    @dataclass
    class EventSelected(Message):
        """The user moved to an event's row."""

        trace_panel: TracePanel
        seq: int

        @property
        def control(self) -> TracePanel:
            return self.trace_panel

    @dataclass
    class EventChosen(Message):
        """The user asked to travel to an event (enter on its row)."""

        trace_panel: TracePanel
        seq: int

        @property
        def control(self) -> TracePanel:
            return self.trace_panel

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            (
                Column("seq", "seq", 5),
                Column("task", "task"),
                Column("task_id", "task id", 8),
                Column("status", "status", 11),
                Column("att", "att", 3),
                Column("t", "t+", 8),
                Column("error", "error"),
            ),
            id=id,
        )
        self.events: Sequence[TraceEvent] = ()
        self._origin: float | None = None
        self._styles: dict[Status | None, str] = {}
        self.delivered = 0  # events shown, or kept out by the filter
        self.task_filter = TaskFilter()
        self.shown: list[int] | None = None  # the seq of each row, when filtered

    def on_mount(self) -> None:
        self._styles = status_styles(self.app)

    def reset(
        self, events: Sequence[TraceEvent], delivered: int, tasks: Sequence[str] = ()
    ) -> None:
        """Show the first ``delivered`` events of a (growing) trace of these tasks."""
        self.events = events
        if tasks:
            self.fit_column("task", tasks)
        self._origin = None
        self.cursor_row = 0
        self.delivered = 0
        self.shown = None if not self.task_filter.active else []
        self.append(delivered)

    def append(self, count: int) -> None:
        """``count`` more events have been delivered."""
        start, self.delivered = self.delivered, self.delivered + count
        if self.shown is None:
            self.set_row_count(self.delivered)
            return
        keeps, events = self.task_filter.keeps_event, self.events
        self.shown.extend(seq for seq in range(start, self.delivered) if keeps(events[seq]))
        self.set_row_count(len(self.shown))

    def set_filter(self, task_filter: TaskFilter) -> None:
        """Show only the events ``task_filter`` keeps; the cursor stays near its event."""
        at = self.seq_of(self.cursor_row) if self.row_count else None
        self.task_filter = task_filter
        self.reset(self.events, self.delivered)
        if at is not None and self.row_count:
            self.show_position(at)

    def seq_of(self, row: int) -> int:
        """The event shown on ``row``."""
        return row if self.shown is None else self.shown[row]

    def cells(self, row: int) -> Sequence[Cell]:
        event = self.events[self.seq_of(row)]
        if self._origin is None and self.events and self.events[0].started_at is not None:
            self._origin = self.events[0].started_at
        at = event.ended_at if event.ended_at is not None else event.started_at
        offset = "" if at is None or self._origin is None else f"{at - self._origin:.3f}"
        status = event.status
        return (
            (str(event.seq), "dim"),
            (event.task, ""),
            (event.task_id[:8], "dim"),
            (status_label(status), self._styles[status]),
            (str(event.attempt) if event.attempt else "", ""),
            (offset, "dim"),
            (error_line(event), self._styles[status] if event.error else ""),
        )

    def show_position(self, seq: int) -> None:
        """Put the cursor on an event (time travel); filtered out, on the last shown
        before it."""
        if self.shown is None:
            self.move_cursor(seq)
        elif self.shown:
            self.move_cursor(max(bisect_right(self.shown, seq) - 1, 0))

    def follow(self) -> None:
        """Keep the newest row in view."""
        self.move_cursor(self.row_count - 1)

    def on_user_row(self, row: int) -> None:
        self.post_message(self.EventSelected(self, self.seq_of(row)))

    def action_choose(self) -> None:
        if self.row_count:
            self.post_message(self.EventChosen(self, self.seq_of(self.cursor_row)))

    def action_jump(self, row: int) -> None:
        """Home and end in the trace travel to its first and last event."""
        super().action_jump(row)
        self.action_choose()


def error_line(event: TraceEvent) -> str:
    """``type: message`` of a failed event on one visible line ("" if it has no error)."""
    if not event.error:
        return ""
    kind, message = event.error.get("type", ""), event.error.get("message", "")
    # Both come from user code: never let them move the cursor or restyle the terminal.
    return visible(f"{kind}: {message}" if kind else str(message))
