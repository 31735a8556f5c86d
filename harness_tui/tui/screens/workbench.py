"""WorkbenchScreen: the DAG and its plan side by side, the live trace and the inspector.

The screen is composed, not inherited: a headless :class:`RunController` decides (intents,
the drive, hold, pause, stop) and publishes what happened through one message,
:class:`RunUpdated`; :class:`RunPanes` renders the session; the actions of the table
in :mod:`..actions` are carried out by :class:`RunActions`, :class:`FileActions` and
:class:`ViewActions`, each on one concern, through this screen's public members.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import cast

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.notifications import SeverityLevel
from textual.widgets import Footer, Static

from ...workflow.limits import LINE_CHARS
from ..actions import INSPECTOR, READ_ONLY, WORKBENCH, Action, routed_bindings
from ..controller import RunController
from ..messages import RunUpdated
from ..modals.quitting import QuittingModal
from ..sanitize import shown
from ..session import OpenError, Session
from ..widgets.inspector import Inspector
from ..widgets.run_header import RunHeader
from ..widgets.run_panes import RunPanes
from ..widgets.trace_panel import TracePanel
from .acting import ActingScreen, fit_footer
from .calls import AnswerEdit
from .workbench_files import FileActions, Opener
from .workbench_host import NoticeBoard
from .workbench_run import RunActions
from .workbench_views import ViewActions

LEAVE_SECONDS = 3.0
"""On quit, how long a run going on may take to reach a pause before it is left to its lease."""


class WorkbenchScreen(ActingScreen):
    """Step, continue, break, travel back in time, export; on one workflow or one export."""

    ACTIONS = (*WORKBENCH, *INSPECTOR)
    # show-traceback works from any pane, out of the footer (no room left at 80 columns): the
    # inspector shows its key whenever it has the focus.
    BINDINGS = [
        *routed_bindings(WORKBENCH),
        *routed_bindings(replace(action, show=False) for action in INSPECTOR),
    ]

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    def __init__(
        self,
        session: Session | None,
        error: OpenError | None = None,
        opener: Opener | None = None,
        read_only: bool = False,
    ) -> None:
        super().__init__()
        self.error = error
        self.read_only = read_only
        self.controller = RunController(
            session, lambda update: self.post_message(RunUpdated(update)), self._spawn
        )
        self.runs = RunActions(self)
        self.files = FileActions(self, self.runs, opener)
        self.views = ViewActions(self)
        self._handlers = {**self.runs.handlers(), **self.files.handlers(), **self.views.handlers()}
        self._bindings_key: object = ()
        self._quitting = False

    @property
    def session(self) -> Session | None:
        """What is open (the controller's)."""
        return self.controller.session

    @property
    def panes(self) -> RunPanes:
        return self.query_one(RunPanes)

    @property
    def header(self) -> RunHeader:
        return self.query_one(RunHeader)

    @property
    def selected(self) -> str | None:
        """The task selected in the panes."""
        return self.panes.selected

    def _select(self, task: str) -> None:
        self.panes.select(task)

    def edit_answer(self, edit: AnswerEdit) -> None:
        """The calls view asked to edit a recorded answer: a what-if re-run (the runs')."""
        self.runs.edit_answer(edit)

    def compose(self) -> ComposeResult:
        yield RunHeader(id="run-header")
        yield Static("", id="errors")
        yield RunPanes(id="panes")
        yield Footer()

    def on_mount(self) -> None:
        if self.session is not None:
            self.show_session()
        else:
            self.show_errors(self.error)
            if self.error is None:
                self.act("open-file")

    def on_resize(self, event: events.Resize) -> None:
        fit_footer(self.query_one(Footer), event.size.width)

    def on_unmount(self) -> None:
        # A run left unfinished is marked abandoned (resumable); one going on is paused first
        # and, if its task outlasts the wait, left to its lease (read as interrupted).
        self.controller.leave(wait=LEAVE_SECONDS)

    def quit(self) -> None:
        """Quit the app. A run going on is left first (see ``RunController.leave``), in a
        thread of its own, while a dialog says what it waits for: the screen never goes
        blank, or freezes, for the seconds a task may take."""
        tasks = self.controller.working_on()
        if tasks is None:
            self.app.exit()
            return
        if self._quitting:
            return  # already leaving: that ends in a few seconds
        self._quitting = True
        self.app.push_screen(QuittingModal(tasks, LEAVE_SECONDS))

        def leave() -> None:
            self.controller.leave(wait=LEAVE_SECONDS)
            self.app.call_from_thread(self.app.exit)

        threading.Thread(target=leave, name="harness-leave", daemon=True).start()

    def notice(
        self,
        key: str,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
    ) -> None:
        """Notify about a state that ends: :meth:`forget` takes it away then."""
        app = cast(NoticeBoard, self.app)
        app.notice(key, message, title=title, severity=severity, timeout=timeout)

    def forget(self, key: str) -> None:
        """The state ``key`` told of is gone: so is its notification."""
        cast(NoticeBoard, self.app).forget(key)

    def _spawn(self, body: Callable[[], None]) -> None:
        # A thread of the app's worker pool, so that waiting for the app's workers waits for
        # the drive too; not exclusive: a thread cannot be stopped, the controller starts
        # one drive at a time.
        self.run_worker(body, thread=True, group="run", exit_on_error=False)

    # -- the action table -------------------------------------------------------------------

    def why_not(self, action: Action) -> str | None:
        if self.read_only and action.runs_code:
            return READ_ONLY
        return action.why_not(self.controller.state())

    def greyed(self, action: Action) -> bool:
        return self.session is not None or action.show

    def handler(self, action: Action) -> Callable[[], object]:
        return self._handlers[action.id]

    # -- showing ----------------------------------------------------------------------------

    def on_run_updated(self, message: RunUpdated) -> None:
        self.runs.show(message.update)

    def show_errors(self, error: OpenError | None) -> None:
        """Nothing open: say so, or why the file could not be opened."""
        errors = self.query_one("#errors", Static)
        if error is None:
            errors.update("Nothing open. Press o to open a workflow or a run export.")
        else:
            # Each line visible (a file name or a quoted value cannot break or drive it), as
            # plain text: error lines quote paths like payload.x[1], which are not markup.
            lines = [f"Cannot open {shown(error.path)}:", ""] + [
                shown(x, LINE_CHARS) for x in error.lines
            ]
            errors.update(Text("\n".join(lines) + "\n\no: open another file · R: reload"))
        errors.display = True
        self.panes.display = False
        self.header.update_from(None)

    def show_session(self) -> None:
        """Show the controller's session from scratch (a new run: what was said of the
        end of the one before no longer applies)."""
        session = self.session
        assert session is not None
        self.forget("finished")
        self.query_one("#errors").display = False
        self.panes.display = True
        self.panes.show(session)
        self.header.update_from(session, running=self.controller.driving)
        self.refresh_bindings_if_changed()

    def repaint(self, tasks: set[str]) -> None:
        """Repaint after ``tasks`` changed: the panes and the header."""
        self.panes.refresh_markers(tasks)
        self.header.update_from(self.session, running=self.controller.driving)

    def refresh_bindings_if_changed(self) -> None:
        """Grey out what is impossible now, telling the footer only when that changed. A
        drive going on is left out: the footer would flicker (and relayout) twice a step."""
        key = (replace(self.controller.state(), driving=False), id(self.session))
        if key != self._bindings_key:
            self._bindings_key = key
            self.refresh_bindings()

    def travel(self, move: Callable[[Session], bool], nothing: str = "") -> None:
        """Move the time cursor with ``move`` and redraw what changed (``nothing`` is said
        when it cannot move)."""
        tasks = self.panes.travel(move)
        if tasks is None:
            if nothing:
                self.notify(nothing, title="Time")
            return
        self.repaint(tasks)
        self.refresh_bindings_if_changed()

    def on_inspector_calls_wanted(self, message: Inspector.CallsWanted) -> None:
        self.views.show_calls(message.task, message.attempt, message.seq)

    def on_trace_panel_event_chosen(self, message: TracePanel.EventChosen) -> None:
        self.travel(lambda session: session.go_to(message.seq))
