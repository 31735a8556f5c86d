"""PlanTable: the plan as a table, with status, attempts, duration and markers."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from textual.message import Message

from ...engine.events import Status
from ...engine.scheduler import Plan
from ..glyphs import BREAKPOINT, NEXT
from ..looks import status_label
from .line_table import Cell, Column, LineTable
from .status_styles import status_styles

COLUMNS = [
    Column("mark", "", 2),
    Column("#", "#", 1),  # first: a narrow pane scrolls the columns at its right out of view
    Column("task", "task"),
    Column("status", "status", 11),
    Column("att", "att", 3),
    Column("time", "time", 7),
    Column("lvl", "lvl", 3),
    Column("id", "id", 8),
]


class PlanTable(LineTable):
    """One row per plan step; cells are read from the session when drawn."""

    @dataclass
    class TaskSelected(Message):
        """The user moved to a task's row."""

        plan_table: PlanTable
        task: str

        @property
        def control(self) -> PlanTable:
            return self.plan_table

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(list(COLUMNS), id=id, stripes=True)
        self.plan: Plan | None = None
        self.status_of: Callable[[str], Status | None] = lambda task: None
        self.attempts_of: Callable[[str], tuple[int, float | None]] = lambda task: (0, None)
        self.breakpoints: Collection[str] = ()
        self.next_task: str | None = None
        self._styles: dict[Status | None, str] = {}

    def on_mount(self) -> None:
        self._styles = status_styles(self.app)

    def show(self, plan: Plan, breakpoints: Collection[str], next_task: str | None) -> None:
        """Show a plan."""
        self.plan = plan
        self.fit_column("task", plan.names)
        index = [c.key for c in self.columns].index("#")
        self.columns[index] = Column("#", "#", len(str(max(len(plan) - 1, 0))))  # whole
        self.breakpoints = breakpoints
        self.next_task = next_task
        self.cursor_row = 0
        self.set_row_count(len(plan))

    def cells(self, row: int) -> Sequence[Cell]:
        assert self.plan is not None
        step = self.plan.steps[row]
        task = step.task
        status = self.status_of(task)
        attempts, duration = self.attempts_of(task)
        mark = (BREAKPOINT if task in self.breakpoints else " ") + (
            NEXT if task == self.next_task else " "
        )
        return (
            (mark, "bold"),
            (str(step.index), "dim"),
            (task, ""),
            (status_label(status), self._styles[status]),
            (str(attempts) if attempts else "", ""),
            (f"{duration:.2f}s" if duration is not None else "", ""),
            (str(step.level), "dim"),
            (step.task_id[:8], "dim"),
        )

    def refresh_markers(self, breakpoints: Collection[str], next_task: str | None) -> None:
        """Statuses or markers changed: redraw the visible rows (rows are drawn on demand)."""
        self.breakpoints = breakpoints
        self.next_task = next_task
        self.refresh()

    def select_task(self, task: str) -> None:
        """Move the cursor to a task without announcing it."""
        if self.plan is not None and task in self.plan.index_of:
            self.move_cursor(self.plan.index_of[task])

    def row_of(self, task: str) -> int:
        assert self.plan is not None
        return self.plan.index_of[task]

    def on_user_row(self, row: int) -> None:
        if self.plan is not None:
            self.post_message(self.TaskSelected(self, self.plan.steps[row].task))
