"""RunPanes: the DAG and its plan side by side above the trace and the inspector.

It shows one session as of its time cursor, mediates the selection between its four panes
(siblings never reach into each other), moves the time cursor, and appends the events the run
controller said were recorded. The screen around it decides when.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical

from ..inspection import event_sections, task_sections
from ..session import Session
from ..task_filter import TaskFilter
from .dag_view import DagView
from .inspector import Inspector
from .plan_table import PlanTable
from .trace_panel import TracePanel


class RunPanes(Vertical):
    """The four panes of the workbench, on one session."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session: Session | None = None
        self.selected: str | None = None
        self.task_filter = TaskFilter()

    def compose(self) -> ComposeResult:
        with Horizontal(id="top"):
            yield DagView(id="dag")
            yield PlanTable(id="plan")
        with Horizontal(id="bottom"):
            yield TracePanel(id="trace")
            yield Inspector(id="inspector")

    def on_mount(self) -> None:
        for pane, title in (("#dag", "DAG"), ("#plan", "Plan"), ("#trace", "Trace"),
                            ("#inspector", "Inspector")):  # fmt: skip
            self.query_one(pane).border_title = title

    def set_filter(self, task_filter: TaskFilter) -> None:
        """Show in the plan and the trace only the tasks and events ``task_filter`` keeps."""
        self.task_filter = task_filter
        self.query_one(PlanTable).set_filter(task_filter)
        self.query_one(TracePanel).set_filter(task_filter)
        said = task_filter.describe()
        for pane, title in (("#plan", "Plan"), ("#trace", "Trace")):
            self.query_one(pane).border_title = f"{title} · {said}" if said else title

    def show(self, session: Session) -> None:
        """Show ``session`` from scratch (opened, restarted, replanned)."""
        self.session = session
        depends, dependents = session.graph_links
        dag = self.query_one(DagView)
        dag.status_of = session.status
        dag.retry_of = session.retry_wait
        dag.breakpoints = session.breakpoints
        dag.show(session.routing, depends, dependents)
        plan = self.query_one(PlanTable)
        plan.status_of = session.status
        plan.attempts_of = session.attempts
        plan.retry_of = session.retry_wait
        plan.show(session.run.plan, session.breakpoints, self.next_task())
        self.query_one(TracePanel).reset(
            session.run.events, session.delivered, session.run.plan.names
        )
        self.refresh_markers(set())
        if self.selected not in session.workflow.graph:
            self.selected = session.run.plan[0].task if len(session.run.plan) else None
        if self.selected:
            self.select(self.selected)
        dag.reveal(self.next_task())

    def next_task(self) -> str | None:
        """The task the run goes on with, when the view follows the run."""
        session = self.session
        if session is None or session.view_seq is not None:
            return None
        held = session.live.driver.held
        if held is not None:  # the run goes on with this task's next attempt (or its end)
            return held.task
        step = session.run.next_step
        return step.task if step else None

    def refresh_markers(self, tasks: set[str]) -> None:
        """Repaint after ``tasks`` changed: tables, DAG, and the inspector if it shows one."""
        session = self.session
        assert session is not None
        dag = self.query_one(DagView)
        new_next = self.next_task()
        if new_next != dag.next_task:
            dag.reveal(new_next)  # after a step or a restart the view follows the next task
        dag.next_task = new_next
        self.query_one(PlanTable).refresh_markers(session.breakpoints, new_next)
        dag.refresh()
        if self.selected in tasks:
            self.inspect(self.selected)

    def reveal_next(self) -> None:
        """Scroll the DAG to the task the run goes on with."""
        self.query_one(DagView).reveal(self.next_task())

    def select(self, task: str) -> None:
        """Select ``task`` in the DAG and the plan, and inspect it."""
        self.selected = task
        self.query_one(DagView).select(task, notify=False)
        self.query_one(PlanTable).select_task(task)
        self.inspect(task)

    def inspect(self, task: str) -> None:
        assert self.session is not None
        title, sections = task_sections(self.session, task)
        self.query_one(Inspector).show(title, sections)

    def catch_up(self, recorded: int) -> set[str]:
        """Append the trace's rows up to its first ``recorded`` events; the tasks of those
        newly shown (to repaint: none if nothing was new)."""
        session = self.session
        if session is None:
            return set()
        before = session.delivered
        tasks = session.deliver(recorded)
        if not tasks:
            return tasks
        trace = self.query_one(TracePanel)
        trace.append(session.delivered - before)
        if session.view_seq is None:
            trace.follow()
        return tasks

    def travel(self, move: Callable[[Session], bool]) -> set[str] | None:
        """Move the time cursor with ``move`` and select the task of the event it is on; the
        tasks whose look changed (to repaint), or None if it could not move."""
        session = self.session
        if session is None:
            return None
        before = session.position
        if not move(session):
            return None
        after = session.position
        low, high = sorted((before, after))
        events = session.run.events
        tasks = {events[i].task for i in range(max(low, 0), min(high + 1, len(events)))}
        if after >= 0:
            self.query_one(TracePanel).show_position(after)
            self.select(events[after].task)
        return tasks

    # -- selection (this container mediates between its panes) -----------------------------

    @on(PlanTable.TaskSelected)
    def _plan_selected(self, message: PlanTable.TaskSelected) -> None:
        self.selected = message.task
        self.query_one(DagView).select(message.task, notify=False)
        self.inspect(message.task)

    @on(DagView.TaskSelected)
    def _dag_selected(self, message: DagView.TaskSelected) -> None:
        self.selected = message.task
        self.query_one(PlanTable).select_task(message.task)
        self.inspect(message.task)

    @on(TracePanel.EventSelected)
    def _event_selected(self, message: TracePanel.EventSelected) -> None:
        assert self.session is not None
        if message.seq < len(self.session.run.events):
            event = self.session.run.events[message.seq]
            title, sections = event_sections(self.session, event)
            self.query_one(Inspector).show(title, sections)
