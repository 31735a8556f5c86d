"""Which tasks the plan and the trace show: a status group and a part of a name (no Textual).

The groups are the questions people ask of a large run (what failed, what runs now, what is
left, what was skipped); a task's status is the one shown at the time cursor.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..engine.events import PENDING, Status, TraceEvent

__all__ = ["GROUPS", "TaskFilter"]

GROUPS: dict[str, frozenset[Status | None]] = {
    "failed": frozenset({Status.FAILED, Status.TIMED_OUT, Status.UPSTREAM_FAILED}),
    "running": frozenset({Status.RUNNING}),
    PENDING: frozenset({None}),
    "skipped": frozenset({Status.SKIPPED, Status.CANCELLED}),
    "succeeded": frozenset({Status.SUCCEEDED, Status.FALLBACK}),
}
"""Each status group and the statuses in it (None: not started yet)."""


@dataclass(frozen=True, slots=True)
class TaskFilter:
    """Tasks of one status group (None: any) whose name contains ``text`` (any case)."""

    group: str | None = None
    text: str = ""

    @property
    def active(self) -> bool:
        return self.group is not None or bool(self.text)

    def keeps(self, task: str, status: Status | None) -> bool:
        """Whether a task with this status is shown."""
        if self.group is not None and status not in GROUPS[self.group]:
            return False
        return not self.text or self.text.lower() in task.lower()

    def keeps_event(self, event: TraceEvent) -> bool:
        """Whether a trace event is shown: its own status, its task's name."""
        return self.keeps(event.task, event.status)

    def next_group(self) -> TaskFilter:
        """The same filter on the next group (any, then each group in turn)."""
        order: list[str | None] = [None, *GROUPS]
        return replace(self, group=order[(order.index(self.group) + 1) % len(order)])

    def named(self, text: str) -> TaskFilter:
        return replace(self, text=text.strip())

    def describe(self) -> str:
        """``failed · "load"``, or "" without a filter."""
        parts = [self.group] if self.group else []
        if self.text:
            parts.append(f'"{self.text}"')
        return " · ".join(parts)
