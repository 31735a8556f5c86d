"""TracePanel: the live trace, append-only (rows are added, never rebuilt)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.text import Text
from textual.message import Message

from ...engine.events import TraceEvent
from ..glyphs import status_label
from .quiet_table import QuietTable
from .status_styles import status_styles


class TracePanel(QuietTable):
    """One row per trace event; the row key is the event's seq."""

    @dataclass
    class EventSelected(Message):
        """The user moved to an event's row."""

        trace_panel: TracePanel
        seq: int

        @property
        def control(self) -> TracePanel:
            return self.trace_panel

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._origin: float | None = None
        self._styles: dict[str, str] = {}

    def on_mount(self) -> None:
        self._styles = status_styles(self.app)
        self.reset()

    def reset(self, task_width: int = 16) -> None:
        """Empty the panel; the task column fits the longest task name (up to 24)."""
        self.clear(columns=True)
        self._origin = None
        widths = {
            "seq": 4,
            "task": min(max(task_width, 4), 24),
            "task id": 8,
            "status": 11,
            "att": 3,
            "t+": 7,
        }
        for column, width in widths.items():
            self.add_column(column, key=column, width=width)

    def append(self, events: Iterable[TraceEvent]) -> None:
        """Add rows for new events."""
        for event in events:
            if self._origin is None and event.started_at is not None:
                self._origin = event.started_at
            at = event.ended_at if event.ended_at is not None else event.started_at
            offset = "" if at is None or self._origin is None else f"{at - self._origin:.3f}"
            status = event.status.value
            self.add_row(
                str(event.seq),
                event.task,
                event.task_id[:8],
                Text(status_label(status), style=self._styles.get(status, "")),
                str(event.attempt) if event.attempt else "",
                offset,
                key=str(event.seq),
            )

    def show_position(self, seq: int) -> None:
        """Put the cursor on an event (time travel)."""
        self.move_quietly(seq)

    def follow(self) -> None:
        """Keep the newest row in view."""
        self.move_quietly(self.row_count - 1)

    def on_user_row(self, key: str) -> None:
        self.post_message(self.EventSelected(self, int(key)))
