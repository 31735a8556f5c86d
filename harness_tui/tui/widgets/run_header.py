"""RunHeader: one line saying what is open and where the run stands."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from ...engine.events import RunStatus
from ..session import Session


class RunHeader(Widget):
    """Workflow, file, payload digest, mode, run status, progress and the time cursor.

    A plain widget with a fixed height: updating it repaints one line, never the layout.
    """

    DEFAULT_CSS = """
    RunHeader { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._text = Text()

    def render(self) -> Text:
        return self._text

    def update_from(self, session: Session | None, running: bool = False) -> None:
        """Describe ``session`` (or say that nothing is open)."""
        if session is None:
            self._text = Text("harness-tui — nothing open (o: open a file)", style="bold")
            self.refresh()
            return
        run = session.run
        done, total = session.progress()
        text = Text()
        if session.replay:
            text.append(" REPLAY ", style="bold reverse")
            text.append(" ")
        text.append(session.workflow.name, style="bold")
        text.append(f"  {session.source_path or session.workflow.path}", style="dim")
        text.append(f"  payload {session.payload_digest[:8]}", style="dim")
        status = RunStatus.RUNNING.value if running else run.status.value
        if not running and run.status is RunStatus.RUNNING:
            status = "paused"  # started, and no worker is driving it now
        text.append(f"  {status}", style="bold")
        text.append(f"  {done}/{total}")
        if session.view_seq is not None:
            text.append(
                f"  ⏪ event {session.view_seq} of {session.delivered - 1}", style="bold reverse"
            )
        self._text = text
        self.refresh()
