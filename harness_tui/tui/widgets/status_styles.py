"""Rich styles for task statuses, taken from the app's theme variables (never literal colours)."""

from __future__ import annotations

from collections.abc import Mapping

from textual.app import App

from ...engine.events import Status
from ..looks import STATUS_LOOKS


def role_colour(variables: Mapping[str, str], role: str) -> str:
    """A theme variable's colour as Rich accepts it (``#rrggbb``: Rich has no alpha)."""
    colour = variables.get(role, "")
    return colour[:7] if colour.startswith("#") and len(colour) == 9 else colour


def status_styles(app: App[object]) -> dict[Status | None, str]:
    """Status (``None``: pending) -> Rich style string for the current theme."""
    variables = app.get_css_variables()
    return {
        status: f"{look.style} {role_colour(variables, look.role)}".strip()
        for status, look in STATUS_LOOKS.items()
    }
