"""LogsModal: what one task printed or logged, attempt by attempt, live while it runs.

Its :class:`LogView` lives here, not in ``widgets/``: the inspector widget opens a modal, so
a modal that imported a widget would make the two packages import each other.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Log

from ...engine.capture import AttemptLog
from ...engine.orchestrator import Run
from ..log_lines import LEVELS, LineSearch, keeps
from ..sanitize import inert, visible

POLL_SECONDS = 0.2
"""How often the open view reads the running attempt's log: the run's thread writes it, and
a timer on the UI's side costs nothing per line a task prints."""


class LogView(Log):
    """An attempt's log. :meth:`show` is called again and again while the attempt runs and
    writes only what is new, so streaming costs the new text, not the whole log.

    Log text is untrusted: escape sequences and other controls are shown as ``\\x1b``..., and
    the ``Log`` widget never parses markup. With a level (:attr:`minimum`) only the logging
    records at that level and above are shown, each once its line is complete.
    """

    DEFAULT_CSS = """
    LogView {
        height: 1fr;
        background: $surface;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(highlight=False, auto_scroll=True, id=id)
        self._shown = 0
        self.minimum: str | None = None  # the lowest level shown; None: every line

    def show(self, log: AttemptLog | None) -> None:
        """Bring the view up to ``log`` (a later snapshot of the same attempt, or a new one
        after :meth:`reset`)."""
        text = log.text if log is not None else ""
        if len(text) < self._shown:  # not the attempt shown so far
            self.reset()
        fresh = text[self._shown :]
        if not fresh:
            return
        if self.minimum is None:
            self.write(visible(fresh, multiline=True))
            self._shown = len(text)
            return
        complete = fresh.rfind("\n") + 1
        kept = [
            visible(line) for line in fresh[:complete].splitlines() if keeps(line, self.minimum)
        ]
        if kept:
            self.write_lines(kept)
        self._shown += complete

    def reset(self) -> None:
        """Empty the view (another attempt is about to be shown)."""
        self.clear()
        self._shown = 0


class LogsModal(ModalScreen[None]):
    """One task's log per attempt. Follows the latest attempt until the user picks one;
    ``u`` shows the run's unattributed output instead (threads that wrote after the attempt
    that started them ended)."""

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="logs-close"),
        # Not the arrows: the log view scrolls with them (long lines scroll sideways).
        Binding("left_square_bracket", "attempt(-1)", "Earlier attempt", id="logs-earlier"),
        Binding("right_square_bracket", "attempt(1)", "Later attempt", id="logs-later"),
        Binding("u", "unattributed", "Unattributed output", id="logs-unattributed"),
        Binding("slash", "search", "Search", id="logs-search"),
        Binding("n", "match(1)", "Next match", id="logs-next-match"),
        Binding("N", "match(-1)", "Previous match", id="logs-previous-match"),
        Binding("v", "level", "Level", id="logs-level"),
        Binding("c", "copy", "Copy", id="logs-copy"),
    ]

    def __init__(self, run: Run, task: str) -> None:
        super().__init__()
        self.run = run
        self.task_name = task
        self.attempt = max(self._attempts(), 1)
        self.follow = True  # show each new attempt as it starts
        self.unattributed = False  # the run's unattributed output instead of the task's
        self.search = LineSearch()
        self.wanted = ""  # what / searched for
        self.match = -1  # the line of the match shown (-1: none yet)

    def compose(self) -> ComposeResult:
        with Vertical(id="logs-dialog", classes="dialog"):
            yield Label(id="logs-title", classes="dialog-title")
            yield LogView(id="logs-text")
            yield Input(placeholder="search the log (Enter finds, escape closes)", id="logs-find")
            yield Label(id="logs-status")
            yield Label(
                "[ ] attempt · / search, n N next, previous · v level · c copy · "
                "u unattributed · escape close",
                id="logs-keys",
            )

    def on_mount(self) -> None:
        self.query_one("#logs-find").display = False
        self._poll()
        self.set_interval(POLL_SECONDS, self._poll)

    def _attempts(self) -> int:
        """Attempts of the task that have started so far (the fallback counts as one)."""
        events = self.run.snapshot().task_events(self.task_name)
        return max((event.attempt for event in events), default=0)

    def _poll(self) -> None:
        if self.unattributed:
            self._poll_unattributed()
            return
        attempts = self._attempts()
        if self.follow and attempts > self.attempt:
            self._switch(attempts)
        log = self.run.log(self.task_name, self.attempt)
        self.query_one(LogView).show(log)
        title = Text("Logs — ", style="bold")
        title.append_text(inert(self.task_name))
        title.append(f" · attempt {self.attempt} of {max(attempts, 1)}")
        view = self.query_one(LogView)
        if view.minimum is not None:
            title.append(f" · {view.minimum} and up")
        self.query_one("#logs-title", Label).update(title)
        self._say("not started yet" if attempts < self.attempt else _status(log))

    def _say(self, status: str) -> None:
        """The status line: the log's size, and where the search stands."""
        if self.wanted:
            lines = self.query_one(LogView).lines
            found = self.search.count(lines, self.wanted)
            where = f" · at line {self.match + 1}" if self.match >= 0 else ""
            status += f" · {found} match{'es' * (found != 1)} of {inert(self.wanted)}{where}"
        self.query_one("#logs-status", Label).update(status)

    def _poll_unattributed(self) -> None:
        log = self.run.unattributed_log()
        self.query_one(LogView).show(log)
        title = Text("Logs — unattributed", style="bold")
        title.append(" · what threads wrote after the attempt that started them ended")
        self.query_one("#logs-title", Label).update(title)
        self.query_one("#logs-status", Label).update(_status(log) + " · u back to the task")

    def _switch(self, attempt: int) -> None:
        self.attempt = attempt
        self._reset_view()

    def _reset_view(self) -> None:
        self.query_one(LogView).reset()
        self.search.reset()
        self.match = -1

    def action_unattributed(self) -> None:
        self.unattributed = not self.unattributed
        self._reset_view()
        self._poll()

    def action_attempt(self, delta: int) -> None:
        if self.unattributed:
            return
        attempts = self._attempts()
        chosen = min(max(self.attempt + delta, 1), max(attempts, 1))
        self.follow = chosen == attempts
        if chosen != self.attempt:
            self._switch(chosen)
            self._poll()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_search(self) -> None:
        field = self.query_one("#logs-find", Input)
        field.display = True
        self.set_focus(field)  # at once: the next key typed (or pasted) goes to the field

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.input.display = False
        self.wanted = event.value
        self.match = -1
        self.query_one(LogView).focus()
        self.action_match(1)

    def action_match(self, direction: int) -> None:
        """Show the next (or previous) line holding the searched text, wrapping around."""
        if not self.wanted:
            self.notify("/ searches first", title="Logs")
            return
        self.find_match(backwards=direction < 0)
        self._poll()

    def find_match(self, backwards: bool = False) -> int | None:
        """Move to the next match (the one before, ``backwards``); its line, or None."""
        view = self.query_one(LogView)
        line = self.search.find(view.lines, self.wanted, self.match, backwards)
        if line is None:
            return None
        self.match = line
        view.auto_scroll = False  # the match stays in view while the task writes on
        view.scroll_to(y=max(line - 2, 0), animate=False)
        return line

    def action_level(self) -> None:
        """Show the records of the next level and up (none, then each level in turn)."""
        view = self.query_one(LogView)
        order: list[str | None] = [None, *LEVELS[:-1]]
        view.minimum = order[(order.index(view.minimum) + 1) % len(order)]
        self._reset_view()
        self._poll()

    def action_copy(self) -> None:
        """Copy the lines shown (the attempt's log, as filtered) to the clipboard."""
        lines = self.query_one(LogView).lines
        self.app.copy_to_clipboard("\n".join(lines) + "\n")
        self.notify(f"copied {len(lines)} line{'s' * (len(lines) != 1)}", title="Logs")


def _status(log: AttemptLog | None) -> str:
    """One line about a log: its size, or why there is nothing to show."""
    if log is None:
        return "output is not captured"
    if log.truncated:
        return "truncated: more was written than the log keeps"
    if not log.text:
        return "nothing printed or logged"
    count = log.text.count(chr(10))
    return "1 line" if count == 1 else f"{count} lines"
