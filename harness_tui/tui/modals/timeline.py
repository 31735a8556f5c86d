"""TimelineModal: what ran when, one row per task, bars over wall time coloured by status;
the selected task highlighted. Live while the run goes on; from recorded timings in replay."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from ...engine.events import Status, TraceEvent
from ...records.reports.timeline import Span, attempt_spans
from ..sanitize import visible

POLL_SECONDS = 0.5
NAME_WIDTH = 24
WORKER_WIDTH = 4  # "  w " column: which worker ran the task's attempts, when several did
KEYS = "escape close · bars: attempts, coloured by status"
WORKER_KEY = " · w: the worker"


def timeline_text(
    names: Sequence[str],
    spans: Sequence[Span],
    width: int,
    styles: dict[Status | None, str],
    selected: str | None = None,
) -> Text:
    """The timeline as text: a row per task (plan order), its attempts as bars on a shared
    wall-clock axis ``width`` cells wide, each bar styled by its status. When attempts ran on
    workers (a parallel or Dask run), a column before the bars names each task's."""
    text = Text(no_wrap=True, overflow="crop")
    if not spans:
        text.append("no attempt has run yet")
        return text
    workers = any(s.worker for s in spans)
    if workers:
        width = max(width - WORKER_WIDTH, 10)
    origin = min(s.start for s in spans)
    total = max(max(s.end for s in spans) - origin, 1e-9)
    scale = (width - 1) / total
    by_task: dict[str, list[Span]] = {}
    for span in spans:
        by_task.setdefault(span.task, []).append(span)
    end = f"{total:.3f} s"
    column = f"{'w':>{WORKER_WIDTH - 1}} " if workers else ""
    text.append(f"{'task':<{NAME_WIDTH}} {column}0 s{end:>{max(width - 3, len(end))}}\n", "bold")
    for name in names:
        shown = visible(name)
        shown = shown if len(shown) <= NAME_WIDTH else shown[: NAME_WIDTH - 1] + "…"
        text.append(f"{shown:<{NAME_WIDTH}} ", "reverse" if name == selected else "")
        if workers:
            text.append(f"{_workers_of(by_task.get(name, ())):>{WORKER_WIDTH - 1}} ", "dim")
        row = [" "] * width
        marks: list[tuple[int, int, str]] = []
        for span in by_task.get(name, ()):
            first = int((span.start - origin) * scale)
            last = max(int((span.end - origin) * scale), first)
            marks.append((first, last, styles.get(span.status, "")))
        cursor = 0
        for first, last, style in sorted(marks):
            first = max(first, cursor)
            if first > cursor:
                text.append("".join(row[cursor:first]))
            text.append("█" * (last - first + 1), style)
            cursor = last + 1
        text.append("\n")
    return text


def _workers_of(spans: Sequence[Span]) -> str:
    """The workers of a task's attempts, in order of first use (``·`` for the run's own
    thread), shortened to fit the column."""
    seen = list(dict.fromkeys("·" if s.worker == 0 else str(s.worker) for s in spans))
    label = ",".join(seen)
    return label if len(label) < WORKER_WIDTH else label[: WORKER_WIDTH - 2] + "…"


class TimelineModal(ModalScreen[None]):
    """The run's timeline. ``events`` gives the trace to draw (called again while live);
    ``styles`` the Rich style of each status (the theme's, from the caller: modals do not
    import widgets)."""

    BINDINGS = [Binding("escape,q", "close", "Close", id="timeline-close")]

    def __init__(
        self,
        names: Sequence[str],
        events: Callable[[], Sequence[TraceEvent]],
        now: Callable[[], float] | None,
        selected: str | None,
        styles: dict[Status | None, str],
    ) -> None:
        super().__init__()
        self.status_styles = styles
        self.names = list(names)
        self.events = events
        self.now = now
        self.selected = selected

    def compose(self) -> ComposeResult:
        with Vertical(id="timeline-dialog", classes="dialog"):
            yield Label(Text("Timeline — attempts over wall time", style="bold"),
                        classes="dialog-title")  # fmt: skip
            with VerticalScroll(id="timeline-scroll"):
                yield Static(id="timeline-bars")
            yield Label(KEYS, id="timeline-keys")

    def on_mount(self) -> None:
        self.call_after_refresh(self._draw)  # once the dialog has its size
        if self.now is not None:
            self.set_interval(POLL_SECONDS, self._draw)

    def _draw(self) -> None:
        spans = attempt_spans(self.events(), None if self.now is None else self.now())
        bars = self.query_one("#timeline-bars", Static)
        room = self.query_one(VerticalScroll).scrollable_content_region.width
        width = max(room - NAME_WIDTH - 2, 10)
        bars.update(timeline_text(self.names, spans, width, self.status_styles, self.selected))
        # The worker column is drawn only when attempts ran on workers: so is its key.
        workers = any(span.worker for span in spans)
        self.query_one("#timeline-keys", Label).update(KEYS + WORKER_KEY if workers else KEYS)

    def action_close(self) -> None:
        self.dismiss(None)
