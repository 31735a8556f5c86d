"""Rich styles for task statuses, taken from the app's theme variables (never literal colours)."""

from __future__ import annotations

from textual.app import App

THEME_ROLE = {
    "pending": ("foreground-muted", ""),
    "running": ("warning", "bold"),
    "succeeded": ("success", ""),
    "failed": ("error", "bold"),
    "timed_out": ("error", "bold"),
    "fallback": ("accent", "italic"),
    "skipped": ("foreground-muted", "italic"),
    "upstream_failed": ("error", "dim"),
    "cancelled": ("foreground-muted", "strike"),
}


def status_styles(app: App[object]) -> dict[str, str]:
    """Status name -> Rich style string for the current theme."""
    variables = app.get_css_variables()
    styles = {}
    for status, (role, extra) in THEME_ROLE.items():
        color = variables.get(role, "")
        if color.startswith("#") and len(color) == 9:  # drop alpha: Rich wants #rrggbb
            color = color[:7]
        styles[status] = f"{extra} {color}".strip()
    return styles
