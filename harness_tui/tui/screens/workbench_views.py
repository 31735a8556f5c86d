"""The workbench's ways of looking: the time cursor, finding a task, the DAG's boxes, the
selected task's logs, the run's timeline and the inspected failure's full error."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from ...engine.events import TraceEvent
from ..modals.filter_text import FilterTextModal
from ..modals.find_task import FindTaskModal
from ..modals.logs import LogsModal
from ..modals.timeline import TimelineModal
from ..sanitize import shown
from ..widgets.dag_view import DagView
from ..widgets.inspector import Inspector
from ..widgets.status_styles import status_styles
from .calls import AnswerEdit, CallsModal
from .workbench_host import Workbench


class ViewActions:
    """Actions that change what is shown, never the run."""

    def __init__(self, screen: Workbench) -> None:
        self.screen = screen

    def handlers(self) -> dict[str, Callable[[], object]]:
        """What each of these actions' ids runs."""
        travel = self.screen.travel
        return {
            "time-back": lambda: travel(lambda s: s.go_back()),
            "time-forward": lambda: travel(lambda s: s.go_forward()),
            "time-task-back": lambda: travel(lambda s: s.go_by_task(back=True), "no earlier task"),
            "time-task-forward": lambda: travel(
                lambda s: s.go_by_task(back=False), "no later task"
            ),
            "time-failure-back": lambda: travel(
                lambda s: s.go_to_failure(back=True), "no earlier failure"
            ),
            "time-failure-forward": lambda: travel(
                lambda s: s.go_to_failure(back=False), "no later failure"
            ),
            "time-start": lambda: travel(lambda s: s.go_to(-1)),
            "time-end": lambda: travel(lambda s: s.go_to(s.delivered - 1)),
            "dag-compact": self.toggle_compact,
            "pane-maximize": self.toggle_maximized,
            "filter-status": self.filter_status,
            "filter-name": self.filter_name,
            "find-task": self.find,
            "show-logs": self.show_logs,
            "show-timeline": self.show_timeline,
            "show-calls": lambda: self.show_calls(self.screen.selected),
            "show-traceback": lambda: self.screen.panes.query_one(
                Inspector
            ).action_show_traceback(),
        }

    def show_traceback(self) -> None:
        """Open the full error and traceback of the inspected failure, or say why not."""
        self.screen.panes.query_one(Inspector).action_show_traceback()

    def filter_status(self) -> None:
        panes = self.screen.panes
        panes.set_filter(panes.task_filter.next_group())
        self.screen.notify(f"showing {panes.task_filter.group or 'every status'}", title="Filter")

    def filter_name(self) -> None:
        panes = self.screen.panes

        def named(text: str | None) -> None:
            if text is not None:
                panes.set_filter(panes.task_filter.named(text))

        modal = FilterTextModal("Show the tasks whose name contains", panes.task_filter.text)
        self.screen.app.push_screen(modal, named)

    def toggle_maximized(self) -> None:
        """The focused pane on the whole screen (80x24 leaves the DAG three rows), or back."""
        screen = self.screen.panes.screen
        if screen.maximized is not None:
            screen.minimize()
            return
        focused = screen.focused
        if focused is None or not screen.maximize(focused, container=False):
            self.screen.notify("focus a pane first (tab)")

    def toggle_compact(self) -> None:
        mode = self.screen.panes.query_one(DagView).toggle_mode()
        self.screen.notify(f"DAG boxes: {mode}")

    def find(self) -> None:
        session = self.screen.session
        if session is None:
            return

        def found(task: str | None) -> None:
            if task is not None:
                self.screen.panes.select(task)

        self.screen.app.push_screen(FindTaskModal(session.run.plan.names), found)

    def show_logs(self) -> None:
        """Open the selected task's log (its latest attempt, following new ones live)."""
        session, task = self.screen.session, self.screen.selected
        if session is None:
            return
        if task is None:
            self.screen.notify("select a task first (arrows, or / to find one)")
            return
        self.screen.app.push_screen(LogsModal(session.run, task))

    def show_calls(
        self, task: str | None, attempt: int | None = None, seq: int | None = None
    ) -> None:
        """Open the calls of ``task``'s attempt (the latest one shown by default), with the
        cursor on call ``seq`` when given."""
        session = self.screen.session
        if session is None:
            return
        if task is None:
            self.screen.notify("select a task first (arrows, or / to find one)")
            return
        latest = session.attempt_shown(task)
        if latest < 1:
            self.screen.notify(f"{shown(task)} has not run yet: no calls")
            return
        problem = session.recordings_problem()
        if problem is not None:
            self.screen.notify(problem, title="Recorded calls unreadable", severity="error")
            return
        if not session.recordings():
            self.screen.notify(
                "this run recorded no calls: open --record records the runs started here, "
                "run --record those of the command line"
            )
            return
        at = attempt or latest
        calls = partial(session.exchanges, task)
        self.screen.app.push_screen(CallsModal(task, latest, at, calls, seq), self._edited)

    def _edited(self, edit: AnswerEdit | None) -> None:
        """The calls view closed; with an answer to edit, the screen hands it to the runs."""
        if edit is not None:
            self.screen.edit_answer(edit)

    def show_timeline(self) -> None:
        """Open the timeline: live while the run goes on, recorded timings in replay."""
        session = self.screen.session
        if session is None:
            return
        run, record = session.run, session.record
        styles = status_styles(self.screen.app)
        events: Callable[[], Sequence[TraceEvent]]
        if record is not None:  # replay: the times the run really had, not the replay's
            events, now = (lambda: record.events), None
        else:
            events, now = (lambda: run.events), (None if run.finished else run.clock.wall)
        modal = TimelineModal(run.plan.names, events, now, self.screen.selected, styles)
        self.screen.app.push_screen(modal)
