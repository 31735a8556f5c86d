"""WorkbenchScreen: the DAG and its plan side by side, the live trace and the inspector.

The screen owns the handlers; widgets render and post messages; the session and the engine make
every decision. Runs execute in a thread worker that posts coalesced ``StepFinished`` messages.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Static

from ..actions import INSPECTOR, WORKBENCH, bindings
from ..inspection import event_sections, task_sections
from ..intents import IntentQueue
from ..modals.find_task import FindTaskModal
from ..sanitize import shown
from ..session import OpenError, Session
from ..widgets.dag_view import DagView
from ..widgets.inspector import Inspector
from ..widgets.plan_table import PlanTable
from ..widgets.run_header import RunHeader
from ..widgets.trace_panel import TracePanel
from .workbench_errors import ErrorActions
from .workbench_files import FileActions
from .workbench_logs import LogActions
from .workbench_run import RunControl

LEAVE_SECONDS = 3.0
"""On quit, how long a run going on may take to reach a pause before it is left to its lease."""


class WorkbenchScreen(RunControl, FileActions, ErrorActions, LogActions, Screen[None]):
    """Step, continue, break, travel back in time, export; on one workflow or one export."""

    ACTIONS = (*WORKBENCH, *INSPECTOR)
    BINDINGS = bindings(WORKBENCH)  # show-traceback comes from ErrorActions, out of the footer

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    def __init__(self, session: Session | None, error: OpenError | None = None) -> None:
        super().__init__()
        self.session = session
        self.error = error
        self.selected: str | None = None
        self._run_active = False
        self._intents = IntentQueue()
        self._ticker: Timer | None = None
        self._bindings_key: object = ()

    def compose(self) -> ComposeResult:
        yield RunHeader(id="run-header")
        yield Static("", id="errors")
        with Vertical(id="panes"):
            with Horizontal(id="top"):
                yield DagView(id="dag")
                yield PlanTable(id="plan")
            with Horizontal(id="bottom"):
                yield TracePanel(id="trace")
                yield Inspector(id="inspector")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#dag").border_title = "DAG"
        self.query_one("#plan").border_title = "Plan"
        self.query_one("#trace").border_title = "Trace"
        self.query_one("#inspector").border_title = "Inspector"
        if self.session is not None:
            self._show_session()
        elif self.error is not None:
            self._show_errors(self.error)
        else:
            self._show_errors(None)
            self.action_open()

    def on_unmount(self) -> None:
        # A run left unfinished is marked abandoned (resumable); one going on is paused first
        # and, if its task outlasts the wait, left to its lease (read as interrupted).
        if self.session is not None:
            self.session.leave(wait=LEAVE_SECONDS)

    # -- showing ----------------------------------------------------------------------------

    def _show_errors(self, error: OpenError | None) -> None:
        errors = self.query_one("#errors", Static)
        if error is None:
            errors.update("Nothing open. Press o to open a workflow or a run export.")
        else:
            # Each line visible (a file name or a quoted value cannot break or drive it), as
            # plain text: error lines quote paths like payload.x[1], which are not markup.
            lines = [f"Cannot open {shown(error.path)}:", ""] + [
                shown(x, 2_000) for x in error.lines
            ]
            errors.update(Text("\n".join(lines) + "\n\no: open another file · R: reload"))
        errors.display = True
        self.query_one("#panes").display = False
        self.query_one(RunHeader).update_from(None)

    def _show_session(self) -> None:
        session = self.session
        assert session is not None
        self.query_one("#errors").display = False
        self.query_one("#panes").display = True
        depends, dependents = session.graph_links
        dag = self.query_one(DagView)
        dag.status_of = session.status
        dag.breakpoints = session.breakpoints
        dag.show(session.routing, depends, dependents)
        plan = self.query_one(PlanTable)
        plan.status_of = session.status
        plan.attempts_of = session.attempts
        plan.show(session.run.plan, session.breakpoints, self._next_task())
        trace = self.query_one(TracePanel)
        trace.reset(session.run.events, session.delivered, session.run.plan.names)
        self._refresh_markers(set())
        first = session.run.plan[0].task if len(session.run.plan) else None
        if self.selected not in session.workflow.graph:
            self.selected = first
        if self.selected:
            self._select(self.selected)
        self.query_one(DagView).reveal(self._next_task())
        self._refresh_bindings_if_changed()

    def _next_task(self) -> str | None:
        assert self.session is not None
        if self.session.view_seq is not None:
            return None
        step = self.session.run.next_step
        return step.task if step else None

    def _refresh_markers(self, tasks: set[str]) -> None:
        """Repaint after ``tasks`` changed: tables, DAG, header, and the inspector if it shows
        one of them."""
        session = self.session
        assert session is not None
        dag = self.query_one(DagView)
        new_next = self._next_task()
        if new_next != dag.next_task:
            dag.reveal(new_next)  # after a step or a restart the view follows the next task
        dag.next_task = new_next
        self.query_one(PlanTable).refresh_markers(session.breakpoints, new_next)
        dag.refresh()
        self.query_one(RunHeader).update_from(session, running=self._run_active)
        if self.selected in tasks:
            self._inspect_task(self.selected)

    def _select(self, task: str) -> None:
        self.selected = task
        self.query_one(DagView).select(task, notify=False)
        self.query_one(PlanTable).select_task(task)
        self._inspect_task(task)

    def _inspect_task(self, task: str) -> None:
        assert self.session is not None
        title, sections = task_sections(self.session, task)
        self.query_one(Inspector).show(title, sections)

    # -- selection (the screen mediates between siblings) -----------------------------------

    @on(PlanTable.TaskSelected)
    def _plan_selected(self, message: PlanTable.TaskSelected) -> None:
        self.selected = message.task
        self.query_one(DagView).select(message.task, notify=False)
        self._inspect_task(message.task)

    @on(DagView.TaskSelected)
    def _dag_selected(self, message: DagView.TaskSelected) -> None:
        self.selected = message.task
        self.query_one(PlanTable).select_task(message.task)
        self._inspect_task(message.task)

    @on(TracePanel.EventSelected)
    def _event_selected(self, message: TracePanel.EventSelected) -> None:
        assert self.session is not None
        if message.seq < len(self.session.run.events):
            event = self.session.run.events[message.seq]
            title, sections = event_sections(self.session, event)
            self.query_one(Inspector).show(title, sections)

    # -- running ----------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Availability depends on the session only, not on whether a worker is busy, so the
        # footer does not flicker (and relayout) twice per step; busy actions queue or no-op.
        session = self.session
        if action in ("open", "reload"):
            return True
        if session is None:
            return None if action in ("step", "continue", "export", "back", "forward") else False
        finished = session.run.finished
        if action in ("step", "continue", "pause", "stop"):
            return not finished or None
        if action == "back":
            return session.position >= 0 or None
        if action == "forward":
            return session.view_seq is not None or None
        if action == "export":
            return bool(session.delivered) or None
        return True

    def _refresh_bindings_if_changed(self) -> None:
        """Grey out what is impossible now, telling the footer only when that changed."""
        session = self.session
        key = (
            None
            if session is None
            else (session.run.finished, session.position >= 0, session.view_seq is not None,
                  bool(session.delivered), id(session))
        )  # fmt: skip
        if key != self._bindings_key:
            self._bindings_key = key
            self.refresh_bindings()

    # -- editing the session -----------------------------------------------------------------

    def action_toggle_breakpoint(self) -> None:
        if self.session is None or self.selected is None:
            return
        on_now = self.session.toggle_breakpoint(self.selected)
        self.notify(f"breakpoint {'set on' if on_now else 'removed from'} {self.selected}")
        self._refresh_markers({self.selected})

    def action_toggle_compact(self) -> None:
        mode = self.query_one(DagView).toggle_mode()
        self.notify(f"DAG boxes: {mode}")

    def action_find(self) -> None:
        if self.session is None:
            return

        def found(task: str | None) -> None:
            if task is not None:
                self._select(task)

        self.app.push_screen(FindTaskModal(self.session.run.plan.names), found)

    def action_toggle_break_on_failure(self) -> None:
        if self.session is None:
            return
        self.session.break_on_failure = not self.session.break_on_failure
        self.notify(f"break on any failure: {'on' if self.session.break_on_failure else 'off'}")

    def action_back(self) -> None:
        self._travel(lambda session: session.go_back())

    def action_forward(self) -> None:
        self._travel(lambda session: session.go_forward())

    def action_task_back(self) -> None:
        self._travel(lambda session: session.go_by_task(back=True), "no earlier task")

    def action_task_forward(self) -> None:
        self._travel(lambda session: session.go_by_task(back=False), "no later task")

    def action_failure_back(self) -> None:
        self._travel(lambda session: session.go_to_failure(back=True), "no earlier failure")

    def action_failure_forward(self) -> None:
        self._travel(lambda session: session.go_to_failure(back=False), "no later failure")

    def action_time_start(self) -> None:
        self._travel(lambda session: session.go_to(-1))

    def action_time_end(self) -> None:
        self._travel(lambda session: session.go_to(session.delivered - 1))

    @on(TracePanel.EventChosen)
    def _event_chosen(self, message: TracePanel.EventChosen) -> None:
        self._travel(lambda session: session.go_to(message.seq))

    def _travel(self, move: Callable[[Session], bool], nothing: str = "") -> None:
        """Move the time cursor with ``move`` and redraw what changed (``nothing`` is said
        when it cannot move)."""
        session = self.session
        if session is None:
            return
        before = session.position
        if not move(session):
            if nothing:
                self.notify(nothing, title="Time")
            return
        after = session.position
        low, high = sorted((before, after))
        events = session.run.events
        tasks = {events[i].task for i in range(max(low, 0), min(high + 1, len(events)))}
        trace = self.query_one(TracePanel)
        if after >= 0:
            trace.show_position(after)
        self._refresh_markers(tasks)
        if after >= 0:
            self._select(events[after].task)
        self._refresh_bindings_if_changed()
