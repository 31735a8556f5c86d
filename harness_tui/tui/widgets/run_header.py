"""RunHeader: one line saying what is open and where the run stands."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

from rich.text import Text
from textual.widget import Widget

from ...engine.events import RunStatus
from ..sanitize import visible
from ..session import Session

NOTHING_OPEN = "harness-tui — nothing open (o: open a file)"


@dataclass(frozen=True, slots=True)
class HeaderParts:
    """What the header says; :func:`header_text` fits it to a width."""

    replay: bool
    name: str
    path: str
    payload: str
    status: str
    progress: str
    cursor: str = ""
    recording: bool = False
    answering: str = ""  # a re-run answered from a recording: offline or fill


def _compose(parts: HeaderParts, name: str, path: str, payload: bool) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    if parts.replay:
        text.append(" REPLAY ", style="bold reverse")
        text.append(" ")
    if parts.answering:  # models and APIs answered from the recording, not asked
        text.append(f" {parts.answering.upper()} ", style="bold reverse")
        text.append(" ")
    elif parts.recording:  # live runs record what HTTP services and io.call answer
        text.append(" REC ", style="bold reverse")
        text.append(" ")
    text.append(name, style="bold")
    if path:
        text.append(f"  {path}", style="dim")
    if payload:
        text.append(f"  payload {parts.payload}", style="dim")
    text.append(f"  {parts.status}", style="bold")
    text.append(f"  {parts.progress}")
    if parts.cursor:
        text.append(f"  {parts.cursor}", style="bold reverse")
    return text


def header_text(parts: HeaderParts, width: int) -> Text:
    """The header in ``width`` cells. Status, progress and the time cursor always show: the
    payload digest goes first, then the path shrinks to its file name and goes, then the
    workflow name is cut."""
    short = PurePath(parts.path).name
    for path, payload in ((parts.path, True), (parts.path, False), (short, False), ("", False)):
        text = _compose(parts, parts.name, path, payload)
        if text.cell_len <= width:
            return text
    name = Text(parts.name)
    name.truncate(max(width - _compose(parts, "", "", False).cell_len, 1), overflow="ellipsis")
    text = _compose(parts, name.plain, "", False)
    text.truncate(width, overflow="ellipsis")
    return text


class RunHeader(Widget):
    """Workflow, file, payload digest, mode (replay, recording, answered from a recording),
    run status, progress and the time cursor.

    A plain widget with a fixed height: updating it repaints one line, never the layout.
    """

    DEFAULT_CSS = """
    RunHeader { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.parts: HeaderParts | None = None

    def render(self) -> Text:
        if self.parts is None:
            return Text(NOTHING_OPEN, style="bold", no_wrap=True, overflow="ellipsis")
        return header_text(self.parts, self.content_size.width)

    def update_from(self, session: Session | None, running: bool = False) -> None:
        """Describe ``session`` (or say that nothing is open)."""
        self.parts = None if session is None else _parts(session, running)
        self.refresh()


def _parts(session: Session, running: bool) -> HeaderParts:
    run = session.run
    done, total = session.progress()
    status = RunStatus.RUNNING.value if running else run.status.value
    if not running and run.status is RunStatus.RUNNING:
        status = "paused"  # started, and no worker is driving it now
    held = session.live.driver.held
    waiting = session.waiting_to_retry() if held is None else None
    retry = session.retry_wait(waiting) if waiting is not None else None
    if held is not None:  # break on failure: waiting for the user at a failed attempt
        status = f"held at {held.task}#{held.attempt}"
    elif waiting is not None and retry is not None:  # the task between two attempts
        status = f"{status} · {visible(waiting)} {retry.sentence()}"
    cursor = ""
    if session.view_seq is not None:  # numbered as the trace's seq column numbers its rows
        last = session.delivered - 1
        at = "start, before seq 0" if session.view_seq < 0 else f"seq {session.view_seq}"
        cursor = f"⏪ {at} of 0–{last}"
    # The name and path come from the file: shown, never obeyed.
    return HeaderParts(
        replay=session.replay,
        name=visible(session.workflow.name),
        path=visible(str(session.source_path or session.workflow.path)),
        payload=session.payload_digest[:8],
        status=status,
        progress=f"{done}/{total}",
        cursor=cursor,
        recording=session.recording,
        answering="" if session.answering is None else session.answering.value,
    )
