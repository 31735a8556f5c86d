"""RunHeader: one line saying what is open and where the run stands."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ..session import Session


class RunHeader(Static):
    """Workflow, file, payload digest, mode, run status, progress and the time cursor."""

    DEFAULT_CSS = """
    RunHeader { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    def update_from(self, session: Session | None, running: bool = False) -> None:
        if session is None:
            self.update(Text("harness-tui — open a workflow (o)", style="bold"))
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
        status = "running" if running else run.status.value
        text.append(f"  {status}", style="bold")
        text.append(f"  {done}/{total}")
        if session.view_seq is not None:
            text.append(
                f"  ⏪ at event {session.view_seq}/{session.delivered - 1}", style="bold reverse"
            )
        self.update(text)
