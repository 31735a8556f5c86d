"""The workbench's error actions: ``t`` from any pane opens the full error of what the
inspector shows (a mixin of :class:`~harness_tui.tui.screens.workbench.WorkbenchScreen`)."""

from __future__ import annotations

from dataclasses import replace

from textual.screen import Screen

from ..actions import INSPECTOR, bindings
from ..widgets.inspector import Inspector


class ErrorActions(Screen[None]):
    """Screen-wide bindings for the inspector's actions; the inspector does the work.

    Textual merges ``BINDINGS`` along the class hierarchy, so adding this class to a screen's
    bases is all it takes: the keys then work whichever pane has the focus.
    """

    # Out of the footer, which has no room left at 80 columns: the inspector shows the key
    # there whenever it has the focus.
    BINDINGS = bindings(replace(action, show=False) for action in INSPECTOR)

    def action_show_traceback(self) -> None:
        """Open the full error and traceback of the inspected failure, or say why not."""
        self.query_one(Inspector).action_show_traceback()
