"""How each task status and each plan-diff kind looks on screen, named once (plain data).

Every widget, stylesheet rule and label that shows a status reads :data:`STATUS_LOOKS`; every
place that colours a diff kind reads :data:`KIND_LOOKS`. Colours are theme variables (roles),
never literal colours. No Textual here: the stylesheet rules are built as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from ..engine.diff import DiffKind
from ..engine.events import PENDING, Status

__all__ = [
    "KIND_LOOKS",
    "PENDING",
    "STATUS_LOOKS",
    "Look",
    "StatusLook",
    "component_classes",
    "component_tcss",
    "status_label",
    "status_name",
]

Key = TypeVar("Key", bound=StrEnum | None)


@dataclass(frozen=True, slots=True)
class Look:
    """A theme role (``$success``, ``$error``...) and extra text styles (``bold italic``)."""

    role: str
    style: str = ""


@dataclass(frozen=True, slots=True)
class StatusLook(Look):
    """A status's look, plus its glyph and a label short enough for an 11-character cell."""

    glyph: str = "·"
    label: str = ""


STATUS_LOOKS: Mapping[Status | None, StatusLook] = {
    None: StatusLook("foreground-muted", "", "·", PENDING),
    Status.RUNNING: StatusLook("warning", "bold", "◐", "running"),
    Status.SUCCEEDED: StatusLook("success", "", "✔", "succeeded"),
    Status.FAILED: StatusLook("error", "bold", "✘", "failed"),
    Status.TIMED_OUT: StatusLook("error", "bold", "⏱", "timed out"),
    Status.FALLBACK: StatusLook("accent", "italic", "↺", "fallback"),
    Status.SKIPPED: StatusLook("foreground-muted", "italic", "⊘", "skipped"),
    Status.UPSTREAM_FAILED: StatusLook("error", "dim", "⇣", "upstream"),
    Status.CANCELLED: StatusLook("foreground-muted", "strike", "■", "cancelled"),
}
"""Status (``None``: pending) -> how it looks. Total over :class:`Status` (tested)."""

KIND_LOOKS: Mapping[DiffKind, Look] = {
    DiffKind.ADDED: Look("success", "bold"),
    DiffKind.REMOVED: Look("error", "strike"),
    DiffKind.MOVED: Look("primary", "bold"),
    DiffKind.CHANGED: Look("warning", "bold"),
    DiffKind.RENAMED: Look("accent", "bold"),
}
"""Diff kind -> how a changed task looks; unchanged tasks keep their ordinary look."""


def status_name(status: Status | None) -> str:
    """``pending`` for no status yet, else the status value (also its stylesheet class)."""
    return PENDING if status is None else status.value


def status_label(status: Status | None) -> str:
    """Glyph and a short name, for table cells (at most 11 characters)."""
    look = STATUS_LOOKS[status]
    return f"{look.glyph} {look.label}"


def component_tcss(widget: str, prefix: str, looks: Mapping[Key, Look]) -> str:
    """Stylesheet rules giving each look a component class ``{prefix}--{name}``.

    Args:
        widget: the widget's type name (the rules' parent selector).
        prefix: the component class prefix, e.g. ``dag-view``.
        looks: status or diff kind (``None`` is pending) -> its look.

    Returns:
        One rule per entry, e.g. ``DagView > .dag-view--failed { color: $error; ... }``.
    """
    return "\n".join(
        f"{widget} > .{prefix}--{_name(key)} {{ color: ${look.role};"
        + (f" text-style: {look.style};" if look.style else "")
        + " }"
        for key, look in looks.items()
    )


def component_classes(prefix: str, keys: Iterable[Key]) -> set[str]:
    """The component class names :func:`component_tcss` styles."""
    return {f"{prefix}--{_name(key)}" for key in keys}


def _name(key: StrEnum | None) -> str:
    return PENDING if key is None else key.value
