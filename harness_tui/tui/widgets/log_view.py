"""LogView: what a task printed, appended as it arrives, shown as text and never obeyed."""

from __future__ import annotations

from textual.widgets import Log

from ...engine.capture import AttemptLog
from ..sanitize import visible

__all__ = ["LogView"]


class LogView(Log):
    """An attempt's log. :meth:`show` is called again and again while the attempt runs and
    writes only what is new, so streaming costs the new text, not the whole log.

    Log text is untrusted: escape sequences and other controls are shown as ``\\x1b``..., and
    the ``Log`` widget never parses markup.
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

    def show(self, log: AttemptLog | None) -> None:
        """Bring the view up to ``log`` (a later snapshot of the same attempt, or a new one
        after :meth:`reset`)."""
        text = log.text if log is not None else ""
        if len(text) < self._shown:  # not the attempt shown so far
            self.reset()
        fresh = text[self._shown :]
        if fresh:
            self.write(visible(fresh, multiline=True))
            self._shown = len(text)

    def reset(self) -> None:
        """Empty the view (another attempt is about to be shown)."""
        self.clear()
        self._shown = 0
