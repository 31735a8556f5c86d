"""The workbench's logs action: ``l`` opens what the selected task printed or logged (a mixin
of :class:`~harness_tui.tui.screens.workbench.WorkbenchScreen`)."""

from __future__ import annotations

from textual.screen import Screen

from ..modals.logs import LogsModal
from ..session import Session


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
