"""The workbench's views of what happened: ``l`` opens what the selected task printed or
logged, ``T`` the run's timeline (a mixin of
:class:`~harness_tui.tui.screens.workbench.WorkbenchScreen`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.screen import Screen

from ...engine.events import TraceEvent
from ..modals.logs import LogsModal
from ..modals.timeline import TimelineModal
from ..session import Session
from ..widgets.status_styles import status_styles


class LogActions(Screen[None]):
    """Opens the logs view. Expects the workbench's session and selected task."""

    session: Session | None
    selected: str | None

    def action_show_logs(self) -> None:
        """Open the selected task's log (its latest attempt, following new ones live)."""
        if self.session is None:
            return
        if self.selected is None:
            self.notify("select a task first (arrows, or / to find one)")
            return
        self.app.push_screen(LogsModal(self.session.run, self.selected))

    def action_show_timeline(self) -> None:
        """Open the timeline: live while the run goes on, recorded timings in replay."""
        session = self.session
        if session is None:
            return
        run, record = session.run, session.record
        styles = status_styles(self.app)
        events: Callable[[], Sequence[TraceEvent]]
        if record is not None:  # replay: the times the run really had, not the replay's
            events, now = (lambda: record.events), None
        else:
            events, now = (lambda: run.events), (None if run.finished else run.clock.wall)
        modal = TimelineModal(run.plan.names, events, now, self.selected, styles)
        self.app.push_screen(modal)
