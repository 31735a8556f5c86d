"""Status glyphs and names shared by the widgets (plain data, no Textual)."""

from __future__ import annotations

GLYPHS = {
    None: "·",
    "running": "◐",
    "succeeded": "✔",
    "failed": "✘",
    "timed_out": "⏱",
    "fallback": "↺",
    "skipped": "⊘",
    "upstream_failed": "⇣",
    "cancelled": "■",
}
BREAKPOINT = "●"
NEXT = "▶"


def status_name(status: object) -> str:
    """``pending`` for no status yet, else the status value."""
    return "pending" if status is None else str(getattr(status, "value", status))


SHORT = {"upstream_failed": "upstream", "timed_out": "timed out"}


def status_label(status: str) -> str:
    """Glyph and a short name, for table cells (at most 11 characters)."""
    glyph = GLYPHS.get(None if status == "pending" else status, "·")
    return f"{glyph} {SHORT.get(status, status)}"
