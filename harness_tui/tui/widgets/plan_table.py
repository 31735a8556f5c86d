"""PlanTable: the plan as a table, with status, attempts, duration and markers."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from rich.text import Text
from textual.message import Message

from ...engine.scheduler import Plan
from ..glyphs import BREAKPOINT, NEXT, status_label, status_name
from .quiet_table import QuietTable
from .status_styles import status_styles

COLUMNS = ("mark", "task", "status", "att", "time", "#", "lvl", "id")


class PlanTable(QuietTable):
    """One row per plan step; row keys are task names."""

    @dataclass
    class TaskSelected(Message):
        """The user moved to a task's row."""

        plan_table: PlanTable
        task: str

        @property
        def control(self) -> PlanTable:
            return self.plan_table

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, zebra_stripes=True)
        self._styles: dict[str, str] = {}
        self.status_of: Callable[[str], object] = lambda task: None
        self.attempts_of: Callable[[str], tuple[int, float | None]] = lambda task: (0, None)

    def on_mount(self) -> None:
        widths = {"mark": 2, "#": 4, "id": 8, "lvl": 3, "status": 11, "att": 3, "time": 7}
        for column in COLUMNS:
            self.add_column(
                " " if column == "mark" else column, key=column, width=widths.get(column)
            )

    def show(self, plan: Plan, breakpoints: Collection[str], next_task: str | None) -> None:
        """Fill the table for a plan."""
        self.clear()
        self._styles = status_styles(self.app)
        for step in plan:
            self.add_row(
                *self._cells(
                    step.index, step.task, step.task_id, step.level, breakpoints, next_task
                ),
                key=step.task,
            )

    def _cells(
        self, index: int, task: str, task_id: str, level: int,
        breakpoints: Collection[str], next_task: str | None,
    ) -> list[str | Text]:  # fmt: skip
        status = status_name(self.status_of(task))
        attempts, duration = self.attempts_of(task)
        return [
            self._mark(task, breakpoints, next_task),
            task,
            Text(status_label(status), style=self._style(status)),
            str(attempts) if attempts else "",
            f"{duration:.2f}s" if duration is not None else "",
            str(index),
            str(level),
            task_id[:8],
        ]

    def _style(self, status: str) -> str:
        return self._styles.get(status, "")

    @staticmethod
    def _mark(task: str, breakpoints: Collection[str], next_task: str | None) -> Text:
        text = Text()
        text.append(BREAKPOINT if task in breakpoints else " ", style="bold")
        text.append(NEXT if task == next_task else " ", style="bold")
        return text

    def refresh_tasks(
        self, tasks: Collection[str], breakpoints: Collection[str], next_task: str | None
    ) -> None:
        """Update the cells of some rows (statuses, attempts, time, markers)."""
        for task in tasks:
            status = status_name(self.status_of(task))
            attempts, duration = self.attempts_of(task)
            self.update_cell(task, "status", Text(status_label(status), style=self._style(status)))
            self.update_cell(task, "att", str(attempts) if attempts else "")
            self.update_cell(task, "time", f"{duration:.2f}s" if duration is not None else "")
            self.update_cell(task, "mark", self._mark(task, breakpoints, next_task))

    def select_task(self, task: str) -> None:
        """Move the cursor to a task without announcing it."""
        try:
            row = self.get_row_index(task)
        except Exception:
            return
        self.move_quietly(row)

    def on_user_row(self, key: str) -> None:
        self.post_message(self.TaskSelected(self, key))
