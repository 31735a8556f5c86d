"""PlanTable: the plan as a table, with status, attempts, duration and markers."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from textual.geometry import Region
from textual.message import Message

from ...engine.events import Status
from ...engine.scheduler import Plan, PlanStep
from ..glyphs import BREAKPOINT, NEXT
from ..looks import STATUS_LOOKS, status_label
from ..retry_state import RetryWait
from ..task_filter import TaskFilter
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

RETRY_SHOWN = frozenset({Status.FAILED, Status.TIMED_OUT})
"""Statuses after which a task may be waiting to retry (asked only then: cheap)."""


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
        self.retry_of: Callable[[str], RetryWait | None] = lambda task: None
        self.breakpoints: Collection[str] = ()
        self.next_task: str | None = None
        self._styles: dict[Status | None, str] = {}
        self.task_filter = TaskFilter()
        self.shown: list[int] | None = None  # plan indices of the rows, when filtered

    def on_mount(self) -> None:
        self._styles = status_styles(self.app)

    def set_filter(self, task_filter: TaskFilter) -> None:
        """Show only the steps ``task_filter`` keeps (their statuses as shown now)."""
        self.task_filter = task_filter
        self._apply_filter()

    def _apply_filter(self) -> None:
        if self.plan is None:
            return
        at = self._step(self.cursor_row).task if self.row_count else None
        if not self.task_filter.active:
            self.shown = None
        else:
            keeps, status_of = self.task_filter.keeps, self.status_of
            self.shown = [s.index for s in self.plan.steps if keeps(s.task, status_of(s.task))]
        self.set_row_count(len(self.plan) if self.shown is None else len(self.shown))
        if at is not None:
            self.select_task(at)

    def _step(self, row: int) -> PlanStep:
        assert self.plan is not None
        return self.plan.steps[row if self.shown is None else self.shown[row]]

    def show(self, plan: Plan, breakpoints: Collection[str], next_task: str | None) -> None:
        """Show a plan."""
        self.plan = plan
        self.fit_column("task", plan.names)
        index = [c.key for c in self.columns].index("#")
        self.columns[index] = Column("#", "#", len(str(max(len(plan) - 1, 0))))  # whole
        self.breakpoints = breakpoints
        self.next_task = next_task
        self.cursor_row = 0
        self.shown = None
        self.set_row_count(len(plan))
        if self.task_filter.active:
            self._apply_filter()

    def cells(self, row: int) -> Sequence[Cell]:
        step = self._step(row)
        task = step.task
        status = self.status_of(task)
        attempts, duration = self.attempts_of(task)
        retry = self.retry_of(task) if status in RETRY_SHOWN else None
        # The failed attempt's glyph and look, and what comes next: "✘ retry 2/4".
        glyph = STATUS_LOOKS[status].glyph
        label = (f"{glyph} {retry.short()}", self._styles[status]) if retry else None
        mark = (BREAKPOINT if task in self.breakpoints else " ") + (
            NEXT if task == self.next_task else " "
        )
        return (
            (mark, "bold"),
            (str(step.index), "dim"),
            (task, ""),
            label or (status_label(status), self._styles[status]),
            (str(attempts) if attempts else "", ""),
            (f"{duration:.2f}s" if duration is not None else "", ""),
            (str(step.level), "dim"),
            (step.task_id[:8], "dim"),
        )

    def refresh_markers(self, breakpoints: Collection[str], next_task: str | None) -> None:
        """Statuses or markers changed: redraw the visible rows (rows are drawn on demand);
        the next task, when it moved, is scrolled into view (a short pane follows the run)."""
        self.breakpoints = breakpoints
        moved = next_task != self.next_task
        self.next_task = next_task
        if self.task_filter.group is not None:
            self._apply_filter()  # statuses changed: a task may join or leave its group
        row = None if next_task is None or not moved else self.row_of(next_task)
        if row is not None:
            self.scroll_to_region(Region(0, row + 1, 1, 1), animate=False, spacing=None, top=False)
        self.refresh()

    def select_task(self, task: str) -> None:
        """Move the cursor to a task without announcing it."""
        row = self.row_of(task)
        if row is not None:
            self.move_cursor(row)

    def row_of(self, task: str) -> int | None:
        """The row of ``task``, None when it is not shown."""
        if self.plan is None or task not in self.plan.index_of:
            return None
        index = self.plan.index_of[task]
        if self.shown is None:
            return index
        row = bisect_left(self.shown, index)
        return row if row < len(self.shown) and self.shown[row] == index else None

    def on_user_row(self, row: int) -> None:
        if self.plan is not None:
            self.post_message(self.TaskSelected(self, self._step(row).task))
